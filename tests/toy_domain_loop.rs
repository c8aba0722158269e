//! A domain registered from outside lucid's source (`tests/toy_domain/`) runs through the memory
//! loop: the episodes carry its artifact column, its observation column and its channels by name,
//! and the arms store labels by its flags.

use std::path::Path;

use lucid::stages::domains::register;

use crate::support::fake_server::{FakeServer, Reply};
use crate::toy_domain::Arithmetic;

#[test]
fn a_registered_toy_domain_runs_through_the_loop() {
    register::<Arithmetic>();
    let server = FakeServer::start(vec![], Reply::func(crate::toy_domain::scripted));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("sums.jsonl"), crate::toy_domain::sums_jsonl()).unwrap();
    let bert = crate::support::tiny_models::write_tiny_bert(&d.join("bert"));
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/toy_domain/prompts");
    let yaml = format!(
        "name: sums
seeds: [0]
arms: [no-memory, memento, lucid]
stages:
  - id: benchmark
    kind: benchmark
    config: {{source: sums, path: sums.jsonl}}
{front}  - id: agent
    kind: memory_loop
    matrix: [seed, arm]
    inputs: [tasks, order, retrieval]
    config: {{domain: {{kind: arithmetic}}, model: {{backend: openai, model: toy, base_url: '{url}/v1'}}, prompts: '{prompts}', k: 2}}
",
        front = crate::support::order_embed_retrieve(&bert),
        url = server.url,
        prompts = prompts.display()
    );
    std::fs::write(d.join("sums.yaml"), yaml).unwrap();
    crate::support::run_in_process(d, "sums.yaml");
    let file = d.join("runs/sums/episodes/seed-0_arm-lucid.parquet");
    let b = lucid::table::read_parquet(&file).unwrap();
    let rows = lucid::runs::sql_over(
        &[("episodes".into(), b)],
        "SELECT number, value, channels, flagged, stored_q FROM episodes ORDER BY question_id",
    )
    .unwrap();
    let text = arrow::util::pretty::pretty_format_batches(&[rows]).unwrap().to_string();
    let lines: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("| "))
        .skip(1)
        .map(|l| l.split('|').map(str::trim).filter(|c| !c.is_empty()).collect::<Vec<_>>().join(" ; "))
        .collect();
    assert_eq!(
        lines,
        [
            "4 ; 4 ; [{name: not_a_number, fired: false, detail: }, {name: negative, fired: false, detail: }] ; false ; 1",
            "7 ; 7 ; [{name: not_a_number, fired: false, detail: }, {name: negative, fired: false, detail: }] ; false ; 1",
            "-10 ; -10 ; [{name: not_a_number, fired: false, detail: }, {name: negative, fired: true, detail: }] ; true ; 0",
            "two ; [{name: not_a_number, fired: true, detail: }, {name: negative, fired: false, detail: }] ; true ; 0",
        ],
        "{text}"
    );
}
