//! Eval-framework logs, imported as banks: an Inspect AI log (more tools beside it, one reader
//! each) becomes samples with their scores, each score read as its tool reads it and, where a
//! model graded it, the model that did. [`bank`] maps them onto `tasks`, `episodes`, `gold`,
//! `evaluation` and one verifier table per other score, by the user's mapping (which score is
//! the grader r, which the truth U). A reader returns what it could not read as warnings naming
//! the file and the sample; nothing is dropped silently. Samples are read one at a time (an
//! `.eval` zip entry by entry); only what the tables keep stays in memory.

pub mod bank;
pub mod inspect;
pub mod inspect_value;
pub mod lm_eval;
pub mod openinference;
pub mod promptfoo;
pub mod tables;
pub mod zip_entries;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The eval-log presets, by name: `lucid import --preset NAME`.
pub const PRESETS: &[(&str, &str)] = &[
    ("inspect", "Inspect AI's .eval (zip) or .json log (log format version 2; inspect-ai 0.3.285)"),
    ("promptfoo", "promptfoo's `promptfoo eval -o results.json` (results version 3; promptfoo 0.121.20)"),
    ("lm-eval", "lm-eval's --log_samples file samples_<task>_<date>.jsonl (lm-eval 0.4.13)"),
    ("openinference", "OTLP JSON traces with OpenInference EVALUATOR spans (semantic conventions 0.1.42)"),
];

/// Whether `preset` names an eval-log preset.
pub fn is_eval_preset(preset: &str) -> bool {
    PRESETS.iter().any(|(n, _)| *n == preset)
}

/// Which score plays which part (the `eval:` block of an import).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EvalMapping {
    /// The score playing the self-grade r.
    pub grader: String,
    /// The exact score standing for U (none: no truth; audit with hand labels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truth: Option<String>,
    /// Every other score the audit weighs as a candidate verifier (a table `v_<name>` each).
    #[serde(default)]
    pub verifiers: Vec<String>,
}

/// One score of one sample.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleScore {
    /// The score's name (Inspect's scorer name, `model_graded_qa1` for a second instance).
    pub name: String,
    /// Its value as the log writes it (JSON text).
    pub raw: String,
    /// Its value as the tool reads it; None when the tool cannot read it (a warning says so).
    pub value: Option<f64>,
    /// The answer the scorer scored.
    pub answer: Option<String>,
    /// The scorer's explanation.
    pub explanation: Option<String>,
    /// The model that graded it (a model-graded score), when the log says.
    pub grader_model: Option<String>,
}

/// One sample (one epoch of it).
#[derive(Clone, Debug, PartialEq)]
pub struct EvalSample {
    /// The sample's id in the log.
    pub id: String,
    /// Its epoch (1-based).
    pub epoch: u32,
    /// The input (a chat input as its messages' text).
    pub input: String,
    /// The target.
    pub target: Option<String>,
    /// The model's answer.
    pub answer: Option<String>,
    /// The model that answered it, where the log has one per sample (promptfoo's provider);
    /// else the log's.
    pub model: Option<String>,
    /// `ok`, or `error: <message>` for a sample that failed.
    pub status: String,
    /// Its scores.
    pub scores: Vec<SampleScore>,
}

/// A log as read: what wrote it and its samples.
#[derive(Clone, Debug, Default)]
pub struct EvalLog {
    /// The preset (`inspect`).
    pub tool: String,
    /// The format read, in words (`Inspect log version 2`).
    pub format: String,
    /// The eval's status as the log says (`success`, `error`, `cancelled`, `started`).
    pub status: String,
    /// The task.
    pub task: String,
    /// The model under evaluation.
    pub model: Option<String>,
    /// The samples, in the log's order.
    pub samples: Vec<EvalSample>,
    /// What could not be read as written, each naming the file (and the sample).
    pub warnings: Vec<String>,
}

impl EvalLog {
    /// The models of the samples, distinct, in first-seen order, joined (the log's model where
    /// each sample names its own: promptfoo's providers, a trace's LLM spans).
    pub fn sample_models(samples: &[EvalSample]) -> Option<String> {
        let mut models: Vec<&str> = Vec::new();
        for m in samples.iter().filter_map(|s| s.model.as_deref()) {
            if !models.contains(&m) {
                models.push(m);
            }
        }
        (!models.is_empty()).then(|| models.join(", "))
    }

    /// Every score name, in first-seen order.
    pub fn score_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in self.samples.iter().flat_map(|s| &s.scores) {
            if !out.contains(&s.name) {
                out.push(s.name.clone());
            }
        }
        out
    }
}

/// The log at `path`, read by the preset `preset`'s reader.
pub fn read(preset: &str, path: &Path) -> Result<EvalLog> {
    match preset {
        "inspect" => inspect::read(path),
        "promptfoo" => promptfoo::read(path),
        "lm-eval" => lm_eval::read(path),
        "openinference" => openinference::read(path),
        other => Err(Error::usage(format!("unknown eval-log preset '{other}'"))),
    }
}

/// A mapping of `log`'s scores: the user's `grader` and `truth` where given, else the defaults
/// (the grader: the first score a model graded; the truth: `match`, `exact`, `exact_match` or
/// `equals` when the log has one), every other score a verifier.
pub fn mapping(path: &Path, log: &EvalLog, grader: Option<&str>, truth: Option<&str>) -> Result<EvalMapping> {
    let names = log.score_names();
    let has = |n: &str| names.iter().any(|x| x == n);
    let known = || names.join(", ");
    // `--truth none`: no truth, though the log has an exact score (audit with hand labels).
    let no_truth = truth == Some("none") && !has("none");
    let truth = truth.filter(|_| !no_truth);
    for n in grader.iter().chain(truth.iter()) {
        if !has(n) {
            return Err(Error::input(path, format!("no score named '{n}' in this log (scores: {})", known())));
        }
    }
    let model_graded =
        || log.samples.iter().flat_map(|s| &s.scores).find(|s| s.grader_model.is_some()).map(|s| s.name.clone());
    let grader = match grader {
        Some(g) => g.to_string(),
        None => model_graded().ok_or_else(|| {
            Error::usage(format!(
                "{}: no score was graded by a model: name the score playing the grader with --grader (scores: {})",
                path.display(),
                known()
            ))
        })?,
    };
    let truth = truth
        .map(str::to_string)
        .or_else(|| ["match", "exact", "exact_match", "equals"].iter().find(|n| has(n)).map(|n| n.to_string()))
        .filter(|_| !no_truth);
    if truth.as_deref() == Some(grader.as_str()) {
        return Err(Error::usage(format!("--grader and --truth both name '{grader}': the truth is another score")));
    }
    let verifiers = names.into_iter().filter(|n| *n != grader && Some(n) != truth.as_ref()).collect();
    Ok(EvalMapping { grader, truth, verifiers })
}
