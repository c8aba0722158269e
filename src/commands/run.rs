//! `lucid run`: plan and run a pipeline, then print its report tables.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::werr;
use crate::error::{Error, Result};
use crate::pipeline::RunOptions;
use crate::stages::registry::Stages;

/// `i/n` with i < n.
fn parse_shard(s: &str) -> Result<(usize, usize)> {
    let bad = || Error::usage(format!("--shard {s}: expected i/n with 0 <= i < n (e.g. 0/4)"));
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// `lucid run`; false when an instance failed.
pub fn run(a: &RunArgs) -> Result<bool> {
    let opts = RunOptions {
        overrides: a.set.clone(),
        limit: a.limit,
        only: a.only.clone(),
        dry_run: a.dry_run,
        explain: a.explain,
        quiet: a.quiet,
        cache_dir: a.cache_dir.clone().unwrap_or_else(crate::cache_dir::cache_dir),
        base_dir: std::env::current_dir().map_err(|source| Error::Read { path: ".".into(), source })?,
        sharing: crate::pipeline::options::Sharing {
            store: a.store.clone(),
            shard: a.shard.as_deref().map(parse_shard).transpose()?,
            lease_s: a.lease,
        },
    };
    let summary = crate::pipeline::run::<Stages>(&a.pipeline, &opts)?;
    let mut out = std::io::stdout().lock();
    for (name, batch) in &summary.printed {
        writeln!(out, "\n{name}:").map_err(werr)?;
        writeln!(out, "{}", arrow::util::pretty::pretty_format_batches(std::slice::from_ref(batch))?).map_err(werr)?;
    }
    if a.dry_run {
        writeln!(out, "dry run: nothing was computed").map_err(werr)?;
        return Ok(true);
    }
    writeln!(
        out,
        "\n{} instances computed, {} from cache{}; tables in {}",
        summary.computed,
        summary.cached,
        if summary.failed.is_empty() { String::new() } else { format!(", {} FAILED", summary.failed.len()) },
        summary.run_dir.display()
    )
    .map_err(werr)?;
    let (hits, dups) = (crate::remote::responses::hits(), crate::remote::responses::duplicates());
    if a.store.is_some() && hits + dups > 0 {
        writeln!(out, "shared response cache: {hits} answers from other workers, {dups} paid twice by workers racing")
            .map_err(werr)?;
    }
    for f in &summary.failed {
        eprintln!("failed: {f}");
    }
    // The study's report, from the run's tables, where the pipeline asks for it.
    let report = if summary.report_due {
        let dir = &summary.run_dir;
        Some(crate::report::build_and_write(std::slice::from_ref(dir), &dir.join(crate::report::FOLDER))?)
    } else {
        None
    };
    if let Some(report) = &report {
        if let Some(h) = &report.headline {
            writeln!(out, "\nheadline (seeds pooled; 95 % intervals):").map_err(werr)?;
            writeln!(out, "{}", arrow::util::pretty::pretty_format_batches(std::slice::from_ref(h))?).map_err(werr)?;
        }
        writeln!(out, "report: {} (and report.md, report.json beside it)", report.html.display()).map_err(werr)?;
    }
    Ok(summary.failed.is_empty())
}

/// `lucid run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The pipeline YAML.
    pub pipeline: PathBuf,
    /// Override a key: `--set seeds=[0,1,2]`, `--set stages.evaluate.config.chunk_size=64`.
    #[arg(long = "set", value_name = "KEY.PATH=VALUE")]
    pub set: Vec<String>,
    /// Run only these stages (and whatever they read).
    #[arg(long, value_name = "STAGE")]
    pub only: Vec<String>,
    /// Keep only the first N questions (sets `limit` on every benchmark stage).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Print the plan without running anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Say, for every instance that must run, each key component that changed.
    #[arg(long)]
    pub explain: bool,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Cache folder (default: $LUCID_CACHE_DIR, else ~/.cache/lucid).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Share the pipeline with other workers through this store: `s3://bucket/prefix` (endpoint
    /// and keys from AWS_* environment variables) or `file:///shared/folder` (NFS, Lustre).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Compute only instance i, i + n, ... of each stage (and what they read): array jobs.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Seconds a claim holder may stay silent before another worker takes its instance over.
    #[arg(long, value_name = "SECONDS")]
    pub lease: Option<f64>,
}
