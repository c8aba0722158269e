//! One file per subcommand. Each turns its raw clap arguments into settings it has checked
//! before any work starts, then does the work; `crate::dispatch` only dispatches and maps errors to
//! exit codes.

pub mod audit;
pub mod ballista;
pub mod cache;
pub mod demo;
pub mod domains;
pub mod eval;
pub mod exec;
pub mod import;
pub mod llm_bench;
pub mod load;
pub mod models;
pub mod models_bench;
pub mod query;
pub mod report;
pub mod run;
pub mod smoke;
pub mod status;
pub mod theory;
pub mod view;

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use crate::datasets::bundled;
use crate::error::{Error, Result};

/// A write to standard output that failed (a closed pipe ends the command quietly).
pub(crate) fn werr(source: std::io::Error) -> Error {
    Error::Write { path: "<stdout>".into(), source }
}

/// `--timeout` as a positive duration.
pub(crate) fn timeout(secs: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| Error::usage(format!("--timeout must be a positive number of seconds, got {secs}")))
}

/// `--cache-dir`, else lucid's cache folder.
pub(crate) fn cache_root(dir: &Option<PathBuf>) -> PathBuf {
    dir.clone().unwrap_or_else(crate::cache_dir::cache_dir)
}

/// Gold file and database root named by a benchmark shortcut (`--bundled`, `--bench DIR`).
pub(crate) fn bench_files(src: &BenchArgs, cache: &Path) -> Result<Option<(PathBuf, PathBuf)>> {
    if src.bundled {
        let dir = bundled::default_dir();
        let db_root = bundled::build_databases(&dir, cache)?;
        return Ok(Some((dir.join("questions.json"), db_root)));
    }
    Ok(src
        .bench
        .as_ref()
        .map(|dir| (dir.join(format!("{}.json", src.split)), dir.join(format!("{}_databases", src.split)))))
}

/// Where a benchmark comes from.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// A benchmark folder in BIRD layout (`dev.json`, `dev_databases/`): sets --gold, --db-root
    /// and --diff-json from it.
    #[arg(long, value_name = "DIR", conflicts_with = "bundled")]
    pub bench: Option<PathBuf>,
    /// The bundled mini benchmark (`data/mini`), built into the cache on first use.
    #[arg(long)]
    pub bundled: bool,
    /// Split name inside a BIRD folder.
    #[arg(long, default_value = "dev")]
    pub split: String,
}
