//! The server of `lucid view`: each connection answered on a thread of its own, one request per
//! connection, every request through the [`Gate`] before it is routed (the design is in
//! [`super`]'s documentation).
//!
//! Routes: `/` (the page, with the secret's `<meta>`), `/app.js`, `/style.css`, `/api/data` (the
//! rows as JSON), `/api/episode?key=`, `/api/search?q=`, `POST /api/query` (the SQL box) and
//! `/report/<run>/<file>` (a run's report folder).

use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Component, Path};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use serde_json::{Value, json};

use super::data::Catalog;
use super::guard::Gate;
use super::sql_box::Unanswered;
use super::{assets, data_json, page};
use crate::error::{Error, Result};
use crate::loopback::{Deadline, Place, Request, closed, read_request_within, respond};

/// The most connections answered at once; past them a connection is answered 503 at once.
pub const MAX_CONNECTIONS: usize = 64;

/// How long a client has to send its whole request.
pub const REQUEST_WAIT: Duration = Duration::from_secs(10);

/// How long one write of an answer may wait for the client to read.
const WRITE_WAIT: Duration = Duration::from_secs(30);

/// The largest request body (an SQL query).
const MAX_BODY: usize = 1 << 20;

/// Headers every answer carries.
const SAFE: &str = "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
                    Cross-Origin-Resource-Policy: same-origin\r\nReferrer-Policy: no-referrer\r\n\
                    X-Frame-Options: DENY\r\n";

/// The page's policy: its own script and style only (no inline script or style), no frames.
const PAGE_POLICY: &str =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'";

/// A run's report files' policy: their inline styles and images, no script at all (a report
/// from someone else's run cannot read the server as the page does).
const REPORT_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'";

const HTML: &str = "text/html; charset=utf-8";
const JSON: &str = "application/json";
const TEXT: &str = "text/plain; charset=utf-8";

/// A server on an address over a [`Catalog`].
pub struct Server {
    listener: TcpListener,
    state: Arc<State>,
}

/// What every connection's thread reads.
struct State {
    catalog: Catalog,
    gate: Gate,
    /// `/`: the page with the secret's `<meta>`.
    page: Vec<u8>,
    /// `/api/data`.
    data: Vec<u8>,
    /// The connections being answered.
    open: Arc<AtomicUsize>,
}

/// One answer.
struct Answer {
    status: u16,
    kind: &'static str,
    body: Vec<u8>,
    /// Header lines of its own, each ending in `\r\n`.
    headers: String,
    policy: &'static str,
}

impl Answer {
    fn new(status: u16, kind: &'static str, body: Vec<u8>) -> Answer {
        Answer { status, kind, body, headers: String::new(), policy: PAGE_POLICY }
    }

    fn text(status: u16, message: &str) -> Answer {
        Answer::new(status, TEXT, message.as_bytes().to_vec())
    }

    fn json(status: u16, value: &Value) -> Answer {
        Answer::new(status, JSON, value.to_string().into_bytes())
    }

    fn error(status: u16, message: &str) -> Answer {
        Answer::json(status, &json!({"error": message}))
    }

    fn send(self, conn: &mut impl Write) {
        let extra = format!("{SAFE}Content-Security-Policy: {}\r\n{}", self.policy, self.headers);
        respond(conn, self.status, self.kind, &extra, &self.body);
    }
}

impl Server {
    /// Bind `addr` (`127.0.0.1:0` picks a free port). Beyond loopback every request needs the
    /// launch's token.
    pub fn bind(addr: &str, catalog: Catalog) -> Result<Server> {
        let listener = TcpListener::bind(addr).map_err(|e| Error::usage(format!("cannot listen on {addr}: {e}")))?;
        let local = listener.local_addr().map_err(|e| Error::usage(e.to_string()))?;
        let gate = Gate::new(local.port(), !local.ip().to_canonical().is_loopback())?;
        let page = page(&gate.meta()).into_bytes();
        let data = data_json(&catalog, true).to_string().into_bytes();
        let state = State { catalog, gate, page, data, open: Arc::default() };
        Ok(Server { listener, state: Arc::new(state) })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.listener.local_addr().expect("bound")
    }

    /// The URL to open: beyond loopback with the token (print it once; it is the key).
    pub fn url(&self) -> String {
        let addr = self.addr();
        let host = if addr.ip().is_unspecified() { format!("127.0.0.1:{}", addr.port()) } else { addr.to_string() };
        if self.state.gate.beyond() {
            format!("http://{host}/#token={}", self.state.gate.token())
        } else {
            format!("http://{host}/")
        }
    }

