//! HTTP backends against a real loopback server with injected faults: every fault ends in a
//! retried success or a recorded failure, concurrency is bounded, and the API key never appears
//! in an error, the response cache or any file written.

use std::sync::Arc;
use std::time::Duration;

use lucid::llm::cache::CachedModel;
use lucid::llm::{ChatModel, ChatRequest, Decoding, Message, ModelConfig};

use crate::support::fake_server::{FakeServer, Reply};

const KEY_VAR: &str = "LUCID_TEST_CANARY_KEY";
const KEY: &str = "sk-test-CANARY-7d1f0a9e5b";

fn set_key() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: set once, before any test thread reads this variable.
    #[allow(unsafe_code)]
    ONCE.call_once(|| unsafe { std::env::set_var(KEY_VAR, KEY) });
}

/// The client's timeout where a timeout is the fault under test (a reply that never comes).
const FAULT_TIMEOUT: f64 = 2.0;

/// The client's timeout everywhere else: far past any answer from a loopback server, so the
/// machine's load never turns an answer into a timeout and a retry.
const UNHURRIED: f64 = 120.0;

fn config(backend: &str, url: &str, timeout_secs: f64, concurrency: usize) -> ModelConfig {
    set_key();
    let yaml = format!(
        "backend: {backend}\nmodel: test-model\nbase_url: {url}\napi_key_env: {KEY_VAR}\nmax_concurrency: {concurrency}\ntimeout_secs: {timeout_secs}\nretry: {{max_attempts: 6, base_delay_ms: 5, max_delay_ms: 40}}\n"
    );
    serde_norway::from_str(&yaml).unwrap()
}

fn req(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::system("Write SQL."), Message::user(text)],
        decoding: Decoding { max_tokens: 64, stop: vec![";".into()], ..Decoding::default() },
        sample_index: 0,
        scope: None,
    }
}

fn models_dir() -> std::path::PathBuf {
    std::path::PathBuf::from("/nonexistent")
}

#[test]
fn every_fault_is_retried_until_success() {
    for backend in ["openai", "anthropic"] {
        let server = FakeServer::start(
            vec![
                Reply::Status(429, "{\"error\": \"rate\"}", Some("0.02")),
                Reply::Status(500, "{\"error\": \"boom\"}", None),
                Reply::Drop,
                Reply::Malformed,
                // Answers long after the test has ended: only the client's timeout ends this
                // attempt, whatever the load; then a retry.
                Reply::Slow(Duration::from_secs(24 * 3600), "late"),
            ],
            Reply::Answer("SELECT 1; -- done"),
        );
        let url = if backend == "openai" { format!("{}/v1", server.url) } else { server.url.clone() };
        let model = config(backend, &url, FAULT_TIMEOUT, 2).build(&models_dir()).unwrap();
        let c = model.chat(&req("one")).unwrap();
        assert_eq!(c.text, "SELECT 1", "{backend}: stop sequence cut");
        assert_eq!(c.attempts, 6, "{backend}: five faults, then success");
        assert_eq!((c.tokens_in, c.tokens_out), (11, 3));
        let reqs = server.requests();
        let last = reqs.last().unwrap();
        let header = |k: &str| last.headers.iter().find(|(h, _)| h == k).map(|(_, v)| v.clone());
        if backend == "openai" {
            assert_eq!(last.path, "/v1/chat/completions");
            assert_eq!(header("authorization"), Some(format!("Bearer {KEY}")));
            assert_eq!(last.body["messages"][0]["role"], "system");
            assert_eq!(last.body["stop"][0], ";");
        } else {
            assert_eq!(last.path, "/v1/messages");
            assert_eq!(header("x-api-key").as_deref(), Some(KEY));
            assert!(header("anthropic-version").is_some());
            assert_eq!(last.body["system"], "Write SQL.");
            assert_eq!(last.body["messages"].as_array().unwrap().len(), 1);
            assert_eq!(last.body["stop_sequences"][0], ";");
        }
    }
}

