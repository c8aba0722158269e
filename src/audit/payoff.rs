//! The de-inflation payoff: the demotion-only operator (a trusted memory, r >= 0.5, that the
//! verifier flags, V < 0.5, gets Q = 0; nothing else changes) applied per verifier, the change
//! in Corr(Q, U), and P(Delta > 0) from a seeded bootstrap over memories; with an oracle row
//! (V = U) and a label-blind calibration row (Q = z-score of r, +0.00 by construction).
//!
//! The bootstrap is a multinomial resample of the memories, drawn over the distinct
//! (r, U, which-rows-demote) cells with their counts (sorted, so row order does not matter): a
//! resample's Pearson correlations follow from six weighted sums per row, so a bank whose grades
//! and flags take few values resamples in microseconds and a million distinct memories in
//! milliseconds. Each resample has its own seed, so the result does not depend on the number of
//! threads.

use serde::Serialize;

use super::{Bank, demote, kind};
use crate::analysis::stats::{multinomial, pearson, quantile, z_scores};
use crate::rng::SplitMix64;

/// One row of the payoff table.
#[derive(Clone, Debug, Serialize)]
pub struct PayoffRow {
    /// The verifier (`oracle`: V = U; `calibration`: a label-blind z-score of r).
    pub verifier: String,
    /// verifier, ensemble, gold-fit (reads U), oracle (reads U), label-blind calibration.
    pub kind: String,
    /// Memories demoted (trusted and flagged).
    pub demoted: usize,
    /// Of them, correct ones (U = 1).
    pub demoted_correct: usize,
    /// Retrievals of the demoted memories (when the bank has a reuse count `n`).
    pub demoted_reuse: Option<f64>,
    /// Corr(Q, U) before.
    pub before: Option<f64>,
    /// Corr(Q', U) after.
    pub after: Option<f64>,
    /// after - before.
    pub delta: Option<f64>,
    /// 95 % bootstrap interval of delta.
    pub lo: Option<f64>,
    /// 95 % bootstrap interval of delta.
    pub hi: Option<f64>,
    /// Share of resamples with delta > 0.
    pub p_gt_0: Option<f64>,
}

/// Pearson correlation from weighted sums: n, Sx, Sxx, Sy, Syy, Sxy.
fn corr_from_sums(n: f64, sx: f64, sxx: f64, sy: f64, syy: f64, sxy: f64) -> Option<f64> {
    let (cxx, cyy, cxy) = (sxx - sx * sx / n, syy - sy * sy / n, sxy - sx * sy / n);
    (n > 1.0 && cxx > 1e-12 * n && cyy > 1e-12 * n).then(|| (cxy / (cxx * cyy).sqrt()).clamp(-1.0, 1.0))
}

/// A distinct (r, u, mask) with its count; `mask` bit j: row j demotes it.
type Cell = (f64, f64, Vec<u64>, u64);

fn cells(r: &[f64], u: &[f64], masks: &[Vec<u64>]) -> Vec<Cell> {
    let mut idx: Vec<usize> = (0..r.len()).collect();
    let key = |i: usize| (r[i].to_bits(), u[i].to_bits(), &masks[i]);
    idx.sort_unstable_by(|&a, &b| key(a).cmp(&key(b)));
    let mut out: Vec<Cell> = Vec::new();
    for i in idx {
        match out.last_mut() {
            Some(c) if c.0.to_bits() == r[i].to_bits() && c.1.to_bits() == u[i].to_bits() && c.2 == masks[i] => {
                c.3 += 1
            }
            _ => out.push((r[i], u[i], masks[i].clone(), 1)),
        }
    }
    out
}