    /// Answer requests until the process ends, each connection on a thread of its own.
    pub fn serve(&self) {
        for conn in self.listener.incoming() {
            let Ok(conn) = conn else {
                // Out of descriptors, say: let connections end before taking more.
                std::thread::sleep(Duration::from_millis(20));
                continue;
            };
            let Some(place) = Place::take(&self.state.open, MAX_CONNECTIONS) else {
                let _ = conn.set_write_timeout(Some(Duration::from_secs(1)));
                let busy = format!("lucid view is answering {MAX_CONNECTIONS} connections: try again");
                Answer::text(503, &busy).send(&mut &conn);
                continue;
            };
            let state = Arc::clone(&self.state);
            // A thread that cannot start drops the connection (closed, unanswered).
            let _ = std::thread::Builder::new().name("lucid view".into()).spawn(move || {
                let _place = place;
                state.answer(conn);
            });
        }
    }
}

impl State {
    /// Read one request from `conn` and answer it.
    fn answer(&self, conn: TcpStream) {
        let _ = conn.set_write_timeout(Some(WRITE_WAIT));
        let (Ok(local), Ok(read)) = (conn.local_addr(), conn.try_clone()) else { return };
        let mut reader = BufReader::new(Deadline::new(read, REQUEST_WAIT));
        let mut conn = conn;
        let req = match read_request_within(&mut reader, MAX_BODY) {
            Ok(req) if req.method.is_empty() => return,
            Ok(req) => req,
            Err(why) => {
                let status = if reader.get_ref().passed() { 408 } else { 400 };
                return Answer::text(status, &why.0).send(&mut conn);
            }
        };
        let answer = match self.gate.check(&req, local) {
            Err(why) => Some(Answer::text(403, &why.0)),
            Ok(()) => self.route(&req, &conn),
        };
        // None: the page went away while its query ran; nobody to answer.
        if let Some(answer) = answer {
            answer.send(&mut conn);
        }
    }

    /// The answer to `req` (already through the gate) on `conn`.
    fn route(&self, req: &Request, conn: &TcpStream) -> Option<Answer> {
        let js = "text/javascript; charset=utf-8";
        let of = |r: Result<Value>| match r {
            Ok(v) => Answer::json(200, &v),
            Err(e) => Answer::error(400, &e.to_string()),
        };
        Some(match (req.method.as_str(), req.path()) {
            ("GET", "/") => Answer::new(200, HTML, self.page.clone()),
            ("GET", "/app.js") => Answer::new(200, js, assets::APP.as_bytes().to_vec()),
            ("GET", "/style.css") => Answer::new(200, "text/css; charset=utf-8", assets::STYLE.as_bytes().to_vec()),
            ("GET", "/api/data") => Answer::new(200, JSON, self.data.clone()),
            ("GET", "/api/episode") => of(self.catalog.episode(&req.param("key").unwrap_or_default())),
            ("POST", "/api/ticket") => of(self.gate.ticket().map(|t| json!({"ticket": t}))),
            ("GET", "/api/search") => of(self.catalog.search(&req.param("q").unwrap_or_default()).map(|k| json!(k))),
            ("POST", "/api/query") => {
                let sql = String::from_utf8_lossy(&req.body);
                match self.catalog.query(&sql, &|| closed(conn)) {
                    Ok(v) => Answer::json(200, &v),
                    Err(Unanswered::Failed(e)) => Answer::error(400, &e.to_string()),
                    Err(Unanswered::Limit(why)) => Answer::error(503, &why),
                    Err(Unanswered::Gone) => return None,
                }
            }
            ("GET", p) if p.starts_with("/report/") => self.report_file(&p["/report/".len()..]),
            _ => Answer::text(404, "not found"),
        })
    }

    /// A file of a run's report folder: `/report/<run>/<file>`.
    fn report_file(&self, rest: &str) -> Answer {
        let decoded: String = url::form_urlencoded::parse(format!("p={rest}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        // `~TICKET/` first: the gate has checked it (beyond loopback, where it is needed).
        let decoded = match decoded.strip_prefix('~') {
            Some(rest) => rest.split_once('/').map_or(String::new(), |(_, r)| r.to_string()),
            None => decoded,
        };
        let (run, file) = decoded.split_once('/').unwrap_or((&decoded, "report.html"));
        let file = if file.is_empty() { "report.html" } else { file };
        let safe = Path::new(file).components().all(|c| matches!(c, Component::Normal(_)));
        let Some(info) = self.catalog.runs.iter().find(|r| r.name == run).filter(|_| safe) else {
            return Answer::text(404, "not found");
        };
        match inside(&info.path, &Path::new("report").join(file)).and_then(|p| std::fs::read(p).ok()) {
            Some(bytes) => Answer { policy: REPORT_POLICY, ..Answer::new(200, content_type(file), bytes) },
            None => Answer::text(404, "not found"),
        }
    }
}

/// `rel` under the run folder `run` as the file it names, if it is a file inside the run's folder
/// once every symlink is resolved: a link in `report/` (or `report/` itself a link) that leads
/// out of the run is not followed; one that stays inside is.
fn inside(run: &Path, rel: &Path) -> Option<std::path::PathBuf> {
    let root = run.canonicalize().ok()?;
    let target = root.join(rel).canonicalize().ok()?;
    (target.starts_with(&root) && target.is_file()).then_some(target)
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
