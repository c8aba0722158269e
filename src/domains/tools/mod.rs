//! Tool use (the paper's "tool use / API" row of answer-free signals): the Berkeley Function
//! Calling Leaderboard's single-turn tasks, read from its own wheel ([`data`]). The answerer sees
//! the request and the function documents (never the category: `irrelevance` would tell it that
//! no call is right) and replies with calls in Python syntax (`[f(a=1), g(b='x')]`); the artifact
//! is that reply, decoded as BFCL decodes a prompting model's reply ([`calls`]). Gold scoring is
//! BFCL's AST checker, ported rule for rule ([`checker`], held to BFCL's own code by a test);
//! in the irrelevance categories a reply is right when it holds no call. The answer-free channel
//! `contract` checks the calls against the function documents alone ([`contract`]); "idempotent
//! on repeat", the paper's other tool-use signal, is the ladder's resample rung (the model asked
//! again, its calls compared canonically).

pub mod bfcl_reader;
pub mod calls;
pub mod checker;
pub mod contract;
pub mod data;
mod kind;
pub mod multiturn;
pub mod sources;
pub mod syntax;
pub mod tables;
pub mod value;

use std::collections::HashMap;
use std::path::Path;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::tables::{ToolsGold, ToolsTask};
use crate::columns::{Column, Getter};
use crate::error::{Invalid, Result};
use crate::seam::records::Episode;
use crate::seam::{Channels, Domain, Fired, Judge, Observation};

/// The tool-use domain's options (the memory loop's `domain: {kind: tools, ...}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsConfig {
    /// Channels whose firing flags an episode (default: contract).
    #[serde(default = "all_channels")]
    pub channels: Vec<String>,
}

fn all_channels() -> Vec<String> {
    ToolsDomain::CHANNELS.iter().map(|c| c.to_string()).collect()
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig { channels: all_channels() }
    }
}

/// The tool-use domain.
pub struct ToolsDomain {
    config: ToolsConfig,
    /// BFCL's decoder for the replies lucid's reader refuses (scoring only).
    reader: bfcl_reader::BfclReader,
}

impl ToolsDomain {
    /// The domain with `config` (its channel names checked).
    pub fn new(config: ToolsConfig) -> std::result::Result<ToolsDomain, Invalid> {
        crate::seam::check_channels::<ToolsDomain>(&config.channels, "domain.channels")?;
        Ok(ToolsDomain { config, reader: bfcl_reader::BfclReader::new(None) })
    }

    /// The domain whose scoring reads a reply lucid's reader refuses with BFCL's own decoder,
    /// from the wheel and interpreter fetched under `cache_dir`.
    pub fn scoring_with(mut self, cache_dir: &std::path::Path) -> ToolsDomain {
        self.reader = bfcl_reader::BfclReader::new(Some(cache_dir));
        self
    }
}

/// What decoding a reply recorded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolsObs {
    /// How many calls it decodes to (0: none, or it does not decode).
    pub calls: i64,
    /// The calls written canonically (None: the reply does not decode).
    pub canonical: Option<String>,
}

type E = Getter<Episode<ToolsObs>>;

/// Whether `reply` is right for a task of `category` with the function documents `functions`
/// and BFCL's `ground_truth` (JSON), by BFCL's rules ([`checker::evaluate`]), the reply read by
/// `reader`; a reply on which BFCL's checker would raise is not right.
pub fn right(
    reader: &bfcl_reader::BfclReader,
    category: &str,
    functions: &Value,
    ground_truth: &str,
    reply: &str,
) -> bool {
    let Ok(truth) = serde_json::from_str::<Value>(ground_truth) else { return false };
    let decoded = reader.decode(reply).ok();
    checker::evaluate(functions, decoded.as_deref(), &truth, category).is_ok_and(|v| v.valid)
}

impl Domain for ToolsDomain {
    type Task = ToolsTask;
    type Worker = ();
    type Obs = ToolsObs;

