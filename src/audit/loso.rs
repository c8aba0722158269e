//! Leave-one-seed-out EIA: for each seed, select the verifier on the other seeds (the
//! EIA-passing one whose demotion pays most there) and measure its payoff on the held-out seed;
//! and the held-out gap between verifiers that pass EIA on the other seeds and those that fail.

use serde::Serialize;

use super::{AuditBank, best_passing, delta, demote, eia};
use crate::analysis::stats::pearson;

/// One fold.
#[derive(Clone, Debug, Serialize)]
pub struct Fold {
    /// The held-out seed.
    pub held_out: i64,
    /// The verifier selected on the other seeds (none passed EIA there).
    pub selected: Option<String>,
    /// Its Delta Corr(Q, U) on the held-out seed.
    pub held_out_delta: Option<f64>,
    /// Mean held-out Delta of verifiers passing EIA on the other seeds minus that of failing ones.
    pub pass_minus_fail: Option<f64>,
}

/// The folds of `bank` (empty without a seed column or with one seed).
pub fn loso(bank: &AuditBank, tau_dec: f64, tau_tru: f64) -> Vec<Fold> {
    let Some(seeds) = &bank.seed else { return Vec::new() };
    let mut distinct: Vec<i64> = seeds.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < 2 {
        return Vec::new();
    }
    distinct
        .into_iter()
        .map(|s| {
            let (train, test): (Vec<usize>, Vec<usize>) = (0..seeds.len()).partition(|&i| seeds[i] != s);
            let (train, test) = (bank.subset(&train), bank.subset(&test));
            let passes = eia(&train, tau_dec, tau_tru);
            let k = bank.verifiers.len();
            let pays = |part: &AuditBank| -> Vec<Option<f64>> {
                let before = pearson(&part.r, &part.u);
                part.verifiers.iter().map(|(_, v)| delta(&demote(&part.r, v), &part.u, before)).collect()
            };
            let (train_pay, test_pay) = (pays(&train), pays(&test));
            let selected = best_passing(0..k, |i| passes[i].pass, |i| train_pay[i]);
            let mean = |pass: bool| {
                let d: Vec<f64> = (0..k).filter(|&i| passes[i].pass == pass).filter_map(|i| test_pay[i]).collect();
                (!d.is_empty()).then(|| d.iter().sum::<f64>() / d.len() as f64)
            };
            Fold {
                held_out: s,
                selected: selected.map(|i| bank.verifiers[i].0.clone()),
                held_out_delta: selected.and_then(|i| test_pay[i]),
                pass_minus_fail: mean(true).zip(mean(false)).map(|(p, f)| p - f),
            }
        })
        .collect()
}
