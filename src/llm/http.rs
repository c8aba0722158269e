//! The HTTP machinery shared by the OpenAI-compatible and Anthropic backends: one reqwest client
//! on a small tokio runtime, a bound on calls in flight per endpoint (shared by every client of
//! the process that talks to the same server and model), retries on 429/5xx/timeouts/dropped
//! connections/malformed bodies, and an API key held so it can never be printed.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, LazyLock, Mutex};
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::retry::{Attempt, RetryPolicy};
use super::{CallFailure, ChatRequest, Completion, cut_at_stop};
use crate::error::{Error, Fault, Result};

/// An API key. Its `Debug` never shows it; `redact` scrubs it from any text.
#[derive(Clone)]
pub struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

impl Secret {
    /// Read the key from environment variable `var` (an error names the variable, never a value).
    pub fn from_env(var: &str) -> Result<Secret> {
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Ok(Secret(v.trim().to_string())),
            _ => Err(Error::environment(format!("environment variable {var} (the API key) is not set"))),
        }
    }

    /// The key, for a request header only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced.
    pub fn redact(&self, text: &str) -> String {
        if self.0.len() < 4 { text.to_string() } else { text.replace(&self.0, "[redacted]") }
    }
}

/// A base URL as one server has one name: surrounding space and trailing `/` removed, scheme
/// and host lower-cased, the scheme's default port dropped (`HTTP://Host:80/v1/` is
/// `http://host/v1`). The path keeps its case.
pub fn normalize_base_url(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let scheme = scheme.to_ascii_lowercase();
    let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    let mut authority = authority.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => Some(":80"),
        "https" => Some(":443"),
        _ => None,
    };
    if let Some(port) = default_port.filter(|p| authority.ends_with(p)) {
        authority.truncate(authority.len() - port.len());
    }
    format!("{scheme}://{authority}{path}")
}

/// A counting semaphore for calls in flight.
struct Permits {
    free: Mutex<usize>,
    cv: Condvar,
    /// The bound it was made with.
    size: usize,
}

/// One semaphore per endpoint (normalised base URL + model) for the whole process: every loop
/// instance, arm and seed that calls the same server and model shares its `max_concurrency`.
/// The first client of an endpoint sets the bound; a later client asking another is warned.
fn endpoint_permits(endpoint: &str, max_concurrency: usize) -> Arc<Permits> {
    static ENDPOINTS: LazyLock<Mutex<HashMap<String, Arc<Permits>>>> = LazyLock::new(Default::default);
    let size = max_concurrency.max(1);
    let mut map = ENDPOINTS.lock().expect("endpoints lock");
    let permits = map
        .entry(endpoint.to_string())
        .or_insert_with(|| Arc::new(Permits { free: Mutex::new(size), cv: Condvar::new(), size }))
        .clone();
    if permits.size != size {
        eprintln!(
            "warning: {endpoint}: max_concurrency {size} ignored, this process already bounds the endpoint to {}",
            permits.size
        );
    }
    permits
}

impl Permits {
    fn acquire(&self) -> PermitGuard<'_> {
        let mut free = self.free.lock().expect("permits lock");
        while *free == 0 {
            free = self.cv.wait(free).expect("permits lock");
        }
        *free -= 1;
        PermitGuard(self)
    }
}

struct PermitGuard<'a>(&'a Permits);

impl Drop for PermitGuard<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().expect("permits lock") += 1;
        self.0.cv.notify_one();
    }
}

/// Reads (text, prompt tokens, generated tokens) out of an API's JSON response.
pub type ParseFn<'a> = &'a dyn Fn(&serde_json::Value) -> std::result::Result<(String, u32, u32), Fault>;

/// A JSON-over-HTTP client with retries and a concurrency bound.
pub struct HttpClient {
    client: reqwest::Client,
    rt: tokio::runtime::Runtime,
    permits: Arc<Permits>,
    retry: RetryPolicy,
    key: Option<Secret>,
}

