//! `lucid import --preset lm-eval` on the sample log lm-eval itself wrote, offline: its own
//! evaluator and EvaluationTracker (`tests/fixtures/eval_logs/lm_eval_log.py`) run a local task
//! with a tiny LM class registered with lm-eval; the task's per-sample metrics are the truth
//! (`exact_match`) and two graders with planted leniency, which the audit recovers exactly.

use std::path::Path;
use std::process::Command;

use crate::support::eval_logs::{audit, audited, grader, rows, script, viewed};
use crate::support::probes::{Probe, require};
use crate::support::{stderr, stdout};

/// The `samples_lucid_planted_<date>.jsonl` lm-eval writes under `dir`.
fn lm_eval_samples(dir: &Path) -> String {
    let o = Command::new("python3")
        .arg(script("lm_eval_log.py"))
        .arg(dir.join("out"))
        // The datasets cache of the local JSON in the temp folder; nothing from the hub.
        .env("HF_HOME", dir.join("hf"))
        .env("HF_DATASETS_CACHE", dir.join("hf/datasets"))
        .env("HF_DATASETS_OFFLINE", "1")
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o).trim().lines().last().unwrap().to_string()
}

#[test]
fn an_lm_eval_sample_log_audits_to_its_planted_leniency() {
    if !require(Probe::LmEval) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let samples = lm_eval_samples(d);
    assert!(samples.contains("samples_lucid_planted_"), "{samples}");
    let a = audited(d, &samples, "lm-eval", "judge", &["--grader", "judge"]);
    assert_eq!(grader(&a), (3.0 / 8.0, 10.0 / 12.0, 20));
    assert_eq!(a["eval_log"]["truth"], "exact_match");
    assert_eq!(a["eval_log"]["format"], "lm-eval 0.4.13 sample log");
    assert_eq!(a["eval_log"]["model"], "LocalLM");
    let a = audited(d, &samples, "lm-eval", "self", &["--grader", "self"]);
    assert_eq!(grader(&a), (5.0 / 8.0, 1.0, 20));
    // lm-eval records no grading model: the audit says it cannot tell a self-grade.
    assert!(audit(d, "self", "md").contains("whether it is a self-grade, the log cannot say"));
    // The doc's prompt, target and filtered response kept.
    assert_eq!(
        rows(
            d,
            "self",
            "SELECT e.source_id, t.question, e.answer AS given, g.answer AS target FROM episodes e JOIN tasks t USING (question_id) JOIN gold g USING (question_id) WHERE e.step = 13"
        ),
        ["doc 13|Question #13: what is answer 13?|wrong 13|answer 13"]
    );
    // The imported logs open in the viewer, side by side.
    viewed(d, &["judge", "self"], "wrong 13");
}
