//! Who may read `lucid view`'s server, decided for each request before it is routed (the threats
//! and the design are in [`super`]'s documentation): the Host, the Origin, the page's secret
//! header for `/api/`, and beyond loopback the launch's token as a header ([`TOKEN_HEADER`]) or,
//! for a run's report files, a ticket in their path ([`Gate::ticket`]). No cookie is ever set:
//! a browser sends a host's cookies to every port of it, so a service on another port of the same
//! host would receive the token with each of its own requests.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::{Error, Invalid, Result};
use crate::loopback::Request;

/// The header every `/api/` request must carry, holding the page's secret (lower case, as
/// [`Request::header`] looks it up).
pub const SECRET_HEADER: &str = "x-lucid-view";

/// The header the page sends the launch's token in, beyond loopback (lower case).
pub const TOKEN_HEADER: &str = "x-lucid-token";

/// How long a report ticket opens the run's report files.
pub const TICKET_LIFE: Duration = Duration::from_secs(600);

/// The most report tickets alive at once (the oldest go first).
const MAX_TICKETS: usize = 256;

/// This launch's token and secret, and where the server listens.
pub struct Gate {
    /// Required of every `/api/` request beyond loopback, as [`TOKEN_HEADER`].
    token: String,
    /// Required of every `/api/` request as [`SECRET_HEADER`]; written into the page only.
    secret: String,
    port: u16,
    /// Served beyond loopback: the API and the reports need the token.
    beyond: bool,
    /// Report tickets and when each was drawn.
    tickets: Mutex<HashMap<String, Instant>>,
}

impl Gate {
    /// A gate for a server on `port` with a fresh token and secret; `beyond` when it listens
    /// beyond loopback (the API and the reports then need the token).
    pub fn new(port: u16, beyond: bool) -> Result<Gate> {
        Ok(Gate { token: new_token()?, secret: new_token()?, port, beyond, tickets: Mutex::default() })
    }

    /// The launch's token (printed once, in the URL's fragment, beyond loopback).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Whether the API needs the token.
    pub fn beyond(&self) -> bool {
        self.beyond
    }

    /// The tag the served page holds its secret in (read by its script, sent as [`SECRET_HEADER`]).
    pub fn meta(&self) -> String {
        format!("<meta name=\"lucid-view\" content=\"{}\">", self.secret)
    }

    /// A fresh ticket for the runs' report files (`/report/~TICKET/<run>/<file>`), good for
    /// [`TICKET_LIFE`]: a report opened in a tab, and the files it loads, cannot carry a header.
    pub fn ticket(&self) -> Result<String> {
        let t = new_token()?;
        let mut tickets = self.tickets.lock().unwrap_or_else(|p| p.into_inner());
        tickets.retain(|_, at| at.elapsed() < TICKET_LIFE);
        if tickets.len() >= MAX_TICKETS
            && let Some(oldest) = tickets.iter().min_by_key(|(_, at)| **at).map(|(k, _)| k.clone())
        {
            tickets.remove(&oldest);
        }
        tickets.insert(t.clone(), Instant::now());
        Ok(t)
    }

    /// Whether `t` is a live report ticket.
    fn ticketed(&self, t: &str) -> bool {
        let tickets = self.tickets.lock().unwrap_or_else(|p| p.into_inner());
        tickets.iter().any(|(k, at)| same(k, t) && at.elapsed() < TICKET_LIFE)
    }

    /// The Host names this server answers to on a connection it accepted at `local`: loopback's
    /// names, and the address the client connected to (the bound address, or, bound to an
    /// unspecified address, the interface's) as an IP literal.
    fn hosts(&self, local: SocketAddr) -> [String; 4] {
        let port = self.port;
        let local = SocketAddr::new(local.ip().to_canonical(), local.port());
        [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}"), local.to_string()]
    }

