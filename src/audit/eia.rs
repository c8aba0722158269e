//! The Error-Independence Assumption per verifier (the paper's EIA, Table 2): with bias
//! b = r - U and verifier error nu = V - U, a verifier passes when |Corr(nu, b)| < tau_dec and
//! Corr(V, U) > tau_tru. Computed over the memories the verifier scored; an undefined
//! correlation (a constant verifier, or a constant b or U among those memories) fails and says so.

use serde::Serialize;

use super::bank::{AuditBank, scored};
use crate::analysis::stats::pearson;

/// What a row of the EIA and payoff tables is.
pub mod kind {
    /// A verifier of the bank.
    pub const VERIFIER: &str = "verifier";
    /// A label-blind combination of the bank's judges.
    pub const ENSEMBLE: &str = "ensemble";
    /// Fitted to U: an upper bound, not a method.
    pub const GOLD_FIT: &str = "gold-fit (reads U)";
    /// V = U: the ceiling.
    pub const ORACLE: &str = "oracle (reads U)";
    /// A label-blind map of r (z-score).
    pub const CALIBRATION: &str = "label-blind calibration";
}

/// A row of the EIA, payoff and Proposition 2 tables: name, kind (see [`kind`]), scores V (NaN:
/// unscored).
pub type Candidate<'a> = (&'a str, &'static str, &'a [f64]);

/// One row of the EIA table.
#[derive(Clone, Debug, Serialize)]
pub struct EiaRow {
    /// The verifier.
    pub verifier: String,
    /// verifier, ensemble or gold-fit (reads U).
    pub kind: String,
    /// Corr(nu, b): how much the verifier's errors echo the grader's.
    pub corr_nu_b: Option<f64>,
    /// Corr(V, U): how truthful it is.
    pub corr_v_u: Option<f64>,
    /// Both conditions hold.
    pub pass: bool,
    /// Why it fails, in words (empty when it passes).
    pub failure: String,
    /// Memories it scored (its correlations are over these).
    pub scored: usize,
    /// Memories it left unscored (everywhere else they are not flagged).
    pub skipped: usize,
}

/// Why a verifier with these correlations fails EIA (empty: it passes).
fn failure(dec: Option<f64>, tru: Option<f64>, tau_dec: f64, tau_tru: f64, constant_v: bool) -> String {
    if dec.is_none() || tru.is_none() {
        return if constant_v {
            "undefined: the verifier gives every memory it scored the same score".into()
        } else {
            "undefined: U or the self-grade is constant on the memories it scored".into()
        };
    }
    let decorrelated = dec.is_some_and(|c| c.abs() < tau_dec);
    let truthful = tru.is_some_and(|c| c > tau_tru);
    match (decorrelated, truthful) {
        (true, true) => String::new(),
        (false, true) => "echoes the grader: its errors move with the self-grade's".into(),
        (true, false) => "not truthful enough: it barely tracks U".into(),
        (false, false) => "echoes the grader and barely tracks U".into(),
    }
}

/// The EIA row of candidate `(name, kind, v)` on `bank` at thresholds `tau_dec`, `tau_tru`.
pub fn eia_row(bank: &AuditBank, (name, kind, v): Candidate, tau_dec: f64, tau_tru: f64) -> EiaRow {
    let idx = scored(v);
    let pick = |x: &[f64]| idx.iter().map(|&i| x[i]).collect::<Vec<f64>>();
    let (vs, us, bs) = (pick(v), pick(&bank.u), pick(&bank.bias()));
    let nu: Vec<f64> = vs.iter().zip(&us).map(|(v, u)| v - u).collect();
    let (dec, tru) = (pearson(&nu, &bs), pearson(&vs, &us));
    let constant_v = pearson(&vs, &vs).is_none();
    let fail = failure(dec, tru, tau_dec, tau_tru, constant_v);
    EiaRow {
        verifier: name.into(),
        kind: kind.into(),
        corr_nu_b: dec,
        corr_v_u: tru,
        pass: fail.is_empty(),
        failure: fail,
        scored: idx.len(),
        skipped: v.len() - idx.len(),
    }
}

/// The EIA table of `bank`'s own verifiers.
pub fn eia(bank: &AuditBank, tau_dec: f64, tau_tru: f64) -> Vec<EiaRow> {
    bank.verifiers.iter().map(|(name, v)| eia_row(bank, (name, kind::VERIFIER, v), tau_dec, tau_tru)).collect()
}

/// Delta Corr(Q, U): Corr(`q`, `u`) minus `before` (Corr(r, U)); None where either is undefined.
pub fn delta(q: &[f64], u: &[f64], before: Option<f64>) -> Option<f64> {
    Some(pearson(q, u)? - before?)
}

/// Among `candidates`, the one passing EIA (`pass`) whose demotion pays most (`pays`); a tie
/// goes to the last.
pub fn best_passing(
    candidates: impl Iterator<Item = usize>,
    pass: impl Fn(usize) -> bool,
    pays: impl Fn(usize) -> Option<f64>,
) -> Option<usize> {
    let pays = |i: usize| pays(i).unwrap_or(f64::NEG_INFINITY);
    candidates.filter(|&i| pass(i)).max_by(|&a, &b| pays(a).total_cmp(&pays(b)))
}
