//! `runs/<name>/manifest.json`: the run's lock file — every stage instance, its key and key
//! components, its inputs and outputs with content hashes, its state and timing. Rewritten
//! atomically whenever an instance changes state, so `lucid status` can watch a run.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::cache_key::CacheKey;
use super::stage::AxisValue;
use crate::error::{Error, Result};

/// State of one instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Not started.
    Pending,
    /// Computing now (see `pid`).
    Running,
    /// Computed in this run.
    Done,
    /// Served from the store.
    Cached,
    /// Failed (see `error`).
    Failed,
    /// Not run because an input failed.
    Skipped,
}

impl State {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Running => "running",
            State::Done => "done",
            State::Cached => "cached",
            State::Failed => "failed",
            State::Skipped => "skipped",
        }
    }
}

/// One stage instance in a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InstanceRecord {
    /// YAML stage id.
    pub stage: String,
    /// Stage kind.
    pub kind: String,
    /// Instance label.
    pub label: String,
    /// Matrix values.
    pub matrix: BTreeMap<String, AxisValue>,
    /// State.
    pub state: State,
    /// Cache key digest (once known).
    pub key: Option<String>,
    /// Key components.
    pub key_components: Option<CacheKey>,
    /// Output table -> object hash.
    pub outputs: BTreeMap<String, String>,
    /// Output table -> rows.
    pub rows: BTreeMap<String, usize>,
    /// Seconds spent computing (0 for cached).
    pub seconds: f64,
    /// Process computing it, while running.
    pub pid: Option<u32>,
    /// Failure message.
    pub error: Option<String>,
    /// What the stage recorded of its run (the memory loop: its critical path, peak readiness).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub notes: BTreeMap<String, serde_json::Value>,
}

/// A run's manifest.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// Run name.
    pub name: String,
    /// The pipeline file.
    pub pipeline: String,
    /// `--set` overrides used.
    pub overrides: Vec<String>,
    /// lucid version.
    pub lucid_version: String,
    /// Unix seconds at start and end.
    pub started: u64,
    /// Unix seconds at the end (None while running).
    pub finished: Option<u64>,
    /// Instances.
    pub instances: Vec<InstanceRecord>,
}

impl Manifest {
    /// Read a run's manifest.
    pub fn read(run_dir: &Path) -> Result<Manifest> {
        let path = run_dir.join("manifest.json");
        let text = std::fs::read_to_string(&path).map_err(|source| Error::Read { path: path.clone(), source })?;
        serde_json::from_str(&text).map_err(|e| Error::input_from(&path, "invalid manifest", e))
    }

    /// Write it atomically.
    pub fn write(&self, run_dir: &Path) -> Result<()> {
        super::store::write_atomic(
            &run_dir.join("manifest.json"),
            &serde_json::to_vec_pretty(self).expect("serializes"),
        )
    }

    /// The record of (stage, label), if any.
    pub fn find(&self, stage: &str, label: &str) -> Option<&InstanceRecord> {
        self.instances.iter().find(|r| r.stage == stage && r.label == label)
    }
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
