//! BIRD's execution-accuracy rule, executed without repeating work.
//!
//! The rule (BIRD `evaluation.py`): for each pair, on the gold's database, run the prediction,
//! then the gold, under one timeout for the pair; score 1 iff the two results are equal as sets of
//! rows under Python equality; any error or timeout, or a prediction that is not a string, scores 0.
//! Here every distinct (database, query text) is executed once per run, gold results come from the
//! persistent [`GoldCache`] when present, and the pair's timeout is checked on the sum of the two
//! execution times. Queries run in parallel over `jobs` threads, biggest databases first.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::gold_cache::{self, GoldCache};
use super::query_run::{QueryRun, Ran};
use crate::error::Result;
use crate::par::par_map_with;
use crate::sql::connections::Connections;
use crate::sql::{Execution, Limits, OpenOptions, Outcome};

/// Why a pair scored what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExVerdict {
    /// Equal as sets: 1.
    Match,
    /// Both ran, different sets: 0.
    Mismatch,
    /// The prediction is not a string: 0.
    PredNotString,
    /// The prediction failed: 0.
    PredError,
    /// The prediction timed out: 0.
    PredTimeout,
    /// The gold failed: 0.
    GoldError,
    /// The gold timed out: 0.
    GoldTimeout,
    /// Each ran, but together they passed the pair's timeout: 0.
    PairTimeout,
    /// A result passed the row or memory cap and cannot be compared exactly: 0.
    Truncated,
}

impl ExVerdict {
    /// The score.
    pub fn res(self) -> u8 {
        u8::from(self == ExVerdict::Match)
    }

    /// Snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ExVerdict::Match => "match",
            ExVerdict::Mismatch => "mismatch",
            ExVerdict::PredNotString => "pred_not_string",
            ExVerdict::PredError => "pred_error",
            ExVerdict::PredTimeout => "pred_timeout",
            ExVerdict::GoldError => "gold_error",
            ExVerdict::GoldTimeout => "gold_timeout",
            ExVerdict::PairTimeout => "pair_timeout",
            ExVerdict::Truncated => "truncated",
        }
    }
}

/// One scored pair.
#[derive(Clone, Debug)]
pub struct PairResult {
    /// Why it scored what it did (`verdict.res()` is the score).
    pub verdict: ExVerdict,
    /// The prediction's run (`None` when it is not a string).
    pub pred: Option<QueryRun>,
    /// The gold's run.
    pub gold: QueryRun,
}

/// How to evaluate.
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// The pair's timeout (BIRD's `meta_time_out`, 30 s by default).
    pub timeout: Duration,
    /// Worker threads.
    pub jobs: usize,
    /// Row cap per query; a result past it scores 0 (as "truncated").
    pub max_rows: u64,
    /// Gold-result cache file, if any.
    pub cache: Option<PathBuf>,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            timeout: Duration::from_secs(30),
            jobs: crate::par::default_jobs(),
            max_rows: 10_000_000,
            cache: None,
        }
    }
}

/// Counts of work done, for the summary line and benchmarks.
#[derive(Clone, Debug, Default)]
pub struct EvalStats {
    /// Pairs scored.
    pub pairs: usize,
    /// Distinct (database, query) executions needed.
    pub distinct_queries: usize,
    /// Executed in this run.
    pub executed: usize,
    /// Gold results served from the cache.
    pub gold_cached: usize,
    /// Wall-clock time.
    pub elapsed: Duration,
}

/// One pair to score: prediction text (or not a string), gold text, database file.
pub struct Pair<'a> {
    /// The predicted query.
    pub pred: Option<&'a str>,
    /// The gold query.
    pub gold: &'a str,
    /// The database both run on.
    pub db: &'a Path,
}

struct Job<'a> {
    db: usize,
    sql: &'a str,
    gold_key: Option<[u8; 32]>,
}

