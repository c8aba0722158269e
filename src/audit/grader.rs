//! The grader's rows (Table 2's first lines): how lenient the self-grade is on a bank. Two
//! conventions, both printed with the ungraded count beside them: the self-grade over the
//! episodes it graded (as `grader.sql` and every report count it), and the stored label, where an
//! ungraded episode is stored untrusted (r = 0: the bank the memories are retrieved from). The
//! 95 % intervals cluster on the question when the bank has one, as `grader.sql`'s pooled rows do
//! (`cluster_wilson_lo/hi`): one question under several seeds is not as many independent trials.

use std::collections::HashMap;

use serde::Serialize;

use super::AuditBank;
use crate::analysis::clusters::cluster_wilson;
use crate::analysis::stats::{Z95, pearson};

/// Over graded episodes only.
pub const GRADED: &str = "self-grade (graded episodes)";
/// Over every memory, ungraded ones as stored (untrusted).
pub const STORED: &str = "stored label (ungraded stored untrusted)";

/// One grader row.
#[derive(Clone, Debug, Serialize)]
pub struct GraderRow {
    /// Which r: the self-grade over graded episodes, or the stored label over all.
    pub over: String,
    /// Memories counted.
    pub memories: usize,
    /// Memories of the bank whose self-grade did not parse (stored untrusted).
    pub ungraded: usize,
    /// Share right (U = 1).
    pub base_rate: f64,
    /// Leniency l = P(r >= 0.5 | U = 0), with its 95 % Wilson interval (clustered on the question).
    pub leniency: Option<f64>,
    /// Lower end.
    pub leniency_lo: Option<f64>,
    /// Upper end.
    pub leniency_hi: Option<f64>,
    /// Sensitivity s = P(r >= 0.5 | U = 1), with its 95 % Wilson interval (clustered on the
    /// question).
    pub sensitivity: Option<f64>,
    /// Lower end.
    pub sensitivity_lo: Option<f64>,
    /// Upper end.
    pub sensitivity_hi: Option<f64>,
    /// Trusted-bank corruption: share of trusted memories (r >= 0.5) that are wrong.
    pub trusted_corruption: Option<f64>,
    /// Corr(r, U).
    pub corr_r_u: Option<f64>,
}

/// The 95 % Wilson interval of the share of trusted memories (r >= 0.5) among the right ones
/// (U = 1) when `right`, else among the wrong ones, clustered on `cluster` as `grader.sql`'s
/// `cluster_wilson_lo/hi` cluster on the question: [`cluster_wilson`] over each cluster's
/// (memories, trusted ones) and the sum of squares. Without `cluster` every memory is its own
/// cluster, and the interval is exactly Wilson's.
fn interval(r: &[f64], u: &[f64], cluster: Option<&[usize]>, right: bool) -> Option<(f64, f64)> {
    let mut clusters: HashMap<usize, (f64, f64)> = HashMap::new();
    let mut sum_sq = 0.0;
    for i in (0..r.len()).filter(|&i| if right { u[i] >= 0.5 } else { u[i] < 0.5 }) {
        let x = f64::from(u8::from(r[i] >= 0.5));
        let c = clusters.entry(cluster.map_or(i, |c| c[i])).or_default();
        c.0 += 1.0;
        c.1 += x;
        sum_sq += x * x;
    }
    cluster_wilson(&clusters.into_values().collect::<Vec<_>>(), sum_sq, Z95)
}

/// One grader row over the memories `r`, `u` (with their clusters, when the bank has them).
fn row(over: &str, ungraded: usize, r: &[f64], u: &[f64], cluster: Option<&[usize]>) -> GraderRow {
    let n = r.len();
    let count = |f: &dyn Fn(usize) -> bool| (0..n).filter(|&i| f(i)).count() as f64;
    let (wrong, right) = (count(&|i| u[i] < 0.5), count(&|i| u[i] >= 0.5));
    let lenient = count(&|i| u[i] < 0.5 && r[i] >= 0.5);
    let sensitive = count(&|i| u[i] >= 0.5 && r[i] >= 0.5);
    let (l, s) = (interval(r, u, cluster, false), interval(r, u, cluster, true));
    let trusted = lenient + sensitive;
    GraderRow {
        over: over.into(),
        memories: n,
        ungraded,
        base_rate: if n > 0 { right / n as f64 } else { f64::NAN },
        leniency: (wrong > 0.0).then(|| lenient / wrong),
        leniency_lo: l.map(|x| x.0),
        leniency_hi: l.map(|x| x.1),
        sensitivity: (right > 0.0).then(|| sensitive / right),
        sensitivity_lo: s.map(|x| x.0),
        sensitivity_hi: s.map(|x| x.1),
        trusted_corruption: (trusted > 0.0).then(|| lenient / trusted),
        corr_r_u: pearson(r, u),
    }
}

/// The grader rows of `bank`: over graded episodes, then (when the bank says which were graded)
/// over the stored labels.
pub fn grader(bank: &AuditBank) -> Vec<GraderRow> {
    let graded: Vec<usize> = (0..bank.r.len()).filter(|&i| bank.is_graded(i)).collect();
    let ungraded = bank.r.len() - graded.len();
    let pick = |x: &[f64]| graded.iter().map(|&i| x[i]).collect::<Vec<_>>();
    let cluster = bank.cluster.as_ref().map(|c| graded.iter().map(|&i| c[i]).collect::<Vec<_>>());
    let mut out = vec![row(GRADED, ungraded, &pick(&bank.r), &pick(&bank.u), cluster.as_deref())];
    if bank.graded.is_some() {
        out.push(row(STORED, ungraded, &bank.r, &bank.u, bank.cluster.as_deref()));
    }
    out
}
