//! Who may read `lucid view`'s server, decided for each request before it is routed (the threats
//! and the design are in [`super`]'s documentation): the Host, the Origin, the launch's token (its
//! cookie, or in the URL) and, for `/api/`, the page's secret header.

use std::net::SocketAddr;

use crate::error::{Error, Invalid, Result};
use crate::loopback::Request;

/// The header every `/api/` request must carry, holding the page's secret (lower case, as
/// [`Request::header`] looks it up).
pub const SECRET_HEADER: &str = "x-lucid-view";

/// This launch's token and secret, and where the server listens.
pub struct Gate {
    /// Required of every request beyond loopback: in the URL once, then as a cookie.
    token: String,
    /// Required of every `/api/` request as [`SECRET_HEADER`]; written into the page only.
    secret: String,
    port: u16,
    /// Served beyond loopback: every request needs the token.
    beyond: bool,
}

/// How a request got through the gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// With the token's cookie, or without it where none is needed (on loopback).
    Plain,
    /// With the token in its URL: the answer sets the cookie (and `/` sends the browser back to
    /// `/`, the token out of its address bar and history).
    Token,
}

impl Gate {
    /// A gate for a server on `port` with a fresh token and secret; `beyond` when it listens
    /// beyond loopback (every request then needs the token).
    pub fn new(port: u16, beyond: bool) -> Result<Gate> {
        Ok(Gate { token: new_token()?, secret: new_token()?, port, beyond })
    }

    /// The launch's token (printed once, in the URL, beyond loopback).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Whether every request needs the token.
    pub fn beyond(&self) -> bool {
        self.beyond
    }

    /// The cookie's name: cookies do not tell ports apart, so two servers of one host keep theirs.
    fn cookie_name(&self) -> String {
        format!("lucid_view_{}", self.port)
    }

    /// The `Set-Cookie` header line (with its line end) an answer to a request with the token
    /// carries: not readable by scripts, never sent by another site's request.
    pub fn set_cookie(&self) -> String {
        format!("Set-Cookie: {}={}; HttpOnly; SameSite=Strict; Path=/\r\n", self.cookie_name(), self.token)
    }

    /// The tag the served page holds its secret in (read by its script, sent as [`SECRET_HEADER`]).
    pub fn meta(&self) -> String {
        format!("<meta name=\"lucid-view\" content=\"{}\">", self.secret)
    }

    /// The Host names this server answers to on a connection it accepted at `local`: loopback's
    /// names, and the address the client connected to (the bound address, or, bound to an
    /// unspecified address, the interface's) as an IP literal.
    fn hosts(&self, local: SocketAddr) -> [String; 4] {
        let port = self.port;
        let local = SocketAddr::new(local.ip().to_canonical(), local.port());
        [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}"), local.to_string()]
    }

    /// Whether `req`, received on a connection accepted at `local`, may be answered, and how;
    /// the error says why not (answered 403).
    pub fn check(&self, req: &Request, local: SocketAddr) -> std::result::Result<Admit, Invalid> {
        let host = req.header("host").unwrap_or("");
        let named = with_port(host);
        if !self.hosts(local).iter().any(|h| h.eq_ignore_ascii_case(&named)) {
            return Err(Invalid(format!(
                "Host '{host}' is not this server's address (another site's page, through DNS rebinding?)"
            )));
        }
        if let Some(origin) = req.header("origin")
            && origin.strip_prefix("http://") != Some(host)
        {
            return Err(Invalid(format!("Origin '{origin}' is not this server's: it answers its own page only")));
        }
        if req.method == "OPTIONS" {
            return Err(Invalid::from("no cross-origin requests: this server answers its own page only"));
        }
        let admit = match req.param("token") {
            Some(t) if same(&t, &self.token) => Admit::Token,
            Some(_) => return Err(Invalid::from("wrong token: open the URL `lucid view` printed when it started")),
            None if self.beyond && !self.has_cookie(req) => {
                return Err(Invalid::from(
                    "this server needs the token it printed when it started: open the URL it printed \
                     (http://HOST:PORT/?token=...)",
                ));
            }
            None => Admit::Plain,
        };
        if req.path().starts_with("/api/") && !req.header(SECRET_HEADER).is_some_and(|s| same(s, &self.secret)) {
            return Err(Invalid::from("the API answers the viewer's own page only (its X-Lucid-View header)"));
        }
        Ok(admit)
    }

