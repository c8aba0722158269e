//! The memory loop scheduled by its dependency DAG gives exactly the sequential result: a model
//! whose every answer is a hash of its whole prompt (so any difference in what an episode was
//! shown changes its plan, SQL, grade and everything downstream), behind a loopback server with
//! random per-call latency (so episodes finish in a different order every run). Sequential
//! (`concurrency: 1`) and parallel (`concurrency: 64`) runs agree on every deterministic column;
//! so does a parallel run killed at random points and resumed.

use std::hash::{Hash, Hasher};
use std::time::Duration;

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::study::{OPS, Ops, project_with, run_and_kill, scripted, stable_tables};
use crate::support::{lucid, stderr};

fn h(text: &str) -> u64 {
    let mut s = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut s);
    s.finish()
}

/// Answers that depend on the whole prompt, after a random wait of 0-15 ms.
fn prompt_hashing(prompt: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    std::thread::sleep(Duration::from_micros(u64::from(nanos % 15_000)));
    let x = h(prompt);
    if prompt.contains("numbered plan") {
        return format!("1. Plan {:x}.", x % 4096);
    }
    if prompt.contains("VERDICT") {
        return if x.is_multiple_of(3) { "VERDICT: INCORRECT".into() } else { "VERDICT: CORRECT".into() };
    }
    let sql = scripted(prompt);
    // Some answers differ by a literal that depends on the prompt: a memory shown differently
    // (another stored label, plan or SQL) changes the SQL.
    if x.is_multiple_of(2) { sql.replace("WHERE 1 = 0", &format!("WHERE {} = 0", x % 7)) } else { sql }
}

fn run(dir: &std::path::Path) {
    let o = lucid(&dir.join("cache")).current_dir(dir).args(["run", "study.yaml", "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn dag_scheduled_memory_arms_equal_the_sequential_loop() {
    let server = FakeServer::start(vec![], Reply::func(prompt_hashing));
    let sequential = project_with(&server.url, Ops { concurrency: 1, max_concurrency: 1, ..OPS });
    run(sequential.path());
    let want = stable_tables(&sequential.path().join("cache"), sequential.path());
    let before = server.max_in_flight.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(before, 1, "one at a time");

    let wide = Ops { concurrency: 64, max_concurrency: 64, chunk_size: 2, ..OPS };
    let parallel = project_with(&server.url, wide);
    run(parallel.path());
    assert!(server.max_in_flight.load(std::sync::atomic::Ordering::SeqCst) > 2, "episodes overlapped");
    let got = stable_tables(&parallel.path().join("cache"), parallel.path());
    // The labels differ between arms (LUCID demotes flagged episodes), so memories differ too.
    let labels: Vec<&serde_json::Value> = want["episodes"].iter().map(|e| &e["stored_q"]).collect();
    assert!(labels.iter().any(|q| **q == 0) && labels.iter().any(|q| **q == 1), "stored labels vary");
    for (table, rows) in &want {
        assert_eq!(got[table].len(), rows.len(), "{table}: rows lost or duplicated");
        for (g, w) in got[table].iter().zip(rows) {
            assert_eq!(g, w, "{table}: concurrency 64 differs from the sequential loop");
        }
    }

    // The manifest notes each memory instance's critical path: the longest retrieval chain,
    // recomputed here from the retrieval table; `lucid status` shows it.
    let cache = parallel.path().join("cache");
    let rows = crate::support::study::query(&cache, parallel.path(), "SELECT seed, step, neighbor_step FROM retrieval");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(parallel.path().join("runs/study/manifest.json")).unwrap())
            .unwrap();
    for seed in [0u64, 1] {
        let mut depth: std::collections::BTreeMap<u64, u64> = Default::default();
        let mut edges: Vec<(u64, u64)> = rows
            .iter()
            .filter(|r| r["seed"] == seed)
            .map(|r| (r["step"].as_u64().unwrap(), r["neighbor_step"].as_u64().unwrap()))
            .collect();
        edges.sort();
        let steps = want["episodes"].iter().filter(|e| e["seed"] == seed && e["arm"] == "memento").count() as u64;
        for t in 0..steps {
            let d = 1 + edges.iter().filter(|e| e.0 == t).map(|e| depth[&e.1]).max().unwrap_or(0);
            depth.insert(t, d);
        }
        let critical = depth.values().max().copied().unwrap();
        let inst = manifest["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["stage"] == "agent" && i["label"] == format!("seed-{seed}_arm-memento"))
            .unwrap();
        assert_eq!(inst["notes"]["critical_path"], critical, "{inst}");
        assert!(critical > 1 && critical < steps, "a chain, shorter than the stream: {critical} of {steps}");
    }
    let o = lucid(&cache).current_dir(parallel.path()).args(["status", "runs/study"]).output().unwrap();
    assert!(crate::support::stdout(&o).contains("critical path"), "{}", crate::support::stdout(&o));

    // Killed after its 1st, 3rd, 2nd and 4th checkpoint part while episodes finish out of order,
    // then resumed.
    let killed = project_with(&server.url, wide);
    let cache = killed.path().join("cache");
    for (round, parts) in [1, 3, 2, 4].into_iter().enumerate() {
        assert!(run_and_kill(&cache, killed.path(), parts), "round {round}: the kill landed mid-run");
    }
    run(killed.path());
    let resumed = stable_tables(&cache, killed.path());
    for (table, rows) in &want {
        assert_eq!(resumed[table].len(), rows.len(), "{table}: rows lost or duplicated after kills");
        for (g, w) in resumed[table].iter().zip(rows) {
            assert_eq!(g, w, "{table}: a killed and resumed DAG run differs from the sequential loop");
        }
    }
}
