//! The multi-turn gold: BFCL's own evaluation of a trajectory (the model's calls per turn and per
//! step) against a task's ground truth — its turn count (`force_terminated`), then its
//! `multi_turn_checker`: after every turn whose ground truth makes calls, the model's turn made
//! some (`empty_turn_model_response`), the environments' public state equals the ground truth's
//! by Python's `==` (`instance_state_mismatch`), and the ground truth's results are among the
//! model's so far (`execution_response_mismatch`). Run in the sandbox by `driver.py`
//! (`"mode": "verdict"`), BFCL's own code on both executions; this run holds the ground truth, so
//! it is the trusted one, and the model's calls in it pass the driver's gate (one call of a tool
//! of the task, literal arguments), so none can rewrite the checker or the verdict. One sharing is
//! BFCL's own and kept: the long-context travel environment holds module-level extension cards by
//! reference in both instances, so a charge to one shows on both sides (`driver.py`'s header).
//! A run that ends without a verdict (a limit, a crash) is an error the caller must count as
//! wrong. Held to BFCL's checker run natively without the gate (`tests/tools_multiturn.rs`); the
//! turn count and dropping empty steps are lucid's transcription of BFCL's `eval_runner` (which
//! cannot be imported without its model clients).

use serde_json::{Value, json};

use super::data::MultiTurnTask;
use super::env::{Job, Sources, drive};
use crate::error::Invalid;
use crate::python::{PyLimits, Python};

/// A trajectory: per turn, the steps the model made, each the calls it decoded to.
pub type Trajectory = Vec<Vec<Vec<String>>>;

/// BFCL's verdict on a trajectory.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct MultiTurnVerdict {
    /// Right by BFCL's rules.
    pub valid: bool,
    /// BFCL's `error_type` when not (`multi_turn:instance_state_mismatch`, ...).
    pub error_type: Option<String>,
    /// BFCL's message.
    pub error_message: Option<String>,
}

/// The driver's standard input for the verdict on `trajectory` (sources None: the native
/// reference, without the gate) and the records' tag.
pub fn request(task: &MultiTurnTask, trajectory: &[Vec<Vec<String>>], sources: Option<&Sources>) -> (Vec<u8>, String) {
    let model = serde_json::to_string(trajectory).unwrap_or_default();
    let tag = format!("\u{1}{}", crate::python::mark(&[&task.id, &model, "verdict"]));
    let more = json!({"mode": "verdict", "trajectory": trajectory, "ground_truth": task.ground_truth});
    (Job { steps: &[], ..Job::ground_truth(task) }.input(sources, &tag, more), tag)
}

/// The verdict in the driver's records: exactly one `V` record, then END.
pub fn read(records: &str, tag: &str) -> std::result::Result<MultiTurnVerdict, Invalid> {
    let mut lines = records.lines().filter_map(|l| l.strip_prefix(tag).and_then(|r| r.strip_prefix(' ')));
    match (lines.next(), lines.next(), lines.next()) {
        (Some(v), Some("END"), None) => {
            let body = v.strip_prefix("V 0 ").ok_or("the report holds no verdict")?;
            let value: Value = serde_json::from_str(body).map_err(|e| format!("the verdict: {e}"))?;
            Ok(serde_json::from_value(value).map_err(|e| format!("the verdict: {e}"))?)
        }
        _ => Err("the report is not one verdict and its end".into()),
    }
}

/// BFCL's verdict on `trajectory` for `task`, run in the sandbox; an error names how the run
/// ended when it gave none (a limit, a failure).
pub fn verdict(
    py: &Python,
    sources: &Sources,
    task: &MultiTurnTask,
    trajectory: &[Vec<Vec<String>>],
    limits: &PyLimits,
) -> std::result::Result<MultiTurnVerdict, Invalid> {
    let (stdin, tag) = request(task, trajectory, Some(sources));
    let out = drive(py, &stdin, &tag, limits);
    match read(&out.records, &tag) {
        Ok(v) if out.success() => Ok(v),
        Ok(_) => Err(format!("the verdict's run failed: {}", out.summary()).into()),
        Err(e) => Err(format!("{}; the run: {}", e.0, out.summary()).into()),
    }
}
