//! The binary's body: dispatch a parsed command line and turn errors into a message and an exit
//! code (0 success, 1 failure, 2 usage).

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;

use crate::bench::{self, bundled};
use crate::cli::{BenchArgs, Cli, Command, EvalArgs, ExecArgs, LoadArgs};
use crate::error::{Error, Result};
use crate::eval::{self, EvalOptions, EvalSet, Pair, inputs};
use crate::sql::{Limits, OpenOptions, Sandbox, checks};

/// Run the command line `args`; returns the process exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let result = match cli.command {
        Command::Eval(a) => run_eval(&a),
        Command::Load(a) => run_load(&a),
        Command::Exec(a) => run_exec(&a),
        Command::Demo(a) => match crate::commands::demo(&a) {
            Ok(true) => Ok(()),
            Ok(false) => return 1,
            Err(e) => Err(e),
        },
        Command::Run(a) => match crate::commands::run_pipeline(&a) {
            Ok(true) => Ok(()),
            Ok(false) => return 1,
            Err(e) => Err(e),
        },
        Command::Query(a) => crate::commands::query(&a),
        Command::Status(a) => crate::commands::status(&a),
        Command::Cache(a) => crate::commands::cache(&a),
        Command::Models(a) => crate::commands::models(&a),
    };
    match result {
        Ok(()) => 0,
        Err(Error::Write { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("error: {e}");
            if matches!(e, Error::Usage(_)) { 2 } else { 1 }
        }
    }
}

fn timeout(secs: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| Error::Usage(format!("--timeout must be a positive number of seconds, got {secs}")))
}

fn cache_root(dir: &Option<PathBuf>) -> PathBuf {
    dir.clone().unwrap_or_else(crate::cache_dir::cache_dir)
}

/// Gold file, database root and difficulty file named by a benchmark shortcut.
fn bench_files(src: &BenchArgs, cache: &Path) -> Result<Option<(PathBuf, PathBuf)>> {
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

fn run_eval(a: &EvalArgs) -> Result<()> {
    let timeout = timeout(a.timeout)?;
    let cache = cache_root(&a.cache_dir);
    let shortcut = bench_files(&a.source, &cache)?;
    let gold_path = a.gold.clone().or_else(|| shortcut.as_ref().map(|s| s.0.clone()));
    let db_root = a.db_root.clone().or_else(|| shortcut.as_ref().map(|s| s.1.clone()));
    let diff_path = a.diff_json.clone().or_else(|| shortcut.as_ref().map(|s| s.0.clone()));
    let (Some(gold_path), Some(db_root)) = (gold_path, db_root) else {
        return Err(Error::Usage("lucid eval needs --gold and --db-root (or --bench DIR, or --bundled)".into()));
    };
    if !db_root.is_dir() {
        return Err(Error::input(&db_root, "database root folder not found"));
    }
    let gold = inputs::read_gold(&gold_path)?;
    let jobs = a.jobs.unwrap_or_else(crate::par::default_jobs).max(1);
    let mut stdout = std::io::stdout().lock();
    let werr = |source| Error::Write { path: "<stdout>".into(), source };
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
        return Err(Error::Usage("lucid eval needs --pred FILE (or --check-gold)".into()));
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

fn run_load(a: &LoadArgs) -> Result<()> {
    let cache = cache_root(&a.cache_dir);
    let bench = match (&a.source.bench, a.source.bundled, &a.spider) {
        (_, true, _) => bundled::load(&bundled::default_dir(), &cache)?,
        (Some(dir), _, Some(file)) => bench::spider::load(dir, file)?,
        (Some(dir), _, None) => bench::bird::load(dir, &a.source.split)?,
        (None, false, _) => return Err(Error::Usage("lucid load needs --bench DIR or --bundled".into())),
    };
    bench::tables::write_benchmark(&a.out, &bench, &cache)?;
    println!("{}: {} tasks -> {}", bench.name, bench.tasks.len(), a.out.display());
    Ok(())
}

fn run_exec(a: &ExecArgs) -> Result<()> {
    let sandbox = Sandbox::open(&a.db, &OpenOptions::default())?;
    let limits = Limits { timeout: timeout(a.timeout)?, keep_rows: a.rows, run_twice: true, ..Limits::default() };
    let exec = sandbox.execute(&a.sql, &limits);
    println!("status: {} ({:.1} ms)", exec.outcome.status().as_str(), exec.elapsed.as_secs_f64() * 1e3);
    if let Some(e) = exec.outcome.error() {
        println!("error: {e}");
    }
    if let Some(rows) = exec.outcome.rows() {
        println!("{}", rows.preview(a.rows));
    }
    println!("flag_exec: {:?}", checks::execution_flag(&exec));
    println!("flag_degenerate: {:?}", checks::degeneracy(&exec));
    println!("ungrounded literals: {:?}", checks::ungrounded_literals(&a.question, &a.evidence, &a.sql));
    Ok(())
}
