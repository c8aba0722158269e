//! The grader's rows (Table 2's first lines): how lenient the self-grade is on a bank. Two
//! conventions, both printed with the ungraded count beside them: the self-grade over the
//! episodes it graded (as `grader.sql` and every report count it), and the stored label, where an
//! ungraded episode is stored untrusted (r = 0: the bank the memories are retrieved from).

use serde::Serialize;

use super::AuditBank;
use crate::analysis::stats::{Z95, pearson, wilson};

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
    /// Leniency l = P(r >= 0.5 | U = 0), with its 95 % Wilson interval.
    pub leniency: Option<f64>,
    /// Lower end.
    pub leniency_lo: Option<f64>,
    /// Upper end.
    pub leniency_hi: Option<f64>,
    /// Sensitivity s = P(r >= 0.5 | U = 1), with its 95 % Wilson interval.
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

fn row(over: &str, ungraded: usize, r: &[f64], u: &[f64]) -> GraderRow {
    let n = r.len();
    let count = |f: &dyn Fn(usize) -> bool| (0..n).filter(|&i| f(i)).count() as f64;
    let (wrong, right) = (count(&|i| u[i] < 0.5), count(&|i| u[i] >= 0.5));
    let lenient = count(&|i| u[i] < 0.5 && r[i] >= 0.5);
    let sensitive = count(&|i| u[i] >= 0.5 && r[i] >= 0.5);
    let (l, s) = (wilson(lenient, wrong, Z95), wilson(sensitive, right, Z95));
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
    let mut out = vec![row(GRADED, ungraded, &pick(&bank.r), &pick(&bank.u))];
    if bank.graded.is_some() {
        out.push(row(STORED, ungraded, &bank.r, &bank.u));
    }
    out
}
