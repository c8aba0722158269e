//! The OpenAI-compatible endpoint an agent program's model calls go through: a small HTTP/1.1
//! server on loopback (`POST .../v1/chat/completions`, `GET .../v1/models`) that forwards each
//! request to the stage's model — an HTTP server, Anthropic, the local model or replay, with the
//! response cache, retries and keys of lucid's backends — and records it as a `calls` row of the
//! episode it belongs to. Each episode gets its own base URL (`http://127.0.0.1:PORT/e/TOKEN/v1`)
//! on a port of its own (the one its box may connect to) with a token of 128 random bits, so a
//! call is attributed by its path, whatever client sent it, and no episode can reach or guess
//! another's: a call on a closed or unknown endpoint is refused (404) and recorded nowhere. The
//! key the program holds is a dummy (the real one never leaves lucid).
//!
//! Bounded whatever a program sends: [`CONNECTIONS`] connections answered at once per episode
//! (more are answered 503 and closed, with no thread), each given [`REQUEST_WAIT`] for its whole
//! request, a head of at most [`MAX_HEAD`] and a body of at most [`MAX_BODY`] (400 past them),
//! and all episodes' bodies together at most [`BODIES`] (503 before a body that would pass it is
//! read). Each episode's calls are answered in its own scope ([`ChatRequest::scope`]): a prompt an
//! earlier episode sent is not in its response cache, so how fast an answer comes says nothing
//! of what another episode asked; a rerun or replay of the same episode still finds its own.
//!
//! Requests are translated field by field: `messages` (`system`, `developer` as system, `user`,
//! `assistant`; text content, as a string or text parts), `max_tokens` /
//! `max_completion_tokens`, `temperature`, `top_p`, `seed`, `stop`, `n` = 1, `stream` = false,
//! `model` and `user` (ignored: the stage's model answers). Anything else — `tools`,
//! `response_format`, `logprobs`, `stream: true`, `n > 1`, penalties — is refused with HTTP 400
//! naming the field, never dropped. A call that fails after its retries (a replay miss: "request
//! not in the recorded calls") answers HTTP 502 and is recorded as failed.

use std::collections::HashMap;
use std::io::BufReader;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::error::{Error, Invalid, Result};
use crate::llm::{ChatModel, ChatRequest, Decoding, Message, Role};
use crate::loopback::{Deadline, Place, RequestRefusal, read_request_bounded, respond};
use crate::seam::recorded::recorded_call;
use crate::seam::records::CallRecord;

/// The connections one episode's endpoint answers at once (more are answered 503 at once).
pub const CONNECTIONS: usize = 8;
/// The time a connection has to send its whole request.
pub const REQUEST_WAIT: Duration = Duration::from_secs(10);
/// The largest request head (request line and headers together).
pub const MAX_HEAD: usize = 64 << 10;
/// The largest request body: a chat request's prompt many times over.
pub const MAX_BODY: usize = 8 << 20;
/// The request bodies all episodes' endpoints may hold at once (a body that would pass it is
/// answered 503 before it is read): with [`CONNECTIONS`] heads per episode, what bounds the
/// proxy's memory however many connections a program opens.
pub const BODIES: usize = 64 << 20;

/// The calls of the episodes with an open ticket, by token.
type Open = Arc<Mutex<HashMap<String, (u64, i64, String, Vec<CallRecord>)>>>;

/// The endpoint: one loopback listener per open ticket, all answered by the stage's model.
pub struct Proxy {
    model: Arc<dyn ChatModel>,
    open: Open,
    bodies: Arc<AtomicUsize>,
}

/// One episode's way in: its base URL on a port of its own, and the token its calls are filed
/// under; its listener stops when the ticket is closed.
pub struct Ticket {
    /// `http://127.0.0.1:PORT/e/TOKEN/v1`.
    pub base_url: String,
    token: String,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Proxy {
    /// The endpoint for `model`.
    pub fn start(model: Arc<dyn ChatModel>) -> Result<Proxy> {
        Ok(Proxy { model, open: Arc::default(), bodies: Arc::default() })
    }

    /// Open a ticket for the episode at `step` of task `question_id`, whose calls are answered
    /// in `scope` ([`ChatRequest::scope`]: the response cache and the prefix states of no other
    /// episode): a port of its own (the only one its box may connect to), so no other
    /// episode's connections can crowd it out.
    pub fn open(&self, step: u64, question_id: i64, scope: String) -> Result<Ticket> {
        // 128 random bits from the thread's CSPRNG: no episode can guess another's endpoint.
        let token = format!("{:032x}", rand::random::<u128>());
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| Error::input("proxy", e.to_string()))?;
        let addr = listener.local_addr().map_err(|e| Error::input("proxy", e.to_string()))?;
        self.open.lock().expect("lock").insert(token.clone(), (step, question_id, scope, Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, model, open, bodies) = (stop.clone(), self.model.clone(), self.open.clone(), self.bodies.clone());
        let thread = std::thread::spawn(move || {
            let answering = Arc::new(AtomicUsize::new(0));
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                let Some(place) = Place::take(&answering, CONNECTIONS) else {
                    let why = format!("more than {CONNECTIONS} connections at once to this episode's endpoint");
                    respond(
                        &mut conn,
                        503,
                        "application/json",
                        "",
                        error_body(&why, "overloaded").to_string().as_bytes(),
                    );
                    continue;
                };
                let (model, open, bodies) = (model.clone(), open.clone(), bodies.clone());
                std::thread::spawn(move || {
                    serve(conn, model.as_ref(), &open, &bodies);
                    drop(place);
                });
            }
        });
        Ok(Ticket { base_url: format!("http://{addr}/e/{token}/v1"), token, addr, stop, thread: Some(thread) })
    }