#[test]
fn failures_are_recorded_not_lost_and_keys_never_leak() {
    // Fatal status: one attempt.
    let server = FakeServer::start(vec![], Reply::Status(401, "{\"error\": \"bad key\"}", None));
    let model = config("openai", &format!("{}/v1", server.url), UNHURRIED, 2).build(&models_dir()).unwrap();
    let f = model.chat(&req("x")).unwrap_err();
    assert_eq!(f.attempts, 1);
    assert!(f.message.contains("401"), "{f:?}");

    // Retries exhausted, by a server that echoes the key back in its error body.
    let server = FakeServer::start(vec![], Reply::EchoAuth);
    let dir = tempfile::tempdir().unwrap();
    for backend in ["openai", "anthropic"] {
        let inner = config(backend, &server.url, UNHURRIED, 2).build(&models_dir()).unwrap();
        let cached = CachedModel::new(inner, &dir.path().join("responses.sqlite")).unwrap();
        let f = cached.chat(&req("y")).unwrap_err();
        assert_eq!(f.attempts, 6);
        assert!(f.message.contains("HTTP 500") && f.message.contains("[redacted]"), "{f:?}");
        assert!(!f.message.contains(KEY) && !format!("{f:?}").contains(KEY), "key leaked into the failure");
    }
    // Nothing written anywhere holds the key.
    let ok = FakeServer::start(vec![], Reply::Answer("SELECT 2"));
    let inner = config("openai", &format!("{}/v1", ok.url), UNHURRIED, 2).build(&models_dir()).unwrap();
    let cached = CachedModel::new(inner, &dir.path().join("responses.sqlite")).unwrap();
    cached.chat(&req("z")).unwrap();
    drop(cached);
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        assert!(!String::from_utf8_lossy(&bytes).contains(KEY), "key written to disk");
    }
    // A missing key variable names the variable, not a value.
    let cfg: ModelConfig =
        serde_norway::from_str("backend: anthropic\nmodel: m\napi_key_env: LUCID_TEST_UNSET_VAR\n").unwrap();
    let e = cfg.build(&models_dir()).err().unwrap().to_string();
    assert!(e.contains("LUCID_TEST_UNSET_VAR"), "{e}");
}

#[test]
fn concurrency_is_bounded_and_identical_prompts_cost_one_call() {
    let server = FakeServer::start(vec![], Reply::Slow(Duration::from_millis(60), "SELECT 3"));
    let inner = config("openai", &format!("{}/v1", server.url), UNHURRIED, 2).build(&models_dir()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cached = Arc::new(CachedModel::new(inner, &dir.path().join("r.sqlite")).unwrap());
    let texts: Vec<String> = (0..6).map(|i| format!("q{i}")).collect();
    std::thread::scope(|s| {
        for t in &texts {
            let m = cached.clone();
            s.spawn(move || m.chat(&req(t)).unwrap());
        }
    });
    assert!(server.max_in_flight.load(std::sync::atomic::Ordering::SeqCst) <= 2, "more than 2 calls in flight");
    assert_eq!(server.requests().len(), 6);
    // Same prompts again: all from the cache, no request.
    for t in &texts {
        assert!(cached.chat(&req(t)).unwrap().cache_hit);
    }
    assert_eq!(server.requests().len(), 6);
    // A second sample of the same prompt is a different call.
    let mut second = req("q0");
    second.sample_index = 1;
    assert!(!cached.chat(&second).unwrap().cache_hit);
    assert_eq!(cached.hits.load(std::sync::atomic::Ordering::Relaxed), 6);
    assert_eq!(cached.misses.load(std::sync::atomic::Ordering::Relaxed), 7);
    // A second process-like writer on the same file sees the same answers.
    let again = CachedModel::new(
        config("openai", &format!("{}/v1", server.url), UNHURRIED, 2).build(&models_dir()).unwrap(),
        &dir.path().join("r.sqlite"),
    )
    .unwrap();
    assert!(again.chat(&req("q3")).unwrap().cache_hit);
}

#[test]
fn replay_answers_recorded_calls_and_records_the_rest_as_failures() {
    use arrow::array::{RecordBatch, StringArray, UInt32Array};
    use arrow::datatypes::{DataType, Field, Schema};
    let id = lucid::llm::ModelIdentity::new("openai", "test-model");
    let recorded = req("recorded");
    let key = lucid::llm::cache::request_key(&id, &recorded);
    let schema = Schema::new(vec![
        Field::new("key", DataType::Utf8, false),
        Field::new("backend", DataType::Utf8, false),
        Field::new("model", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, true),
        Field::new("tokens_in", DataType::UInt32, false),
        Field::new("tokens_out", DataType::UInt32, false),
    ]);
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(StringArray::from(vec![key.as_str(), "failed-call"])),
            Arc::new(StringArray::from(vec!["openai", "openai"])),
            Arc::new(StringArray::from(vec!["test-model", "test-model"])),
            Arc::new(StringArray::from(vec![Some("SELECT 42"), None])),
            Arc::new(UInt32Array::from(vec![7, 0])),
            Arc::new(UInt32Array::from(vec![2, 0])),
        ],
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("calls.parquet");
    lucid::table::write_parquet(&path, &batch).unwrap();
    let cfg: ModelConfig = serde_norway::from_str(&format!("backend: replay\ncalls: {}\n", path.display())).unwrap();
    let model = cfg.build(&models_dir()).unwrap();
    assert_eq!(model.identity(), id);
    let c = model.chat(&recorded).unwrap();
    assert_eq!((c.text.as_str(), c.tokens_in, c.tokens_out), ("SELECT 42", 7, 2));
    let f = model.chat(&req("never recorded")).unwrap_err();
    assert!(f.message.contains("request not in the recorded calls"), "{f:?}");
}

