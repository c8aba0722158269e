//! BFCL's multi-turn tasks (`multi_turn_{base,miss_func,miss_param,long_context}`, 800): a user's
//! requests over several turns against stateful tools — a file system, a math API, messaging,
//! posting, tickets, a trading bot, travel booking, vehicle control — that BFCL ships as plain
//! Python in its wheel. [`data`] reads the tasks and their ground-truth calls per turn; [`env`]
//! runs calls against the environments inside lucid's Python sandbox with BFCL's own executor and
//! reports each step's results and the environments' state after it; [`gold`] is BFCL's own
//! evaluation of a trajectory, run there too. Tests hold both equal to BFCL's own code run natively
//! (`tests/tools_multiturn.rs`, through `src/domains/tools/data/multiturn.py`).
//!
//! The domain `tools_multiturn` runs them in the memory loop: the model's side of an episode is
//! BFCL's prompting loop ([`dialogue`], a dialogue in the seam), its artifact the calls it made
//! per turn ([`transcript`]); observing runs them again ([`observe`]); the answer-free channels
//! are `executes` (a call failed in the environment: BFCL's `Error during execution`, an
//! environment's own error, a sandbox limit), `repeat` (a step run again from the state before it
//! gave other results or another state) and `contract` (a call against the function documents
//! offered by then); gold is BFCL's own verdict ([`gold`]).

pub mod data;
pub mod dialogue;
pub mod env;
pub mod gold;
mod kind;
mod observe;
pub mod render;
pub mod setting;
pub mod sources;
pub mod tables;
pub mod transcript;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::dialogue::{Bench, Conversation};
use self::env::Sources;
use self::setting::Setting;
use self::tables::DialogueTask;
use self::transcript::Transcript;
use super::calls::decode;
use super::contract::breach_calls;
use super::tables::{ToolsGold, gold_from_batch};
use crate::columns::{Column, Getter};
use crate::error::{Error, Invalid, Result};
use crate::python::{PyLimits, Python};
use crate::seam::dialogue::Dialogue;
use crate::seam::records::Episode;
use crate::seam::{Channels, Domain, Fired, Judge, Observation};

/// The multi-turn domain's options (`domain: {kind: tools_multiturn, ...}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MultiTurnConfig {
    /// Channels whose firing flags an episode (default: all three).
    #[serde(default = "all_channels")]
    pub channels: Vec<String>,
    /// Executed steps a turn may take before the episode is stopped (BFCL's `MAXIMUM_STEP_LIMIT`).
    #[serde(default = "step_limit")]
    pub step_limit: usize,
}

fn all_channels() -> Vec<String> {
    MultiTurnDomain::CHANNELS.iter().map(|c| c.to_string()).collect()
}
fn step_limit() -> usize {
    20
}

impl Default for MultiTurnConfig {
    fn default() -> Self {
        MultiTurnConfig { channels: all_channels(), step_limit: step_limit() }
    }
}

/// The multi-turn tool-use domain.
pub struct MultiTurnDomain {
    config: MultiTurnConfig,
    py: Arc<Python>,
    sources: Arc<Sources>,
    limits: PyLimits,
}

impl MultiTurnDomain {
    /// The domain with `config` (its channels checked), running environments on `py` with
    /// `sources`.
    pub fn new(
        config: MultiTurnConfig,
        py: Arc<Python>,
        sources: Arc<Sources>,
    ) -> std::result::Result<MultiTurnDomain, Invalid> {
        check(&config)?;
        Ok(MultiTurnDomain { config, py, sources, limits: PyLimits::default() })
    }
}

/// `config` checked beyond its shape.
fn check(config: &MultiTurnConfig) -> std::result::Result<(), Invalid> {
    crate::seam::check_channels::<MultiTurnDomain>(&config.channels, "domain.channels")?;
    if !(1..=100).contains(&config.step_limit) {
        return Err("domain.step_limit: from 1 to 100 (BFCL's is 20)".into());
    }
    Ok(())
}

/// What observing a transcript recorded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MultiTurnObs {
    /// Turns the episode reached.
    pub turns: i64,
    /// Steps (replies with calls) over all turns.
    pub steps: i64,
    /// Calls made.
    pub calls: i64,
    /// Calls whose result says they failed.
    pub failed_calls: i64,
    /// The first failed call's step, place and result.
    pub first_failure: Option<String>,
    /// Steps that, run again from the state before them, did not repeat.
    pub not_repeating: i64,
    /// Why the episode stopped early (the dialogue's stop, or a limit of observing's run; for an
    /// episode without a transcript, why there is none).
    pub stopped: Option<String>,
}

