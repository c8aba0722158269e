//! BFCL's multi-turn environments in lucid's Python sandbox: a run's per-step results and the
//! environments' state after every step equal BFCL's own execution of the same calls — its
//! executor and environment classes imported natively from its wheel by
//! `src/domains/tools/data/multiturn.py`, one fresh CPython process per task — on the ground truth
//! of a sample of tasks across the four categories and on perturbed trajectories whose calls fail
//! (all 800 tasks with `LUCID_MULTITURN_ALL=1`); the gold (BFCL's own evaluation, run in the
//! sandbox) gives BFCL's checker's verdict, run natively, on trajectories of every kind it tells
//! apart; hostile calls stay inside the sandbox and cannot
//! rewrite the driver's report; a report out of the driver's order is refused.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use lucid::domains::tools::data;
use lucid::domains::tools::multiturn::data::{CATEGORIES, MultiTurnTask, read};
use lucid::domains::tools::multiturn::env::{self, Job, Sources, Steps};
use lucid::domains::tools::multiturn::gold::{self, Trajectory};
use lucid::python::{PyLimits, Python};

use crate::support::probes::{Probe, require};

struct Fixture {
    py: Python,
    sources: Sources,
    bfcl: PathBuf,
    mpmath: PathBuf,
}

/// The interpreter and the sources, when what the tests need is there (None: they skip, or
/// fail under CI): the fetched packages and `python3` for BFCL's own code.
fn fixture() -> Option<Fixture> {
    if !require(Probe::ToolsMultiTurn) || !require(Probe::Python) {
        return None;
    }
    let cache = lucid::cache_dir::cache_dir();
    let (bfcl, mpmath) = (data::package_dir(&cache).unwrap(), data::mpmath_dir(&cache).unwrap());
    let sources = Sources::read(&bfcl, &mpmath).unwrap();
    Some(Fixture { py: lucid::python::package::interpreter(&cache).unwrap(), sources, bfcl, mpmath })
}

fn tasks(dir: &Path) -> Vec<MultiTurnTask> {
    CATEGORIES.iter().flat_map(|c| read(dir, c).unwrap()).collect()
}

