//! The OpenAI-compatible endpoint an agent program's model calls go through: a small HTTP/1.1
//! server on loopback (`POST .../v1/chat/completions`, `GET .../v1/models`) that forwards each
//! request to the stage's model — an HTTP server, Anthropic, the local model or replay, with the
//! response cache, retries and keys of lucid's backends — and records it as a `calls` row of the
//! episode it belongs to. Each episode gets its own base URL (`http://127.0.0.1:PORT/e/TOKEN/v1`,
//! TOKEN 128 random bits), so a call is attributed by its path, whatever client sent it, and no
//! episode can guess another's: a call on a closed or unknown endpoint is refused (404) and
//! recorded nowhere. The key the program holds is a dummy (the real one never leaves lucid).
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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::recorded::recorded_call;
use crate::error::{Error, Invalid, Result};
use crate::llm::{ChatModel, ChatRequest, Decoding, Message, Role};
use crate::loopback::{read_request, respond};
use crate::seam::records::CallRecord;

/// The calls of the episodes with an open ticket, by token.
type Open = Arc<Mutex<HashMap<String, (u64, i64, Vec<CallRecord>)>>>;

/// The endpoint, serving until dropped.
pub struct Proxy {
    addr: SocketAddr,
    open: Open,
    next: AtomicU64,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// One episode's way in: its base URL, and the token its calls are filed under.
pub struct Ticket {
    /// `http://127.0.0.1:PORT/e/TOKEN/v1`.
    pub base_url: String,
    token: String,
}

impl Proxy {
    /// Serve `model` on a free loopback port.
    pub fn start(model: Arc<dyn ChatModel>) -> Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| Error::input("proxy", e.to_string()))?;
        let addr = listener.local_addr().map_err(|e| Error::input("proxy", e.to_string()))?;
        let (open, stop): (Open, _) = (Arc::default(), Arc::new(AtomicBool::new(false)));
        let (o, s) = (open.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (model, open) = (model.clone(), o.clone());
                std::thread::spawn(move || serve(conn, model.as_ref(), &open));
            }
        });
        Ok(Proxy { addr, open, next: AtomicU64::new(0), stop, thread: Some(thread) })
    }

    /// Open a ticket for the episode at `step` of task `question_id`.
    pub fn open(&self, step: u64, question_id: i64) -> Ticket {
        // 128 random bits from the thread's CSPRNG: no episode can guess another's endpoint; the
        // counter only keeps two tickets apart should the bits ever repeat.
        let token = format!("{:032x}{:x}", rand::random::<u128>(), self.next.fetch_add(1, Ordering::SeqCst));
        self.open.lock().expect("lock").insert(token.clone(), (step, question_id, Vec::new()));
        Ticket { base_url: format!("http://{}/e/{token}/v1", self.addr), token }
    }

    /// Close `ticket`: the calls made under it, in the order they finished.
    pub fn close(&self, ticket: Ticket) -> Vec<CallRecord> {
        self.open.lock().expect("lock").remove(&ticket.token).map(|e| e.2).unwrap_or_default()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accepting thread.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Answer one connection (one request; `Connection: close`).
fn serve(conn: TcpStream, model: &dyn ChatModel, open: &Open) {
    let mut reader = BufReader::new(match conn.try_clone() {
        Ok(c) => c,
        Err(_) => return,
    });
    let (status, body) = match read_request(&mut reader) {
        Err(why) => (400, error_body(&why.0, "invalid_request_error")),
        Ok(req) => route(&req.method, &req.target, &req.body, model, open),
    };
    // lucid retried already: the client must not (the OpenAI and Anthropic SDKs read this).
    let extra = if status == 200 { "" } else { "x-should-retry: false\r\n" };
    let mut conn = conn;
    respond(&mut conn, status, "application/json", extra, body.to_string().as_bytes());
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
    let Some((step, question_id)) = open.lock().expect("lock").get(token).map(|e| (e.0, e.1)) else {
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
                Ok(r) => r,
                Err(why) => return (400, error_body(&why.0, "invalid_request_error")),
            };
            let (out, rec) = recorded_call(model, &req, step, question_id, "agent");
            if let Some(e) = open.lock().expect("lock").get_mut(token) {
                e.2.push(rec);
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
    Ok(ChatRequest { messages, decoding, sample_index: 0 })
}