    /// Close `ticket`: its listener stopped, and the calls made under it, in the order they
    /// finished (a connection still being answered files nothing more).
    pub fn close(&self, mut ticket: Ticket) -> Vec<CallRecord> {
        ticket.stop.store(true, Ordering::SeqCst);
        // Wake the accepting thread.
        let _ = TcpStream::connect(ticket.addr);
        if let Some(t) = ticket.thread.take() {
            let _ = t.join();
        }
        self.open.lock().expect("lock").remove(&ticket.token).map(|e| e.3).unwrap_or_default()
    }
}

/// Answer one connection (one request; `Connection: close`), its request read within
/// [`REQUEST_WAIT`] and the size bounds, its body counted against [`BODIES`].
fn serve(conn: TcpStream, model: &dyn ChatModel, open: &Open, bodies: &Arc<AtomicUsize>) {
    let Ok(read) = conn.try_clone() else { return };
    let mut reader = BufReader::new(Deadline::new(read, REQUEST_WAIT));
    let mut held = None;
    let reserve = |n: usize| {
        let got = bodies.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |h| (h + n <= BODIES).then_some(h + n));
        got.is_ok().then(|| Reservation(bodies.clone(), n))
    };
    let (status, body) = match read_request_bounded(&mut reader, MAX_HEAD, MAX_BODY, |n| {
        held = reserve(n);
        held.is_some()
    }) {
        Err(RequestRefusal::Busy(why)) => (503, error_body(&why.0, "overloaded")),
        Err(RequestRefusal::Malformed(why)) => (400, error_body(&why.0, "invalid_request_error")),
        Ok(req) => route(&req.method, &req.target, &req.body, model, open),
    };
    drop(held);
    // lucid retried already: the client must not (the OpenAI and Anthropic SDKs read this).
    let extra = if status == 200 { "" } else { "x-should-retry: false\r\n" };
    let mut conn = conn;
    respond(&mut conn, status, "application/json", extra, body.to_string().as_bytes());
}

/// Bytes of [`BODIES`] held by one request, given back when dropped.
struct Reservation(Arc<AtomicUsize>, usize);

impl Drop for Reservation {
    fn drop(&mut self) {
        self.0.fetch_sub(self.1, Ordering::SeqCst);
    }
}

/// An OpenAI-style error body.
fn error_body(message: &str, kind: &str) -> Value {
    json!({"error": {"message": message, "type": kind}})
}

/// Status and body for `method path` with `body`.
fn route(method: &str, path: &str, body: &[u8], model: &dyn ChatModel, open: &Open) -> (u16, Value) {
    let Some(rest) = path.strip_prefix("/e/") else {
        return (404, error_body(&format!("no such endpoint: {path}"), "not_found"));
    };
    let (token, rest) = rest.split_once('/').unwrap_or((rest, ""));
    let Some((step, question_id, scope)) = open.lock().expect("lock").get(token).map(|e| (e.0, e.1, e.2.clone()))
    else {
        return (404, error_body("this episode's endpoint is closed", "not_found"));
    };
    match (method, rest) {
        ("GET", "v1/models") => {
            (200, json!({"object": "list", "data": [{"id": model.identity().model, "object": "model"}]}))
        }
        ("POST", "v1/chat/completions") => {
            let req = serde_json::from_slice::<Value>(body)
                .map_err(|e| Invalid(format!("the body is not JSON: {e}")))
                .and_then(|v| chat_request(&v));
            let req = match req {
                Ok(r) => ChatRequest { scope: Some(scope), ..r },
                Err(why) => return (400, error_body(&why.0, "invalid_request_error")),
            };
            let (out, rec) = recorded_call(model, &req, step, question_id, "agent");
            if let Some(e) = open.lock().expect("lock").get_mut(token) {
                e.3.push(rec);
            }
            match out {
                Ok(c) => (
                    200,
                    json!({
                        "id": "chatcmpl-lucid",
                        "object": "chat.completion",
                        "created": 0,
                        "model": model.identity().model,
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": c.text}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": c.tokens_in, "completion_tokens": c.tokens_out,
                                  "total_tokens": c.tokens_in + c.tokens_out}
                    }),
                ),
                Err(f) => (502, error_body(&f.message, "lucid_model_error")),
            }
        }
        _ => (404, error_body(&format!("no such endpoint: {method} /{rest}"), "not_found")),
    }
}

