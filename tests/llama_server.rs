//! lucid's OpenAI-compatible backend on what llama.cpp's own `llama-server` answered to lucid's
//! requests (SmolLM2's GGUF, recorded by `just llama-server` into tests/fixtures/llama_server/):
//! a chat's text and token counts, a stop sequence's cut, forced choice from the server's
//! continuation of the assistant's `VERDICT:` with its top log-probabilities, and a context
//! overflow recorded as a failure with the server's message, not retried. The live run against
//! the server is the `just` target (tests/bench/results/llama_server.md).

use std::path::Path;

use lucid::llm::{ChatRequest, Decoding, Message, ModelConfig};
use serde_json::Value;

use crate::support::fake_server::{FakeServer, Reply};

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
    model.chat(&ChatRequest { messages: vec![Message::user("q")], decoding, sample_index: 0 })
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
