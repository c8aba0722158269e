//! Pipelines end to end: no work on an identical rerun, only new seeds' instances on a wider
//! matrix, only the changed stage (and what its output changes) on a config change, exact resume
//! after `kill -9`, strict errors with positions, and concurrent runs in one runs folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::project::{Project, REPORT_SQL, computed, slow_predictions, states, table_hashes};
use crate::support::{lucid, run_killed, stderr, stdout};

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mini/sample_predictions.json")
}

#[test]
fn reruns_do_only_what_changed() {
    let p = Project::new("r", &sample(), 16);
    p.run(&[]);
    assert_eq!(computed(&p.manifest("r")).len(), 7, "first run computes everything");

    // Identical rerun: no work.
    p.run(&[]);
    assert!(computed(&p.manifest("r")).is_empty(), "{:?}", states(&p.manifest("r")));

    // One more seed: only that seed's instances and the report that reads them.
    p.run(&["--set", "seeds=[0,1,2]"]);
    assert_eq!(computed(&p.manifest("r")), vec!["order[seed-2]", "evaluate[seed-2_arm-a]", "ex[all]"]);

    // A config change in one stage: that stage reruns; its output is identical, so the report is
    // served from the store (the key is made of input *content*).
    let o = p
        .cmd()
        .args(["run", "p.yaml", "--set", "seeds=[0,1,2]", "--set", "stages.evaluate.config.chunk_size=8", "--explain"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let m = p.manifest("r");
    assert_eq!(computed(&m), vec!["evaluate[seed-0_arm-a]", "evaluate[seed-1_arm-a]", "evaluate[seed-2_arm-a]"]);
    assert!(states(&m).contains(&("ex[all]".into(), "cached".into())));
    assert!(stderr(&o).contains("config.chunk_size: 16 -> 8"), "--explain names the change: {}", stderr(&o));

    // A changed input file reruns its stage and everything whose input content changes.
    let preds = p.path().join("preds.json");
    let mut v: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(sample()).unwrap()).unwrap();
    v.insert("0".into(), "SELECT 'wrong'\t----- bird -----\tlibrary".into());
    std::fs::write(&preds, serde_json::to_string(&v).unwrap()).unwrap();
    let q = Project::new("r", &preds, 16);
    std::fs::rename(q.path().join("p.yaml"), p.path().join("p.yaml")).unwrap();
    let o = p.cmd().args(["run", "p.yaml", "--set", "seeds=[0,1,2]"]).output().unwrap();
    assert!(o.status.success());
    let done = computed(&p.manifest("r"));
    assert!(done.contains(&"predictions[arm-a]".to_string()) && done.contains(&"ex[all]".to_string()), "{done:?}");
    assert!(!done.iter().any(|d| d.starts_with("order") || d.starts_with("benchmark")), "{done:?}");
}

#[test]
fn report_matches_lucid_eval_and_query_reads_the_run() {
    let p = Project::new("q", &sample(), 16);
    let o = p.run(&[]);
    // 44 of 62 sample predictions are correct (data/mini/sample_predictions.expected.json).
    assert!(stdout(&o).contains("| 0    | a   | 62 | 44      |"), "{}", stdout(&o));
    let q = p
        .cmd()
        .args(["query", "runs/q", "SELECT arm, sum(u) AS c FROM evaluation WHERE seed = 1 GROUP BY arm"])
        .output()
        .unwrap();
    assert!(q.status.success(), "{}", stderr(&q));
    assert!(stdout(&q).contains("| a   | 44 |"), "{}", stdout(&q));
    // The report's own SQL reruns by hand with the same answer.
    let q = p.cmd().args(["query", "runs/q", REPORT_SQL, "--format", "csv"]).output().unwrap();
    assert_eq!(stdout(&q).lines().nth(1), Some("0,a,62,44"));
    // A shipped report file, leading `--` comments and all (regression: passed as text, clap read
    // the comment as a flag).
    let report = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/reports/ex.sql");
    let q = p.cmd().args(["query", "runs/q"]).arg(&report).args(["--format", "csv"]).output().unwrap();
    assert!(q.status.success(), "{}", stderr(&q));
    assert!(stdout(&q).lines().any(|l| l == "0,a,total,62,70.97"), "{}", stdout(&q));
    // No SQL: the tables and their columns.
    let q = p.cmd().args(["query", "runs/q"]).output().unwrap();
    let listing = stdout(&q);
    for t in ["evaluation:", "tasks:", "gold:", "order:", "predictions:", "ex:"] {
        assert!(listing.contains(t), "{listing}");
    }
    // Several runs: a `run` column tells them apart.
    std::fs::write(
        p.path().join("p2.yaml"),
        std::fs::read_to_string(p.path().join("p.yaml")).unwrap().replace("name: q", "name: q2"),
    )
    .unwrap();
    assert!(p.cmd().args(["run", "p2.yaml", "-q"]).output().unwrap().status.success());
    let q = p
        .cmd()
        .args([
            "query",
            "runs",
            "SELECT run, count(*) AS n FROM evaluation GROUP BY run ORDER BY run",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(stdout(&q).trim(), "{\"run\":\"q\",\"n\":124}\n{\"run\":\"q2\",\"n\":124}");
    // Parquet output.
    let out = p.path().join("o.parquet");
    assert!(
        p.cmd()
            .args(["query", "runs/q", "SELECT * FROM tasks", "--format", "parquet", "--out"])
            .arg(&out)
            .status()
            .unwrap()
            .success()
    );
    assert_eq!(lucid::table::read_parquet(&out).unwrap().num_rows(), 62);
    // Status.
    let s = p.cmd().args(["status", "runs/q"]).output().unwrap();
    assert!(stdout(&s).contains("finished") && stdout(&s).contains("evaluate[seed-0_arm-a]"), "{}", stdout(&s));
}

#[test]
fn malformed_pipelines_fail_with_file_line_and_column() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pipelines/bad");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 12);
    let tmp = tempfile::tempdir().unwrap();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let want = text.lines().next().unwrap().strip_prefix("# error: ").expect("first line names the error");
        let o = lucid(tmp.path()).current_dir(tmp.path()).arg("run").arg(&f).arg("--dry-run").output().unwrap();
        assert!(!o.status.success(), "{} should fail", f.display());
        let e = stderr(&o);
        let located = format!("{}:", f.display());
        let pos = e.split(&located).nth(1).unwrap_or("");
        let mut nums = pos.split(':').take(2).map(|n| n.parse::<usize>());
        assert!(
            matches!((nums.next(), nums.next()), (Some(Ok(l)), Some(Ok(c))) if l >= 1 && c >= 1),
            "{}: no file:line:column in {e}",
            f.display()
        );
        assert!(e.contains(want), "{}: expected {want:?} in {e}", f.display());
    }
    // Bad overrides name the override.
    let p = Project::new("o", &sample(), 16);
    for (set, want) in [
        ("stages.nope.config.x=1", "no item 'nope'"),
        ("seeds=zero", "after --set"),
        ("stages.evaluate.config.chunk_size=big", "chunk_size"),
        ("seeds", "expected key.path=value"),
    ] {
        let o = p.cmd().args(["run", "p.yaml", "--dry-run", "--set", set]).output().unwrap();
        assert!(!o.status.success());
        assert!(stderr(&o).contains(want), "--set {set}: {}", stderr(&o));
    }
}

/// Killed after a random number of checkpoint parts (the kill hook: a deterministic point of the
/// work, whatever the machine's load), up to three times, then resumed: the tables equal an
/// uninterrupted run's, byte for byte.
#[test]
fn killed_runs_resume_to_identical_tables() {
    let work = tempfile::tempdir().unwrap();
    let preds = slow_predictions(work.path());
    let cache = work.path().join("cache");
    let project = || Project::with_cache("k", &preds, 2, tempfile::tempdir().unwrap(), cache.clone());
    let reference = project();
    reference.run(&[]);
    let want = table_hashes(&reference.path().join("runs/k"));
    assert!(want.iter().any(|(p, _)| p.starts_with("evaluation/")));

    let mut rng = lucid::rng::SplitMix64(42);
    for round in 0..20 {
        let p = project();
        // 2 evaluate instances of 31 parts each: every kill lands, at most 3 x 20 parts in.
        for kill in 0..(1 + rng.next_u64() % 3) {
            let parts = 1 + (rng.next_u64() % 20) as usize;
            let landed = run_killed(p.cmd().args(["run", "p.yaml", "--quiet"]), parts);
            assert!(landed, "round {round}, kill {kill}: the kill after {parts} parts landed");
        }
        assert!(walk_count(&p.path().join("runs/.store/work")) > 0, "round {round}: parts left to resume from");
        p.run(&[]);
        assert_eq!(table_hashes(&p.path().join("runs/k")), want, "round {round}: tables differ after resume");
    }
}

fn walk_count(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| if e.path().is_dir() { walk_count(&e.path()) } else { 1 }).sum())
        .unwrap_or(0)
}

