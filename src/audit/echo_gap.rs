//! The Echo Gap on a bank (docs/paper.md, "Echo Gap conditions"): among wrong memories (U = 0) whose
//! self-grade parsed, the mean bias E[b | U=0] (b = r here) and how reuse follows it,
//! Cov(b, n | U=0) (population covariance, as `echo_gap.sql`) with its correlation. The gap opens
//! when both are positive: wrong memories the grader passed are retrieved more. Needs the reuse
//! count `n`.

use serde::Serialize;

use super::AuditBank;
use crate::analysis::stats::{covariance, mean, pearson};

/// The Echo Gap row.
#[derive(Clone, Debug, Serialize)]
pub struct EchoGapRow {
    /// Wrong memories (U = 0) whose self-grade parsed.
    pub wrong: usize,
    /// Wrong memories left out because their self-grade did not parse.
    pub ungraded_wrong: usize,
    /// E[b | U = 0].
    pub mean_b: Option<f64>,
    /// Mean reuse count of the wrong memories.
    pub mean_n: Option<f64>,
    /// Cov(b, n | U = 0), population.
    pub cov_b_n: Option<f64>,
    /// Corr(b, n | U = 0).
    pub corr_b_n: Option<f64>,
    /// E[b | U=0] > 0 and Cov(b, n | U=0) > 0.
    pub gap: bool,
}

/// The Echo Gap of `bank` (empty without a reuse count).
pub fn echo_gap(bank: &AuditBank) -> Vec<EchoGapRow> {
    let Some(n) = &bank.n else { return Vec::new() };
    let wrong: Vec<usize> = (0..bank.r.len()).filter(|&i| bank.u[i] < 0.5).collect();
    let graded: Vec<usize> = wrong.iter().copied().filter(|&i| bank.is_graded(i)).collect();
    let b: Vec<f64> = graded.iter().map(|&i| bank.r[i] - bank.u[i]).collect();
    let reuse: Vec<f64> = graded.iter().map(|&i| n[i]).collect();
    let some = !b.is_empty();
    let (mean_b, cov) = (some.then(|| mean(&b)), some.then(|| covariance(&b, &reuse)));
    vec![EchoGapRow {
        wrong: graded.len(),
        ungraded_wrong: wrong.len() - graded.len(),
        mean_b,
        mean_n: some.then(|| mean(&reuse)),
        cov_b_n: cov,
        corr_b_n: pearson(&b, &reuse),
        gap: mean_b.is_some_and(|m| m > 0.0) && cov.is_some_and(|c| c > 0.0),
    }]
}