/// The fields a request may carry and what lucid does with each (any other is refused).
const FIELDS: &[&str] = &[
    "model",
    "messages",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "n",
    "stream",
    "user",
];

/// A chat completions request as lucid's [`ChatRequest`]; an error names the field it cannot honour.
pub fn chat_request(v: &Value) -> std::result::Result<ChatRequest, Invalid> {
    let obj = v.as_object().ok_or("the request is not a JSON object")?;
    if let Some(k) = obj.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(Invalid(format!(
            "field '{k}' is not supported by lucid's proxy (supported: {})",
            FIELDS.join(", ")
        )));
    }
    let refuse = |field: &str, why: &str| Invalid(format!("field '{field}': {why}"));
    if obj.get("stream").is_some_and(|s| s != &Value::Bool(false) && !s.is_null()) {
        return Err(refuse("stream", "streaming is not supported; send stream: false"));
    }
    if obj.get("n").is_some_and(|n| n != &json!(1) && !n.is_null()) {
        return Err(refuse("n", "only n = 1 is supported"));
    }
    let mut messages = Vec::new();
    for (i, m) in obj.get("messages").and_then(Value::as_array).ok_or("field 'messages' is missing")?.iter().enumerate()
    {
        let role = match m.get("role").and_then(Value::as_str) {
            Some("system" | "developer") => Role::System,
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            other => return Err(refuse(&format!("messages[{i}].role"), &format!("{other:?} is not supported"))),
        };
        if let Some(k) =
            m.as_object().and_then(|o| o.keys().find(|k| !["role", "content", "name"].contains(&k.as_str())))
        {
            return Err(refuse(&format!("messages[{i}].{k}"), "not supported"));
        }
        let content = match m.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => {
                let mut text = String::new();
                for (j, p) in parts.iter().enumerate() {
                    match (p.get("type").and_then(Value::as_str), p.get("text").and_then(Value::as_str)) {
                        (Some("text"), Some(t)) => text.push_str(t),
                        _ => {
                            return Err(refuse(
                                &format!("messages[{i}].content[{j}]"),
                                "only text parts are supported",
                            ));
                        }
                    }
                }
                text
            }
            _ => return Err(refuse(&format!("messages[{i}].content"), "must be text")),
        };
        messages.push(Message { role, content });
    }
    let num = |k: &str| {
        obj.get(k).filter(|v| !v.is_null()).map(|v| v.as_f64().ok_or(refuse(k, "must be a number"))).transpose()
    };
    let mut decoding = Decoding::default();
    let whole = |k: &str, lo: f64, hi: f64| -> std::result::Result<Option<f64>, Invalid> {
        match num(k)? {
            Some(x) if x.fract() != 0.0 || x < lo || x > hi => {
                Err(refuse(k, &format!("must be a whole number in {lo}..={hi}")))
            }
            x => Ok(x),
        }
    };
    // Both checked, whichever is used (max_completion_tokens first).
    let (completion, max) =
        (whole("max_completion_tokens", 1.0, f64::from(u32::MAX))?, whole("max_tokens", 1.0, f64::from(u32::MAX))?);
    if let Some(t) = completion.or(max) {
        decoding.max_tokens = t as u32;
    }
    if let Some(t) = num("temperature")? {
        if !(0.0..=2.0).contains(&t) {
            return Err(refuse("temperature", "must be in 0..=2"));
        }
        decoding.temperature = t;
    }
    decoding.top_p = match num("top_p")? {
        Some(p) if !(p > 0.0 && p <= 1.0) => return Err(refuse("top_p", "must be in (0, 1]")),
        p => p,
    };
    if let Some(s) = whole("seed", 0.0, u64::MAX as f64)? {
        decoding.seed = s as u64;
    }
    decoding.stop = match obj.get("stop") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .map(|s| s.as_str().map(str::to_string).ok_or(refuse("stop", "must be text")))
            .collect::<std::result::Result<_, _>>()?,
        _ => return Err(refuse("stop", "must be a string or a list of strings")),
    };
    Ok(ChatRequest { messages, decoding, sample_index: 0, scope: None })
}
