//! lucid's OpenAI-compatible backend on what llama.cpp's own `llama-server` answered to lucid's
//! requests (SmolLM2's GGUF, recorded by `just llama-server` into tests/fixtures/llama_server/):
//! a chat's text and token counts, a stop sequence's cut, forced choice from the server's
//! continuation of the assistant's `VERDICT:` with its top log-probabilities, and a context
//! overflow recorded as a failure with the server's message, not retried. The live run against
//! the server is the `just` target (tests/bench/results/llama_server.md). The `llama-server`
//! backend's exact forced choice: its requests, its sum over every token of each choice, what it
//! refuses, and the real server's recorded answers summed to the same margin.

use std::path::Path;

use lucid::llm::{ChatRequest, Decoding, Message, ModelConfig};
use serde_json::Value;

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::probes::{Probe, require};
use crate::support::study::{factual_answers, query_run, shipped_project};
use crate::support::{lucid, stderr, stdout};

fn fixture(name: &str) -> &'static str {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/llama_server/{name}.json"));
    Box::leak(std::fs::read_to_string(path).unwrap().into_boxed_str())
}

/// lucid's backend against a server that answers `status` with `body` to everything.
fn ask(status: u16, body: &'static str, decoding: Decoding) -> Result<lucid::llm::Completion, lucid::llm::CallFailure> {
    let server = FakeServer::start(vec![], Reply::Status(status, body, None));
    let cfg: ModelConfig = serde_norway::from_str(&format!(
        "{{backend: openai, model: smollm2, base_url: '{}/v1', retry: {{max_attempts: 3, base_delay_ms: 1, max_delay_ms: 2}}}}",
        server.url
    ))
    .unwrap();
    let model = cfg.build(Path::new("/nonexistent")).unwrap();
    model.chat(&ChatRequest { messages: vec![Message::user("q")], decoding, sample_index: 0, scope: None })
}

#[test]
fn llama_servers_recorded_answers_read_as_lucid_expects() {
    // Chat: its text and token counts.
    let chat: Value = serde_json::from_str(fixture("chat")).unwrap();
    let c = ask(200, fixture("chat"), Decoding::default()).unwrap();
    assert_eq!(c.text, chat["choices"][0]["message"]["content"].as_str().unwrap());
    assert_eq!((c.tokens_in, c.tokens_out), (42, 8));
    // Stop: the server cut before the stop string ("3").
    let s = ask(200, fixture("stop"), Decoding::default()).unwrap();
    assert!(!s.text.contains('3') && s.text.starts_with("1, 2"), "{}", s.text);

    // Forced choice: " COR" and " IN" lead the server's top tokens after "VERDICT:".
    let fc: Value = serde_json::from_str(fixture("forced_choice")).unwrap();
    let top = fc["choices"][0]["logprobs"]["content"][0]["top_logprobs"].as_array().unwrap();
    let lp = |t: &str| top.iter().find(|x| x["token"] == t).unwrap()["logprob"].as_f64().unwrap();
    let choices = vec!["VERDICT: CORRECT".to_string(), "VERDICT: INCORRECT".to_string()];
    let d = Decoding { choices, ..Decoding::default() };
    let picked = ask(200, fixture("forced_choice"), d).unwrap();
    assert!(picked.text.starts_with("VERDICT: CORRECT\n"), "{}", picked.text);
    let margin = lucid::llm::forced_choice::margin(&picked.text).unwrap();
    assert!((margin - (lp(" COR") - lp(" IN"))).abs() < 1e-3, "{margin} from {}", picked.text);

    // A prompt past the context: a failure with the server's own message, after one attempt (a
    // 400 is not retried).
    let f = ask(400, fixture("overflow"), Decoding::default()).unwrap_err();
    assert!(f.message.contains("exceeds the available context size"), "{}", f.message);
    assert_eq!(f.attempts, 1);
}

