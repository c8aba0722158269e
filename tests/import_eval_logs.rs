//! `lucid import` of eval-framework logs written by the tools themselves, offline: Inspect AI
//! runs `tests/fixtures/eval_logs/inspect_log.py` (a local model API as solver and as both
//! graders, leniency planted), lucid imports its log and audits it, and the audit's leniency and
//! sensitivity are the planted ones exactly; a grader that is the model under evaluation is
//! called a self-grade; errored samples, broken logs and a newer format are named, never dropped.

use std::path::Path;

use crate::support::eval_logs::{audit, audit_json, grader, import, import_output, python, rows, verifiers};
use crate::support::probes::{Probe, require};
use crate::support::{lucid, stderr};

/// The planted judge (`model_graded_qa`, graded by `lucidlocal/judge`): C on 3 of the 8 wrong
/// answers and I on 2 of the 12 right ones, each of 20 questions in 2 epochs.
const JUDGE: (f64, f64) = (6.0 / 16.0, 20.0 / 24.0);
/// The planted self-grade (`model_graded_qa1`, no grader named: the model under evaluation): C
/// on 5 of the 8 wrong answers and on every right one.
const SELF: (f64, f64) = (10.0 / 16.0, 1.0);

/// Inspect's log of the planted eval in `dir` (`args` passed to the script).
fn inspect_log(dir: &Path, args: &[&str]) -> String {
    let logs = dir.join("logs").display().to_string();
    let mut all = vec![logs.as_str()];
    all.extend_from_slice(args);
    python(dir, "inspect_log.py", &all)
}

