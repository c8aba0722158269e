//! Observing a multi-turn transcript without any reference: its calls run again in the sandbox
//! from the task's starting state (every step also run a second time from the state before it,
//! for `repeat`), the failed calls counted (for `executes`), and what the grader is shown: each
//! turn's request, the calls made and their results, each result cut to a few hundred characters.

use super::env::run;
use super::setting::Setting;
use super::tables::DialogueTask;
use super::transcript::Transcript;
use super::{MultiTurnDomain, MultiTurnObs};
use crate::error::Result;
use crate::seam::Observation;

/// The characters of one result the grader is shown.
const RESULT_SHOWN: usize = 300;
/// The characters of the whole preview.
const PREVIEW_SHOWN: usize = 6000;

/// `text` cut to `n` characters, marked where cut.
fn cut(text: &str, n: usize) -> String {
    match text.char_indices().nth(n) {
        Some((i, _)) => format!("{} [...]", &text[..i]),
        None => text.to_string(),
    }
}

impl MultiTurnDomain {
    /// The observation of `transcript` on `task`.
    pub(super) fn observed(&self, task: &DialogueTask, transcript: &Transcript) -> Result<Observation<MultiTurnObs>> {
        let steps = transcript.steps();
        let setting = Setting::of(task)?;
        let out = run(&self.py, &self.sources, &setting.job(&steps, true), &self.limits);
        let failed = out.steps.failed_calls();
        let first = failed.first().map(|(s, c, r)| format!("step {} call {}: {}", s + 1, c + 1, cut(r, 200)));
        let limit = match (out.steps.finished, out.limit) {
            (true, _) => None,
            (false, Some(l)) => Some(format!("limit: {l}")),
            (false, None) => Some(cut(&out.ending, 200)),
        };
        let obs = MultiTurnObs {
            turns: transcript.turns.len() as i64,
            steps: steps.len() as i64,
            calls: steps.iter().map(Vec::len).sum::<usize>() as i64,
            failed_calls: failed.len() as i64,
            first_failure: first,
            not_repeating: out.steps.not_repeating().len() as i64,
            stopped: transcript.stopped.clone().or(limit),
        };
        let status = match (&obs.stopped, obs.failed_calls) {
            (Some(why), _) => format!("stopped ({why})"),
            (None, 0) => "ok".to_string(),
            (None, _) => "errors".to_string(),
        };
        Ok(Observation { result: preview(task, transcript, &out.steps.results), obs, status })
    }
}

/// Each turn's request, calls and (cut) results.
fn preview(task: &DialogueTask, transcript: &Transcript, results: &[Vec<String>]) -> String {
    let requests: Vec<String> = serde_json::from_str(&task.turns).unwrap_or_default();
    let mut out = String::new();
    let mut step = 0;
    for (t, steps) in transcript.turns.iter().enumerate() {
        let request = requests.get(t).map(String::as_str).unwrap_or_default();
        let request = if request.is_empty() { "(new functions offered)" } else { request };
        out.push_str(&format!("Turn {}: {}\n", t + 1, cut(request, RESULT_SHOWN)));
        if steps.is_empty() {
            out.push_str("  (no calls)\n");
        }
        for calls in steps {
            for (c, call) in calls.iter().enumerate() {
                let result = results.get(step).and_then(|r| r.get(c)).map(String::as_str).unwrap_or("(not run)");
                out.push_str(&format!("  {call} -> {}\n", cut(result, RESULT_SHOWN)));
            }
            step += 1;
        }
    }
    cut(&out, PREVIEW_SHOWN)
}
