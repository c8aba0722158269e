//! The study end to end against a scripted model behind a real loopback OpenAI-compatible server
//! with injected faults: every arm and seed keeps every episode, faults end in a retried success
//! or a recorded failure, a canary planted in the gold SQL never reaches the model, labels follow
//! each arm's rule, reruns come from the cache and a new seed computes only its own instances.
//! Plus the structural label-free check on the shipped pipelines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::project::computed;
use crate::support::study::{
    CANARY, OPS, Ops, canary_benchmark, pipeline, pipeline_with, project, query, run_and_kill, scripted, stable_tables,
};
use crate::support::{lucid, stderr, stdout};

#[test]
fn study_with_faults_keeps_every_episode_and_never_shows_gold() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let data = canary_benchmark(dir.path());
    let bert = crate::support::tiny_models::write_tiny_bert(&dir.path().join("bert"));
    // First call: 429, 500, dropped connection -> recorded failure after 3 attempts. Second call:
    // malformed JSON, then an answer -> retried success. Then the scripted model.
    let server = FakeServer::start(
        vec![Reply::Status(429, "{}", Some("0")), Reply::Status(500, "{}", None), Reply::Drop, Reply::Malformed],
        Reply::Scripted(scripted),
    );
    std::fs::write(dir.path().join("study.yaml"), pipeline(&server.url, &data, &bert)).unwrap();
    let run = |extra: &[&str]| {
        let o =
            lucid(&cache).current_dir(dir.path()).args(["run", "study.yaml", "--quiet"]).args(extra).output().unwrap();
        assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
        o
    };
    run(&[]);
    let n = 15; // 3 questions of each of 5 databases

    // No episode lost or duplicated, in any arm or seed.
    let rows = query(
        &cache,
        dir.path(),
        "SELECT arm, seed, count(*) AS n, count(DISTINCT step) AS steps, min(step) AS lo, max(step) AS hi FROM episodes GROUP BY arm, seed ORDER BY arm, seed",
    );
    assert_eq!(rows.len(), 8, "{rows:?}");
    for r in &rows {
        assert_eq!(
            (r["n"].as_i64(), r["steps"].as_i64(), r["lo"].as_i64(), r["hi"].as_i64()),
            (Some(n), Some(n), Some(0), Some(n - 1)),
            "{r}"
        );
    }
    // The injected faults: one recorded failure (3 attempts), one retried success; every call recorded.
    let failed = query(&cache, dir.path(), "SELECT role, attempts, error FROM calls WHERE error IS NOT NULL");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["attempts"].as_i64(), Some(3));
    let ep_failed = query(&cache, dir.path(), "SELECT sum(failed_calls) AS f FROM episodes");
    assert_eq!(ep_failed[0]["f"].as_i64(), Some(1));
    let retried = query(&cache, dir.path(), "SELECT count(*) AS c FROM calls WHERE attempts = 2 AND error IS NULL");
    assert_eq!(retried[0]["c"].as_i64(), Some(1));
    let misses = query(&cache, dir.path(), "SELECT sum(attempts) AS a FROM calls WHERE NOT cache_hit");
    assert_eq!(
        misses[0]["a"].as_u64(),
        Some(server.requests().len() as u64),
        "every request the server saw is an attempt on record"
    );

    // Label-free: the canary in the gold SQL reached no prompt, and evaluation did read gold.
    let requests = server.requests();
    assert!(requests.len() > 50);
    for r in &requests {
        assert!(!r.body.to_string().contains(CANARY), "gold reached a prompt: {}", r.body);
    }
    let gold_ran =
        query(&cache, dir.path(), "SELECT count(*) AS c FROM evaluation WHERE question_id = 0 AND gold_status = 'ok'");
    assert_eq!(gold_ran[0]["c"].as_i64(), Some(8));

    // Labels follow each arm's rule; memories shown carry the label their episode stored.
    let labels = query(
        &cache,
        dir.path(),
        "SELECT e.arm, e.r, e.flagged, e.stored_q, v.u FROM episodes e JOIN evaluation v ON e.arm = v.arm AND e.seed = v.seed AND e.step = v.step",
    );
    for l in &labels {
        let (r, flagged, q, u) = (
            l["r"].as_i64(),
            l["flagged"].as_bool().unwrap(),
            l["stored_q"].as_i64().unwrap(),
            l["u"].as_i64().unwrap(),
        );
        let want = match l["arm"].as_str().unwrap() {
            "lucid" if flagged => 0,
            "oracle" => u,
            _ => r.unwrap_or(0),
        };
        assert_eq!(q, want, "{l}");
    }
    let demoted = labels.iter().filter(|l| l["arm"] == "lucid" && l["flagged"] == true && l["r"] == 1).count();
    assert!(demoted > 0, "the scripted model's empty answers are flagged and demoted");
    let shown = query(&cache, dir.path(), "SELECT e.arm, e.seed, e.step, unnest(e.retrieved) AS m FROM episodes e");
    let stored: BTreeMap<(String, i64, i64), i64> =
        query(&cache, dir.path(), "SELECT arm, seed, step, stored_q FROM episodes")
            .iter()
            .map(|r| {
                (
                    (r["arm"].as_str().unwrap().to_string(), r["seed"].as_i64().unwrap(), r["step"].as_i64().unwrap()),
                    r["stored_q"].as_i64().unwrap(),
                )
            })
            .collect();
    assert!(!shown.is_empty());
    for s in &shown {
        let (arm, seed, step) =
            (s["arm"].as_str().unwrap().to_string(), s["seed"].as_i64().unwrap(), s["step"].as_i64().unwrap());
        assert_ne!(arm, "no-memory");
        let m = &s["m"];
        let ms = m["step"].as_i64().unwrap();
        assert!(ms < step, "only earlier episodes are retrieved");
        assert_eq!(m["shown_label"].as_i64().unwrap(), stored[&(arm.clone(), seed, ms)], "{s}");
    }
    let flags = query(
        &cache,
        dir.path(),
        "SELECT count(*) AS c FROM flags f JOIN episodes e ON f.arm = e.arm AND f.seed = e.seed AND f.step = e.step WHERE f.flagged <> e.flag_exec",
    );
    assert_eq!(flags[0]["c"].as_i64(), Some(0), "the flag stage with the execution channel alone reproduces flag_exec");

    // Every table is as documented in schemas/.
    for (table, label) in [
        ("episodes", "seed-0_arm-lucid"),
        ("calls", "seed-1_arm-oracle"),
        ("retrieval", "seed-0"),
        ("evaluation", "seed-0_arm-memento"),
        ("flags", "seed-1_arm-no-memory"),
    ] {
        let file = dir.path().join("runs/study").join(table).join(format!("{label}.parquet"));
        assert_eq!(crate::support::schemas::actual(&file), crate::support::schemas::documented(table), "{table}");
    }

    // A rerun is served from the store; a third seed computes only seed 2's instances.
    let before = server.requests().len();
    run(&[]);
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("runs/study/manifest.json")).unwrap()).unwrap();
    assert!(computed(&m).is_empty(), "{:?}", computed(&m));
    assert_eq!(server.requests().len(), before);
    run(&["--set", "seeds=[0,1,2]"]);
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("runs/study/manifest.json")).unwrap()).unwrap();
    let done: BTreeSet<String> = computed(&m).into_iter().collect();
    assert!(!done.is_empty());
    for d in &done {
        assert!(d.contains("seed-2"), "only seed 2 is new work, got {done:?}");
    }
}

