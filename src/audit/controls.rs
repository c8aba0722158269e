//! The controls of a bank audit: Proposition 2 per verifier (predicted against measured variance
//! removed by the best pull toward the verifier) and filtering at the same budget — demoting K
//! random trusted memories (K = what the best verifier demotes; seeded, averaged over draws) and
//! the best verifier's own flags at 25/50/75/100 % of K, most confident first.

use serde::Serialize;

use super::{Bank, PayoffRow};
use crate::analysis::stats::{covariance as cov, pearson, variance as var};
use crate::analysis::theory;
use crate::rng::SplitMix64;

/// Proposition 2 for one verifier.
#[derive(Clone, Debug, Serialize)]
pub struct Prop2Row {
    /// The verifier.
    pub verifier: String,
    /// beta = Cov(nu, b) / Var(b).
    pub beta: f64,
    /// Var(eta), eta = nu - beta b.
    pub var_eta: f64,
    /// The best step toward the verifier, in [0, 1].
    pub alpha_star: f64,
    /// Var(b) removed at alpha*, by the closed form.
    pub removed_predicted: f64,
    /// Var(b) - Var(b') measured on the bank with Q' = r - alpha* (r - V).
    pub removed_measured: f64,
}

/// Proposition 2 for every verifier of `bank`.
pub fn proposition2(bank: &Bank) -> Vec<Prop2Row> {
    let b: Vec<f64> = bank.r.iter().zip(&bank.u).map(|(r, u)| r - u).collect();
    bank.verifiers
        .iter()
        .map(|(name, v)| {
            let nu: Vec<f64> = v.iter().zip(&bank.u).map(|(v, u)| v - u).collect();
            let p = theory::pull(var(&b), cov(&nu, &b), var(&nu));
            let b2: Vec<f64> =
                (0..b.len()).map(|i| bank.r[i] - p.alpha_star * (bank.r[i] - v[i]) - bank.u[i]).collect();
            Prop2Row {
                verifier: name.clone(),
                beta: p.beta,
                var_eta: p.var_eta,
                alpha_star: p.alpha_star,
                removed_predicted: p.removed,
                removed_measured: var(&b) - var(&b2),
            }
        })
        .collect()
}

/// Filtering at the best verifier's budget.
#[derive(Clone, Debug, Serialize)]
pub struct Controls {
    /// The verifier whose budget is matched (the EIA-passing one with the largest payoff, else the
    /// largest payoff).
    pub verifier: String,
    /// K: memories it demotes.
    pub budget: usize,
    /// Mean Delta Corr(Q, U) of demoting K random trusted memories.
    pub random_delta: Option<f64>,
    /// Mean number of correct memories those random prunes demote.
    pub random_correct_demoted: f64,
    /// Random draws averaged.
    pub draws: usize,
    /// (share of K, memories demoted, Delta) for the verifier's most confident flags.
    pub sweep: Vec<(f64, usize, Option<f64>)>,
}

/// The controls, matched to `best` (a payoff row of `bank`'s verifiers).
pub fn controls(bank: &Bank, best: &PayoffRow, draws: usize, seed: u64) -> Controls {
    let n = bank.r.len();
    let before = pearson(&bank.r, &bank.u);
    let delta = |q: &[f64]| Some(pearson(q, &bank.u)? - before?);
    let trusted: Vec<usize> = (0..n).filter(|&i| bank.r[i] >= 0.5).collect();
    let k = best.demoted.min(trusted.len());
    let mut rng = SplitMix64(seed);
    let (mut deltas, mut correct) = (Vec::new(), 0usize);
    for _ in 0..draws {
        // A seeded partial Fisher-Yates: K distinct trusted memories.
        let mut pool = trusted.clone();
        let mut q = bank.r.clone();
        for j in 0..k {
            let pick = j + (rng.next_u64() % (pool.len() - j) as u64) as usize;
            pool.swap(j, pick);
            q[pool[j]] = 0.0;
            correct += usize::from(bank.u[pool[j]] >= 0.5);
        }
        deltas.extend(delta(&q));
    }
    let v = bank.verifiers.iter().find(|(name, _)| *name == best.verifier).map(|(_, v)| v.clone()).unwrap_or_default();
    let mut flags: Vec<usize> = (0..n).filter(|&i| bank.r[i] >= 0.5 && v.get(i).is_some_and(|&x| x < 0.5)).collect();
    flags.sort_by(|&a, &b| v[a].total_cmp(&v[b]).then(a.cmp(&b)));
    let sweep = [0.25, 0.5, 0.75, 1.0]
        .iter()
        .map(|&share| {
            let m = ((flags.len() as f64) * share).round() as usize;
            let mut q = bank.r.clone();
            for &i in &flags[..m] {
                q[i] = 0.0;
            }
            (share, m, delta(&q))
        })
        .collect();
    Controls {
        verifier: best.verifier.clone(),
        budget: k,
        random_delta: (!deltas.is_empty()).then(|| deltas.iter().sum::<f64>() / deltas.len() as f64),
        random_correct_demoted: if draws == 0 { 0.0 } else { correct as f64 / draws as f64 },
        draws,
        sweep,
    }
}
