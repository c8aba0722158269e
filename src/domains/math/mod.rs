//! School math with exact answers (the paper's "math / proof" row of answer-free signals): the
//! answerer and the self-grader see the question (and its module); the artifact is the answer
//! line; observing it reads its value exactly ([`exact`], [`answer`]): a number in lowest
//! terms, an expanded polynomial, True/False, a list, a letter, a clock time. Channels, none
//! reading gold: `lint` (the answer has the form the question asks for, [`lint`]), `units` (a
//! conversion's answer converted back is the question's quantity, [`units`]) and `substitute`
//! (the answer checked exactly where the problem allows it: a root substituted back, a
//! factorisation multiplied out, a gcd dividing both numbers, [`substitute`]); a channel that
//! cannot speak to a task is left out of its `channels` (silent, unscored by the audit). A fourth
//! check costs a model call and so is a verifier of the bank, not a flag of the loop:
//! `cross-path` ([`cross_path`]: a program the model writes for the problem, run in the Python
//! sandbox, agreeing with the stored answer or not; the `selftest` stage). Gold scoring:
//! the answer's value equals the gold's ([`answer::same`]).

pub mod answer;
pub mod cross_path;
pub mod data;
pub mod exact;
mod kind;
pub mod lint;
pub mod notation;
pub mod sources;
pub mod substitute;
pub mod tables;
pub mod units;

use std::collections::HashMap;
use std::path::Path;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use self::tables::{MathGold, MathTask};
use crate::columns::{Column, Getter};
use crate::error::{Invalid, Result};
use crate::seam::records::Episode;
use crate::seam::{Channels, Domain, Fired, Judge, Observation};

/// The math domain's options (the memory loop's `domain: {kind: math, ...}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MathConfig {
    /// Channels whose firing flags an episode (default: all three).
    #[serde(default = "all_channels")]
    pub channels: Vec<String>,
}

fn all_channels() -> Vec<String> {
    MathDomain::CHANNELS.iter().map(|c| c.to_string()).collect()
}

impl Default for MathConfig {
    fn default() -> Self {
        MathConfig { channels: all_channels() }
    }
}

/// The math domain.
pub struct MathDomain {
    config: MathConfig,
}

impl MathDomain {
    /// The domain with `config` (its channel names checked).
    pub fn new(config: MathConfig) -> std::result::Result<MathDomain, Invalid> {
        crate::seam::check_channels::<MathDomain>(&config.channels, "domain.channels")?;
        Ok(MathDomain { config })
    }
}

/// What reading an answer recorded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MathObs {
    /// Its form: integer, rational, polynomial, boolean, list, choice, time or unparsed.
    pub form: String,
    /// Its value written canonically (None: unparsed).
    pub canonical: Option<String>,
}

type E = Getter<Episode<MathObs>>;

impl Domain for MathDomain {
    type Task = MathTask;
    type Worker = ();
    type Obs = MathObs;

