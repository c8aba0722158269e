//! The verifier ladder as stages, on a factual bank with known answers: an echo judge (it says
//! what the self-grader said) FAILS EIA, the evidence verifier over a corpus that holds the
//! answers PASSES; a judge whose server is down leaves every memory unscored and is recorded as
//! such; panels leave ties and missing votes unscored; resampling writes `sc`; the audit stage
//! reads every `v_<name>` table with its cost; and no request of the loop or of any verifier
//! carries gold (a canary alias).

use std::path::Path;

use serde_json::Value;

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::study::CANARY;
use crate::support::{lucid, stderr, stdout};

const N: usize = 48;

/// The index of the question in a prompt (`Land<i>`, the last one named: the task itself).
fn land(prompt: &str) -> usize {
    let at = prompt.rfind("Land").expect("a question");
    prompt[at + 4..].chars().take_while(char::is_ascii_digit).collect::<String>().parse().unwrap()
}

/// Right for even i; the self-grader passes every right answer and half the wrong ones (i % 4
/// == 1); the echo judge says the same; the contrarian says INCORRECT when i % 3 == 0.
fn planted(prompt: &str) -> String {
    let i = land(prompt);
    let graded = i.is_multiple_of(2) || i % 4 == 1;
    let say = |yes: bool| if yes { "VERDICT: CORRECT" } else { "VERDICT: INCORRECT" }.to_string();
    if let Some((_, rest)) = prompt.split_once("Passages:") {
        // The evidence reader: supported when the answer is in the passages it was given.
        let (passages, tail) = rest.split_once("Question:").unwrap();
        let answer = tail.split("Answer:").nth(1).unwrap().trim();
        return say(!answer.is_empty() && passages.contains(&format!(" {answer}.")));
    }
    if prompt.contains("Contrarian judge") {
        return say(!i.is_multiple_of(3));
    }
    if prompt.contains("VERDICT") {
        return say(graded); // the self-grader and the echo judge
    }
    if i.is_multiple_of(2) { format!("City{i}") } else { format!("Town{i}") }
}

