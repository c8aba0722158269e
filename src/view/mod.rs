//! `lucid view`: a page over one or more runs, served on loopback by this process (every asset in
//! the binary, nothing from the internet) or exported as static files that open from disk.
//!
//! The page ([`assets`]) holds every episode's table row (a few hundred bytes each) and filters,
//! sorts and pairs them itself; an episode's body (its task, memories, model calls, votes) is
//! fetched when opened — from the server, or from the export's chunk files. The server answers one
//! request per connection and checks that the Host (and the Origin, when sent) is the address it
//! serves, so a page of another site cannot read it through DNS rebinding; served on an address
//! other than loopback it also requires the session's token (in the printed URL).

pub mod assets;
pub mod data;
pub mod export;

use std::io::BufReader;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Component, Path};

use serde_json::{Value, json};

use crate::error::{Error, Invalid, Result};
use crate::loopback::{Request, read_request, respond};
use data::Catalog;

/// The page's data as a script (`window.LUCID_DATA = {...}`): the runs, their rows, the
/// comparison, and whether a server answers (the SQL box and the search of model text).
pub fn data_script(c: &Catalog, served: bool) -> String {
    let runs: Vec<Value> = c
        .runs
        .iter()
        .map(|r| json!({"name": r.name, "artifact": r.artifact, "report": r.path.join("report/report.html").is_file()}))
        .collect();
    let data = json!({"runs": runs, "rows": c.rows, "verifiers": c.verifiers, "compare": c.compare,
                      "served": served, "compare_sql": data::COMPARE_SQL});
    format!("window.LUCID_DATA = {data};\n")
}

/// A server on `addr` over `catalog`.
pub struct Server {
    listener: TcpListener,
    catalog: Catalog,
    /// Required on every request when served beyond loopback.
    token: Option<String>,
    data: String,
}

impl Server {
    /// Bind `addr` (`127.0.0.1:0` picks a free port). Beyond loopback a token is required.
    pub fn bind(addr: &str, catalog: Catalog) -> Result<Server> {
        let listener = TcpListener::bind(addr).map_err(|e| Error::usage(format!("cannot listen on {addr}: {e}")))?;
        let local = listener.local_addr().map_err(|e| Error::usage(e.to_string()))?;
        let token = (!local.ip().is_loopback()).then(new_token);
        let data = data_script(&catalog, true);
        Ok(Server { listener, catalog, token, data })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.listener.local_addr().expect("bound")
    }

    /// The URL to open.
    pub fn url(&self) -> String {
        let addr = self.addr();
        let host = if addr.ip().is_unspecified() { format!("127.0.0.1:{}", addr.port()) } else { addr.to_string() };
        match &self.token {
            Some(t) => format!("http://{host}/?token={t}"),
            None => format!("http://{host}/"),
        }
    }

    /// Answer requests until the process ends.
    pub fn serve(&self) {
        for conn in self.listener.incoming().flatten() {
            self.answer(conn);
        }
    }

    fn answer(&self, conn: TcpStream) {
        let Ok(read) = conn.try_clone() else { return };
        let mut conn = conn;
        let req = match read_request(&mut BufReader::new(read)) {
            Ok(r) => r,
            Err(why) => return respond(&mut conn, 400, "text/plain", "", why.0.as_bytes()),
        };
        if let Err(why) = self.allowed(&req) {
            return respond(&mut conn, 403, "text/plain", "", why.0.as_bytes());
        }
        let (status, kind, body) = self.route(&req);
        respond(&mut conn, status, kind, "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n", &body);
    }

    /// Whether `req` may be answered: its Host is this server's, its Origin (if any) too, and it
    /// carries the token where one is required.
    fn allowed(&self, req: &Request) -> std::result::Result<(), Invalid> {
        let port = self.addr().port();
        let mut hosts = vec![format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")];
        if !self.addr().ip().is_unspecified() {
            hosts.push(self.addr().to_string());
        }
        let host = req.header("host").unwrap_or("");
        if self.token.is_none() && !hosts.iter().any(|h| h == host) {
            return Err(Invalid(format!("Host '{host}' is not this server's")));
        }
        if let Some(origin) = req.header("origin") {
            let ok = origin.strip_prefix("http://").is_some_and(|o| o == host);
            if !ok {
                return Err(Invalid(format!("Origin '{origin}' is not this server's")));
            }
        }
        let static_file = matches!(req.path(), "/" | "/app.js" | "/style.css");
        match &self.token {
            Some(t) if !static_file && req.param("token").as_deref() != Some(t.as_str()) => {
                Err("a token is required".into())
            }
            _ => Ok(()),
        }
    }

    fn route(&self, req: &Request) -> (u16, &'static str, Vec<u8>) {
        let js = "text/javascript; charset=utf-8";
        let json_of = |r: Result<Value>| match r {
            Ok(v) => (200, "application/json", v.to_string().into_bytes()),
            Err(e) => (400, "application/json", json!({"error": e.to_string()}).to_string().into_bytes()),
        };
        match (req.method.as_str(), req.path()) {
            ("GET", "/") => {
                let page = match &self.token {
                    Some(t) => assets::INDEX.replace("src=\"data.js\"", &format!("src=\"data.js?token={t}\"")),
                    None => assets::INDEX.to_string(),
                };
                (200, "text/html; charset=utf-8", page.into_bytes())
            }
            ("GET", "/app.js") => (200, js, assets::APP.as_bytes().to_vec()),
            ("GET", "/style.css") => (200, "text/css; charset=utf-8", assets::STYLE.as_bytes().to_vec()),
            ("GET", "/data.js") => (200, js, self.data.as_bytes().to_vec()),
            ("GET", "/api/episode") => json_of(self.catalog.episode(&req.param("key").unwrap_or_default())),
            ("GET", "/api/search") => {
                json_of(self.catalog.search(&req.param("q").unwrap_or_default()).map(|keys| json!(keys)))
            }
            ("POST", "/api/query") => json_of(self.catalog.query(&String::from_utf8_lossy(&req.body))),
            ("GET", p) if p.starts_with("/report/") => self.report_file(&p["/report/".len()..]),
            _ => (404, "text/plain", b"not found".to_vec()),
        }
    }

    /// A file of a run's report folder: `/report/<run>/<file>`.
    fn report_file(&self, rest: &str) -> (u16, &'static str, Vec<u8>) {
        let decoded: String = url::form_urlencoded::parse(format!("p={rest}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        let (run, file) = decoded.split_once('/').unwrap_or((&decoded, "report.html"));
        let file = if file.is_empty() { "report.html" } else { file };
        let safe = Path::new(file).components().all(|c| matches!(c, Component::Normal(_)));
        let Some(info) = self.catalog.runs.iter().find(|r| r.name == run).filter(|_| safe) else {
            return (404, "text/plain", b"not found".to_vec());
        };
        match std::fs::read(info.path.join("report").join(file)) {
            Ok(bytes) => (200, content_type(file), bytes),
            Err(_) => (404, "text/plain", b"not found".to_vec()),
        }
    }
}

fn content_type(file: &str) -> &'static str {
    match Path::new(file).extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("json") => "application/json",
        Some("csv") | Some("md") | Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// A token no other page can guess: 128 bits from the kernel's random source.
fn new_token() -> String {
    let mut bytes = [0u8; 16];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = std::io::Read::read_exact(&mut f, &mut bytes);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
