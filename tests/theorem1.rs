//! Theorem 1's retrieval channel measured on a live loop, from draw counts. A planted grader
//! passes every memory (each wrong one inflated to b = 1); two arms of one run draw k = 1 memory
//! per step by softmax over the stored labels at T = 0.5 and T = 1. The measured amplification
//! (the share of draws that landed on wrong memories, over what the same candidate sets give
//! under honest labels) matches the closed form A_ret within sampling error at both
//! temperatures, and `retrieval_mass.sql` reports the same numbers from the run's tables.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, AsArray, RecordBatch, StringArray, UInt8Array, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema, UInt64Type};
use lucid::stages::memory_loop::register_domain;

use crate::support::fake_server::{FakeServer, Reply};
use crate::toy_domain::Arithmetic;

const N: usize = 360;

/// Right answers when the first addend is a multiple of 3, one too many otherwise; every grade
/// passes.
fn answers(prompt: &str) -> String {
    if prompt.contains("VERDICT") {
        return "VERDICT: CORRECT".into();
    }
    let q = prompt.rsplit("Question:").next().unwrap_or("");
    let nums: Vec<i64> =
        q.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).filter_map(|s| s.parse().ok()).collect();
    let (a, b) = (nums[0], nums[1]);
    (a + b + i64::from(a % 3 != 0)).to_string()
}

fn right(a: i64) -> bool {
    a % 3 == 0
}

fn column<'a>(b: &'a RecordBatch, name: &str) -> &'a dyn Array {
    b.column_by_name(name).unwrap_or_else(|| panic!("no column {name}")).as_ref()
}