    const NAME: &'static str = "math";
    const GROUP: &'static str = "module";
    const GROUP_DOC: &'static str = "The problem's module (algebra__linear_1d, numbers__gcd, ...).";
    const ARTIFACT: &'static str = "answer";
    const PROMPTS: &'static str = "pipelines/prompts-math";
    const ARTIFACT_DOC: &'static str = "The answer the executor gave: the rest of its last line labelled 'Answer:' / 'Final answer:', or the line after a bare label, else its first non-empty line; without $, \\boxed{}, Markdown bold or backticks or quotes at its edges, a final period, or a leading 'x = '. Null when the text holds none or the executor call failed.";
    const CHANNELS: &'static [&'static str] = &["lint", "units", "substitute"];
    const PLANNER_OPTIONAL: bool = true;

    fn tasks(&self, batch: &RecordBatch, path: &Path) -> Result<Vec<MathTask>> {
        tables::tasks_from_batch(batch, path)
    }
    fn id(task: &MathTask) -> i64 {
        task.question_id
    }
    fn question(task: &MathTask) -> &str {
        &task.question
    }
    fn group(task: &MathTask) -> &str {
        &task.module
    }
    fn worker(&self) {}

    fn context(&self, _: &mut (), task: &MathTask) -> Result<Vec<(&'static str, String)>> {
        Ok(vec![("module", task.module.clone())])
    }

    fn extract(&self, text: &str) -> std::result::Result<String, Invalid> {
        extract(text).ok_or_else(|| "no answer in the executor's text".into())
    }

    fn unobserved(&self, _why: &str) -> MathObs {
        MathObs { form: "unparsed".into(), canonical: None }
    }

    fn observe(&self, _: &mut (), _: &MathTask, artifact: &str) -> Result<Observation<MathObs>> {
        let value = answer::parse(artifact);
        let form = answer::form(value.as_ref()).to_string();
        let canonical = value.as_ref().map(answer::canonical);
        let result = canonical.clone().unwrap_or_else(|| artifact.to_string());
        Ok(Observation { obs: MathObs { form: form.clone(), canonical }, status: form, result })
    }

    fn channels(&self, task: &MathTask, artifact: Option<&str>, _: &MathObs) -> Channels {
        let a = artifact.unwrap_or("");
        let lint = lint::expected(&task.module, &task.question).map(|f| !lint::fits(&f, a));
        let units = (task.module == "measurement__conversion").then(|| units::check(&task.question, a)).flatten();
        let substitute = substitute::check(&task.module, &task.question, a);
        // A channel that cannot speak to the task is left out (silent): the audit then leaves
        // the memory unscored by it rather than counting it as passed.
        let fired = |name, verdict: Option<bool>, detail: &str| {
            verdict.map(|f| Fired { name, fired: f, detail: f.then(|| detail.to_string()) })
        };
        Channels(
            [
                fired("lint", lint, "not the form the question asks for"),
                fired("units", units.map(|ok| !ok), "converted back, not the question's quantity"),
                fired("substitute", substitute.map(|ok| !ok), "does not check as a solution"),
            ]
            .into_iter()
            .flatten()
            .collect(),
        )
    }

    fn flag_channels(&self) -> Vec<String> {
        self.config.channels.clone()
    }

    fn observation_columns() -> Vec<Column<Episode<MathObs>>> {
        vec![
            Column::new(
                "form",
                E::Str(|e| &e.obs.form),
                "The answer's form: integer, rational, polynomial, boolean, list, choice, time, or unparsed.",
            ),
            Column::new(
                "canonical",
                E::OptText(|e| e.obs.canonical.clone()),
                "The answer's value written canonically (lowest terms, expanded); null when unparsed.",
            ),
        ]
    }

    /// `lint` where the module's form is known, `units` on conversions it reads, `substitute`
    /// where a template admits a check.
    fn speaks(&self, task: &MathTask) -> Vec<(&'static str, bool)> {
        let (m, q) = (task.module.as_str(), task.question.as_str());
        vec![
            ("lint", lint::expected(m, q).is_some()),
            ("units", m == "measurement__conversion" && units::speaks(q)),
            ("substitute", substitute::check(m, q, "").is_some()),
        ]
    }
}

impl Judge for MathDomain {
    type Gold = MathGold;

    fn gold(&self, batch: &RecordBatch, path: &Path) -> Result<HashMap<i64, MathGold>> {
        Ok(tables::gold_from_batch(batch, path)?.into_iter().map(|g| (g.question_id, g)).collect())
    }

    fn score(&self, task: &MathTask, gold: &MathGold, artifact: Option<&str>) -> Result<u8> {
        Ok(u8::from(artifact.is_some_and(|a| answer::same(&task.module, &gold.answer, a))))
    }
}

/// The answer of an executor's text: [`answer::answer_line`] without a leading `v = `.
pub fn extract(text: &str) -> Option<String> {
    let line = answer::answer_line(text)?;
    let mut chars = line.chars();
    let stripped = match (chars.next(), chars.as_str().trim_start().strip_prefix('=')) {
        (Some(v), Some(rest)) if v.is_ascii_lowercase() && !rest.trim().is_empty() => rest.trim().to_string(),
        _ => line,
    };
    Some(stripped)
}
