//! A factual agent-program pipeline the agent tests share: four questions (one whose gold
//! carries a canary), a two-passage corpus, a scripted model and the run/query helpers.

use std::path::Path;

use serde_json::Value;

use super::{lucid, stderr, stdout};

pub const CANARY: &str = "lucid-canary-0x5eed";

const QUESTIONS: &str = r#"{"id": "fr-cap", "question": "What is the capital of Freedonia?", "answer": "Fredville", "aliases": ["lucid-canary-0x5eed"], "topic": "capital", "answer_type": "name"}
{"id": "sy-cap", "question": "What is the capital of Sylvania?", "answer": "Sylburg", "topic": "capital", "answer_type": "name"}
{"id": "zo-moons", "question": "How many moons does Zorb have?", "answer": "3", "topic": "planets", "answer_type": "number"}
{"id": "fr-cur", "question": "What is the currency code of Freedonia?", "answer": "FRD", "topic": "currency", "answer_type": "code"}
"#;

const CORPUS: &str = r#"{"id": "p1", "title": "Freedonia", "text": "Freedonia is a country. Its capital is Fredville. Its currency is the FRD."}
{"id": "p3", "title": "Zorb", "text": "Zorb is a planet with 3 moons."}
"#;

/// The model behind the endpoint: a plan, then an answer per question; every self-grade CORRECT.
pub fn model(prompt: &str) -> String {
    if prompt.contains("VERDICT") {
        return "VERDICT: CORRECT".into();
    }
    if prompt.contains("Plan the answer") {
        return "Recall the fact.".into();
    }
    let q = prompt.split("Question: ").last().unwrap_or("");
    for (question, answer) in [
        ("What is the capital of Freedonia?", "Fredville"),
        ("What is the capital of Sylvania?", "Paris"),
        ("How many moons does Zorb have?", "3"),
        ("What is the currency code of Freedonia?", "FRD"),
    ] {
        if q.starts_with(question) {
            return answer.into();
        }
    }
    "?".into()
}

/// A factual pipeline over `questions.jsonl` whose agent stage runs `agent` (a YAML mapping)
/// against `model`, with `arms` and `seeds`.
pub fn pipeline(d: &Path, model: &str, agent: &str, arms: &str, seeds: &str) -> String {
    std::fs::write(d.join("questions.jsonl"), QUESTIONS).unwrap();
    std::fs::write(d.join("corpus.jsonl"), CORPUS).unwrap();
    let bert = super::tiny_models::write_tiny_bert(&d.join("bert"));
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/prompts-factual");
    format!(
        "name: agent
seeds: {seeds}
arms: {arms}
stages:
  - id: benchmark
    kind: benchmark
    config: {{source: jsonl, path: questions.jsonl}}
{front}  - id: agent
    kind: memory_loop
    matrix: [seed, arm]
    inputs: [tasks, order, retrieval]
    config: {{domain: {{kind: factual, evidence: corpus.jsonl, top_k: 1}}, model: {model}, prompts: '{}', k: 2, concurrency: 2, agent: {agent}}}
  - id: evaluate
    kind: evaluate
    matrix: [seed, arm]
    inputs: [tasks, gold, episodes]
    config: {{factual: {{evidence: corpus.jsonl, top_k: 1}}}}
",
        prompts.display(),
        front = super::order_embed_retrieve(&bert),
    )
}

/// `lucid run agent.yaml` in `d`, with `envs`; it must succeed.
pub fn run(d: &Path, envs: &[(&str, &str)]) {
    let o = lucid(&d.join("cache"))
        .current_dir(d)
        .envs(envs.iter().copied())
        .args(["run", "agent.yaml", "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
}

/// Rows of `sql` over the run `runs/agent` in `d`.
pub fn query(d: &Path, sql: &str) -> Vec<Value> {
    super::study::query_run(&d.join("cache"), d, "runs/agent", sql)
}