    const NAME: &'static str = "tools";
    const GROUP: &'static str = "category";
    const GROUP_DOC: &'static str = "BFCL's category (simple_python, multiple, parallel, live_irrelevance, ...).";
    const ARTIFACT: &'static str = "tool_calls";
    const PROMPTS: &'static str = "pipelines/prompts-tools";
    const ARTIFACT_DOC: &'static str = "The executor's reply as written (BFCL strips its edges when decoding): the calls it writes in Python syntax ([f(a=1), g(b='x')]), decoded as BFCL decodes a prompting model's reply. Null when the executor call failed.";
    const CHANNELS: &'static [&'static str] = &["contract"];
    const PLANNER_OPTIONAL: bool = true;

    fn tasks(&self, batch: &RecordBatch, path: &Path) -> Result<Vec<ToolsTask>> {
        tables::tasks_from_batch(batch, path)
    }
    fn id(task: &ToolsTask) -> i64 {
        task.question_id
    }
    fn question(task: &ToolsTask) -> &str {
        &task.question
    }
    fn group(task: &ToolsTask) -> &str {
        &task.category
    }
    fn worker(&self) {}

    fn context(&self, _: &mut (), task: &ToolsTask) -> Result<Vec<(&'static str, String)>> {
        Ok(vec![("functions", task.functions.clone())])
    }

    /// The reply as the model wrote it: BFCL's decoder strips only backticks, newlines and
    /// spaces at its edges (`'[f(a=1)]\r\n'` does not decode), and reads an empty or blank
    /// reply as no call (right in an irrelevance task).
    fn extract(&self, text: &str) -> std::result::Result<String, Invalid> {
        Ok(text.to_string())
    }

    fn unobserved(&self, _why: &str) -> ToolsObs {
        ToolsObs::default()
    }

    fn observe(&self, _: &mut (), _: &ToolsTask, artifact: &str) -> Result<Observation<ToolsObs>> {
        Ok(match calls::decode(artifact) {
            Ok(decoded) => {
                let canonical = calls::canonical(&decoded);
                Observation {
                    obs: ToolsObs { calls: decoded.len() as i64, canonical: Some(canonical.clone()) },
                    status: "calls".into(),
                    result: canonical,
                }
            }
            Err(why) => Observation { obs: ToolsObs::default(), status: "no call".into(), result: why.0 },
        })
    }

    fn channels(&self, task: &ToolsTask, artifact: Option<&str>, _: &ToolsObs) -> Channels {
        let breach = artifact.and_then(|a| contract::breach(&task.documents, a));
        Channels(vec![Fired { name: "contract", fired: breach.is_some(), detail: breach }])
    }

    fn flag_channels(&self) -> Vec<String> {
        self.config.channels.clone()
    }

    fn observation_columns() -> Vec<Column<Episode<ToolsObs>>> {
        vec![
            Column::new(
                "calls_made",
                E::I64(|e| e.obs.calls),
                "How many calls the reply decodes to (0: none, or it does not decode).",
            ),
            Column::new(
                "canonical",
                E::OptText(|e| e.obs.canonical.clone()),
                "The calls written back canonically ([f(a=1)]); null when the reply does not decode.",
            ),
        ]
    }

    fn speaks(&self, _: &ToolsTask) -> Vec<(&'static str, bool)> {
        vec![("contract", true)]
    }
}

impl Judge for ToolsDomain {
    type Gold = ToolsGold;

    fn gold(&self, batch: &RecordBatch, path: &Path) -> Result<HashMap<i64, ToolsGold>> {
        Ok(tables::gold_from_batch(batch, path)?.into_iter().map(|g| (g.question_id, g)).collect())
    }

    fn score(&self, task: &ToolsTask, gold: &ToolsGold, artifact: Option<&str>) -> Result<u8> {
        Ok(u8::from(
            artifact.is_some_and(|a| right(&self.reader, &gold.category, &task.documents, &gold.ground_truth, a)),
        ))
    }

    fn prepare(&self, artifacts: &[&str]) {
        self.reader.prepare(artifacts);
    }
}
