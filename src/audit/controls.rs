//! The controls of a bank audit: Proposition 2 per verifier (predicted against measured variance
//! removed by the best pull toward the verifier) and generic filtering at the same budget K (what
//! the selected verifier demotes): a confidence threshold on r (a no-op by Lemma 1 when r does
//! not separate trusted memories), a self-consistency prune (when the bank has `sc`), K random
//! trusted memories (seeded, averaged over draws), and the verifier's own flags at 25/50/75/100 %
//! of K, most confident first.

use serde::Serialize;

use super::{AuditBank, Candidate, delta};
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

/// Proposition 2 for every row (name, kind, V).
pub fn proposition2(bank: &AuditBank, rows: &[Candidate]) -> Vec<Prop2Row> {
    let b = bank.bias();
    rows.iter()
        .map(|&(name, _, v)| {
            let nu = bank.errors(v);
            let p = theory::pull(var(&b), cov(&nu, &b), var(&nu));
            let b2: Vec<f64> =
                (0..b.len()).map(|i| bank.r[i] - p.alpha_star * (bank.r[i] - v[i]) - bank.u[i]).collect();
            Prop2Row {
                verifier: name.into(),
                beta: p.beta,
                var_eta: p.var_eta,
                alpha_star: p.alpha_star,
                removed_predicted: p.removed,
                removed_measured: var(&b) - var(&b2),
            }
        })
        .collect()
}

/// One filtering control at the budget.
#[derive(Clone, Debug, Serialize)]
pub struct ControlRow {
    /// What was demoted.
    pub control: String,
    /// Memories demoted (mean over draws for the random prune).
    pub demoted: f64,
    /// Of them, correct ones (mean over draws for the random prune).
    pub demoted_correct: f64,
    /// Delta Corr(Q, U) (mean over draws for the random prune).
    pub delta: Option<f64>,
}

/// The trusted memories with the lowest `score`, at most `k` of them, ties kept whole: a tie
/// at the boundary is demoted entirely or not at all (a label-blind score cannot split it).
fn lowest(score: &[f64], trusted: &[usize], k: usize) -> Vec<usize> {
    let mut idx = trusted.to_vec();
    idx.sort_by(|&a, &b| score[a].total_cmp(&score[b]));
    if k == 0 || k >= idx.len() {
        idx.truncate(k);
        return idx;
    }
    let t = score[idx[k - 1]];
    let upto = idx.iter().filter(|&&i| score[i] <= t).count();
    idx.retain(|&i| score[i] < t || (upto <= k && score[i] == t));
    idx
}

/// The controls at the budget of verifier `(name, v)`.
pub fn controls(bank: &AuditBank, (name, v): (&str, &[f64]), draws: usize, seed: u64) -> Vec<ControlRow> {
    let n = bank.r.len();
    let before = pearson(&bank.r, &bank.u);
    let row = |control: String, demoted: &[usize]| {
        let mut q = bank.r.clone();
        for &i in demoted {
            q[i] = 0.0;
        }
        ControlRow {
            control,
            demoted: demoted.len() as f64,
            demoted_correct: demoted.iter().filter(|&&i| bank.u[i] >= 0.5).count() as f64,
            delta: delta(&q, &bank.u, before),
        }
    };
    let trusted: Vec<usize> = (0..n).filter(|&i| bank.r[i] >= 0.5).collect();
    let mut flags: Vec<usize> = trusted.iter().copied().filter(|&i| v[i] < 0.5).collect();
    flags.sort_by(|&a, &b| v[a].total_cmp(&v[b]).then(a.cmp(&b)));
    let k = flags.len();
    let mut out = vec![row(format!("{name} (selected verifier), K = {k}"), &flags)];
    out.push(row("confidence threshold on r".into(), &lowest(&bank.r, &trusted, k)));
    if let Some(sc) = &bank.sc {
        out.push(row("self-consistency prune".into(), &lowest(sc, &trusted, k)));
    }
    let mut rng = SplitMix64(seed);
    let (mut deltas, mut correct) = (Vec::new(), 0.0);
    let mut pool = trusted.clone();
    for _ in 0..draws {
        // A seeded partial Fisher-Yates: K distinct trusted memories.
        for j in 0..k {
            let pick = j + (rng.next_u64() % (pool.len() - j) as u64) as usize;
            pool.swap(j, pick);
        }
        let r = row(String::new(), &pool[..k]);
        correct += r.demoted_correct;
        deltas.extend(r.delta);
    }
    if draws > 0 {
        out.push(ControlRow {
            control: format!("random prune (mean of {draws} seeded draws)"),
            demoted: k as f64,
            demoted_correct: correct / draws as f64,
            delta: (!deltas.is_empty()).then(|| deltas.iter().sum::<f64>() / deltas.len() as f64),
        });
    }
    for share in [0.25, 0.5, 0.75, 1.0] {
        let m = ((k as f64) * share).round() as usize;
        out.push(row(format!("{name} at {:.0} % of K", share * 100.0), &flags[..m]));
    }
    out
}
