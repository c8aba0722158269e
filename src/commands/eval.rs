//! `lucid eval`: BIRD-exact execution accuracy of a predictions file, or `--check-gold`.

use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use clap::Args;

use super::{bench_files, cache_root, timeout, werr};
use crate::commands::BenchArgs;
use crate::error::{Error, Result};
use crate::eval::{self, EvalOptions, EvalSet, Pair, inputs};
use crate::sql::Limits;

/// `lucid eval`.
pub fn run(a: &EvalArgs) -> Result<()> {
    let timeout = timeout(a.timeout)?;
    let cache = cache_root(&a.cache_dir);
    let shortcut = bench_files(&a.source, &cache)?;
    let gold_path = a.gold.clone().or_else(|| shortcut.as_ref().map(|s| s.0.clone()));
    let db_root = a.db_root.clone().or_else(|| shortcut.as_ref().map(|s| s.1.clone()));
    let diff_path = a.diff_json.clone().or_else(|| shortcut.as_ref().map(|s| s.0.clone()));
    let (Some(gold_path), Some(db_root)) = (gold_path, db_root) else {
        return Err(Error::usage("lucid eval needs --gold and --db-root (or --bench DIR, or --bundled)"));
    };
    if !db_root.is_dir() {
        return Err(Error::input(&db_root, "database root folder not found"));
    }
    let gold = inputs::read_gold(&gold_path)?;
    let jobs = a.jobs.unwrap_or_else(crate::par::default_jobs).max(1);
    let mut stdout = std::io::stdout().lock();
    if a.check_gold {
        let db_paths = inputs::resolve_databases(&gold_path, &gold, &db_root)?;
        let limits = Limits { timeout, max_rows: a.max_rows, ..Limits::default() };
        let findings = eval::check_gold::check_gold(&gold, &db_paths, &limits, jobs);
        let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
        for f in &findings {
            *counts.entry(f.kind).or_default() += 1;
        }
        writeln!(stdout, "checked {} gold queries: {} findings", gold.len(), findings.len()).map_err(werr)?;
        for (k, n) in &counts {
            writeln!(stdout, "  {k:<18} {n}").map_err(werr)?;
        }
        if let Some(out) = &a.out {
            write_findings(out, &findings)?;
            writeln!(stdout, "findings written to {}", out.display()).map_err(werr)?;
        }
        return Ok(());
    }
    let Some(pred_path) = &a.pred else {
        return Err(Error::usage("lucid eval needs --pred FILE (or --check-gold)"));
    };
    let predictions = inputs::read_predictions(pred_path)?;
    let diff = match &diff_path {
        Some(p) => Some((p.as_path(), inputs::read_difficulties(p)?)),
        None => None,
    };
    let set = EvalSet::build(pred_path, predictions, &gold_path, gold, &db_root, diff)?;
    let pairs: Vec<Pair<'_>> = set
        .predictions
        .iter()
        .zip(&set.gold)
        .zip(&set.db_paths)
        .map(|((p, g), db)| Pair { pred: p.sql.as_deref(), gold: &g.sql, db })
        .collect();
    let opts = EvalOptions {
        timeout,
        jobs,
        max_rows: a.max_rows,
        cache: (!a.no_cache).then(|| cache.join("gold-results.sqlite")),
    };
    let (results, stats) = eval::evaluate(&pairs, &opts)?;
    let table = eval::report::AccuracyTable::tally(&results, &set.difficulties);
    write!(stdout, "{}", table.render()).map_err(werr)?;
    eprintln!(
        "lucid eval: {} pairs, {} distinct queries ({} executed, {} gold from cache) in {:.2} s on {} threads",
        stats.pairs,
        stats.distinct_queries,
        stats.executed,
        stats.gold_cached,
        stats.elapsed.as_secs_f64(),
        jobs
    );
    if let Some(out) = &a.per_question {
        eval::report::write_per_question(out, &set, &results)?;
    }
    Ok(())
}

fn write_findings(out: &Path, findings: &[eval::check_gold::Finding]) -> Result<()> {
    if out.extension().is_some_and(|e| e == "parquet") {
        return crate::table::write_parquet(out, &eval::check_gold::findings_batch(findings)?);
    }
    let lines: String = findings
        .iter()
        .map(|f| {
            serde_json::json!({"idx": f.idx, "question_id": f.question_id, "db_id": f.db_id, "finding": f.kind, "detail": f.detail})
                .to_string()
                + "\n"
        })
        .collect();
    std::fs::write(out, lines).map_err(|source| Error::Write { path: out.into(), source })
}

/// `lucid eval`. Flags mirror BIRD's `evaluation.py` (its underscore spellings are accepted).
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// Predictions: BIRD's JSON `{"0": "SQL\t----- bird -----\tdb_id"}`, a JSON list, or a Parquet
    /// table with a `sql` column (and optionally `question_id`).
    #[arg(long, alias = "predicted_sql_path", value_name = "FILE")]
    pub pred: Option<PathBuf>,
    /// Gold: BIRD's `dev_gold.sql` (`SQL<TAB>db_id` lines) or a question JSON with `SQL`/`query`.
    #[arg(long, alias = "ground_truth_path", value_name = "FILE")]
    pub gold: Option<PathBuf>,
    /// Folder holding `<db_id>/<db_id>.sqlite`.
    #[arg(long, alias = "db_root_path", value_name = "DIR")]
    pub db_root: Option<PathBuf>,
    /// Question JSON whose `difficulty` fields give the per-difficulty table.
    #[arg(long, alias = "diff_json_path", value_name = "FILE")]
    pub diff_json: Option<PathBuf>,
    /// Benchmark shortcut instead of --gold/--db-root/--diff-json.
    #[command(flatten)]
    pub source: BenchArgs,
    /// Timeout for each prediction/gold pair, in seconds.
    #[arg(long, alias = "meta_time_out", default_value_t = 30.0, value_name = "SECS")]
    pub timeout: f64,
    /// Parallel queries (default: all cores).
    #[arg(long, alias = "num_cpus", value_name = "N")]
    pub jobs: Option<usize>,
    /// Write one JSON line per prediction, in input order: {"idx", "res", ...}.
    #[arg(long, value_name = "OUT.jsonl")]
    pub per_question: Option<PathBuf>,
    /// Check the gold queries instead of scoring predictions (reads gold only).
    #[arg(long)]
    pub check_gold: bool,
    /// With --check-gold: write the findings table here (.parquet or .jsonl).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Row cap per query; a result past it scores 0 as "truncated".
    #[arg(long, default_value_t = 10_000_000, value_name = "N")]
    pub max_rows: u64,
    /// Do not read or write the gold-result cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Cache folder (default: $LUCID_CACHE_DIR, else ~/.cache/lucid).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}
