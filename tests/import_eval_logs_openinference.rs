//! `lucid import --preset openinference` on OTLP JSON traces the OpenTelemetry SDK wrote with
//! OpenInference's semantic conventions (`tests/fixtures/eval_logs/openinference_spans.py`: LLM
//! spans, each with EVALUATOR spans for an exact check, a judge model and the model under
//! evaluation grading itself, leniency planted); the audit recovers the planted values exactly.

use crate::support::eval_logs::{audited, check_planted_self_grade, grader, python, rows};
use crate::support::probes::{Probe, require};

#[test]
fn openinference_evaluations_audit_to_their_planted_leniency() {
    if !require(Probe::OpenInference) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    python(d, "openinference_spans.py", &["traces.json"]);
    let a = audited(d, "traces.json", "openinference", "judge", &["--grader", "judge", "--truth", "exact"]);
    assert_eq!(grader(&a), (3.0 / 8.0, 10.0 / 12.0, 20));
    assert_eq!(a["eval_log"]["grader_models"], "judge");
    assert_eq!(a["eval_log"]["self_grade"], false);
    check_planted_self_grade(d, "traces.json", "openinference", &["--truth", "exact"]);
    // Input, output and model of the span; each evaluation's label, score and explanation.
    assert_eq!(
        rows(
            d,
            "self",
            "SELECT t.question, e.answer FROM episodes e JOIN tasks t USING (question_id) WHERE t.question LIKE 'Question #13:%'"
        ),
        ["Question #13: what is answer 13?|wrong 13"]
    );
    assert_eq!(
        rows(
            d,
            "self",
            "SELECT s.scorer, s.raw_value, s.explanation FROM scores s JOIN episodes e USING (step) WHERE e.answer = 'wrong 13' ORDER BY s.scorer"
        ),
        [
            "exact|{\"score\":0.0,\"label\":\"incorrect\"}|exact match against the reference",
            "judge|{\"score\":0.0,\"label\":\"incorrect\"}|Looks off.",
            "self|{\"score\":1.0,\"label\":\"correct\"}|Looks fine.",
        ]
    );
}
