//! `lucid load`: a benchmark's `tasks` and `gold` tables as Parquet.

use std::path::PathBuf;

use clap::Args;

use super::cache_root;
use crate::commands::BenchArgs;
use crate::datasets::{self, bundled};
use crate::error::{Error, Result};

/// `lucid load`.
pub fn run(a: &LoadArgs) -> Result<()> {
    let cache = cache_root(&a.cache_dir);
    let bench = match (&a.source.bench, a.source.bundled, &a.spider) {
        (_, true, _) => bundled::load(&bundled::default_dir(), &cache)?,
        (Some(dir), _, Some(file)) => datasets::spider::load(dir, file)?,
        (Some(dir), _, None) => datasets::bird::load(dir, &a.source.split)?,
        (None, false, _) => return Err(Error::usage("lucid load needs --bench DIR or --bundled")),
    };
    datasets::tables::write_benchmark(&a.out, &bench, &cache)?;
    println!("{}: {} tasks -> {}", bench.name, bench.tasks.len(), a.out.display());
    Ok(())
}

/// `lucid load`.
#[derive(Args, Debug)]
pub struct LoadArgs {
    /// Benchmark folder (BIRD layout unless --spider).
    #[command(flatten)]
    pub source: BenchArgs,
    /// Read the folder as Spider layout (`tables.json`, `database/`), with this question file.
    #[arg(long, value_name = "FILE.json")]
    pub spider: Option<String>,
    /// Output folder for `tasks.parquet` and `gold.parquet`.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Cache folder (default: $LUCID_CACHE_DIR, else ~/.cache/lucid).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}