    /// Whether `req`, received on a connection accepted at `local`, may be answered; the error
    /// says why not (answered 403). The page's own files (`/`, `/app.js`, `/style.css`: the
    /// binary's, no run's data) need only the Host; `/api/` needs the secret and, beyond
    /// loopback, the token header; `/report/` beyond loopback a ticket as its first segment.
    pub fn check(&self, req: &Request, local: SocketAddr) -> std::result::Result<(), Invalid> {
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
        if req.param("token").is_some() {
            return Err(Invalid::from(
                "the token goes in the URL's fragment (http://HOST:PORT/#token=...), never to the server in the address",
            ));
        }
        let path = req.path();
        if path.starts_with("/api/") {
            if !req.header(SECRET_HEADER).is_some_and(|s| same(s, &self.secret)) {
                return Err(Invalid::from("the API answers the viewer's own page only (its X-Lucid-View header)"));
            }
            if self.beyond && !req.header(TOKEN_HEADER).is_some_and(|t| same(t, &self.token)) {
                return Err(Invalid::from(
                    "this server needs the token it printed when it started: open the URL it printed \
                     (http://HOST:PORT/#token=...)",
                ));
            }
        } else if self.beyond && path.starts_with("/report/") {
            let ticket = path["/report/".len()..].strip_prefix('~').and_then(|r| r.split('/').next());
            if !ticket.is_some_and(|t| self.ticketed(t)) {
                return Err(Invalid::from("a run's report opens from the viewer's page (its link holds a ticket)"));
            }
        }
        Ok(())
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
    fn beyond_loopback_the_api_needs_the_token_header_and_reports_a_ticket() {
        let gate = Gate::new(8377, true).unwrap();
        let local: SocketAddr = "192.0.2.2:8377".parse().unwrap();
        let secret = gate.meta().split('"').nth(3).unwrap().to_string();
        let host = ("host", "192.0.2.2:8377");
        assert_eq!(gate.check(&request("GET", "/", &[host]), local), Ok(()));
        assert!(gate.check(&request("GET", "/", &[("host", "evil.example:8377")]), local).is_err());
        let token = format!("/?token={}", gate.token());
        assert!(gate.check(&request("GET", &token, &[host]), local).is_err(), "never in the address");
        let api = [host, ("x-lucid-view", secret.as_str())];
        assert!(gate.check(&request("GET", "/api/data", &api), local).is_err());
        let cookie = format!("lucid_view_8377={}", gate.token());
        let cookied = [host, ("x-lucid-view", secret.as_str()), ("cookie", cookie.as_str())];
        assert!(gate.check(&request("GET", "/api/data", &cookied), local).is_err(), "a cookie is not the token");
        let with = [host, ("x-lucid-view", secret.as_str()), ("x-lucid-token", gate.token())];
        assert_eq!(gate.check(&request("GET", "/api/data", &with), local), Ok(()));
        assert!(gate.check(&request("GET", "/report/study/report.html", &[host]), local).is_err());
        let ticket = gate.ticket().unwrap();
        let ticketed = format!("/report/~{ticket}/study/report.html");
        assert_eq!(gate.check(&request("GET", &ticketed, &[host]), local), Ok(()));
        assert!(gate.check(&request("GET", "/report/~0123/study/report.html", &[host]), local).is_err());
    }

    #[test]
    fn the_api_needs_the_secret_and_no_origin_but_its_own() {
        let gate = Gate::new(80, false).unwrap();
        let local: SocketAddr = "127.0.0.1:80".parse().unwrap();
        let secret = gate.meta().split('"').nth(3).unwrap().to_string();
        assert_eq!(gate.check(&request("GET", "/", &[("host", "localhost")]), local), Ok(()));
        assert!(gate.check(&request("GET", "/api/data", &[("host", "localhost")]), local).is_err());
        let api = [("host", "127.0.0.1"), ("x-lucid-view", secret.as_str())];
        assert_eq!(gate.check(&request("GET", "/api/data", &api), local), Ok(()));
        let cross = [("host", "127.0.0.1"), ("x-lucid-view", secret.as_str()), ("origin", "http://evil.example")];
        assert!(gate.check(&request("GET", "/api/data", &cross), local).is_err());
        let own = [("host", "127.0.0.1"), ("x-lucid-view", secret.as_str()), ("origin", "http://127.0.0.1")];
        assert_eq!(gate.check(&request("POST", "/api/query", &own), local), Ok(()));
        assert!(gate.check(&request("OPTIONS", "/api/query", &[("host", "127.0.0.1")]), local).is_err());
        assert_ne!(gate.token(), secret);
    }
}
