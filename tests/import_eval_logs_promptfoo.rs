//! `lucid import --preset promptfoo` on results promptfoo itself wrote, offline: `promptfoo eval`
//! runs `tests/fixtures/eval_logs/promptfoo/` (a local script provider, `model.js`, as the model
//! under evaluation, as an `llm-rubric` judge of its own and, unnamed, as the default grader: a
//! self-grade), leniency planted; the audit's leniency and sensitivity are the planted ones.

use std::path::Path;
use std::process::Command;

use crate::support::eval_logs::{audited, check_planted_self_grade, grader, rows, script, viewed};
use crate::support::probes::{Probe, require};
use crate::support::stderr;

/// promptfoo's results of the planted eval, written into `dir`.
fn promptfoo_results(dir: &Path) -> String {
    for f in ["promptfooconfig.yaml", "model.js"] {
        std::fs::copy(script("promptfoo").join(f), dir.join(f)).unwrap();
    }
    let o = Command::new("promptfoo")
        .current_dir(dir)
        .args(["eval", "-c", "promptfooconfig.yaml", "-o", "results.json", "--no-progress-bar", "--no-table"])
        // Its state in the temp folder; no telemetry, update check or cache; failed assertions
        // (planted) are not a failed run.
        .env("PROMPTFOO_CONFIG_DIR", dir.join("promptfoo-home"))
        .env("PROMPTFOO_DISABLE_TELEMETRY", "1")
        .env("PROMPTFOO_DISABLE_UPDATE", "1")
        .env("PROMPTFOO_CACHE_ENABLED", "false")
        .env("PROMPTFOO_FAILED_TEST_EXIT_CODE", "0")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    "results.json".into()
}

#[test]
fn promptfoo_results_audit_to_their_planted_leniency_for_a_judge_and_a_self_grade() {
    if !require(Probe::Promptfoo) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let results = promptfoo_results(d);
    // The judge (`metric: judge`, graded by the provider labelled judge): C on 3 of 8 wrong, I on
    // 2 of 12 right; `equals` is the truth by default.
    let a = audited(d, &results, "promptfoo", "judge", &["--grader", "judge"]);
    assert_eq!(grader(&a), (3.0 / 8.0, 10.0 / 12.0, 20));
    assert_eq!(a["eval_log"]["truth"], "equals");
    assert_eq!(a["eval_log"]["grader_models"], "judge");
    assert_eq!(a["eval_log"]["self_grade"], false);
    assert_eq!(a["eval_log"]["format"], "promptfoo results version 3");
    // The rubric with no provider of its own is graded by the test's grading provider, which is
    // the provider under evaluation: a self-grade, said so.
    check_planted_self_grade(d, &results, "promptfoo", &[]);
    // The imported logs open in the viewer, side by side.
    viewed(d, &["judge", "self"], "Looks fine.");
    // Each assertion a score, its reason kept, the grading provider named.
    assert_eq!(
        rows(
            d,
            "self",
            "SELECT scorer, count(*), sum(value), min(grader_model), min(explanation) FROM scores GROUP BY scorer ORDER BY scorer"
        ),
        [
            "equals|20|12.0|null|Assertion passed",
            "icontains|20|12.0|null|Assertion passed",
            "judge|20|13.0|judge|Looks fine.",
            "self|20|17.0|solver|Looks fine.",
        ]
    );
}