#[test]
fn concurrent_runs_share_a_runs_folder_safely() {
    let p = Project::new("c1", &sample(), 16);
    let yaml = std::fs::read_to_string(p.path().join("p.yaml")).unwrap();
    std::fs::write(p.path().join("p2.yaml"), yaml.replace("name: c1", "name: c2")).unwrap();
    // Two different runs and a second copy of the first, all at once.
    let spawn =
        |f: &str| p.cmd().args(["run", f, "--quiet"]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let children = [spawn("p.yaml"), spawn("p2.yaml"), spawn("p.yaml")];
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let a = table_hashes(&p.path().join("runs/c1"));
    let b = table_hashes(&p.path().join("runs/c2"));
    assert_eq!(a, b, "same pipeline, same tables");
    // Every store entry verifies, and a rerun of both is pure cache.
    for run in ["p.yaml", "p2.yaml"] {
        p.cmd().args(["run", run, "--quiet"]).output().unwrap();
    }
    assert!(computed(&p.manifest("c1")).is_empty() && computed(&p.manifest("c2")).is_empty());
    let ls = p.cmd().args(["cache", "ls"]).output().unwrap();
    assert!(stdout(&ls).contains("entries"), "{}", stdout(&ls));
    // gc keeps what both runs use; removing run c2 lets gc free nothing c1 needs.
    std::fs::remove_dir_all(p.path().join("runs/c2")).unwrap();
    let gc = p.cmd().args(["cache", "gc"]).output().unwrap();
    assert!(gc.status.success());
    p.run(&[]);
    assert!(computed(&p.manifest("c1")).is_empty(), "gc deleted something run c1 uses");
}

#[test]
fn run_tables_open_unchanged_in_duckdb_and_polars() {
    if !crate::support::probes::require(crate::support::probes::Probe::PythonReaders) {
        return;
    }
    let p = Project::new("py", &sample(), 16);
    p.run(&[]);
    let script = r#"
import duckdb, polars as pl
ev = "runs/py/evaluation/*.parquet"
d = duckdb.sql(f"SELECT seed, arm, count(*) AS n, sum(u) AS c FROM read_parquet('{ev}') GROUP BY ALL ORDER BY seed").fetchall()
assert d == [(0, 'a', 62, 44), (1, 'a', 62, 44)], d
df = pl.read_parquet(ev)
assert df.height == 124 and df["u"].sum() == 88, df
assert set(df.columns) >= {"seed", "arm", "step", "question_id", "u", "verdict"}, df.columns
t = pl.read_parquet("runs/py/tasks/all.parquet")
assert t.columns == ["question_id", "db_id", "question", "evidence", "difficulty", "db_path", "db_hash"], t.columns
assert all(len(h) == 64 for h in t["db_hash"]), t["db_hash"]
print("ok")
"#;
    let o = Command::new("python3").args(["-c", script]).current_dir(p.path()).output().unwrap();
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
}

/// An instance whose input no producer instance matches (stages restricted to other arms) fails
/// with the stage named, and the rest of the run goes on: the runner never waits on a worker
/// that cannot report.
#[test]
fn an_unbound_input_fails_its_instance_not_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mini");
    let yaml = format!(
        "name: u\nseeds: [0]\narms: [a, b]\nstages:\n  - id: benchmark\n    kind: benchmark\n    config: {{source: bundled, path: {data}}}\n  - id: order\n    kind: permutation\n    matrix: [seed]\n    inputs: [tasks]\n  - id: predictions\n    kind: predictions\n    matrix: [arm]\n    arms: [a]\n    inputs: [tasks]\n    config: {{path: {pred}}}\n  - id: evaluate\n    kind: evaluate\n    matrix: [seed, arm]\n    inputs: [tasks, gold, predictions, order]\n    config: {{gold_cache: false}}\n",
        data = data.display(),
        pred = sample().display()
    );
    std::fs::write(dir.path().join("p.yaml"), yaml).unwrap();
    let o =
        lucid(&dir.path().join("cache")).current_dir(dir.path()).args(["run", "p.yaml", "--quiet"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("evaluate[seed-0_arm-b]")
            && stderr(&o).contains("no instance of the stages writing 'predictions'"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("FAILED"), "{}", stdout(&o));
}
