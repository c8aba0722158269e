//! The few pieces of HTTP/1.1 lucid's own small servers share (the agent programs' model
//! endpoint and `lucid view`'s page): one request per connection, read
//! with its headers and a `Content-Length` body, answered with `Connection: close`.

use std::io::{BufRead, Write};

use crate::error::Invalid;

/// One request.
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The target as sent: path and query.
    pub target: String,
    /// Headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// The body (`Content-Length` bytes; chunked bodies are refused).
    pub body: Vec<u8>,
}

impl Request {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The path, without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    /// The query's parameters, percent-decoded.
    pub fn query(&self) -> Vec<(String, String)> {
        let q = self.target.split_once('?').map_or("", |(_, q)| q);
        url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()
    }

    /// The query parameter `name`.
    pub fn param(&self, name: &str) -> Option<String> {
        self.query().into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
}

/// The largest body read (a chat request with a long prompt fits many times over).
const MAX_BODY: usize = 64 << 20;

/// Read one request.
pub fn read_request(r: &mut impl BufRead) -> Result<Request, Invalid> {
    let mut line = String::new();
    r.read_line(&mut line).map_err(|e| Invalid(e.to_string()))?;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
    let (mut headers, mut length) = (Vec::new(), 0usize);
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).map_err(|e| Invalid(e.to_string()))? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
            if k == "content-length" {
                length = v.parse().map_err(|_| Invalid(format!("bad Content-Length '{v}'")))?;
            } else if k == "transfer-encoding" {
                return Err(Invalid::from("chunked request bodies are not supported: send Content-Length"));
            }
            headers.push((k, v));
        }
    }
    if length > MAX_BODY {
        return Err(Invalid(format!("a body of {length} bytes is over the {MAX_BODY}-byte limit")));
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body).map_err(|e| Invalid(e.to_string()))?;
    Ok(Request { method, target, headers, body })
}

/// The reason phrase of `status`.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Bad Gateway",
    }
}

/// Answer with `status`, `content_type`, `extra` header lines (each ending in `\r\n`) and `body`.
pub fn respond(conn: &mut impl Write, status: u16, content_type: &str, extra: &str, body: &[u8]) {
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
        reason(status),
        body.len()
    );
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(body);
    let _ = conn.flush();
}
