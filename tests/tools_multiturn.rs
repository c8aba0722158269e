//! BFCL's multi-turn environments in lucid's Python sandbox: a run's per-step results and the
//! environments' state after every step equal BFCL's own execution of the same calls — its
//! executor and environment classes imported natively from its wheel by
//! `src/domains/tools/data/multiturn.py`, one fresh CPython process per task — on the ground truth
//! of a sample of tasks across the four categories and on perturbed trajectories whose calls fail
//! (all 800 tasks with `LUCID_MULTITURN_ALL=1`); and hostile calls stay inside the sandbox.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use lucid::domains::tools::data;
use lucid::domains::tools::multiturn::data::{CATEGORIES, MultiTurnTask, read};
use lucid::domains::tools::multiturn::env::{self, Job, Sources, Steps};
use lucid::python::{PyLimits, Python};

use crate::support::probes::{Probe, require};

struct Fixture {
    py: Python,
    sources: Sources,
    bfcl: PathBuf,
    mpmath: PathBuf,
}

fn fixture() -> Fixture {
    let cache = lucid::cache_dir::cache_dir();
    let (bfcl, mpmath) = (data::package_dir(&cache).unwrap(), data::mpmath_dir(&cache).unwrap());
    let sources = Sources::read(&bfcl, &mpmath).unwrap();
    Fixture { py: lucid::python::package::interpreter(&cache).unwrap(), sources, bfcl, mpmath }
}

fn tasks(dir: &Path) -> Vec<MultiTurnTask> {
    CATEGORIES.iter().flat_map(|c| read(dir, c).unwrap()).collect()
}

/// Start BFCL's own execution of `job` natively (its records parsed when waited on).
fn native(f: &Fixture, job: &Job) -> impl FnOnce() -> Steps {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new("python3")
        .arg("-S")
        .arg(manifest.join("src/domains/tools/data/multiturn.py"))
        .args([&f.bfcl, &f.mpmath])
        .arg(manifest.join("src/domains/tools/multiturn/driver.py"))
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let tag = job.tag();
    child.stdin.take().unwrap().write_all(&job.stdin(None, &tag)).unwrap();
    move || {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "multiturn.py: {}", String::from_utf8_lossy(&out.stderr));
        env::parse(&String::from_utf8_lossy(&out.stdout), &tag).unwrap()
    }
}

/// Each turn's calls reversed, a call to no tool and one with a wrong argument appended: steps
/// whose results are BFCL's error strings and whose states differ from the ground truth's.
fn perturbed(task: &MultiTurnTask) -> Vec<Vec<String>> {
    task.ground_truth
        .iter()
        .map(|turn| {
            let mut calls: Vec<String> = turn.iter().rev().cloned().collect();
            calls.push("no_such_tool(x=1)".into());
            if let Some(first) = turn.first() {
                calls.push(first.replacen('(', "(lucid_unknown_argument=1, ", 1));
            }
            calls
        })
        .collect()
}