#[test]
fn softmax_reuse_amplifies_wrong_memories_as_theorem_1_says() {
    register_domain::<Arithmetic>("arithmetic");
    let server = FakeServer::start(vec![], Reply::func(answers));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let questions: String = (0..N)
        .map(|i| {
            let (a, b) = (i as i64, 1000 + 7 * i as i64);
            format!(
                "{{\"id\": {i}, \"question\": \"What is {a} + {b}?\", \"answer\": \"{}\", \"topic\": \"sums\"}}\n",
                a + b
            )
        })
        .collect();
    std::fs::write(d.join("sums.jsonl"), questions).unwrap();
    let bert = crate::support::tiny_models::write_tiny_bert(&d.join("bert"));
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/toy_domain/prompts");
    let yaml = format!(
        "name: sums
seeds: [0]
arms: [cool, warm]
stages:
  - id: benchmark
    kind: benchmark
    config: {{source: jsonl, path: sums.jsonl}}
{front}  - id: agent
    kind: memory_loop
    matrix: [seed, arm]
    inputs: [tasks, order, retrieval]
    config:
      domain: {{kind: arithmetic}}
      model: {{backend: openai, model: toy, base_url: '{url}/v1', max_concurrency: 8}}
      prompts: '{prompts}'
      k: 1
      concurrency: 8
      arms:
        cool: {{mode: memento, retrieval: {{policy: softmax, temperature: 0.5, candidates: 6}}}}
        warm: {{mode: memento, retrieval: {{policy: softmax, temperature: 1.0, candidates: 6}}}}
",
        front = crate::support::order_embed_retrieve_k(&bert, Some(6)),
        url = server.url,
        prompts = prompts.display()
    );
    std::fs::write(d.join("sums.yaml"), yaml).unwrap();
    crate::support::run_in_process(d, "sums.yaml");

    let mut evaluation = Vec::new();
    let mut draws = Vec::new();
    for (arm, t) in [("cool", 0.5f64), ("warm", 1.0)] {
        let read = |table: &str| {
            lucid::table::read_parquet(&d.join(format!("runs/sums/{table}/seed-0_arm-{arm}.parquet"))).unwrap()
        };
        // U per step: the planted rule on the question's first addend (question_id = addend).
        let eps = read("episodes");
        let qid = column(&eps, "question_id").as_primitive::<arrow::datatypes::Int64Type>();
        let step = column(&eps, "step").as_primitive::<UInt64Type>();
        let stored = column(&eps, "stored_q").as_primitive::<arrow::datatypes::UInt8Type>();
        assert!(stored.iter().all(|q| q == Some(1)), "the planted grader passes every memory");
        let u_of: HashMap<u64, u8> =
            (0..eps.num_rows()).map(|i| (step.value(i), u8::from(right(qid.value(i))))).collect();

        // The measurement, from draw counts: per step, W and R among the candidates, whether the
        // one drawn was wrong.
        let dr = read("draws"); // with the runner's seed and arm columns
        let (s, cand, drawn) = (
            column(&dr, "step").as_primitive::<UInt64Type>(),
            column(&dr, "candidate_step").as_primitive::<UInt64Type>(),
            column(&dr, "drawn").as_boolean(),
        );
        let mut per_step: HashMap<u64, (f64, f64, f64)> = HashMap::new();
        for i in 0..dr.num_rows() {
            let e = per_step.entry(s.value(i)).or_default();
            let wrong = u_of[&cand.value(i)] == 0;
            if wrong {
                e.0 += 1.0
            } else {
                e.1 += 1.0
            }
            if drawn.value(i) && wrong {
                e.2 += 1.0;
            }
        }
        let (mut wrong_draws, mut honest, mut predicted, mut var) = (0.0, 0.0, 0.0, 0.0);
        for &(w, r, hit) in per_step.values() {
            wrong_draws += hit;
            let h = w / (w + r * (1.0 / t).exp());
            honest += h;
            let p = if w > 0.0 { lucid::analysis::theory::a_ret(1.0, t, w, r) * h } else { 0.0 };
            predicted += p;
            var += p * (1.0 - p);
        }
        let (measured_a, closed_a, se) = (wrong_draws / honest, predicted / honest, var.sqrt() / honest);
        assert!(
            (measured_a - closed_a).abs() < 4.0 * se,
            "T = {t}: measured A_ret {measured_a:.3} vs closed form {closed_a:.3} (se {se:.3})"
        );
        eprintln!("T = {t}: measured A_ret {measured_a:.3}, closed form {closed_a:.3}, se {se:.3}");
        assert!(closed_a > 1.0 + 4.0 * se, "T = {t}: the test must be able to see amplification ({closed_a:.3})");

        let n = eps.num_rows();
        let eval = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("arm", DataType::Utf8, false),
                Field::new("seed", DataType::UInt64, false),
                Field::new("step", DataType::UInt64, false),
                Field::new("u", DataType::UInt8, false),
            ])),
            vec![
                Arc::new(StringArray::from(vec![arm; n])),
                Arc::new(UInt64Array::from(vec![0u64; n])),
                Arc::new(step.clone()),
                Arc::new((0..n).map(|i| u_of[&step.value(i)]).collect::<UInt8Array>()),
            ],
        )
        .unwrap();
        evaluation.push(eval);
        draws.push((dr, measured_a, closed_a));
    }
    // The report SQL computes the same measurement from the run's tables.
    let ev = arrow::compute::concat_batches(&evaluation[0].schema(), &evaluation).unwrap();
    let all: Vec<RecordBatch> = draws.iter().map(|x| x.0.clone()).collect();
    let dr = arrow::compute::concat_batches(&all[0].schema(), &all).unwrap();
    let sql = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/reports/paper/retrieval_mass.sql"),
    )
    .unwrap();
    let out = lucid::runs::sql_over(&[("draws".into(), dr), ("evaluation".into(), ev)], &sql).unwrap();
    let f = |name: &str, i: usize| {
        arrow::compute::cast(out.column_by_name(name).unwrap(), &DataType::Float64)
            .unwrap()
            .as_primitive::<arrow::datatypes::Float64Type>()
            .value(i)
    };
    let seeds = column(&out, "seed");
    for (i, (_, measured, closed)) in draws.iter().enumerate() {
        // Rows: (cool, 0), (cool, pooled), (warm, 0), (warm, pooled).
        let row = 2 * i;
        assert!(seeds.is_valid(row));
        assert!((f("measured_a", row) - measured).abs() < 1e-3, "{} vs {measured}", f("measured_a", row));
        assert!((f("closed_form", row) - closed).abs() < 1e-3, "{} vs {closed}", f("closed_form", row));
        assert!(
            (f("exact_a", row) - closed).abs() < 1e-3,
            "every label is 1: the draw probabilities are the closed form's"
        );
    }
}