type E = Getter<Episode<MultiTurnObs>>;

/// The contract of a transcript's calls: each step's against the documents offered by its turn.
fn contract(task: &DialogueTask, transcript: &Transcript) -> Option<String> {
    let mut offered: Vec<Value> = serde_json::from_str(&task.functions).unwrap_or_default();
    let holdout: BTreeMap<usize, Vec<Value>> = serde_json::from_str(&task.holdout).unwrap_or_default();
    for (t, steps) in transcript.turns.iter().enumerate() {
        offered.extend(holdout.get(&t).cloned().unwrap_or_default());
        let docs = Value::Array(offered.clone());
        for calls in steps {
            let decoded = decode(&format!("[{}]", calls.join(", "))).map_err(|e| e.0);
            let breach = match decoded {
                Ok(decoded) => breach_calls(&docs, &decoded),
                Err(why) => Some(format!("calls that do not read back: {why}")),
            };
            if let Some(why) = breach {
                return Some(format!("turn {}: {why}", t + 1));
            }
        }
    }
    None
}

impl Domain for MultiTurnDomain {
    type Task = DialogueTask;
    type Worker = ();
    type Obs = MultiTurnObs;

    const NAME: &'static str = tables::DOMAIN;
    const GROUP: &'static str = "category";
    const GROUP_DOC: &'static str = "BFCL's multi-turn category (multi_turn_base, multi_turn_miss_func, multi_turn_miss_param, multi_turn_long_context).";
    const ARTIFACT: &'static str = "tool_trajectory";
    const PROMPTS: &'static str = "pipelines/prompts-tools-multiturn";
    const ARTIFACT_DOC: &'static str = "The calls the model made, as JSON {turns: per turn, per step, BFCL's execution strings; ends: why each turn ended; stopped: why the episode stopped early, or null}. Null when the dialogue gave no transcript.";
    const CHANNELS: &'static [&'static str] = &["executes", "repeat", "contract"];
    const PLANNER_OPTIONAL: bool = true;
    const DIALOGUE: bool = true;

    fn tasks(&self, batch: &RecordBatch, path: &Path) -> Result<Vec<DialogueTask>> {
        let tasks = tables::tasks_from_batch(batch, path)?;
        for (row, t) in tasks.iter().enumerate() {
            let bad = |name: &str, e: serde_json::Error| {
                Error::input(path, format!("row {row} ({}): {name}: {e}", t.task_id))
            };
            serde_json::from_str::<Vec<String>>(&t.turns).map_err(|e| bad("turns", e))?;
            serde_json::from_str::<Vec<Value>>(&t.functions).map_err(|e| bad("functions", e))?;
            serde_json::from_str::<BTreeMap<usize, Vec<Value>>>(&t.holdout).map_err(|e| bad("holdout", e))?;
            serde_json::from_str::<Vec<String>>(&t.involved_classes).map_err(|e| bad("involved_classes", e))?;
            serde_json::from_str::<serde_json::Map<String, Value>>(&t.initial_config)
                .map_err(|e| bad("initial_config", e))?;
        }
        Ok(tasks)
    }
    fn id(task: &DialogueTask) -> i64 {
        task.question_id
    }
    fn question(task: &DialogueTask) -> &str {
        &task.question
    }
    fn group(task: &DialogueTask) -> &str {
        &task.category
    }
    fn worker(&self) {}

    fn context(&self, _: &mut (), task: &DialogueTask) -> Result<Vec<(&'static str, String)>> {
        Ok(vec![("functions", task.functions.clone())])
    }

    fn extract(&self, text: &str) -> std::result::Result<String, Invalid> {
        Transcript::parse(text).map(|t| t.to_artifact())
    }

    fn unobserved(&self, why: &str) -> MultiTurnObs {
        MultiTurnObs { stopped: Some(why.to_string()), ..MultiTurnObs::default() }
    }

    fn observe(&self, _: &mut (), task: &DialogueTask, artifact: &str) -> Result<Observation<MultiTurnObs>> {
        Ok(match Transcript::parse(artifact) {
            Ok(transcript) => self.observed(task, &transcript)?,
            Err(why) => Observation { obs: self.unobserved(&why.0), status: "unreadable".into(), result: why.0 },
        })
    }

    fn dialogue<'a>(
        &'a self,
        _: &'a mut (),
        task: &'a DialogueTask,
        system: &str,
        first: &str,
    ) -> Result<Option<Box<dyn Dialogue + 'a>>> {
        let bench =
            Bench { py: &self.py, sources: &self.sources, limits: &self.limits, step_limit: self.config.step_limit };
        Ok(Some(Box::new(Conversation::new(bench, task, system, first)?)))
    }

    fn channels(&self, task: &DialogueTask, artifact: Option<&str>, obs: &MultiTurnObs) -> Channels {
        let transcript = artifact.and_then(|a| Transcript::parse(a).ok());
        // A stop other than the step limit is the environments' (a sandbox limit, a failed run).
        let env_stop = obs.stopped.as_deref().filter(|s| artifact.is_some() && *s != transcript::STEP_LIMIT);
        let executes = obs.first_failure.clone().or_else(|| env_stop.map(str::to_string));
        let repeat = (obs.not_repeating > 0)
            .then(|| format!("{} steps gave other results or state when run again", obs.not_repeating));
        let contract = transcript.and_then(|t| contract(task, &t));
        Channels(vec![
            Fired { name: "executes", fired: executes.is_some(), detail: executes },
            Fired { name: "repeat", fired: repeat.is_some(), detail: repeat },
            Fired { name: "contract", fired: contract.is_some(), detail: contract },
        ])
    }

    fn flag_channels(&self) -> Vec<String> {
        self.config.channels.clone()
    }

    fn observation_columns() -> Vec<Column<Episode<MultiTurnObs>>> {
        vec![
            Column::new("turns_done", E::I64(|e| e.obs.turns), "Turns the episode reached."),
            Column::new("steps", E::I64(|e| e.obs.steps), "Replies that made calls, over all turns."),
            Column::new("calls_made", E::I64(|e| e.obs.calls), "Calls made."),
            Column::new(
                "failed_tool_calls",
                E::I64(|e| e.obs.failed_calls),
                "Calls whose result says they failed (BFCL's Error during execution, an environment's own error).",
            ),
            Column::new(
                "first_failure",
                E::OptText(|e| e.obs.first_failure.clone()),
                "The first failed call: its step, place and result.",
            ),
            Column::new(
                "not_repeating",
                E::I64(|e| e.obs.not_repeating),
                "Steps that, run again from the state before them, gave other results or another state.",
            ),
            Column::new(
                "stopped",
                E::OptText(|e| e.obs.stopped.clone()),
                "Why the episode stopped early, in whatever turn (step limit, a sandbox limit, a failed run of the environments), or null; for an episode without a transcript, why there is none (executor call failed).",
            ),
        ]
    }
}

