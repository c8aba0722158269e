//! A real HTTP/1.1 server on loopback that speaks just enough of the OpenAI and Anthropic chat
//! APIs, with a script of faults: 429 with Retry-After, 5xx, slow answers, dropped connections and
//! malformed JSON. Every request is logged. It serves until dropped; its loops are bounded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server does with one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// 200 with a chat answer in the API's shape (by path) saying `text`.
    Answer(&'static str),
    /// A status with a body and optional Retry-After seconds.
    Status(u16, &'static str, Option<&'static str>),
    /// Close the connection without answering.
    Drop,
    /// Wait, then answer.
    Slow(Duration, &'static str),
    /// 200 with a body that is not JSON.
    Malformed,
    /// 500 whose body echoes the request's auth headers (a server that leaks them).
    EchoAuth,
    /// 200 with the answer a function computes from the last message's text (a scripted model).
    Scripted(fn(&str) -> String),
    /// As `Scripted`, with a closure (a model that knows a fixture, or sleeps).
    Func(Answerer),
    /// 200 with the whole JSON body a function computes from the request's body (a server with
    /// extensions: log-probabilities).
    Body(fn(&serde_json::Value) -> serde_json::Value),
    /// The first attempt of each distinct request meets the next fault while faults remain; every
    /// other attempt is answered by the function: transient faults that one retry always recovers,
    /// whatever the concurrency.
    Flaky(Arc<Flaky>),
}

/// The state of a [`Reply::Flaky`] server.
pub struct Flaky {
    faults: Mutex<std::collections::VecDeque<Reply>>,
    seen: Mutex<std::collections::HashSet<String>>,
    answer: fn(&str) -> String,
}

impl Flaky {
    /// Faults not yet thrown.
    pub fn faults_left(&self) -> usize {
        self.faults.lock().unwrap().len()
    }
}

impl std::fmt::Debug for Flaky {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Flaky")
    }
}

impl Reply {
    /// A [`Reply::Flaky`] with these faults before `answer`.
    pub fn flaky(faults: Vec<Reply>, answer: fn(&str) -> String) -> Reply {
        Reply::Flaky(Arc::new(Flaky { faults: Mutex::new(faults.into()), seen: Default::default(), answer }))
    }
}

/// A closure that answers a prompt.
#[derive(Clone)]
pub struct Answerer(pub Arc<dyn Fn(&str) -> String + Send + Sync>);

impl std::fmt::Debug for Answerer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Answerer")
    }
}

impl Reply {
    /// A reply computed by `f` from the last message's text.
    pub fn func(f: impl Fn(&str) -> String + Send + Sync + 'static) -> Reply {
        Reply::Func(Answerer(Arc::new(f)))
    }
}

/// A logged request.
#[derive(Clone, Debug)]
pub struct Logged {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: serde_json::Value,
}

pub struct FakeServer {
    pub url: String,
    pub log: Arc<Mutex<Vec<Logged>>>,
    pub max_in_flight: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl FakeServer {
    /// Serve `script` in order, then `rest` forever.
    pub fn start(script: Vec<Reply>, rest: Reply) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let script = Arc::new(Mutex::new(std::collections::VecDeque::from(script)));
        let (in_flight, max_in_flight) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (log2, stop2, max2) = (log.clone(), stop.clone(), max_in_flight.clone());
        std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let reply = script.lock().unwrap().pop_front().unwrap_or_else(|| rest.clone());
                        let (log, inf, max) = (log2.clone(), in_flight.clone(), max2.clone());
                        std::thread::spawn(move || {
                            let now = inf.fetch_add(1, Ordering::SeqCst) + 1;
                            max.fetch_max(now, Ordering::SeqCst);
                            // A request stops being in flight as its answer is sent (the client
                            // may send the next one the moment it has read this one).
                            let done = std::sync::Once::new();
                            serve(stream, reply, &log, &|| done.call_once(|| _ = inf.fetch_sub(1, Ordering::SeqCst)));
                            done.call_once(|| _ = inf.fetch_sub(1, Ordering::SeqCst));
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        FakeServer { url, log, max_in_flight, stop }
    }

    pub fn requests(&self) -> Vec<Logged> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn answer_body(path: &str, text: &str) -> String {
    if path.ends_with("/messages") {
        serde_json::json!({"content": [{"type": "text", "text": text}], "usage": {"input_tokens": 11, "output_tokens": 3}})
    } else {
        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": text}}], "usage": {"prompt_tokens": 11, "completion_tokens": 3}})
    }
    .to_string()
}

fn serve(stream: TcpStream, reply: Reply, log: &Mutex<Vec<Logged>>, answered: &dyn Fn()) {
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut headers = Vec::new();
    let mut len = 0;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.trim().split_once(':') {
            let (k, v) = (k.trim().to_lowercase(), v.trim().to_string());
            if k == "content-length" {
                len = v.parse().unwrap_or(0);
            }
            headers.push((k, v));
        }
    }
    let mut body = vec![0; len];
    let _ = reader.read_exact(&mut body);
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    let last_message = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    let reply = match reply {
        Reply::Flaky(f) => {
            let first = f.seen.lock().unwrap().insert(body.to_string());
            let fault = if first { f.faults.lock().unwrap().pop_front() } else { None };
            fault.unwrap_or(Reply::Scripted(f.answer))
        }
        other => other,
    };
    let computed = match reply {
        Reply::Body(f) => Some(f(&body).to_string()),
        _ => None,
    };
    log.lock().unwrap().push(Logged { path: path.clone(), headers: headers.clone(), body });
    let mut out = stream;
    let respond = |out: &mut TcpStream, status: u16, body: &str, extra: &str| {
        answered();
        let _ = write!(
            out,
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
            body.len()
        );
    };
    match reply {
        Reply::Answer(t) => respond(&mut out, 200, &answer_body(&path, t), ""),
        Reply::Status(code, body, retry) => {
            let extra = retry.map(|r| format!("Retry-After: {r}\r\n")).unwrap_or_default();
            respond(&mut out, code, body, &extra)
        }
        Reply::Drop => {
            let _ = out.shutdown(std::net::Shutdown::Both);
        }
        Reply::Slow(d, t) => {
            std::thread::sleep(d);
            respond(&mut out, 200, &answer_body(&path, t), "")
        }
        Reply::Malformed => respond(&mut out, 200, "{\"choices\": [", ""),
        Reply::Scripted(f) => respond(&mut out, 200, &answer_body(&path, &f(&last_message)), ""),
        Reply::Func(f) => respond(&mut out, 200, &answer_body(&path, &(f.0)(&last_message)), ""),
        Reply::Flaky(_) => unreachable!("resolved above"),
        Reply::Body(_) => respond(&mut out, 200, computed.as_deref().unwrap_or("{}"), ""),
        Reply::EchoAuth => {
            let echoed: Vec<String> = headers
                .iter()
                .filter(|(k, _)| k == "authorization" || k == "x-api-key")
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            respond(&mut out, 500, &format!("{{\"error\": \"bad gateway, got {}\"}}", echoed.join(" ")), "")
        }
    }
}
