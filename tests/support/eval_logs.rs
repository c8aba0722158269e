//! What the eval-log import tests share: the fixture scripts that drive the real tools
//! (`tests/fixtures/eval_logs/`), `lucid import` / `lucid audit` in a temp folder, and the
//! grader row of an audit.
#![allow(dead_code)] // each eval-log test module uses its own part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use super::{lucid, stderr, stdout};

/// A fixture script.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/eval_logs").join(name)
}

/// `python3 SCRIPT ARGS` in `dir`; its stdout, trimmed (the script prints what it wrote).
pub fn python(dir: &Path, name: &str, args: &[&str]) -> String {
    let o = Command::new("python3").current_dir(dir).arg(script(name)).args(args).output().unwrap();
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    stdout(&o).trim().to_string()
}

/// `lucid import LOG --preset PRESET --name RUN ARGS` in `dir`, as it ran.
pub fn import_output(dir: &Path, log: &str, preset: &str, run: &str, args: &[&str]) -> Output {
    lucid(&dir.join("cache"))
        .current_dir(dir)
        .args(["import", log, "--preset", preset, "--name", run])
        .args(args)
        .output()
        .unwrap()
}

/// [`import_output`], which must succeed; its stderr (the warnings).
pub fn import(dir: &Path, log: &str, preset: &str, run: &str, args: &[&str]) -> String {
    let o = import_output(dir, log, preset, run, args);
    assert!(o.status.success(), "{}", stderr(&o));
    stderr(&o)
}

/// `lucid audit runs/RUN --format FORMAT` in `dir`: its stdout.
pub fn audit(dir: &Path, run: &str, format: &str) -> String {
    let o = lucid(&dir.join("cache"))
        .current_dir(dir)
        .args(["audit", &format!("runs/{run}"), "--format", format, "--bootstrap", "50"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// The audit's JSON.
pub fn audit_json(dir: &Path, run: &str) -> Value {
    serde_json::from_str(&audit(dir, run, "json")).unwrap()
}

/// (leniency, sensitivity, memories) of the grader over graded episodes.
pub fn grader(a: &Value) -> (f64, f64, u64) {
    let g = &a["tables"]["grader"][0];
    (g["leniency"].as_f64().unwrap(), g["sensitivity"].as_f64().unwrap(), g["memories"].as_u64().unwrap())
}

/// The verifiers on the audit's EIA axes.
pub fn verifiers(a: &Value) -> Vec<String> {
    a["tables"]["eia"].as_array().unwrap().iter().map(|r| r["verifier"].as_str().unwrap().to_string()).collect()
}

/// Rows of `sql` over `runs/RUN`, each as its values joined by `|`.
pub fn rows(dir: &Path, run: &str, sql: &str) -> Vec<String> {
    let cell = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    super::study::query_run(&dir.join("cache"), dir, &format!("runs/{run}"), sql)
        .iter()
        .map(|r| r.as_object().unwrap().values().map(cell).collect::<Vec<_>>().join("|"))
        .collect()
}

/// `lucid import` of `log` as run `run` with `args`, then its audit's JSON.
pub fn audited(dir: &Path, log: &str, preset: &str, run: &str, args: &[&str]) -> Value {
    import(dir, log, preset, run, args);
    audit_json(dir, run)
}

/// The planted self-grade of the fixtures whose model under evaluation is `solver` and whose
/// score `self` it grades (C on 5 of the 8 wrong answers, on every right one): imported as run
/// `self` with `args`, its leniency, sensitivity and the audit's words for it checked.
pub fn check_planted_self_grade(dir: &Path, log: &str, preset: &str, args: &[&str]) {
    let mut all = vec!["--grader", "self"];
    all.extend_from_slice(args);
    let a = audited(dir, log, preset, "self", &all);
    assert_eq!(grader(&a), (5.0 / 8.0, 1.0, 20));
    assert_eq!(a["eval_log"]["self_grade"], true, "{}", a["eval_log"]);
    let md = audit(dir, "self", "md");
    assert!(md.contains("**Self-grade: the grader `self` is graded by the model under evaluation (solver)**"), "{md}");
}

/// `lucid view` of the imported `runs`, exported as a static page: every run is on it (side by
/// side when there are two) and `text` (an answer, a scorer's explanation) is on its pages.
pub fn viewed(dir: &Path, runs: &[&str], text: &str) {
    let paths: Vec<String> = runs.iter().map(|r| format!("runs/{r}")).collect();
    let o = lucid(&dir.join("cache"))
        .current_dir(dir)
        .arg("view")
        .args(&paths)
        .args(["--export", "page"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let data = std::fs::read_to_string(dir.join("page/data.js")).unwrap();
    for r in runs {
        assert!(data.contains(&format!("\"name\":\"{r}\"")), "run {r} is not on the page");
    }
    let details: String = std::fs::read_dir(dir.join("page/details"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(details.contains(text), "`{text}` is not on the episodes' pages");
}
