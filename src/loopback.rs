//! The few pieces of HTTP/1.1 lucid's own small servers share (the agent programs' model
//! endpoint and `lucid view`'s page): one request per connection, read
//! with its headers and a `Content-Length` body, answered with `Connection: close`; a reader that
//! gives a client a deadline for its whole request ([`Deadline`]), a count of the connections (or
//! queries) a server answers at once ([`Place`]), and whether a client hung up ([`closed`]).

use std::io::{BufRead, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

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
    pub body: Body,
}

/// Bodies from this size on are read into a mapping of their own.
const MAPPED: usize = 256 << 10;

/// A request body: on the heap when small, past [`MAPPED`] bytes in an anonymous mapping of its
/// own, whose pages go back to the system when it is dropped — the allocator keeps no freed large
/// body resident, so a server's memory follows the bodies it holds now, not the most it ever held.
pub enum Body {
    /// A small body.
    Heap(Vec<u8>),
    /// A large one.
    Mapped(memmap2::MmapMut),
}

impl Body {
    /// `n` zero bytes.
    fn zeroed(n: usize) -> std::io::Result<Body> {
        Ok(if n < MAPPED { Body::Heap(vec![0; n]) } else { Body::Mapped(memmap2::MmapMut::map_anon(n)?) })
    }
}

impl std::ops::Deref for Body {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Body::Heap(v) => v,
            Body::Mapped(m) => m,
        }
    }
}

impl std::ops::DerefMut for Body {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            Body::Heap(v) => v,
            Body::Mapped(m) => m,
        }
    }
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

/// The longest request line or header line read.
const MAX_LINE: u64 = 64 << 10;

/// The most header lines read.
const MAX_HEADERS: usize = 256;

/// Read one request.
pub fn read_request(r: &mut impl BufRead) -> Result<Request, Invalid> {
    read_request_within(r, MAX_BODY)
}

/// One line of the request's head (with its line end), at most [`MAX_LINE`] bytes.
fn head_line(r: &mut impl BufRead) -> Result<String, Invalid> {
    let mut line = String::new();
    let n = Read::take(&mut *r, MAX_LINE).read_line(&mut line).map_err(|e| Invalid(e.to_string()))?;
    if n as u64 == MAX_LINE && !line.ends_with('\n') {
        return Err(Invalid(format!("a request line or header over {MAX_LINE} bytes")));
    }
    Ok(line)
}

/// Read one request whose body is at most `max_body` bytes.
pub fn read_request_within(r: &mut impl BufRead, max_body: usize) -> Result<Request, Invalid> {
    read_request_bounded(r, usize::MAX, max_body, |_| true).map_err(RequestRefusal::why)
}

/// Why a request was not read: the server is busy (a caller answers 503 and the client may come
/// back), or the request is malformed or over a bound (400).
#[derive(Debug)]
pub enum RequestRefusal {
    /// The server holds too many request bodies to read this one now.
    Busy(Invalid),
    /// The request itself is refused.
    Malformed(Invalid),
}

impl RequestRefusal {
    /// The reason, whichever it is.
    pub fn why(self) -> Invalid {
        match self {
            RequestRefusal::Busy(w) | RequestRefusal::Malformed(w) => w,
        }
    }
}

impl From<Invalid> for RequestRefusal {
    fn from(why: Invalid) -> Self {
        RequestRefusal::Malformed(why)
    }
}