#[test]
fn an_inspect_log_audits_to_its_planted_leniency_for_either_grader() {
    if !require(Probe::InspectAi) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let log = inspect_log(d, &[]);
    assert!(log.ends_with(".eval"), "{log}");
    import(d, &log, "inspect", "judge", &["--grader", "model_graded_qa"]);
    let a = audit_json(d, "judge");
    let (l, s, n) = grader(&a);
    assert_eq!((l, s, n), (JUDGE.0, JUDGE.1, 40));
    assert_eq!(a["eval_log"]["self_grade"], false, "{}", a["eval_log"]);
    assert_eq!(a["eval_log"]["grader_models"], "lucidlocal/judge");
    assert_eq!(a["eval_log"]["format"], "Inspect log version 2");
    assert_eq!(verifiers(&a)[..2], ["includes", "model_graded_qa1"]);

    // The unnamed model_graded_qa grades with the model under evaluation: a self-grade, said so.
    import(d, &log, "inspect", "self", &["--grader", "model_graded_qa1", "--truth", "match"]);
    let a = audit_json(d, "self");
    let (l, s, _) = grader(&a);
    assert_eq!((l, s), SELF);
    assert_eq!(a["eval_log"]["self_grade"], true);
    assert_eq!(a["eval_log"]["model"], "lucidlocal/solver");
    let md = audit(d, "self", "md");
    assert!(md.contains("**Self-grade: the grader `model_graded_qa1` is graded by the model under evaluation"), "{md}");
    // What cannot apply to an eval log is named, not printed empty.
    assert!(md.contains("Not applicable to an eval log") && !md.contains("## The Echo Gap"), "{md}");
    assert!(!md.contains("No rows (the Echo Gap"), "{md}");

    // Every score of every sample, as written and as Inspect reads it; the grader's model.
    assert_eq!(
        rows(
            d,
            "self",
            "SELECT scorer, role, count(*), sum(value), min(grader_model), bool_and(self_grade) FROM scores GROUP BY scorer, role ORDER BY scorer"
        ),
        [
            "includes|verifier|40|24.0|null|false",
            "match|truth|40|24.0|null|false",
            "model_graded_qa|verifier|40|26.0|lucidlocal/judge|false",
            "model_graded_qa1|grader|40|34.0|lucidlocal/solver|true",
        ]
    );
    // The answer, target and explanation kept, each epoch its own memory of one task.
    assert_eq!(
        rows(
            d,
            "self",
            "SELECT e.source_id, e.answer AS given, e.plan, g.answer AS target FROM episodes e JOIN gold g USING (question_id) WHERE e.source_id LIKE 'q12 %' ORDER BY e.source_id"
        ),
        [
            "q12 epoch 1|wrong 12|Looks fine.\nGRADE: C|answer 12",
            "q12 epoch 2|wrong 12|Looks fine.\nGRADE: C|answer 12"
        ]
    );
    // The viewer opens two imported logs side by side (a run-by-run comparison on the page),
    // the scorers' explanations on its pages.
    let o = lucid(&d.join("cache"))
        .current_dir(d)
        .args(["view", "runs/judge", "runs/self", "--export", "page"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let data = std::fs::read_to_string(d.join("page/data.js")).unwrap();
    assert!(data.contains("\"name\":\"judge\"") && data.contains("\"name\":\"self\""), "{}", &data[..300]);
    assert!(data.contains("\"run_a\":\"judge\",\"arm_a\":\"inspect\",\"run_b\":\"self\""), "compared");
    let details: String = std::fs::read_dir(d.join("page/details"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(details.contains("Looks off.\\nGRADE: I"), "the scorers' explanations are on the page");
}

#[test]
fn an_inspect_json_log_keeps_its_errored_samples_ungraded_with_their_status() {
    if !require(Probe::InspectAi) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let log = inspect_log(d, &["--error", "--json"]);
    assert!(log.ends_with(".json"), "{log}");
    let warnings = import(d, &log, "inspect", "err", &["--grader", "model_graded_qa"]);
    assert!(
        warnings.contains("sample q1 epoch 1: no scores (error: RuntimeError('planted failure on question #1'))"),
        "{warnings}"
    );
    assert_eq!(
        rows(d, "err", "SELECT sample_id, epoch, status, scores FROM samples WHERE status <> 'ok' ORDER BY epoch"),
        [
            "q1|1|error: RuntimeError('planted failure on question #1')|0",
            "q1|2|error: RuntimeError('planted failure on question #1')|0"
        ]
    );
    assert_eq!(rows(d, "err", "SELECT count(*), count(r) FROM episodes"), ["40|38"]);
    // q1 was right: two right answers fewer, the judge's two misses on each epoch kept.
    let (l, s, n) = grader(&audit_json(d, "err"));
    assert_eq!((l, s, n), (6.0 / 16.0, 18.0 / 22.0, 38));
    assert_eq!(rows(d, "err", "SELECT errored, samples, status FROM eval_log"), ["2|40|success"]);
}

#[test]
fn broken_inspect_logs_are_named_and_a_big_one_imports() {
    if !require(Probe::InspectAi) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let log = inspect_log(d, &[]);
    std::fs::create_dir(d.join("v")).unwrap();
    python(d, "inspect_variants.py", &[&log, "v", "3000"]);
    let grade = ["--grader", "model_graded_qa"];

    let w = import(d, "v/newer.eval", "inspect", "newer", &grade);
    assert!(w.contains("newer.eval: Inspect log format version 3, newer than the version 2 lucid reads"), "{w}");
    let w = import(d, "v/unknown.eval", "inspect", "unknown", &grade);
    assert!(
        w.contains("unknown.eval: samples/q12_epoch_1.json: score 'model_graded_qa' is \"c\", which Inspect's value_to_float cannot read"),
        "{w}"
    );
    assert_eq!(rows(d, "unknown", "SELECT count(*) FROM episodes WHERE r IS NULL"), ["1"]);
    // A dict value is a score per key, each read as Inspect reads it.
    import(d, "v/dict.eval", "inspect", "dict", &grade);
    assert_eq!(
        rows(
            d,
            "dict",
            "SELECT scorer, value FROM scores WHERE sample_id = 'q5' AND epoch = 1 AND scorer LIKE 'includes%' ORDER BY scorer"
        ),
        ["includes.accuracy|1.0", "includes.fluency|0.5"]
    );
    let w = import(d, "v/unscored.eval", "inspect", "unscored", &grade);
    assert!(w.contains("unscored.eval: samples/q13_epoch_1.json: no scores (ok)"), "{w}");
    assert_eq!(rows(d, "unscored", "SELECT sample_id, epoch FROM samples WHERE scores = 0"), ["q13|1"]);

    let w = import(d, "v/running.eval", "inspect", "running", &grade);
    assert!(
        w.contains("running.eval: no header.json (the eval had not finished writing): read from its journal"),
        "{w}"
    );
    assert_eq!(rows(d, "running", "SELECT status, samples FROM eval_log"), ["started|40"]);

    let o = import_output(d, "v/truncated.eval", "inspect", "truncated", &grade);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("v/truncated.eval: not a readable zip archive (truncated"), "{}", stderr(&o));

    let o = import_output(d, "v/damaged.eval", "inspect", "damaged", &grade);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("v/damaged.eval: samples/q3_epoch_1.json: "), "{}", stderr(&o));

    // A many-sample log (deflated entries, unlike Inspect's Zstandard ones) imports whole.
    import(d, "v/big.eval", "inspect", "big", &grade);
    assert_eq!(rows(d, "big", "SELECT count(*), sum(r) FROM episodes"), ["3000|3000"]);
    assert_eq!(rows(d, "big", "SELECT count(*), sum(u) FROM evaluation"), ["3000|1500"]);
}
