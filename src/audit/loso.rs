//! Leave-one-seed-out EIA: for each seed, select the verifier on the other seeds (among those
//! passing EIA there, the one whose demotion pays most there) and measure its payoff on the
//! held-out seed; how many verifiers pass on the training seeds, the selected one's rank among
//! every verifier's held-out payoff, the held-out gap between verifiers that pass on the other
//! seeds and those that fail, and a last row with the means over folds. Every verifier is
//! audited over the whole bank: an unscored memory is not flagged (it keeps its label).

use serde::Serialize;

use super::bank::{AuditBank, demote, unscored};
use super::eia::{best_passing, delta, eia};
use crate::analysis::stats::{mean, pearson};

/// One fold, or (held_out null) the means over folds.
#[derive(Clone, Debug, Serialize)]
pub struct Fold {
    /// "seed <s>", or "mean over <k> folds".
    pub fold: String,
    /// The held-out seed (null on the mean row).
    pub held_out: Option<i64>,
    /// Verifiers that pass EIA on the other seeds (of `candidates`; null on the mean row).
    pub passing: Option<usize>,
    /// Verifiers considered.
    pub candidates: usize,
    /// The verifier selected on the other seeds (none passed EIA there).
    pub selected: Option<String>,
    /// Its Delta Corr(Q, U) on the held-out seed (the mean row: over folds that selected one).
    pub held_out_delta: Option<f64>,
    /// Its rank among every candidate's held-out Delta (1: the best; ties share the best rank).
    pub held_out_rank: Option<usize>,
    /// Mean held-out Delta of verifiers passing EIA on the other seeds minus that of failing ones.
    pub pass_minus_fail: Option<f64>,
    /// Unscored memories of the selected verifier on the held-out seed (not flagged, kept their
    /// label), or why a fold has no gap.
    pub note: String,
}

/// The folds of `bank` (with its ensembles among the verifiers) and the mean row (empty without
/// a seed column or with one seed).
pub fn loso(bank: &AuditBank, tau_dec: f64, tau_tru: f64) -> Vec<Fold> {
    let Some(seeds) = &bank.seed else { return Vec::new() };
    let mut distinct: Vec<i64> = seeds.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < 2 {
        return Vec::new();
    }
    let k = bank.verifiers.len();
    let mut folds: Vec<Fold> = distinct
        .iter()
        .map(|&s| {
            let (train, test): (Vec<usize>, Vec<usize>) = (0..seeds.len()).partition(|&i| seeds[i] != s);
            let (train, test) = (bank.subset(&train), bank.subset(&test));
            let passes = eia(&train, tau_dec, tau_tru);
            let pays = |part: &AuditBank| -> Vec<Option<f64>> {
                let before = pearson(&part.r, &part.u);
                part.verifiers.iter().map(|(_, v)| delta(&demote(&part.r, v), &part.u, before)).collect()
            };
            let (train_pay, test_pay) = (pays(&train), pays(&test));
            let selected = best_passing(0..k, |i| passes[i].pass, |i| train_pay[i]);
            let group = |pass: bool| {
                let d: Vec<f64> = (0..k).filter(|&i| passes[i].pass == pass).filter_map(|i| test_pay[i]).collect();
                (!d.is_empty()).then(|| mean(&d))
            };
            let rank = selected.and_then(|i| {
                let d = test_pay[i]?;
                Some(1 + test_pay.iter().flatten().filter(|&&x| x > d).count())
            });
            let passing = passes.iter().filter(|p| p.pass).count();
            let note = match (selected, passing) {
                (_, 0) => "no verifier passes EIA on the other seeds".to_string(),
                (_, p) if p == k => "every verifier passes on the other seeds: no gap".to_string(),
                (Some(i), _) => match unscored(&test.verifiers[i].1) {
                    0 => String::new(),
                    m => format!("{m} unscored by {} on this seed: not flagged, kept their label", bank.verifiers[i].0),
                },
                (None, _) => String::new(),
            };
            Fold {
                fold: format!("seed {s}"),
                held_out: Some(s),
                passing: Some(passing),
                candidates: k,
                selected: selected.map(|i| bank.verifiers[i].0.clone()),
                held_out_delta: selected.and_then(|i| test_pay[i]),
                held_out_rank: rank,
                pass_minus_fail: group(true).zip(group(false)).map(|(p, f)| p - f),
                note,
            }
        })
        .collect();
    let avg = |x: Vec<f64>| (!x.is_empty()).then(|| mean(&x));
    let deltas: Vec<f64> = folds.iter().filter_map(|f| f.held_out_delta).collect();
    let gaps: Vec<f64> = folds.iter().filter_map(|f| f.pass_minus_fail).collect();
    let summary = Fold {
        fold: format!("mean over {} folds", folds.len()),
        held_out: None,
        passing: None,
        candidates: k,
        selected: None,
        held_out_delta: avg(deltas.clone()),
        held_out_rank: None,
        pass_minus_fail: avg(gaps.clone()),
        note: format!(
            "held-out Delta over {} folds with a selection, the gap over {} folds with both groups",
            deltas.len(),
            gaps.len()
        ),
    };
    folds.push(summary);
    folds
}
