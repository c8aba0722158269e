//! `lucid import --preset openinference` on OTLP JSON traces the OpenTelemetry SDK wrote with
//! OpenInference's semantic conventions (`tests/fixtures/eval_logs/openinference_spans.py`: LLM
//! spans, each with EVALUATOR spans for an exact check, a judge model and the model under
//! evaluation grading itself, leniency planted); the audit recovers the planted values exactly.

use crate::support::eval_logs::{audit, audited, check_planted_self_grade, grader, import, python, rows, viewed};
use crate::support::probes::{Probe, require};
use crate::support::{lucid, stderr, stdout};

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
    // The imported logs open in the viewer, side by side.
    viewed(d, &["judge", "self"], "Looks fine.");
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

    // Without an exact score (`--truth none`), hand labels: every memory of the sheet labelled
    // gives the planted values back.
    import(d, "traces.json", "openinference", "hand", &["--grader", "judge", "--truth", "none"]);
    assert!(audit(d, "hand", "md").contains("no truth"));
    let sheet = lucid(&d.join("cache")).current_dir(d).args(["audit", "runs/hand", "--sample", "20"]).output().unwrap();
    assert!(sheet.status.success(), "{}", stderr(&sheet));
    let mut filled = String::new();
    for (n, line) in stdout(&sheet).lines().enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), 6, "{line}");
        let i: u32 = cells[1].split(['#', ':']).nth(1).map_or(0, |x| x.parse().unwrap_or(0));
        let u = if n == 0 {
            "u"
        } else if i < 12 {
            "1"
        } else {
            "0"
        };
        filled.push_str(&format!("{},{u}\n", cells[..5].join(",")));
    }
    std::fs::write(d.join("labels.csv"), filled).unwrap();
    let o = lucid(&d.join("cache"))
        .current_dir(d)
        .args(["audit", "runs/hand", "--labels", "labels.csv", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let hand: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let est = |q: &str| {
        hand["hand_labels"]["rows"].as_array().unwrap().iter().find(|r| r["quantity"] == q).unwrap()["estimate"]
            .as_f64()
    };
    assert_eq!((est("leniency"), est("sensitivity")), (Some(3.0 / 8.0), Some(10.0 / 12.0)));
}