#[test]
fn echo_judges_fail_eia_and_the_evidence_verifier_passes() {
    let server = FakeServer::start(vec![], Reply::func(planted));
    let down = FakeServer::start(vec![], Reply::Status(500, "down", None));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let questions: String = (0..N)
        .map(|i| {
            format!(
                "{{\"id\": {i}, \"question\": \"What is the capital of Land{i}?\", \"answer\": \"City{i}\", \
                 \"aliases\": [\"{CANARY}\"], \"topic\": \"capital\", \"answer_type\": \"name\"}}\n"
            )
        })
        .collect();
    // The corpus holds the answers, but not every one (a real corpus is never complete): the
    // evidence verifier errs on right answers it finds no support for, independently of the grader.
    let corpus: String = (0..N)
        .filter(|i| i % 8 != 6)
        .map(|i| format!("{{\"id\": \"p{i}\", \"title\": \"Land{i}\", \"text\": \"Land{i} is a country whose capital is City{i}.\"}}\n"))
        .collect();
    std::fs::write(d.join("questions.jsonl"), questions).unwrap();
    std::fs::write(d.join("corpus.jsonl"), corpus).unwrap();
    let bert = crate::support::tiny_models::write_tiny_bert(&d.join("bert"));
    let model = format!("{{backend: openai, model: planted, base_url: '{}/v1'}}", server.url);
    let dead = format!(
        "{{backend: openai, model: dead, base_url: '{}/v1', retry: {{max_attempts: 2, base_delay_ms: 1, max_delay_ms: 2}}}}",
        down.url
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let prompts = root.join("pipelines/prompts-factual");
    let judge = |name: &str, m: &str| {
        format!(
            "  - id: {name}
    kind: judge
    matrix: [seed, arm]
    inputs: [tasks, episodes]
    config: {{model: {m}, prompt: '{}'}}
",
            root.join(format!("tests/verifier_judges/{name}.txt")).display()
        )
    };
    let panel = |id: &str, judges: &str, rule: &str| {
        let inputs: Vec<String> = judges.split(", ").map(|j| format!("v_{j}")).collect();
        format!(
            "  - id: {id}
    kind: panel
    matrix: [seed, arm]
    inputs: [{}]
    config: {{judges: [{judges}], rule: {rule}}}
",
            inputs.join(", ")
        )
    };
    let yaml = format!(
        "name: bank
seeds: [0, 1]
arms: [memento]
stages:
  - id: benchmark
    kind: benchmark
    config: {{source: jsonl, path: questions.jsonl}}
{front}  - id: agent
    kind: memory_loop
    matrix: [seed, arm]
    inputs: [tasks, order, retrieval]
    config: {{domain: {{kind: factual, evidence: corpus.jsonl, top_k: 1}}, model: {model}, prompts: '{prompts}', k: 2, retrieval: {{policy: softmax}}}}
  - id: evaluate
    kind: evaluate
    matrix: [seed, arm]
    inputs: [tasks, gold, episodes]
    config: {{factual: {{evidence: corpus.jsonl, top_k: 1}}}}
{echo}{contrarian}{dead}{pair}{trio}{strict}  - id: resample
    kind: resample
    matrix: [seed, arm]
    inputs: [tasks, episodes]
    config: {{model: {model}, prompts: '{prompts}', samples: 2}}
  - id: evidence
    kind: evidence
    matrix: [seed, arm]
    inputs: [tasks, episodes]
    config: {{factual: {{evidence: corpus.jsonl, top_k: 1}}}}
  - id: reader
    kind: evidence
    matrix: [seed, arm]
    inputs: [tasks, episodes]
    config: {{factual: {{evidence: corpus.jsonl, top_k: 1}}, reader: {{model: {model}, prompt: '{reader}'}}}}
  - id: audit
    kind: audit
    inputs: [episodes, evaluation, v_echo, v_contrarian, v_dead, v_pair, v_trio, v_strict, v_resample, v_evidence, v_reader]
    config: {{arm: memento, bootstrap: 200}}
",
        front = crate::support::order_embed_retrieve_k(&bert, Some(8)),
        prompts = prompts.display(),
        reader = root.join("pipelines/judges/evidence.txt").display(),
        echo = judge("echo", &model),
        contrarian = judge("contrarian", &model),
        dead = judge("dead", &dead),
        pair = panel("pair", "echo, contrarian", "majority"),
        trio = panel("trio", "echo, contrarian, dead", "majority"),
        strict = panel("strict", "echo, contrarian, dead", "strict"),
    );
    std::fs::write(d.join("bank.yaml"), &yaml).unwrap();
    let cache = d.join("cache");
    let o = lucid(&cache).current_dir(d).args(["run", "bank.yaml", "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));

    let q = |sql: &str| -> Vec<Value> {
        let o = lucid(&cache).current_dir(d).args(["query", "runs/bank", sql, "--format", "json"]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o).lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let eia = q("SELECT verifier, corr_nu_b, corr_v_u, pass, scored, skipped FROM audit_eia");
    let row =
        |name: &str| eia.iter().find(|r| r["verifier"] == name).unwrap_or_else(|| panic!("{name}: {eia:?}")).clone();
    let echo = row("echo");
    assert_eq!(echo["pass"], false, "{echo}");
    assert!(echo["corr_nu_b"].as_f64().unwrap() > 0.99, "its errors are the grader's: {echo}");
    let evidence = row("evidence");
    assert_eq!(evidence["pass"], true, "{evidence}");
    assert!(evidence["corr_v_u"].as_f64().unwrap() > 0.7 && evidence["skipped"] == 0, "{evidence}");
    // A model reading only the passages and the answer passes too; it saw the passages.
    let reader = row("reader");
    assert_eq!(reader["pass"], true, "{reader}");
    assert!(
        server.requests().iter().any(|r| r.body.to_string().contains("Land2 is a country whose capital is City2."))
    );
    // The dead judge's every call failed: nothing scored, every memory counted as skipped.
    let dead_row = row("dead");
    assert_eq!(
        (dead_row["scored"].as_u64(), dead_row["skipped"].as_u64(), &dead_row["pass"]),
        (Some(0), Some(2 * N as u64), &Value::Bool(false))
    );
    // Panels: a two-judge majority is unscored exactly where the judges disagree; with the dead
    // judge a majority is never scored (a vote is missing), and a strict majority only where the
    // two live judges agree (2 of 3 is over half).
    let on = |t: &str| format!("JOIN v_{t} {t} ON {t}.seed = p.seed AND {t}.arm = p.arm AND {t}.step = p.step");
    let votes = q(&format!(
        "SELECT p.step, echo.v AS echo, contrarian.v AS contrarian, p.v AS pair, trio.v AS trio, strict.v AS strict, \
         dead.v AS dead, dead.detail AS dead_detail, dead.failed_calls FROM v_pair p {} {} {} {} {}",
        on("echo"),
        on("contrarian"),
        on("trio"),
        on("strict"),
        on("dead")
    ));
    assert_eq!(votes.len(), 2 * N);
    let mut ties = 0;
    for r in &votes {
        let agree = r["echo"] == r["contrarian"];
        ties += usize::from(!agree);
        assert_eq!(r["pair"], if agree { r["echo"].clone() } else { Value::Null }, "{r}");
        assert_eq!(r["trio"], Value::Null, "{r}");
        assert_eq!(r["strict"], if agree { r["echo"].clone() } else { Value::Null }, "{r}");
        assert_eq!((&r["dead"], r["failed_calls"].as_u64()), (&Value::Null, Some(1)), "{r}");
        assert!(r["dead_detail"].as_str().unwrap().contains("failed"), "{r}");
    }
    assert!(ties > 0 && ties < votes.len(), "the planted judges disagree on some memories");
    // Resampling writes sc; the audit's cost table counts each verifier's calls.
    let sc = q("SELECT count(*) AS n, min(sc) AS lo FROM v_resample WHERE sc IS NOT NULL");
    assert_eq!(sc[0]["n"], 2 * N as u64);
    let cost = q("SELECT verifier, scored, skipped, calls, failed_calls FROM audit_cost");
    let c =
        |name: &str| cost.iter().find(|r| r["verifier"] == name).unwrap_or_else(|| panic!("{name}: {cost:?}")).clone();
    assert_eq!(
        (c("echo")["calls"].as_u64(), c("resample")["calls"].as_u64()),
        (Some(2 * N as u64), Some(4 * N as u64))
    );
    assert_eq!((c("dead")["failed_calls"].as_u64(), c("evidence")["calls"].as_u64()), (Some(2 * N as u64), Some(0)));
    assert_eq!(c("pair")["skipped"].as_u64(), Some(ties as u64));

    // Label-free: no request of the loop or of any verifier carries gold.
    let requests = server.requests();
    assert!(requests.len() > 4 * N);
    for r in requests.iter().chain(down.requests().iter()) {
        assert!(!r.body.to_string().contains(CANARY), "gold reached a request: {}", r.body);
    }
}