#[test]
fn agent_stages_cannot_reach_gold() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The verifiers are label-free too: they score memories without gold or U.
    let agent_kinds = [
        "benchmark",
        "permutation",
        "embed",
        "retrieve",
        "memory_loop",
        "flag",
        "resample",
        "judge",
        "panel",
        "evidence",
    ];
    let files = [
        ("pipelines/demo.yaml", 6),
        ("pipelines/bird.yaml", 6),
        ("pipelines/spiderman.yaml", 6),
        ("pipelines/factual_bank.yaml", 3),
        ("pipelines/leniency.yaml", 6),
        ("pipelines/leniency-server.yaml", 6),
        ("pipelines/policies.yaml", 9),
        ("pipelines/agent.yaml", 6),
        ("pipelines/agent-openai.yaml", 6),
    ];
    for (file, min_loops) in files {
        let path = repo.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let spec = lucid::pipeline::spec::parse::<lucid::stages::registry::Stages>(&path, &text, &[]).unwrap();
        let plan = lucid::pipeline::plan::build(&path, &text, spec).unwrap();
        let mut loops = 0;
        for inst in &plan.instances {
            let stage = &plan.spec.stages[inst.stage];
            let kind = stage.stage.kind();
            if kind == "memory_loop" && stage.stage.reads_gold() {
                assert!(
                    stage.arms.as_ref().is_some_and(|a| a == &vec!["oracle".to_string()]),
                    "{file}: only the oracle may read gold"
                );
                continue;
            }
            if agent_kinds.contains(&kind) {
                loops += usize::from(kind == "memory_loop");
                assert!(!inst.inputs.contains_key("gold"), "{file}: {} reads gold", stage.id);
                assert!(!inst.inputs.contains_key("evaluation"), "{file}: {} reads U", stage.id);
                assert!(!stage.stage.reads_gold(), "{file}: {}", stage.id);
            }
        }
        assert!(loops >= min_loops, "{file}: the memory arms run as agent stages");
    }
    // The tables agent stages read carry no reference answer.
    for f in lucid::datasets::tables::tasks_table().schema().fields() {
        assert!(!f.name().contains("sql") && !f.name().contains("gold"), "{}", f.name());
    }
    // Listing gold as an input of an agent stage is refused before anything runs.
    let dir = tempfile::tempdir().unwrap();
    let yaml = "name: x\nseeds: [0]\narms: [lucid]\nstages:\n  - id: benchmark\n    kind: benchmark\n  - id: order\n    kind: permutation\n    matrix: [seed]\n    inputs: [tasks]\n  - id: agent\n    kind: memory_loop\n    matrix: [seed, arm]\n    inputs: [tasks, order, gold]\n";
    std::fs::write(dir.path().join("p.yaml"), yaml).unwrap();
    let o =
        lucid(&dir.path().join("cache")).current_dir(dir.path()).args(["run", "p.yaml", "--dry-run"]).output().unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("may not read 'gold'"), "{}", stderr(&o));
    // An oracle arm in a stage that may not read gold is refused when it starts.
    let yaml = yaml
        .replace("arms: [lucid]", "arms: [oracle]")
        .replace("inputs: [tasks, order, gold]", "inputs: [tasks, order]");
    std::fs::write(dir.path().join("p.yaml"), yaml).unwrap();
    let o =
        lucid(&dir.path().join("cache")).current_dir(dir.path()).args(["run", "p.yaml", "--quiet"]).output().unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("is an oracle"), "{}", stderr(&o));
}