    /// Whether `req` carries the token's cookie.
    fn has_cookie(&self, req: &Request) -> bool {
        let name = self.cookie_name();
        req.headers
            .iter()
            .filter(|(k, _)| k == "cookie")
            .flat_map(|(_, v)| v.split(';'))
            .filter_map(|c| c.trim().split_once('='))
            .any(|(k, v)| k == name && same(v, &self.token))
    }
}

/// `host` with its port: a Host without one names port 80.
fn with_port(host: &str) -> String {
    let port = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let ported = host.rsplit_once(':').is_some_and(|(h, p)| port(p) && (!h.contains(':') || h.ends_with(']')));
    if ported { host.to_string() } else { format!("{host}:80") }
}

/// Whether two secrets are equal, in a time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// A value no other page can guess: 128 bits from the kernel's random source, in hex.
pub fn new_token() -> Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(|e| Error::environment_from("lucid view: cannot read /dev/urandom for the launch's token", e))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: &str, target: &str, headers: &[(&str, &str)]) -> Request {
        Request {
            method: method.into(),
            target: target.into(),
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            body: crate::loopback::Body::Heap(Vec::new()),
        }
    }

    #[test]
    fn the_host_is_checked_with_or_without_the_token() {
        let gate = Gate::new(8377, true).unwrap();
        let local: SocketAddr = "192.0.2.2:8377".parse().unwrap();
        let token = format!("/?token={}", gate.token());
        assert_eq!(gate.check(&request("GET", &token, &[("host", "192.0.2.2:8377")]), local), Ok(Admit::Token));
        assert_eq!(gate.check(&request("GET", &token, &[("host", "127.0.0.1:8377")]), local), Ok(Admit::Token));
        assert!(gate.check(&request("GET", &token, &[("host", "evil.example:8377")]), local).is_err());
        assert!(gate.check(&request("GET", &token, &[]), local).is_err());
        assert!(gate.check(&request("GET", "/?token=0", &[("host", "192.0.2.2:8377")]), local).is_err());
        assert!(gate.check(&request("GET", "/", &[("host", "192.0.2.2:8377")]), local).is_err());
        let cookie = format!("a=b; lucid_view_8377={}", gate.token());
        let with = [("host", "192.0.2.2:8377"), ("cookie", cookie.as_str())];
        assert_eq!(gate.check(&request("GET", "/", &with), local), Ok(Admit::Plain));
        let other = format!("lucid_view_8378={}", gate.token());
        let elsewhere = [("host", "192.0.2.2:8377"), ("cookie", other.as_str())];
        assert!(gate.check(&request("GET", "/", &elsewhere), local).is_err());
    }

    #[test]
    fn the_api_needs_the_secret_and_no_origin_but_its_own() {
        let gate = Gate::new(80, false).unwrap();
        let local: SocketAddr = "127.0.0.1:80".parse().unwrap();
        let secret = gate.meta().split('"').nth(3).unwrap().to_string();
        assert_eq!(gate.check(&request("GET", "/", &[("host", "localhost")]), local), Ok(Admit::Plain));
        assert!(gate.check(&request("GET", "/api/data", &[("host", "localhost")]), local).is_err());
        let api = [("host", "127.0.0.1"), ("x-lucid-view", secret.as_str())];
        assert_eq!(gate.check(&request("GET", "/api/data", &api), local), Ok(Admit::Plain));
        let cross = [("host", "127.0.0.1"), ("x-lucid-view", secret.as_str()), ("origin", "http://evil.example")];
        assert!(gate.check(&request("GET", "/api/data", &cross), local).is_err());
        let own = [("host", "127.0.0.1"), ("x-lucid-view", secret.as_str()), ("origin", "http://127.0.0.1")];
        assert_eq!(gate.check(&request("POST", "/api/query", &own), local), Ok(Admit::Plain));
        assert!(gate.check(&request("OPTIONS", "/api/query", &[("host", "127.0.0.1")]), local).is_err());
        assert_ne!(gate.token(), secret);
    }
}