#[test]
fn sandboxed_runs_equal_bfcls_own_execution_of_the_same_calls() {
    if !require(Probe::ToolsMultiTurn) || !require(Probe::Python) {
        return;
    }
    let f = fixture();
    let all = tasks(&f.bfcl);
    assert_eq!(all.len(), 800, "BFCL v4's four multi-turn categories");
    let every = if std::env::var("LUCID_MULTITURN_ALL").is_ok_and(|v| v == "1") { 1 } else { 8 };
    let limits = PyLimits::default();
    let (mut compared, mut differ, mut ground_truth_calls) = (0, Vec::new(), 0);
    for (i, task) in all.iter().enumerate().filter(|(i, _)| i % every == 0) {
        let wrong = perturbed(task);
        let mut trajectories = vec![("ground truth", Job::ground_truth(task))];
        if i % (every * 2) == 0 {
            trajectories.push(("perturbed", Job { steps: &wrong, ..Job::ground_truth(task) }));
        }
        for (what, job) in trajectories {
            let theirs = native(&f, &job);
            let ours = env::run(&f.py, &f.sources, &job, &limits);
            let theirs = theirs();
            assert!(ours.steps.finished, "{} ({what}): {}", task.id, ours.ending);
            assert_eq!(ours.steps.results.len(), job.steps.len());
            let failed = ours.steps.failed_calls();
            if what == "ground truth" {
                ground_truth_calls += ours.steps.results.iter().map(Vec::len).sum::<usize>();
                assert_eq!(failed, vec![], "{}: the ground truth runs without a failed call", task.id);
            } else {
                assert!(failed.iter().any(|(_, _, r)| r.contains("no_such_tool")), "{}: {failed:?}", task.id);
            }
            compared += 1;
            if ours.steps != theirs {
                differ.push(format!("{} ({what})", task.id));
            }
        }
    }
    eprintln!(
        "multi-turn trajectories compared with BFCL's own execution: {compared}, differing: {}; ground-truth calls, none failed: {ground_truth_calls}",
        differ.len()
    );
    assert!(compared >= 150, "{compared}");
    assert!(differ.is_empty(), "differ from BFCL's own execution: {differ:?}");
}

#[test]
fn hostile_calls_stay_inside_the_sandbox() {
    if !require(Probe::ToolsMultiTurn) {
        return;
    }
    let f = fixture();
    let all = tasks(&f.bfcl);
    let math = all.iter().find(|t| t.involved_classes.iter().any(|c| c == "MathAPI")).unwrap();
    let files = all.iter().find(|t| t.involved_classes.iter().any(|c| c == "GorillaFileSystem")).unwrap();
    let marker = std::env::temp_dir().join(format!("lucid-multiturn-{}", std::process::id()));
    let hostile = [
        vec![
            "open(file='/etc/passwd').read()".to_string(),
            format!("__import__('os').system('touch {}')", marker.display()),
            "__import__('subprocess').run(['id'])".to_string(),
            "cat(file_name='../../etc/passwd')".to_string(),
        ],
        vec!["power(base=10, exponent=100000)".to_string()],
    ];
    let steps = [hostile[0].clone()];
    let run = env::run(&f.py, &f.sources, &Job { steps: &steps, ..Job::ground_truth(files) }, &PyLimits::default());
    assert!(run.steps.finished, "{}", run.ending);
    for r in &run.steps.results[0] {
        assert!(!r.contains("root:"), "nothing of the machine is read: {r}");
    }
    let failed: Vec<usize> = run.steps.failed_calls().iter().map(|f| f.1).collect();
    assert_eq!(failed, vec![0, 1, 2, 3], "every hostile call failed: {:?}", run.steps.results[0]);
    assert!(!marker.exists(), "no command ran on the machine");

    // A result too long to print is BFCL's own error, and a call that never ends is out of fuel,
    // the steps before it kept.
    let steps = [hostile[1].clone(), vec!["logarithm(value=2, base=3, precision=10000000)".to_string()]];
    let run = env::run(&f.py, &f.sources, &Job { steps: &steps, ..Job::ground_truth(math) }, &PyLimits::default());
    assert_eq!(run.limit, Some("fuel"), "{}", run.ending);
    assert!(!run.steps.finished);
    assert_eq!(run.steps.results.len(), 1, "the first step is kept");
    assert!(run.steps.results[0][0].contains("4300"), "{:?}", run.steps.results[0]);

    // A call that forges the driver's records (its tag read from the driver's globals) makes the
    // report unreadable, never a state it did not reach.
    let forge =
        "__import__('os').write(1, (__import__('sys').modules['__main__']._tag + ' S 0 [\"forged\"]\\n').encode())";
    let steps = [vec![forge.to_string()]];
    let run = env::run(&f.py, &f.sources, &Job { steps: &steps, ..Job::ground_truth(files) }, &PyLimits::default());
    assert!(!run.steps.finished && run.steps.results.is_empty(), "{:?}", run.steps.results);
    assert!(run.ending.contains("unreadable"), "{}", run.ending);
}