/// Kills at deterministic points (after the 1st, 2nd, ... checkpoint part of each run), each round with other operational settings and the server throwing
/// transient faults (the first attempt of a request fails, so one retry recovers it whatever the
/// concurrency), then a resume with yet other settings: every deterministic column the schemas
/// list equals that of an uninterrupted run against the same server, with no episode lost or
/// duplicated.
#[test]
fn killed_study_resumes_exactly_whatever_the_settings_and_faults() {
    let faults = [Reply::Status(429, "{}", Some("0")), Reply::Status(503, "{}", None), Reply::Drop, Reply::Malformed];
    let flaky = Reply::flaky(faults.iter().cycle().take(24).cloned().collect(), scripted);
    let Reply::Flaky(state) = &flaky else { unreachable!() };
    let state = state.clone();
    let server = FakeServer::start(vec![], flaky);
    let dir = project(&server.url);
    let cache = dir.path().join("cache");
    let (data, bert) = (dir.path().join("data"), dir.path().join("bert"));
    let settings = [
        Ops { chunk_size: 7, ..OPS },
        Ops { chunk_size: 2, concurrency: 4, ..OPS },
        Ops { chunk_size: 5, max_concurrency: 3, max_attempts: 6, ..OPS },
        Ops { chunk_size: 1, concurrency: 3, max_concurrency: 2, ..OPS },
        Ops { chunk_size: 16, ..OPS },
        Ops { chunk_size: 4, concurrency: 2, max_attempts: 4, ..OPS },
    ];
    for (round, ops) in settings.iter().enumerate() {
        std::fs::write(dir.path().join("study.yaml"), pipeline_with(&server.url, &data, &bert, *ops)).unwrap();
        assert!(run_and_kill(&cache, dir.path(), 1 + round % 3), "round {round}: the kill landed mid-run");
    }
    let last = Ops { chunk_size: 6, concurrency: 2, max_concurrency: 2, max_attempts: 5 };
    std::fs::write(dir.path().join("study.yaml"), pipeline_with(&server.url, &data, &bert, last)).unwrap();
    let o = lucid(&cache).current_dir(dir.path()).args(["run", "study.yaml", "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(state.faults_left(), 0, "every fault was thrown");
    let resumed = stable_tables(&cache, dir.path());
    // The reference: the same server (every request it sends was seen, so no fault), one
    // uninterrupted run with a cold cache.
    let reference = {
        let dir = project(&server.url);
        let cache = dir.path().join("cache");
        let o = lucid(&cache).current_dir(dir.path()).args(["run", "study.yaml", "--quiet"]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stable_tables(&cache, dir.path())
    };
    for (table, rows) in &reference {
        assert_eq!(resumed[table].len(), rows.len(), "{table}: rows lost or duplicated");
        for (got, want) in resumed[table].iter().zip(rows) {
            assert_eq!(got, want, "{table}: a killed and resumed study has the same deterministic columns");
        }
    }
}
