//! `lucid eval`: BIRD-exact execution accuracy of a predictions file, or `--check-gold`.

use std::io::Write;
use std::path::Path;

use super::{bench_files, cache_root, timeout, werr};
use crate::cli::EvalArgs;
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
