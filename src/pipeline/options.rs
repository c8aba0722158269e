//! How to run a pipeline: the options of `lucid run` that are not in the pipeline file.

use std::path::PathBuf;

/// How to run a pipeline.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// `--set key.path=value` overrides.
    pub overrides: Vec<String>,
    /// Only these stage ids (and what they need).
    pub only: Vec<String>,
    /// Print the plan, run nothing.
    pub dry_run: bool,
    /// Print every changed key component of a cache miss.
    pub explain: bool,
    /// No progress output.
    pub quiet: bool,
    /// lucid's cache folder.
    pub cache_dir: PathBuf,
    /// Folder relative paths resolve against.
    pub base_dir: PathBuf,
    /// `--limit N`: every stage that takes a limit ([`super::stage::Stage::limited`]) keeps its first N tasks.
    pub limit: Option<usize>,
    /// Sharing the pipeline with other workers (`--store`, `--shard`, `--lease`).
    pub sharing: Sharing,
}

/// How a run shares its pipeline with other workers.
#[derive(Clone, Debug, Default)]
pub struct Sharing {
    /// `--store URL`: the shared store (none: this machine's runs folder only).
    pub store: Option<String>,
    /// `--shard i/n`: compute only instance i, i + n, ... of each stage (and what they read).
    pub shard: Option<(usize, usize)>,
    /// `--lease S`: seconds a silent claim holder keeps its instances (default 30).
    pub lease_s: Option<f64>,
}
