//! Bank audits (`lucid audit`): given memories with a self-grade r, a post-hoc truth U and one or
//! more candidate verifiers V (any bank: Parquet, CSV or JSON Lines), which verifier may be
//! trusted to de-inflate the bank? This first part computes the paper's EIA table and the
//! de-inflation payoff of the demotion-only operator, with an oracle and a label-blind
//! calibration row.
//!
//! Definitions (PAPER.md, "Bank-level audits"): bias b = r - U, verifier error nu = V - U. EIA
//! passes when |Corr(nu, b)| < tau_dec and Corr(V, U) > tau_tru. The demotion-only operator: a
//! trusted memory (r >= 0.5) that the verifier flags (V < 0.5) gets Q = 0; every other memory
//! keeps Q = r; nothing is promoted, nothing rewritten. Its payoff is the change in Corr(Q, U),
//! with P(Delta > 0) from a seeded bootstrap over memories.

pub mod calibration;
pub mod controls;
pub mod loso;

use std::path::Path;

use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, Float64Type};
use serde::Serialize;

use crate::analysis::stats::{pearson, quantile, z_scores};
use crate::error::{Error, Result};
use crate::rng::SplitMix64;

/// A bank: one row per memory.
#[derive(Debug)]
pub struct Bank {
    /// Self-grade r (0..1).
    pub r: Vec<f64>,
    /// Post-hoc truth U (0 or 1).
    pub u: Vec<f64>,
    /// Candidate verifiers: name and score per memory (0..1).
    pub verifiers: Vec<(String, Vec<f64>)>,
    /// The seed (or any fold) of each memory, when the bank has one.
    pub seed: Option<Vec<i64>>,
}

impl Bank {
    /// The memories at `idx`.
    pub fn subset(&self, idx: &[usize]) -> Bank {
        let pick = |x: &[f64]| idx.iter().map(|&i| x[i]).collect::<Vec<_>>();
        Bank {
            r: pick(&self.r),
            u: pick(&self.u),
            verifiers: self.verifiers.iter().map(|(n, v)| (n.clone(), pick(v))).collect(),
            seed: self.seed.as_ref().map(|s| idx.iter().map(|&i| s[i]).collect()),
        }
    }
}

/// Read a bank file (`.parquet`, `.csv`, `.jsonl`/`.json`): columns `r`, `u`, the verifiers
/// `names` (default: every column named `v_<name>`) and the fold column `seed_col` when present.
/// Errors name the file, the column and the row.
pub fn read_bank(path: &Path, names: &[String], seed_col: &str) -> Result<Bank> {
    let batch = crate::query::block_on(async {
        let ctx = crate::query::session();
        let loc = path.display().to_string();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let registered = match ext {
            "parquet" => ctx.register_parquet("bank", &loc, Default::default()).await,
            "csv" => ctx.register_csv("bank", &loc, Default::default()).await,
            "jsonl" | "json" | "ndjson" => {
                let dotted = format!(".{ext}");
                let opts = datafusion::datasource::file_format::options::JsonReadOptions {
                    file_extension: &dotted,
                    ..Default::default()
                };
                ctx.register_json("bank", &loc, opts).await
            }
            _ => return Err(Error::input(path, "a bank is a .parquet, .csv or .jsonl file")),
        };
        registered.map_err(|e| Error::input(path, e.to_string()))?;
        crate::query::collect(&ctx, "SELECT * FROM bank").await.map_err(|e| Error::input(path, e.to_string()))
    })?;
    if batch.num_rows() == 0 {
        return Err(Error::input(path, "the bank is empty"));
    }
    let column = |name: &str| -> Result<Vec<f64>> {
        let c = batch.column_by_name(name).ok_or_else(|| {
            let have: Vec<String> = batch.schema().fields().iter().map(|f| f.name().clone()).collect();
            Error::input(path, format!("no column '{name}' (columns: {})", have.join(", ")))
        })?;
        let c = arrow::compute::cast(c, &DataType::Float64)
            .map_err(|_| Error::input(path, format!("column '{name}' is not numeric ({})", c.data_type())))?;
        let c = c.as_primitive::<Float64Type>();
        (0..c.len())
            .map(|i| {
                if c.is_null(i) || !c.value(i).is_finite() {
                    Err(Error::input(path, format!("row {i}: column '{name}' has no number")))
                } else {
                    Ok(c.value(i))
                }
            })
            .collect()
    };
    let names: Vec<String> = if names.is_empty() {
        batch.schema().fields().iter().filter(|f| f.name().starts_with("v_")).map(|f| f.name().clone()).collect()
    } else {
        names.to_vec()
    };
    if names.is_empty() {
        return Err(Error::input(path, "no verifier: name them with --verifiers, or call their columns v_<name>"));
    }
    let verifiers =
        names.iter().map(|n| Ok((n.trim_start_matches("v_").to_string(), column(n)?))).collect::<Result<Vec<_>>>()?;
    let seed = match batch.column_by_name(seed_col) {
        None => None,
        Some(_) => Some(column(seed_col)?.into_iter().map(|s| s as i64).collect()),
    };
    Ok(Bank { r: column("r")?, u: column("u")?, verifiers, seed })
}