/// Bootstrap replicates of Delta for every demotion row and for the z-score of r (last), each
/// sorted ascending.
fn bootstrap(bank: &Bank, flags: &[Vec<bool>], resamples: usize, seed: u64) -> Vec<Vec<f64>> {
    let (n, rows) = (bank.r.len(), flags.len());
    let words = rows.div_ceil(64).max(1);
    let masks: Vec<Vec<u64>> = (0..n)
        .map(|i| {
            let mut m = vec![0u64; words];
            for (j, f) in flags.iter().enumerate() {
                if f[i] {
                    m[j / 64] |= 1 << (j % 64);
                }
            }
            m
        })
        .collect();
    let cells = cells(&bank.r, &bank.u, &masks);
    let probs: Vec<f64> = cells.iter().map(|c| c.3 as f64 / n as f64).collect();
    let (mean, sd) = (crate::analysis::stats::mean(&bank.r), crate::analysis::stats::variance(&bank.r).sqrt());
    let items: Vec<u64> = (0..resamples as u64).collect();
    let per: Vec<Vec<Option<f64>>> = crate::par::par_map_with(
        &items,
        crate::par::default_jobs(),
        || vec![0u64; cells.len()],
        |w, &b| {
            let mut rng = SplitMix64(seed ^ b.wrapping_mul(0xD134_2543_DE82_EF95));
            rng.next_u64();
            multinomial(&mut rng, n as u64, &probs, w);
            // Base sums (N, Sr, Srr, Su, Suu, Sru) and, per row, what its demotions take away.
            let mut s = [0.0f64; 6];
            let mut d = vec![[0.0f64; 3]; rows];
            for (c, &k) in cells.iter().zip(w.iter()) {
                if k == 0 {
                    continue;
                }
                let (k, r, u) = (k as f64, c.0, c.1);
                let (kr, krr, kru) = (k * r, k * r * r, k * r * u);
                s[0] += k;
                s[1] += kr;
                s[2] += krr;
                s[3] += k * u;
                s[4] += k * u * u;
                s[5] += kru;
                for (wi, &word) in c.2.iter().enumerate() {
                    let mut bits = word;
                    while bits != 0 {
                        let j = wi * 64 + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        d[j][0] += kr;
                        d[j][1] += krr;
                        d[j][2] += kru;
                    }
                }
            }
            let before = corr_from_sums(s[0], s[1], s[2], s[3], s[4], s[5]);
            let mut out: Vec<Option<f64>> = d
                .iter()
                .map(|d| Some(corr_from_sums(s[0], s[1] - d[0], s[2] - d[1], s[3], s[4], s[5] - d[2])? - before?))
                .collect();
            // z = (r - mean) / sd, an affine map: its sums follow from r's.
            let sd = sd.max(1e-12);
            let (sz, szz, szu) = (
                (s[1] - s[0] * mean) / sd,
                (s[2] - 2.0 * mean * s[1] + s[0] * mean * mean) / (sd * sd),
                (s[5] - mean * s[3]) / sd,
            );
            out.push(corr_from_sums(s[0], sz, szz, s[3], s[4], szu).zip(before).map(|(a, b)| a - b));
            out
        },
    );
    (0..=rows)
        .map(|j| {
            let mut reps: Vec<f64> = per.iter().filter_map(|p| p[j]).collect();
            reps.sort_by(f64::total_cmp);
            reps
        })
        .collect()
}

/// The payoff of demoting with each of `rows` (name, kind, V), then the oracle and label-blind
/// calibration.
pub fn payoff(bank: &Bank, rows: &[(String, &'static str, Vec<f64>)], resamples: usize, seed: u64) -> Vec<PayoffRow> {
    let n = bank.r.len();
    let mut named: Vec<(String, &'static str, &[f64])> =
        rows.iter().map(|(name, k, v)| (name.clone(), *k, &v[..])).collect();
    named.push(("oracle".into(), kind::ORACLE, &bank.u));
    let flags: Vec<Vec<bool>> =
        named.iter().map(|(_, _, v)| (0..n).map(|i| bank.r[i] >= 0.5 && v[i] < 0.5).collect()).collect();
    let mut named: Vec<(String, &'static str, Vec<f64>)> =
        named.into_iter().map(|(name, k, v)| (name, k, demote(&bank.r, v))).collect();
    named.push(("calibration".into(), kind::CALIBRATION, z_scores(&bank.r)));
    let reps = if resamples == 0 { vec![Vec::new(); named.len()] } else { bootstrap(bank, &flags, resamples, seed) };
    let before = pearson(&bank.r, &bank.u);
    named
        .into_iter()
        .zip(reps)
        .enumerate()
        .map(|(j, ((name, k, q2), reps))| {
            let demoted: Vec<usize> = flags.get(j).map_or(Vec::new(), |f| (0..n).filter(|&i| f[i]).collect());
            let after = pearson(&q2, &bank.u);
            PayoffRow {
                verifier: name,
                kind: k.into(),
                demoted: demoted.len(),
                demoted_correct: demoted.iter().filter(|&&i| bank.u[i] >= 0.5).count(),
                demoted_reuse: bank.n.as_ref().map(|reuse| demoted.iter().map(|&i| reuse[i]).sum::<f64>() + 0.0),
                before,
                after,
                delta: after.zip(before).map(|(a, b)| a - b),
                lo: quantile(&reps, 0.025),
                hi: quantile(&reps, 0.975),
                p_gt_0: (!reps.is_empty())
                    .then(|| reps.iter().filter(|&&x| x > 1e-12).count() as f64 / reps.len() as f64),
            }
        })
        .collect()
}
