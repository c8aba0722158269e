//! Proposition 2 per verifier: the best pull of the self-grade toward the verifier,
//! Q' = r - alpha (r - V), removes Var(b) - Var(b') = (1-beta)^2 Var(b)^2 / ((1-beta)^2 Var(b) +
//! Var(eta)) at alpha*, with beta = Cov(nu, b) / Var(b) and eta = nu - beta b. Over the memories
//! the verifier scored. The value on the bank at alpha* equals the closed form by algebra: it
//! checks the arithmetic, not the theory; what the table shows is how much each verifier could
//! remove (nothing when beta = 1: an echo).

use serde::Serialize;

use super::bank::{AuditBank, scored};
use super::eia::Candidate;
use crate::analysis::stats::{covariance as cov, variance as var};
use crate::analysis::theory;

/// Proposition 2 for one verifier.
#[derive(Clone, Debug, Serialize)]
pub struct Prop2Row {
    /// The verifier.
    pub verifier: String,
    /// Memories it scored (the row is over these).
    pub scored: usize,
    /// beta = Cov(nu, b) / Var(b).
    pub beta: f64,
    /// Var(eta), eta = nu - beta b.
    pub var_eta: f64,
    /// The best step toward the verifier, in [0, 1].
    pub alpha_star: f64,
    /// Var(b) removed at alpha*, by the closed form.
    pub removed_predicted: f64,
    /// Var(b) - Var(b') on the bank with Q' = r - alpha* (r - V) (equal to the closed form by
    /// algebra: a check of the arithmetic).
    pub removed_measured: f64,
}

/// Proposition 2 for every row (name, kind, V).
pub fn proposition2(bank: &AuditBank, rows: &[Candidate]) -> Vec<Prop2Row> {
    rows.iter()
        .map(|&(name, _, v)| {
            let idx = scored(v);
            let pick = |x: &[f64]| idx.iter().map(|&i| x[i]).collect::<Vec<f64>>();
            let (r, u, v) = (pick(&bank.r), pick(&bank.u), pick(v));
            let b: Vec<f64> = r.iter().zip(&u).map(|(r, u)| r - u).collect();
            let nu: Vec<f64> = v.iter().zip(&u).map(|(v, u)| v - u).collect();
            let p = theory::pull(var(&b), cov(&nu, &b), var(&nu));
            let b2: Vec<f64> = (0..b.len()).map(|i| r[i] - p.alpha_star * (r[i] - v[i]) - u[i]).collect();
            Prop2Row {
                verifier: name.into(),
                scored: idx.len(),
                beta: p.beta,
                var_eta: p.var_eta,
                alpha_star: p.alpha_star,
                removed_predicted: p.removed,
                removed_measured: var(&b) - var(&b2),
            }
        })
        .collect()
}
