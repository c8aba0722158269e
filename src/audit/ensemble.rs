//! Combinations of a bank's verifiers: the label-blind mean and majority ensembles (candidates
//! like any verifier), the gold-fit optimal aggregator (least squares of U on every verifier: an
//! upper bound on what a linear combination could do, marked as reading U, never selected), and
//! the correlations of verifier errors (two judges whose errors correlate fail together).

use serde::Serialize;

use super::AuditBank;
use crate::analysis::stats::pearson;

/// Name of the mean ensemble.
pub const MEAN: &str = "ensemble-mean";
/// Name of the majority ensemble.
pub const MAJORITY: &str = "ensemble-majority";
/// Name of the gold-fit aggregator.
pub const GOLD_FIT: &str = "gold-fit";

/// `bank` with the mean and majority ensembles of its verifiers appended (with two or more).
/// Majority: 1 when more than half of the verifiers pass the memory (V >= 0.5), 0 when fewer than
/// half do, 0.5 (no flag) on a tie.
pub fn with_ensembles(bank: &AuditBank) -> AuditBank {
    let mut out = bank.clone();
    let k = bank.verifiers.len();
    if k < 2 {
        return out;
    }
    let n = bank.r.len();
    let mean: Vec<f64> = (0..n).map(|i| bank.verifiers.iter().map(|(_, v)| v[i]).sum::<f64>() / k as f64).collect();
    let majority: Vec<f64> = (0..n)
        .map(|i| {
            let pass = bank.verifiers.iter().filter(|(_, v)| v[i] >= 0.5).count() * 2;
            match pass.cmp(&k) {
                std::cmp::Ordering::Greater => 1.0,
                std::cmp::Ordering::Less => 0.0,
                std::cmp::Ordering::Equal => 0.5,
            }
        })
        .collect();
    out.verifiers.push((MEAN.into(), mean));
    out.verifiers.push((MAJORITY.into(), majority));
    out
}

/// The least-squares fit of U on an intercept and every verifier, clipped to [0, 1] (None with
/// fewer than two verifiers). A tiny ridge keeps duplicated verifiers solvable.
#[allow(clippy::needless_range_loop)] // the elimination reads as the textbook's, index by index
pub fn gold_fit(bank: &AuditBank) -> Option<Vec<f64>> {
    let k = bank.verifiers.len();
    if k < 2 {
        return None;
    }
    let (n, p) = (bank.r.len(), k + 1);
    let x = |i: usize, j: usize| if j == 0 { 1.0 } else { bank.verifiers[j - 1].1[i] };
    // Normal equations (X'X + lambda I) beta = X'U, by Gaussian elimination with partial pivoting.
    let mut a = vec![vec![0.0f64; p + 1]; p];
    for i in 0..n {
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
    Some((0..n).map(|i| (0..p).map(|j| beta[j] * x(i, j)).sum::<f64>().clamp(0.0, 1.0)).collect())
}

/// Corr(nu_a, nu_b) for one pair of verifiers.
#[derive(Clone, Debug, Serialize)]
pub struct ErrorCorrelation {
    /// One verifier.
    pub a: String,
    /// The other.
    pub b: String,
    /// Correlation of their errors nu = V - U.
    pub corr_errors: Option<f64>,
}

/// Every pair of `bank`'s verifiers.
pub fn error_correlations(bank: &AuditBank) -> Vec<ErrorCorrelation> {
    let nus: Vec<Vec<f64>> = bank.verifiers.iter().map(|(_, v)| bank.errors(v)).collect();
    let mut out = Vec::new();
    for i in 0..nus.len() {
        for j in i + 1..nus.len() {
            out.push(ErrorCorrelation {
                a: bank.verifiers[i].0.clone(),
                b: bank.verifiers[j].0.clone(),
                corr_errors: pearson(&nus[i], &nus[j]),
            });
        }
    }
    out
}