impl HttpClient {
    /// A client with a per-request `timeout`, at most `max_concurrency` calls in flight to
    /// `endpoint` across the process (see [`endpoint_permits`]).
    pub fn new(
        endpoint: &str,
        timeout: Duration,
        max_concurrency: usize,
        retry: RetryPolicy,
        key: Option<Secret>,
    ) -> Result<HttpClient> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| Error::model_from("cannot build HTTP client", e))?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| Error::model_from("cannot start async runtime", e))?;
        Ok(HttpClient { client, rt, permits: endpoint_permits(endpoint, max_concurrency), retry, key })
    }

    /// The key, if this backend has one.
    pub fn key(&self) -> Option<&Secret> {
        self.key.as_ref()
    }

    /// `authorization: Bearer <key>` when there is a key (OpenAI-compatible servers).
    pub fn bearer(&self) -> Vec<(&'static str, String)> {
        self.key().map(|k| vec![("authorization", format!("Bearer {}", k.expose()))]).unwrap_or_default()
    }

    fn scrub(&self, text: &str) -> String {
        self.key.as_ref().map_or_else(|| text.to_string(), |k| k.redact(text))
    }

    /// POST `body` to `url` with `headers`; returns the parsed JSON response and the attempts made.
    pub fn post_json(
        &self,
        url: &str,
        headers: &[(&'static str, String)],
        body: &serde_json::Value,
    ) -> (std::result::Result<serde_json::Value, Fault>, u32) {
        let _permit = self.permits.acquire();
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            match HeaderValue::from_str(v) {
                Ok(mut hv) => {
                    hv.set_sensitive(true);
                    map.insert(HeaderName::from_static(k), hv);
                }
                Err(_) => return (Err(Fault::new(format!("header {k} has characters HTTP does not allow"))), 0),
            }
        }
        let (result, attempts) = self.retry.run(|_| self.rt.block_on(self.attempt(url, &map, body)));
        (result.map_err(|f| Fault::new(self.scrub(&f.to_string()))), attempts)
    }

    /// One chat call: POST, parse with the API's `parse`, cut at stop sequences, account time.
    pub fn chat_call(
        &self,
        url: &str,
        headers: &[(&'static str, String)],
        body: &serde_json::Value,
        req: &ChatRequest,
        parse: ParseFn<'_>,
    ) -> std::result::Result<Completion, CallFailure> {
        let start = std::time::Instant::now();
        let (result, attempts) = self.post_json(url, headers, body);
        let (text, tokens_in, tokens_out) =
            result.and_then(|v| parse(&v)).map_err(|f| CallFailure { message: f.to_string(), attempts })?;
        Ok(Completion {
            text: cut_at_stop(&text, &req.decoding.stop),
            tokens_in,
            tokens_out,
            latency: start.elapsed(),
            attempts,
            cache_hit: false,
        })
    }

    async fn attempt(&self, url: &str, headers: &HeaderMap, body: &serde_json::Value) -> Attempt<serde_json::Value> {
        let resp = match self.client.post(url).headers(headers.clone()).json(body).send().await {
            Ok(r) => r,
            Err(e) => {
                let kind = if e.is_timeout() { "timed out" } else { "connection failed" };
                return Attempt::Retry { message: self.scrub(&format!("{kind}: {e}")), retry_after: None };
            }
        };
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .and_then(|s| Duration::try_from_secs_f64(s).ok());
        let text = match resp.text().await {
            Ok(t) => t,
            Err(e) => {
                return Attempt::Retry { message: self.scrub(&format!("reading the body failed: {e}")), retry_after };
            }
        };
        let excerpt: String = self.scrub(&text).chars().take(300).collect();
        if status.as_u16() == 429 || status.as_u16() == 408 || status.is_server_error() {
            return Attempt::Retry { message: format!("HTTP {status}: {excerpt}"), retry_after };
        }
        if !status.is_success() {
            return Attempt::Fatal(format!("HTTP {status}: {excerpt}"));
        }
        match serde_json::from_str(&text) {
            Ok(v) => Attempt::Ok(v),
            Err(e) => {
                Attempt::Retry { message: format!("malformed JSON response ({e}): {excerpt}"), retry_after: None }
            }
        }
    }
}