/// Read one request whose head (request line and headers) is at most `max_head` bytes and whose
/// body is at most `max_body`; `reserve(n)` is asked before an `n`-byte body is read, and a
/// refusal is [`RequestRefusal::Busy`] (the server holds too many bodies already).
pub fn read_request_bounded(
    r: &mut impl BufRead,
    max_head: usize,
    max_body: usize,
    mut reserve: impl FnMut(usize) -> bool,
) -> Result<Request, RequestRefusal> {
    let line = head_line(r)?;
    let mut head = line.len();
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
    let (mut headers, mut length) = (Vec::new(), 0usize);
    for n in 0.. {
        let h = head_line(r)?;
        head = head.saturating_add(h.len());
        if head > max_head {
            return Err(Invalid(format!("a request head over {max_head} bytes")).into());
        }
        if h.trim().is_empty() {
            break;
        }
        if n == MAX_HEADERS {
            return Err(Invalid(format!("more than {MAX_HEADERS} header lines")).into());
        }
        if let Some((k, v)) = h.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
            if k == "content-length" {
                length = v.parse().map_err(|_| Invalid(format!("bad Content-Length '{v}'")))?;
            } else if k == "transfer-encoding" {
                return Err(Invalid::from("chunked request bodies are not supported: send Content-Length").into());
            }
            headers.push((k, v));
        }
    }
    if length > max_body {
        return Err(Invalid(format!("a body of {length} bytes is over the {max_body}-byte limit")).into());
    }
    if !reserve(length) {
        return Err(RequestRefusal::Busy(Invalid(format!(
            "busy: the server holds too many request bodies to read one of {length} bytes now"
        ))));
    }
    let mut body = Body::zeroed(length).map_err(|e| Invalid(format!("a body of {length} bytes: {e}")))?;
    r.read_exact(&mut body).map_err(|e| Invalid(e.to_string()))?;
    Ok(Request { method, target, headers, body })
}

/// The reason phrase of `status`.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        303 => "See Other",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
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

/// A connection read against a deadline: each read waits at most what is left of it, so a client
/// that sends nothing, or a byte now and then, cannot hold its connection past the deadline.
pub struct Deadline {
    conn: TcpStream,
    until: Instant,
}

impl Deadline {
    /// Read `conn` until `within` from now.
    pub fn new(conn: TcpStream, within: Duration) -> Deadline {
        Deadline { conn, until: Instant::now() + within }
    }

    /// Whether the deadline has passed.
    pub fn passed(&self) -> bool {
        Instant::now() >= self.until
    }
}

impl Read for Deadline {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let late = || std::io::Error::new(ErrorKind::TimedOut, "the request did not arrive in time");
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(late());
        }
        self.conn.set_read_timeout(Some(left))?;
        match self.conn.read(buf) {
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Err(late()),
            other => other,
        }
    }
}

/// One of at most `cap` places (a connection being answered, a query running), counted in a
/// shared counter and given back when dropped.
pub struct Place(Arc<AtomicUsize>);

impl Place {
    /// A place of `count`'s, or `None` when `cap` are taken.
    pub fn take(count: &Arc<AtomicUsize>, cap: usize) -> Option<Place> {
        count.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < cap).then_some(n + 1)).ok()?;
        Some(Place(count.clone()))
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether the client of `conn` has hung up (its side closed or reset), asked without waiting;
/// a client still connected, with or without more bytes sent, has not.
pub fn closed(conn: &TcpStream) -> bool {
    if conn.set_nonblocking(true).is_err() {
        return false;
    }
    let seen = conn.peek(&mut [0u8; 1]);
    let _ = conn.set_nonblocking(false);
    match seen {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_counted_and_given_back() {
        let count = Arc::default();
        let first = Place::take(&count, 2).unwrap();
        let _second = Place::take(&count, 2).unwrap();
        assert!(Place::take(&count, 2).is_none());
        drop(first);
        assert!(Place::take(&count, 2).is_some());
    }

    #[test]
    fn a_request_over_its_limits_is_refused() {
        let ok = "POST /q HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc";
        let req = read_request_within(&mut ok.as_bytes(), 3).unwrap();
        assert_eq!((req.method.as_str(), &req.body[..]), ("POST", &b"abc"[..]));
        assert!(read_request_within(&mut ok.as_bytes(), 2).is_err());
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_LINE as usize));
        assert!(read_request(&mut long.as_bytes()).is_err());
    }

    #[test]
    fn a_client_that_sends_nothing_meets_its_deadline_and_one_that_hangs_up_is_seen() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (conn, _) = listener.accept().unwrap();
        assert!(!closed(&conn));
        let mut r = std::io::BufReader::new(Deadline::new(conn.try_clone().unwrap(), Duration::from_millis(50)));
        let Err(why) = read_request(&mut r) else { panic!("a request out of nothing") };
        assert!(r.get_ref().passed() && why.0.contains("in time"), "{why}");
        drop(client);
        // The hang-up reaches this side when the kernel delivers it: wait for it, a minute at most.
        let until = Instant::now() + Duration::from_secs(60);
        while !closed(&conn) {
            assert!(Instant::now() < until, "the hang-up never showed");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