/// One row of the EIA table.
#[derive(Clone, Debug, Serialize)]
pub struct EiaRow {
    /// The verifier.
    pub verifier: String,
    /// Corr(nu, b): how much the verifier's errors echo the grader's.
    pub corr_nu_b: Option<f64>,
    /// Corr(V, U): how truthful it is.
    pub corr_v_u: Option<f64>,
    /// Both conditions hold.
    pub pass: bool,
    /// Why it fails, in words (empty when it passes).
    pub failure: String,
}

/// The EIA table of `bank` at thresholds `tau_dec`, `tau_tru`.
pub fn eia(bank: &Bank, tau_dec: f64, tau_tru: f64) -> Vec<EiaRow> {
    let b: Vec<f64> = bank.r.iter().zip(&bank.u).map(|(r, u)| r - u).collect();
    bank.verifiers
        .iter()
        .map(|(name, v)| {
            let nu: Vec<f64> = v.iter().zip(&bank.u).map(|(v, u)| v - u).collect();
            let (dec, tru) = (pearson(&nu, &b), pearson(v, &bank.u));
            let decorrelated = dec.is_some_and(|c| c.abs() < tau_dec);
            let truthful = tru.is_some_and(|c| c > tau_tru);
            let failure = match (decorrelated, truthful) {
                (true, true) => String::new(),
                (false, true) => "echoes the grader: its errors move with the self-grade's".into(),
                (true, false) => "not truthful enough: it barely tracks U".into(),
                (false, false) => "echoes the grader and barely tracks U".into(),
            };
            EiaRow { verifier: name.clone(), corr_nu_b: dec, corr_v_u: tru, pass: decorrelated && truthful, failure }
        })
        .collect()
}

/// One row of the payoff table.
#[derive(Clone, Debug, Serialize)]
pub struct PayoffRow {
    /// The verifier (`oracle`: V = U; `calibration`: a label-blind z-score of r).
    pub verifier: String,
    /// Memories demoted (trusted and flagged).
    pub demoted: usize,
    /// Of them, correct ones (U = 1).
    pub demoted_correct: usize,
    /// Corr(Q, U) before.
    pub before: Option<f64>,
    /// Corr(Q', U) after.
    pub after: Option<f64>,
    /// after - before.
    pub delta: Option<f64>,
    /// 95 % bootstrap interval of delta.
    pub lo: Option<f64>,
    /// 95 % bootstrap interval of delta.
    pub hi: Option<f64>,
    /// Share of resamples with delta > 0.
    pub p_gt_0: Option<f64>,
}

/// Q after the demotion-only operator with verifier scores `v`.
pub fn demote(r: &[f64], v: &[f64]) -> Vec<f64> {
    r.iter().zip(v).map(|(&r, &v)| if r >= 0.5 && v < 0.5 { 0.0 } else { r }).collect()
}

fn delta(q: &[f64], q2: &[f64], u: &[f64], idx: &[usize]) -> Option<f64> {
    let pick = |x: &[f64]| idx.iter().map(|&i| x[i]).collect::<Vec<_>>();
    let uu = pick(u);
    Some(pearson(&pick(q2), &uu)? - pearson(&pick(q), &uu)?)
}

/// The payoff of demoting with each verifier, the oracle, and label-blind calibration.
pub fn payoff(bank: &Bank, resamples: usize, seed: u64) -> Vec<PayoffRow> {
    let n = bank.r.len();
    let mut rows: Vec<(String, Vec<f64>)> =
        bank.verifiers.iter().map(|(n, v)| (n.clone(), demote(&bank.r, v))).collect();
    rows.push(("oracle".into(), demote(&bank.r, &bank.u)));
    rows.push(("calibration".into(), z_scores(&bank.r)));
    let all: Vec<usize> = (0..n).collect();
    rows.into_iter()
        .map(|(name, q2)| {
            let mut rng = SplitMix64(seed);
            let mut reps: Vec<f64> = (0..resamples)
                .filter_map(|_| {
                    let idx: Vec<usize> = (0..n).map(|_| (rng.next_u64() % n as u64) as usize).collect();
                    delta(&bank.r, &q2, &bank.u, &idx)
                })
                .collect();
            reps.sort_by(f64::total_cmp);
            let demoted: Vec<usize> =
                (0..n).filter(|&i| bank.r[i] >= 0.5 && q2[i] == 0.0 && name != "calibration").collect();
            let d = delta(&bank.r, &q2, &bank.u, &all);
            PayoffRow {
                verifier: name,
                demoted: demoted.len(),
                demoted_correct: demoted.iter().filter(|&&i| bank.u[i] >= 0.5).count(),
                before: pearson(&bank.r, &bank.u),
                after: pearson(&q2, &bank.u),
                delta: d,
                lo: quantile(&reps, 0.025),
                hi: quantile(&reps, 0.975),
                p_gt_0: (!reps.is_empty())
                    .then(|| reps.iter().filter(|&&x| x > 1e-12).count() as f64 / reps.len() as f64),
            }
        })
        .collect()
}