impl Judge for MultiTurnDomain {
    type Gold = ToolsGold;

    fn gold(&self, batch: &RecordBatch, path: &Path) -> Result<HashMap<i64, ToolsGold>> {
        Ok(gold_from_batch(batch, path)?.into_iter().map(|g| (g.question_id, g)).collect())
    }

    /// BFCL's verdict, run in the sandbox; a run that gives none counts as wrong.
    fn score(&self, task: &DialogueTask, gold: &ToolsGold, artifact: Option<&str>) -> Result<u8> {
        let Some(transcript) = artifact.and_then(|a| Transcript::parse(a).ok()) else { return Ok(0) };
        let setting = Setting::of(task)?;
        // The verdict reads the environments and the ground truth (neither the requests nor the
        // function documents).
        let env = data::MultiTurnTask {
            id: setting.test_id,
            category: task.category.clone(),
            turns: Value::Null,
            initial_config: setting.initial_config,
            involved_classes: setting.involved_classes,
            functions: Vec::new(),
            holdout: BTreeMap::new(),
            ground_truth: serde_json::from_str(&gold.ground_truth)
                .map_err(|e| Error::input("gold", format!("question_id {}: ground_truth: {e}", gold.question_id)))?,
        };
        Ok(u8::from(
            gold::verdict(&self.py, &self.sources, &env, &transcript.turns, &self.limits).is_ok_and(|v| v.valid),
        ))
    }
}