/// Score every pair. Fails only on infrastructure errors (unreadable database, cache); every
/// query failure is a scored 0.
pub fn evaluate(pairs: &[Pair<'_>], opts: &EvalOptions) -> Result<(Vec<PairResult>, EvalStats)> {
    let start = Instant::now();
    let mut db_index: HashMap<&Path, usize> = HashMap::new();
    let mut dbs: Vec<&Path> = Vec::new();
    for p in pairs {
        db_index.entry(p.db).or_insert_with(|| {
            dbs.push(p.db);
            dbs.len() - 1
        });
    }
    let db_hashes: Vec<blake3::Hash> =
        dbs.iter().map(|p| crate::fingerprint::database_hash(p)).collect::<Result<_>>()?;

    // Distinct (database, text) jobs; a prediction identical to its gold is the same job.
    let mut jobs: Vec<Job<'_>> = Vec::new();
    let mut job_of: HashMap<(usize, &str), usize> = HashMap::new();
    let mut pair_jobs = Vec::with_capacity(pairs.len());
    for p in pairs {
        let db = db_index[p.db];
        let g = intern(&mut jobs, &mut job_of, db, p.gold);
        if jobs[g].gold_key.is_none() {
            jobs[g].gold_key = Some(gold_cache::key(&db_hashes[db], p.gold, opts.max_rows));
        }
        let pr = p.pred.map(|s| intern(&mut jobs, &mut job_of, db, s));
        pair_jobs.push((pr, g));
    }

    let mut results: Vec<Option<QueryRun>> = vec![None; jobs.len()];
    let mut cache = opts.cache.as_deref().map(GoldCache::open).transpose()?;
    let mut gold_cached = 0;
    if let Some(cache) = &cache {
        for (j, job) in jobs.iter().enumerate() {
            if let Some(key) = &job.gold_key
                && let Some(hit) = cache.get(key, opts.timeout)?
            {
                results[j] = Some(hit);
                gold_cached += 1;
            }
        }
    }

    let mut pending: Vec<usize> = (0..jobs.len()).filter(|&j| results[j].is_none()).collect();
    let db_sizes: Vec<u64> = dbs.iter().map(|p| std::fs::metadata(p).map_or(0, |m| m.len())).collect();
    pending.sort_by_key(|&j| (std::cmp::Reverse(db_sizes[jobs[j].db]), jobs[j].db, j));
    let executed = run_jobs(&jobs, &pending, &dbs, opts);
    for (j, run) in executed {
        results[j] = Some(run);
    }

    if let Some(cache) = &mut cache {
        let fresh = pending.iter().filter_map(|&j| Some((jobs[j].gold_key?, results[j].as_ref()?)));
        cache.put_all(fresh, opts.timeout)?;
    }

    let scored = pair_jobs
        .iter()
        .map(|&(pr, g)| {
            let gold = results[g].clone().expect("every job ran");
            let pred = pr.map(|p| results[p].clone().expect("every job ran"));
            PairResult { verdict: verdict(pred.as_ref(), &gold, opts.timeout), pred, gold }
        })
        .collect();
    let stats = EvalStats {
        pairs: pairs.len(),
        distinct_queries: jobs.len(),
        executed: pending.len(),
        gold_cached,
        elapsed: start.elapsed(),
    };
    Ok((scored, stats))
}

fn intern<'a>(
    jobs: &mut Vec<Job<'a>>,
    job_of: &mut HashMap<(usize, &'a str), usize>,
    db: usize,
    sql: &'a str,
) -> usize {
    *job_of.entry((db, sql)).or_insert_with(|| {
        jobs.push(Job { db, sql, gold_key: None });
        jobs.len() - 1
    })
}

/// BIRD's rule on two runs.
pub fn verdict(pred: Option<&QueryRun>, gold: &QueryRun, timeout: Duration) -> ExVerdict {
    let Some(pred) = pred else { return ExVerdict::PredNotString };
    match (&pred.ran, &gold.ran) {
        (Ran::Error(_), _) => ExVerdict::PredError,
        (Ran::Timeout, _) => ExVerdict::PredTimeout,
        (_, Ran::Error(_)) => ExVerdict::GoldError,
        (_, Ran::Timeout) => ExVerdict::GoldTimeout,
        _ if pred.elapsed + gold.elapsed > timeout => ExVerdict::PairTimeout,
        (Ran::Rows { truncated: true, .. }, _) | (_, Ran::Rows { truncated: true, .. }) => ExVerdict::Truncated,
        (Ran::Rows { set_hash: a, .. }, Ran::Rows { set_hash: b, .. }) if a == b => ExVerdict::Match,
        _ => ExVerdict::Mismatch,
    }
}

fn run_jobs(jobs: &[Job<'_>], order: &[usize], dbs: &[&Path], opts: &EvalOptions) -> Vec<(usize, QueryRun)> {
    let limits =
        Limits { timeout: opts.timeout, max_rows: opts.max_rows, keep_rows: 0, run_twice: false, ..Limits::default() };
    let runs = par_map_with(
        order,
        opts.jobs,
        || Connections::new(OpenOptions::default()),
        |conns, &j| {
            let job = &jobs[j];
            let exec = match conns.get(dbs[job.db]) {
                Ok(sandbox) => sandbox.execute(job.sql, &limits),
                Err(e) => Execution { outcome: Outcome::Error(e.to_string()), elapsed: Duration::ZERO },
            };
            let ran = match exec.outcome {
                Outcome::Ok(r) | Outcome::Nondeterministic(r) => {
                    Ran::Rows { set_hash: r.set_hash, n_rows: r.n_rows, truncated: r.truncated }
                }
                Outcome::Error(e) => Ran::Error(e),
                Outcome::Timeout => Ran::Timeout,
            };
            QueryRun { ran, elapsed: exec.elapsed, cached: false }
        },
    );
    order.iter().copied().zip(runs).collect()
}