/// The llama-server backend on `server` (configured with its `/v1`, which it drops).
fn llama_server(url: &str) -> std::sync::Arc<dyn lucid::llm::ChatModel> {
    let cfg: ModelConfig = serde_norway::from_str(&format!(
        "{{backend: llama-server, model: smollm2, base_url: '{url}/v1', retry: {{max_attempts: 2, base_delay_ms: 1, max_delay_ms: 2}}}}"
    ))
    .unwrap();
    cfg.build(Path::new("/nonexistent")).unwrap()
}

fn verdict() -> Decoding {
    Decoding { choices: vec!["VERDICT: CORRECT".into(), "VERDICT: INCORRECT".into()], ..Decoding::default() }
}

/// A toy model's log-probability of `token` after `n` tokens.
fn toy_logprob(n: usize, token: u64) -> f64 {
    -((token % 7) as f64 + 0.25) / (1 + n % 3) as f64
}

/// A llama-server with a byte tokenizer (BOS = 1) and [`toy_logprob`], that takes forced tokens.
fn toy_llama_server(body: &Value) -> Value {
    if let Some(m) = body.get("messages") {
        let text: String = m
            .as_array()
            .unwrap()
            .iter()
            .map(|m| format!("{}: {}\n", m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
            .collect();
        return serde_json::json!({"prompt": format!("{text}assistant: ")});
    }
    if let Some(c) = body.get("content") {
        let bos = body["add_special"].as_bool().unwrap_or(false);
        let ids: Vec<u64> = bos.then_some(1).into_iter().chain(c.as_str().unwrap().bytes().map(u64::from)).collect();
        return serde_json::json!({"tokens": ids});
    }
    let n = body["prompt"].as_array().unwrap().len();
    let token = body["logit_bias"][0][0].as_u64().unwrap();
    serde_json::json!({"content": "x", "completion_probabilities": [{"id": token, "logprob": toy_logprob(n, token)}]})
}

#[test]
fn llama_server_backend_scores_every_token_of_each_choice_once() {
    let server = FakeServer::start(vec![], Reply::Body(toy_llama_server));
    let model = llama_server(&server.url);
    assert_eq!(model.identity().backend, "llama-server");
    assert_eq!(model.identity().endpoint.as_deref(), Some(server.url.as_str()), "the root, without /v1");
    let req = ChatRequest {
        messages: vec![Message::system("s"), Message::user("q")],
        decoding: verdict(),
        sample_index: 0,
        scope: None,
    };
    let c = model.chat(&req).unwrap();
    // The expected scores: the whole choice after the templated prompt, byte by byte.
    let prompt_len = 1 + "system: s\nuser: q\nassistant: ".len();
    let score =
        |choice: &str| -> f64 { choice.bytes().enumerate().map(|(j, b)| toy_logprob(prompt_len + j, b.into())).sum() };
    let (sc, si) = (score("VERDICT: CORRECT"), score("VERDICT: INCORRECT"));
    let m = lucid::llm::forced_choice::margin(&c.text).unwrap();
    assert!((m - (sc - si)).abs() < 2e-3, "margin {m} from {}, expected {}", c.text, sc - si);
    assert!(c.text.starts_with(if sc >= si { "VERDICT: CORRECT\n" } else { "VERDICT: INCORRECT\n" }), "{}", c.text);
    assert_eq!((c.tokens_in as usize, c.attempts > 0), (prompt_len, true));
    // The shared "VERDICT: " is asked once: 9 + 7 + 9 forced tokens, each with its bias and prefix.
    let log = server.log.lock().unwrap().clone();
    let forced: Vec<_> = log.iter().filter(|l| l.path == "/completion").collect();
    assert_eq!(forced.len(), 9 + 7 + 9);
    for f in &forced {
        assert_eq!((f.body["n_probs"].as_u64(), f.body["logit_bias"][0][1].as_f64()), (Some(1), Some(1000.0)));
        assert!(f.body["prompt"].as_array().unwrap().len() >= prompt_len);
    }
    assert_eq!(log.iter().filter(|l| l.path == "/apply-template").count(), 1);
    // A generated answer goes to the OpenAI-compatible chat endpoint.
    let plain = ChatRequest { decoding: Decoding::default(), ..req };
    let _ = model.chat(&plain);
    assert_eq!(server.log.lock().unwrap().last().unwrap().path, "/v1/chat/completions");
}

#[test]
fn llama_server_backend_refuses_what_it_cannot_score() {
    let req = ChatRequest { messages: vec![Message::user("q")], decoding: verdict(), sample_index: 0, scope: None };
    // A server that ignores logit_bias (answers its own token): an error, never a guess.
    fn ignores_bias(body: &Value) -> Value {
        match body.get("prompt") {
            Some(_) => serde_json::json!({"completion_probabilities": [{"id": 3, "logprob": -0.1}]}),
            None => toy_llama_server(body),
        }
    }
    let server = FakeServer::start(vec![], Reply::Body(ignores_bias));
    let f = llama_server(&server.url).chat(&req).unwrap_err();
    assert!(f.message.contains("logit_bias"), "{}", f.message);
    // An older server's probability format (no logprob).
    fn old_format(body: &Value) -> Value {
        match body.get("logit_bias") {
            Some(b) => {
                serde_json::json!({"completion_probabilities": [{"id": b[0][0], "probs": [{"tok_str": "x", "prob": 0.5}]}]})
            }
            None => toy_llama_server(body),
        }
    }
    let server = FakeServer::start(vec![], Reply::Body(old_format));
    let f = llama_server(&server.url).chat(&req).unwrap_err();
    assert!(f.message.contains("logprob"), "{}", f.message);
}

/// What the real llama-server answered to the exact forced choice of one grader prompt
/// (tests/fixtures/llama_server/forced_choice_exact.json), replayed by request.
fn recorded_exact(body: &Value) -> Value {
    static REC: std::sync::LazyLock<Value> =
        std::sync::LazyLock::new(|| serde_json::from_str(fixture("forced_choice_exact")).unwrap());
    if body.get("messages").is_some() {
        return REC["apply_template"].clone();
    }
    if let Some(c) = body["content"].as_str() {
        return REC["tokenize"][c].clone();
    }
    let hit = REC["completion"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["prompt"] == body["prompt"] && r["token"] == body["logit_bias"][0][0]);
    hit.map(|r| r["response"].clone()).unwrap_or(Value::Null)
}

#[test]
fn llama_servers_recorded_exact_scores_sum_to_lucids_margin() {
    let rec: Value = serde_json::from_str(fixture("forced_choice_exact")).unwrap();
    let messages: Vec<Message> = serde_json::from_value(rec["messages"].clone()).unwrap();
    let server = FakeServer::start(vec![], Reply::Body(recorded_exact));
    let c = llama_server(&server.url)
        .chat(&ChatRequest { messages, decoding: verdict(), sample_index: 0, scope: None })
        .unwrap();
    // Independently: each choice's tokens after the prompt's, their recorded log-probabilities summed.
    let prompt = rec["apply_template"]["prompt"].as_str().unwrap();
    let ids = rec["tokenize"][prompt]["tokens"].as_array().unwrap().len();
    let score = |choice: &str| -> f64 {
        let joint = rec["tokenize"][format!("{prompt}{choice}")]["tokens"].as_array().unwrap().clone();
        (ids..joint.len())
            .map(|j| {
                let r = rec["completion"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|r| r["token"] == joint[j] && r["prompt"].as_array().unwrap()[..] == joint[..j]);
                r.unwrap()["response"]["completion_probabilities"][0]["logprob"].as_f64().unwrap()
            })
            .sum()
    };
    let expected = score("VERDICT: CORRECT") - score("VERDICT: INCORRECT");
    let m = lucid::llm::forced_choice::margin(&c.text).unwrap();
    assert!((m - expected).abs() < 2e-3, "{m} vs {expected}: {}", c.text);
    assert!(c.text.starts_with("VERDICT: CORRECT\n"), "{}", c.text);
}

/// A llama-server that knows the factual set: chat answers by [`factual_answers`], its template
/// and byte tokens as [`toy_llama_server`], and forced tokens likely when they follow the verdict
/// the same script gives (one-word answers trusted), unlikely otherwise.
fn factual_llama_server(body: &Value) -> Value {
    let text = |m: &Value| m.as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
    if body.get("max_tokens").is_some() {
        let answer = factual_answers(&text(&body["messages"]));
        return serde_json::json!({"choices": [{"message": {"content": answer}}], "usage": {"prompt_tokens": 9, "completion_tokens": 1}});
    }
    let Some(ids) = body["prompt"].as_array() else { return toy_llama_server(body) };
    let token = body["logit_bias"][0][0].as_u64().unwrap();
    let bytes: Vec<u8> = ids.iter().skip(1).map(|i| i.as_u64().unwrap() as u8).collect();
    let seen = String::from_utf8(bytes).unwrap();
    let (prompt, so_far) = seen.rsplit_once("assistant: ").unwrap();
    let user = prompt.rsplit_once("user: ").unwrap().1.trim_end();
    let verdict = factual_answers(user);
    let likely = verdict.as_bytes().get(so_far.len()) == Some(&(token as u8)) && verdict.starts_with(so_far);
    serde_json::json!({"completion_probabilities": [{"id": token, "logprob": if likely { -0.01 } else { -3.0 }}]})
}

#[test]
fn the_leniency_server_pipeline_grades_by_forced_choice_through_llama_server() {
    if !(require(Probe::MiniLm) && require(Probe::Facts)) {
        return;
    }
    let server = FakeServer::start(vec![], Reply::Body(factual_llama_server));
    let dir = shipped_project("leniency-server.yaml", |text| {
        let yaml = text.replace("{backend: local}", "{backend: scripted}");
        assert_eq!(yaml.matches("backend: llama-server").count(), 1, "the server stage's model line changed");
        yaml
    });
    let d = dir.path();
    let base = format!("stages.server.config.model.base_url={}", server.url);
    let args = [
        "run",
        "pipelines/leniency-server.yaml",
        "--quiet",
        "--set",
        "stages.benchmark.config.per_topic=1",
        "--set",
        &base,
    ];
    let o = lucid(&d.join("cache")).current_dir(d).args(args).output().unwrap();
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let q = |sql: &str| query_run(&d.join("cache"), d, "runs/leniency-server", sql);
    // Every grade of the server arm is the verdict its log-likelihoods favour: one-word answers trusted.
    let graded = q(
        "SELECT count(*) AS n, sum(CASE WHEN (grade = 'correct') = (answer NOT LIKE '% %') THEN 1 ELSE 0 END) AS as_scored, \
                    sum(failed_calls) AS failed FROM episodes WHERE arm = 'smollm2-llama-server'",
    );
    assert_eq!(graded[0]["n"], graded[0]["as_scored"], "{graded:?}");
    assert_eq!((graded[0]["n"].as_u64().unwrap() % 3, graded[0]["failed"].as_u64()), (0, Some(0)), "{graded:?}");
    // The grader calls carry the scores (forced choice, not a generated verdict).
    let calls = q("SELECT count(*) AS n FROM calls WHERE arm = 'smollm2-llama-server' AND role = 'grader' \
                   AND text LIKE '%forced choice by log-likelihood%'");
    assert_eq!(calls[0]["n"], graded[0]["n"], "{calls:?}");
    // The leniency table puts the two engines side by side.
    let report = q("pipelines/reports/paper/grader.sql");
    for arm in ["smollm2-local", "smollm2-llama-server"] {
        assert!(report.iter().any(|r| r["arm"] == arm && r["seed"].is_null()), "{arm}: {report:?}");
    }
    assert!(server.log.lock().unwrap().iter().any(|l| l.path == "/completion"));
}
