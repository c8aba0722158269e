//! Combinations of a bank's judges (a named list; by default every verifier of a bank file, and a
//! run's judge stages without the detector's channels, the detector and panels): the label-blind
//! mean and majority ensembles by the panel's own rule ([`super::votes`]: a missing vote or a tie
//! leaves a memory unscored), the gold-fit optimal aggregator (least squares of U on the judges
//! over the memories all of them scored: an upper bound, marked as reading U, never selected),
//! and the correlations of verifier errors over the memories both verifiers scored.

use serde::Serialize;

use super::AuditBank;
use super::votes::{Rule, combine};
use crate::analysis::stats::pearson;

/// Name of the mean ensemble.
pub const MEAN: &str = "ensemble-mean";
/// Name of the majority ensemble.
pub const MAJORITY: &str = "ensemble-majority";
/// Name of the gold-fit aggregator.
pub const GOLD_FIT: &str = "gold-fit";

/// The mean and majority ensembles of `bank`'s judges (with two or more; NaN: unscored).
pub fn ensembles(bank: &AuditBank) -> Vec<(String, Vec<f64>)> {
    let judges = bank.judge_scores();
    if judges.len() < 2 {
        return Vec::new();
    }
    let votes = |i: usize| judges.iter().map(|v| (!v[i].is_nan()).then_some(v[i])).collect::<Vec<_>>();
    let by = |rule: Rule| (0..bank.r.len()).map(|i| combine(rule, &votes(i)).unwrap_or(f64::NAN)).collect();
    vec![(MEAN.into(), by(Rule::Mean)), (MAJORITY.into(), by(Rule::Majority))]
}

/// The least-squares fit of U on an intercept and the judges, clipped to [0, 1], over the
/// memories every judge scored (NaN elsewhere); None with fewer than two judges or too few such
/// memories. A tiny ridge keeps duplicated judges solvable.
#[allow(clippy::needless_range_loop)] // the elimination reads as the textbook's, index by index
pub fn gold_fit(bank: &AuditBank) -> Option<Vec<f64>> {
    let judges = bank.judge_scores();
    let k = judges.len();
    if k < 2 {
        return None;
    }
    let complete: Vec<usize> = (0..bank.r.len()).filter(|&i| judges.iter().all(|v| !v[i].is_nan())).collect();
    let (n, p) = (complete.len(), k + 1);
    if n <= p {
        return None;
    }
    let x = |i: usize, j: usize| if j == 0 { 1.0 } else { judges[j - 1][i] };
    // Normal equations (X'X + lambda I) beta = X'U, by Gaussian elimination with partial pivoting.
    let mut a = vec![vec![0.0f64; p + 1]; p];
    for &i in &complete {
        for r in 0..p {
            let xr = x(i, r);
            for c in r..p {
                a[r][c] += xr * x(i, c);
            }
            a[r][p] += xr * bank.u[i];
        }
    }
    for r in 0..p {
        for c in 0..r {
            a[r][c] = a[c][r];
        }
        a[r][r] += 1e-9 * n as f64;
    }
    for col in 0..p {
        let pivot = (col..p).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        a.swap(col, pivot);
        if a[col][col].abs() < 1e-300 {
            return None;
        }
        for r in 0..p {
            if r != col {
                let f = a[r][col] / a[col][col];
                for c in col..=p {
                    a[r][c] -= f * a[col][c];
                }
            }
        }
    }
    let beta: Vec<f64> = (0..p).map(|r| a[r][p] / a[r][r]).collect();
    let mut fit = vec![f64::NAN; bank.r.len()];
    for &i in &complete {
        fit[i] = (0..p).map(|j| beta[j] * x(i, j)).sum::<f64>().clamp(0.0, 1.0);
    }
    Some(fit)
}

/// Corr(nu_a, nu_b) for one pair of verifiers.
#[derive(Clone, Debug, Serialize)]
pub struct ErrorCorrelation {
    /// One verifier.
    pub a: String,
    /// The other.
    pub b: String,
    /// Correlation of their errors nu = V - U, over the memories both scored.
    pub corr_errors: Option<f64>,
    /// Memories both scored.
    pub memories: usize,
}

/// Every pair of `bank`'s verifiers.
pub fn error_correlations(bank: &AuditBank) -> Vec<ErrorCorrelation> {
    let nus: Vec<Vec<f64>> = bank.verifiers.iter().map(|(_, v)| bank.errors(v)).collect();
    let mut out = Vec::new();
    for i in 0..nus.len() {
        for j in i + 1..nus.len() {
            let both: Vec<usize> = (0..bank.r.len()).filter(|&m| !nus[i][m].is_nan() && !nus[j][m].is_nan()).collect();
            let (x, y): (Vec<f64>, Vec<f64>) = both.iter().map(|&m| (nus[i][m], nus[j][m])).unzip();
            out.push(ErrorCorrelation {
                a: bank.verifiers[i].0.clone(),
                b: bank.verifiers[j].0.clone(),
                corr_errors: pearson(&x, &y),
                memories: both.len(),
            });
        }
    }
    out
}