/// Loop instances start together and each opens the run's response cache: a fresh file opened
/// by many connections at once (switching it to WAL, creating the table) must never fail with
/// "database is locked" — found by `just bench-loop`.
#[test]
fn many_caches_open_one_fresh_file_at_once() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("responses.sqlite");
        let barrier = std::sync::Barrier::new(12);
        std::thread::scope(|s| {
            for i in 0..12 {
                let (path, barrier) = (&path, &barrier);
                s.spawn(move || {
                    let inner = ModelConfig::Scripted.build(&models_dir()).unwrap();
                    barrier.wait();
                    let cached = CachedModel::new(inner, path).unwrap_or_else(|e| panic!("round {round}: {e}"));
                    cached.chat(&req(&format!("q{}", i % 3))).unwrap();
                });
            }
        });
    }
}

/// A vLLM-like server: after the assistant's start `VERDICT: `, " INCORRECT" is likelier than
/// "CORRECT" when the question mentions "wrong".
fn logprobs(body: &serde_json::Value) -> serde_json::Value {
    let wrong = body.to_string().contains("wrong");
    let (c, i) = if wrong { (-2.0, -0.2) } else { (-0.1, -2.5) };
    serde_json::json!({"choices": [{"message": {"role": "assistant", "content": "x"},
        "logprobs": {"content": [{"token": "x", "logprob": -0.1, "top_logprobs": [
            {"token": "CORRECT", "logprob": c}, {"token": " IN", "logprob": i}, {"token": "Maybe", "logprob": -4.0}]}]}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 1}})
}

#[test]
fn forced_choice_over_http_scores_the_servers_logprobs_or_refuses() {
    let server = FakeServer::start(vec![], Reply::Body(logprobs));
    let model = config("openai", &format!("{}/v1", server.url), UNHURRIED, 2).build(&models_dir()).unwrap();
    assert!(model.supports_choices());
    let choices = vec!["VERDICT: CORRECT".to_string(), "VERDICT: INCORRECT".to_string()];
    let ask = |q: &str| {
        let r = ChatRequest {
            messages: vec![Message::user(q)],
            decoding: Decoding { choices: choices.clone(), ..Decoding::default() },
            sample_index: 0,
            scope: None,
        };
        model.chat(&r)
    };
    let right = ask("Is 2 + 2 = 4?").unwrap();
    assert!(right.text.starts_with("VERDICT: CORRECT\n"), "{}", right.text);
    assert!((lucid::llm::forced_choice::margin(&right.text).unwrap() - 2.4).abs() < 1e-9, "{}", right.text);
    let wrong = ask("Is this wrong?").unwrap();
    assert!(wrong.text.starts_with("VERDICT: INCORRECT\n"), "{}", wrong.text);
    // The chat template is the server's: the request continues the assistant's "VERDICT:" (its
    // trailing space is the next token's).
    let sent = &server.requests()[0].body;
    assert_eq!(sent["messages"].as_array().unwrap().last().unwrap()["content"], "VERDICT:");
    assert_eq!((sent["continue_final_message"].as_bool(), sent["logprobs"].as_bool()), (Some(true), Some(true)));
    assert_eq!(sent["max_tokens"], 1);

    // A server that returns no log-probabilities is refused with an error that says so.
    let plain = FakeServer::start(vec![], Reply::Answer("VERDICT: CORRECT"));
    let model = config("openai", &format!("{}/v1", plain.url), UNHURRIED, 2).build(&models_dir()).unwrap();
    let r = ChatRequest {
        messages: vec![Message::user("Is 2 + 2 = 4?")],
        decoding: Decoding { choices: choices.clone(), ..Decoding::default() },
        sample_index: 0,
        scope: None,
    };
    let err = model.chat(&r).unwrap_err();
    assert!(err.message.contains("no log-probabilities"), "{}", err.message);
}