/// Start the driver natively with `stdin` (BFCL's own code, imported from the wheel).
fn native(f: &Fixture, stdin: &[u8]) -> Child {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new("python3")
        .arg("-S")
        .arg(manifest.join("src/domains/tools/data/multiturn.py"))
        .args([&f.bfcl, &f.mpmath])
        .arg(manifest.join("src/domains/tools/multiturn/driver.py"))
        .env("TZ", "UTC")
        .env("PYTHONHASHSEED", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child
}

/// The native run's standard output.
fn native_output(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "multiturn.py: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the native run of `job` reported.
fn native_steps(child: Child, job: &Job) -> Steps {
    env::parse(&native_output(child), job).unwrap()
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
    let Some(f) = fixture() else { return };
    let all = tasks(&f.bfcl);
    assert_eq!(all.len(), 800, "BFCL v4's four multi-turn categories");
    let every = if std::env::var("LUCID_MULTITURN_ALL").is_ok_and(|v| v == "1") { 1 } else { 8 };
    let limits = PyLimits::default();
    let (mut compared, mut differ, mut ground_truth_calls, mut not_repeating) = (0, Vec::new(), 0, [0usize; 2]);
    for (i, task) in all.iter().enumerate().filter(|(i, _)| i % every == 0) {
        let wrong = perturbed(task);
        let mut trajectories = vec![("ground truth", Job { repeat: true, ..Job::ground_truth(task) })];
        if i % (every * 2) == 0 {
            trajectories.push(("perturbed", Job { steps: &wrong, repeat: true, ..Job::ground_truth(task) }));
        }
        for (what, job) in trajectories {
            let theirs = native(&f, &job.stdin(None));
            let ours = env::run(&f.py, &f.sources, &job, &limits);
            let theirs = native_steps(theirs, &job);
            assert!(ours.steps.finished, "{} ({what}): {}", task.id, ours.ending);
            assert_eq!(ours.steps.results.len(), job.steps.len());
            let failed = ours.steps.failed_calls();
            if what == "ground truth" {
                ground_truth_calls += ours.steps.results.iter().map(Vec::len).sum::<usize>();
                assert_eq!(failed, vec![], "{}: the ground truth runs without a failed call", task.id);
            } else {
                assert!(failed.iter().any(|(_, _, r)| r.contains("no_such_tool")), "{}: {failed:?}", task.id);
            }
            assert_eq!(ours.steps.repeats.len(), job.steps.len());
            not_repeating[usize::from(what != "ground truth")] += ours.steps.not_repeating().len();
            compared += 1;
            if ours.steps != theirs {
                differ.push(format!("{} ({what})", task.id));
            }
        }
    }
    eprintln!(
        "multi-turn trajectories compared with BFCL's own execution: {compared}, differing: {}; ground-truth calls, none failed: {ground_truth_calls}; steps not repeating (ground truth, perturbed): {not_repeating:?}",
        differ.len()
    );
    assert!(compared >= 150, "{compared}");
    assert!(differ.is_empty(), "differ from BFCL's own execution: {differ:?}");
}

#[test]
fn hostile_calls_stay_inside_the_sandbox() {
    let Some(f) = fixture() else { return };
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

    // Calls that would forge the driver's report (writing its tagged records themselves, or
    // replacing what it writes them with) never run: the gate lets through only a tool of the task
    // called with literal arguments, so the report is the driver's own.
    let main = "__import__('sys').modules['__main__']";
    let forge = [
        format!("__import__('os').write(1, ({main}._tag + ' S 0 [\"ok\"]\\n').encode())"),
        "setattr(__import__('json'), 'dumps', lambda v, **k: '1')".to_string(),
        "ls(a=__import__('os')._exit(0))".to_string(),
        "ls(**{'a': 1})".to_string(),
        "eval('1')".to_string(),
    ];
    let steps = [forge.to_vec()];
    let run = env::run(&f.py, &f.sources, &Job { steps: &steps, ..Job::ground_truth(files) }, &PyLimits::default());
    assert!(run.steps.finished, "{}", run.ending);
    let refused: Vec<usize> = run.steps.failed_calls().iter().map(|f| f.1).collect();
    assert_eq!(refused, vec![0, 1, 2, 3, 4], "{:?}", run.steps.results);
    assert_eq!(run.steps.states[0], run.steps.initial, "nothing changed the environments");

    // In the gold's run, which holds the ground truth, a wrong trajectory that would switch off
    // BFCL's checks (valid without the gate: the native reference runs calls as BFCL does) stays
    // wrong: the forging calls are refused.
    let checker = "__import__('bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker', fromlist=['x'])";
    let flip = [
        format!("setattr({checker}, 'state_checker', lambda a, b: {{'valid': True}})"),
        format!("setattr({checker}, 'response_checker', lambda a, b, c: {{'valid': True}})"),
    ];
    let wrong = variants(files).into_iter().find(|(what, _)| *what == "an argument changed").unwrap().1;
    let forged: Trajectory = wrong.into_iter().map(|turn| vec![flip.to_vec(), turn[0].clone()]).collect();
    let v = gold::verdict(&f.py, &f.sources, files, &forged, &PyLimits::default()).unwrap();
    assert!(!v.valid, "{v:?}");
    let (stdin, tag) = gold::request(files, &forged, None);
    let ungated = gold::read(&native_output(native(&f, &stdin)), &tag).unwrap();
    assert!(ungated.valid, "without the gate the same calls pass BFCL's checker: {ungated:?}");
}

/// Trajectories BFCL's checker tells apart, from a task's ground truth: as it is (one step per
/// turn, and one step per call), each turn's calls reversed, each turn's last call dropped, a turn
/// too many, each turn's last call made twice, an argument changed in each turn's first call.
fn variants(task: &MultiTurnTask) -> Vec<(&'static str, Trajectory)> {
    let gt = &task.ground_truth;
    let per_turn = |f: &dyn Fn(&Vec<String>) -> Vec<Vec<String>>| gt.iter().map(f).collect::<Trajectory>();
    let mut extra = per_turn(&|t| vec![t.clone()]);
    extra.push(vec![vec!["ls()".to_string()]]);
    vec![
        ("ground truth", per_turn(&|t| vec![t.clone()])),
        ("one step per call", per_turn(&|t| t.iter().map(|c| vec![c.clone()]).collect())),
        ("reversed", per_turn(&|t| vec![t.iter().rev().cloned().collect()])),
        ("last call dropped", per_turn(&|t| vec![t[..t.len().saturating_sub(1)].to_vec()])),
        ("a turn too many", extra),
        ("last call twice", per_turn(&|t| vec![t.iter().chain(t.last()).cloned().collect()])),
        (
            "an argument changed",
            per_turn(&|t| {
                let mut t = t.clone();
                if let Some(first) = t.first_mut() {
                    *first = first.replacen("='", "='lucid_", 1).replacen("=\"", "=\"lucid_", 1);
                }
                vec![t]
            }),
        ),
    ]
}

#[test]
fn the_gold_is_bfcls_own_verdict_on_every_trajectory() {
    let Some(f) = fixture() else { return };
    let (mut compared, mut differ, mut by_type) = (0, Vec::new(), std::collections::BTreeMap::<String, usize>::new());
    for task in tasks(&f.bfcl).iter().step_by(25) {
        for (what, trajectory) in variants(task) {
            let (stdin, tag) = gold::request(task, &trajectory, None);
            let theirs = native(&f, &stdin);
            let ours = gold::verdict(&f.py, &f.sources, task, &trajectory, &PyLimits::default());
            let theirs = gold::read(&native_output(theirs), &tag).unwrap();
            let ours = ours.unwrap_or_else(|e| panic!("{} ({what}): {}", task.id, e.0));
            if what == "ground truth" || what == "one step per call" {
                assert!(ours.valid, "{} ({what}): {:?}", task.id, ours);
            }
            *by_type.entry(ours.error_type.clone().unwrap_or_else(|| "valid".into())).or_default() += 1;
            compared += 1;
            if (ours.valid, &ours.error_type) != (theirs.valid, &theirs.error_type) {
                differ.push(format!("{} ({what}): {ours:?} / {theirs:?}", task.id));
            }
        }
    }
    eprintln!("multi-turn verdicts compared with BFCL's checker: {compared}, differing: {}; {by_type:?}", differ.len());
    assert!(differ.is_empty(), "differ from BFCL's verdict: {differ:?}");
    for kind in [
        "valid",
        "multi_turn:force_terminated",
        "multi_turn:empty_turn_model_response",
        "multi_turn:instance_state_mismatch",
        "multi_turn:execution_response_mismatch",
    ] {
        assert!(by_type.get(kind).is_some_and(|n| *n > 0), "no trajectory judged {kind}: {by_type:?}");
    }
}

/// The records `lines` under `job`'s tag, each ended by a newline.
fn records(job: &Job, lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{} {l}\n", job.tag())).collect()
}

#[test]
fn a_report_out_of_the_drivers_order_is_refused() {
    let (one, two) = ([vec!["ls()".to_string()]], [vec!["ls()".to_string()], vec!["pwd()".to_string()]]);
    let job = |steps, repeat| Job {
        test_id: "t",
        initial_config: &serde_json::Value::Null,
        involved_classes: &[],
        long_context: false,
        steps,
        repeat,
    };
    let steps =
        env::parse(&records(&job(&one, false), &["T -1 {}", "S 0 [\"a\"]", "T 0 {}", "END"]), &job(&one, false));
    let steps = steps.unwrap();
    assert!(steps.finished);
    assert_eq!(steps.results, vec![vec!["a".to_string()]]);
    let repeated = ["T -1 {}", "S 0 [\"a\"]", "T 0 {}", "R 0 false", "END"];
    assert_eq!(env::parse(&records(&job(&one, true), &repeated), &job(&one, true)).unwrap().not_repeating(), vec![0]);
    for (bad, repeat) in [
        (&["S 0 [\"a\"]", "T -1 {}", "T 0 {}", "END"][..], false),
        (&["T -1 {}", "S 0 [\"a\"]", "S 0 [\"b\"]", "T 0 {}", "END"], false),
        (&["T -1 {}", "S 0 [\"a\"]", "T 0 {}", "T -1 {}", "END"], false),
        (&["T -1 {}", "S 0 [\"a\"]", "T 0 {}", "S 1 [\"b\"]", "T 1 {}", "END"], false),
        (&["T -1 {}", "END"], false),
        (&["T -1 {}", "S 0 [\"a\"]", "T 0 {}", "END", "S 1 [\"b\"]"], false),
        (&["T -1 {}", "S 0 [\"a\"]", "T 0 {}", "END"], true),
        (&["T -1 {}", "S 0 [\"a\"]", "T 0 {}", "R 0 true", "END"], false),
    ] {
        assert!(env::parse(&records(&job(&one, repeat), bad), &job(&one, repeat)).is_err(), "accepted: {bad:?}");
    }
    // A last line cut short (the records cap) is left out; the steps before it are kept.
    let mut cut = records(&job(&two, false), &["T -1 {}", "S 0 [\"a\"]", "T 0 {}"]);
    cut.push_str(&format!("{} S 1 [\"b", job(&two, false).tag()));
    let cut = env::parse(&cut, &job(&two, false)).unwrap();
    assert_eq!((cut.results.len(), cut.states.len(), cut.finished), (1, 1, false));
}
