//! The de-inflation payoff: the demotion-only operator (a trusted memory, r >= 0.5, that the
//! verifier flags, V < 0.5, gets Q = 0; nothing else changes, and a memory the verifier left
//! unscored is not flagged) applied per verifier over the whole bank, so every row shares one
//! "before"; the change
//! in Corr(Q, U), and P(Delta > 0) from a seeded bootstrap over memories (over questions when the
//! bank's questions repeat); with an oracle row (V = U) and a label-blind calibration row
//! (Q = z-score of r, +0.00 by construction).
//!
//! The bootstrap is a multinomial resample of the memories, drawn over the distinct
//! (r, U, which-rows-demote) cells with their counts (sorted, so row order does not matter): a
//! resample's Pearson correlations follow from six weighted sums per row, so a bank whose grades
//! and flags take few values resamples in microseconds and a million distinct memories in
//! milliseconds. Each resample has its own seed, so the result does not depend on the number of
//! threads. When a question holds several memories (one per seed), a resample draws as many
//! questions as there are, with replacement, each with all its memories: multinomial counts over
//! the distinct question contents (or draws by rank), each memory weighted by its question's count
//! (`Clustered`); a bank where no question repeats resamples memories exactly as before.

use serde::Serialize;

use super::AuditBank;
use super::bank::{demote, demotes, unscored};
use super::eia::{Candidate, delta, kind};
use crate::analysis::stats::{corr_from_sums, pearson, quantile, z_scores};
use crate::analysis::variates::multinomial;
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
    /// Memories the verifier left unscored: not flagged, they kept their label.
    pub unscored: usize,
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

/// A distinct (r, u, mask) with its count; `mask` bit j: row j demotes it.
type Cell = (f64, f64, Vec<u64>, u64);

/// The distinct (r, U, pattern) cells with their counts, sorted (so a resample does not depend on
/// the order rows arrive in).
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

/// The memories sorted by (demotion pattern, r, U), for resampling by rank and sweeping.
struct Swept {
    r: Vec<f64>,
    u: Vec<f64>,
    /// Index into `patterns` per memory.
    pattern: Vec<u32>,
    /// The distinct demotion patterns (bit j: row j demotes).
    patterns: Vec<Vec<u64>>,
}

impl Swept {
    fn new(bank: &AuditBank, masks: &[Vec<u64>]) -> Swept {
        let mut idx: Vec<usize> = (0..bank.r.len()).collect();
        idx.sort_unstable_by(|&a, &b| {
            (&masks[a], bank.r[a].to_bits(), bank.u[a].to_bits()).cmp(&(
                &masks[b],
                bank.r[b].to_bits(),
                bank.u[b].to_bits(),
            ))
        });
        let mut patterns: Vec<Vec<u64>> = Vec::new();
        let mut pattern = Vec::with_capacity(idx.len());
        for &i in &idx {
            if patterns.last() != Some(&masks[i]) {
                patterns.push(masks[i].clone());
            }
            pattern.push((patterns.len() - 1) as u32);
        }
        Swept {
            r: idx.iter().map(|&i| bank.r[i]).collect(),
            u: idx.iter().map(|&i| bank.u[i]).collect(),
            pattern,
            patterns,
        }
    }

    /// One resample into the sums `s` and `d` ([`take`]): the memories drawn by rank and counted
    /// in `w`, then one sequential sweep that adds each memory's terms to the bucket of its
    /// demotion pattern.
    fn resample(&self, rng: &mut SplitMix64, w: &mut [u64], s: &mut [f64; 6], d: &mut [[f64; 3]]) {
        let n = self.r.len();
        w.iter_mut().for_each(|c| *c = 0);
        for _ in 0..n {
            w[((u128::from(rng.next_u64()) * n as u128) >> 64) as usize] += 1;
        }
        let mut buckets = vec![[0.0f64; 5]; self.patterns.len()];
        for k in 0..n {
            let (c, r, u) = (w[k] as f64, self.r[k], self.u[k]);
            let bk = &mut buckets[self.pattern[k] as usize];
            bk[0] += c;
            bk[1] += c * r;
            bk[2] += c * r * r;
            bk[3] += c * u;
            bk[4] += c * r * u;
        }
        for (bk, mask) in buckets.iter().zip(&self.patterns) {
            take(s, d, bk, mask);
        }
    }
}

/// The clusters (questions) of a bank, for a bootstrap that resamples whole clusters: a
/// cluster's content is the multiset of its memories' (demotion pattern, r, U), and clusters of
/// equal content form one cell; cells and clusters are sorted by content, so a resample depends
/// neither on row order nor on the questions' ids.
struct Clustered {
    /// The distinct demotion patterns, sorted (bit j: row j demotes).
    patterns: Vec<Vec<u64>>,
    /// Per cell, for each demotion pattern its memories have: (index into `patterns`, the sums
    /// [N, Sr, Srr, Su, Sru] of one such cluster's memories with that pattern).
    sums: Vec<Vec<(usize, [f64; 5])>>,
    /// Per cell, its share of the clusters (the multinomial's probabilities).
    probs: Vec<f64>,
    /// The cell of each cluster, clusters sorted by content (for drawing clusters by rank).
    of_rank: Vec<u32>,
}

impl Clustered {
    /// The clusters `groups` (each its memories) of `bank`, whose memories demote as `masks` say.
    fn new(bank: &AuditBank, groups: &[Vec<usize>], masks: &[Vec<u64>]) -> Clustered {
        let mut patterns: Vec<Vec<u64>> = masks.to_vec();
        patterns.sort_unstable();
        patterns.dedup();
        // Each cluster's content: its memories' (pattern, r, U), sorted; then the clusters by it.
        let mut contents: Vec<Vec<(usize, u64, u64)>> = groups
            .iter()
            .map(|g| {
                let mut c: Vec<(usize, u64, u64)> = g
                    .iter()
                    .map(|&i| {
                        let p = patterns.binary_search(&masks[i]).expect("every mask is a pattern");
                        (p, bank.r[i].to_bits(), bank.u[i].to_bits())
                    })
                    .collect();
                c.sort_unstable();
                c
            })
            .collect();
        contents.sort_unstable();
        let mut sums: Vec<Vec<(usize, [f64; 5])>> = Vec::with_capacity(contents.len());
        let (mut probs, mut of_rank): (Vec<f64>, Vec<u32>) = (Vec::new(), Vec::with_capacity(contents.len()));
        for same in contents.chunk_by(|a, b| a == b) {
            let mut cell: Vec<(usize, [f64; 5])> = Vec::new();
            for &(p, r, u) in &same[0] {
                let (r, u) = (f64::from_bits(r), f64::from_bits(u));
                if cell.last().is_none_or(|t| t.0 != p) {
                    cell.push((p, [0.0; 5]));
                }
                let t = &mut cell.last_mut().expect("a pattern was pushed").1;
                t[0] += 1.0;
                t[1] += r;
                t[2] += r * r;
                t[3] += u;
                t[4] += r * u;
            }
            of_rank.extend(std::iter::repeat_n(sums.len() as u32, same.len()));
            sums.push(cell);
            probs.push(same.len() as f64 / contents.len() as f64);
        }
        Clustered { patterns, sums, probs, of_rank }
    }

    /// One resample into the sums `s` and `d` ([`take`]): counts over the cells of clusters in
    /// `w`, by rank when most clusters are distinct (as [`Swept`] draws memories), else
    /// multinomial; each memory weighs its cluster's count.
    fn resample(&self, rng: &mut SplitMix64, w: &mut [u64], s: &mut [f64; 6], d: &mut [[f64; 3]]) {
        let m = self.of_rank.len();
        if self.probs.len() * 8 > m {
            w.iter_mut().for_each(|c| *c = 0);
            for _ in 0..m {
                w[self.of_rank[((u128::from(rng.next_u64()) * m as u128) >> 64) as usize] as usize] += 1;
            }
        } else {
            multinomial(rng, m as u64, &self.probs, w);
        }
        let mut buckets = vec![[0.0f64; 5]; self.patterns.len()];
        for (cell, &k) in self.sums.iter().zip(w.iter()) {
            if k > 0 {
                let k = k as f64;
                for (p, t) in cell {
                    buckets[*p].iter_mut().zip(t).for_each(|(b, t)| *b += k * t);
                }
            }
        }
        for (bk, mask) in buckets.iter().zip(&self.patterns) {
            take(s, d, bk, mask);
        }
    }
}

/// Bootstrap replicates of Delta for every demotion row and for the z-score of r (last), each
/// sorted ascending; over memories, or over questions when the bank's questions repeat.
fn bootstrap(bank: &AuditBank, flags: &[Vec<bool>], resamples: usize, seed: u64) -> Vec<Vec<f64>> {
    let (n, rows) = (bank.r.len(), flags.len());
    let masks = demotion_masks(flags, n);
    let cells = cells(&bank.r, &bank.u, &masks);
    // Questions that repeat: resample them whole. Otherwise the memories, as follows.
    let clustered: Option<Clustered> = bank.clusters().map(|groups| Clustered::new(bank, &groups, &masks));
    // Mostly distinct memories (continuous scores): a binomial per cell would cost far more than
    // drawing n memories by rank and counting them, then one sequential sweep that adds each
    // memory's terms to the bucket of its demotion pattern (few patterns, no branches).
    let swept: Option<Swept> = (clustered.is_none() && cells.len() * 8 > n).then(|| Swept::new(bank, &masks));
    let probs: Vec<f64> = cells.iter().map(|c| c.3 as f64 / n as f64).collect();
    let (mean, sd) = (crate::analysis::stats::mean(&bank.r), crate::analysis::stats::variance(&bank.r).sqrt());
    let items: Vec<u64> = (0..resamples as u64).collect();
    let width = match (&clustered, &swept) {
        (Some(cl), _) => cl.probs.len(),
        (None, Some(_)) => n,
        (None, None) => cells.len(),
    };
    let per: Vec<Vec<Option<f64>>> = crate::par::par_map_with(
        &items,
        crate::par::default_jobs(),
        || vec![0u64; width],
        |w, &b| {
            let mut rng = SplitMix64(seed ^ b.wrapping_mul(0xD134_2543_DE82_EF95));
            rng.next_u64();
            // Base sums (N, Sr, Srr, Su, Suu, Sru) and, per row, what its demotions take away.
            let mut s = [0.0f64; 6];
            let mut d = vec![[0.0f64; 3]; rows];
            if let Some(cl) = &clustered {
                cl.resample(&mut rng, w, &mut s, &mut d);
            } else if let Some(sw) = &swept {
                sw.resample(&mut rng, w, &mut s, &mut d);
            } else {
                multinomial(&mut rng, n as u64, &probs, w);
                for (c, &k) in cells.iter().zip(w.iter()) {
                    if k > 0 {
                        let k = k as f64;
                        take(&mut s, &mut d, &[k, k * c.0, k * c.0 * c.0, k * c.1, k * c.0 * c.1], &c.2);
                    }
                }
            }
            deltas(&s, &d, mean, sd)
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

/// Each of the `n` memories' demotion pattern: bit j set where row j of `flags` demotes it.
fn demotion_masks(flags: &[Vec<bool>], n: usize) -> Vec<Vec<u64>> {
    let words = flags.len().div_ceil(64).max(1);
    (0..n)
        .map(|i| {
            let mut m = vec![0u64; words];
            for (j, f) in flags.iter().enumerate() {
                if f[i] {
                    m[j / 64] |= 1 << (j % 64);
                }
            }
            m
        })
        .collect()
}

/// Add weighted terms `t` = [k, k r, k r^2, k u, k r u] (u is 0 or 1, so u^2 = u) to the base sums
/// `s` (N, Sr, Srr, Su, Suu, Sru), and to what each row whose bit `mask` sets takes away (`d`).
fn take(s: &mut [f64; 6], d: &mut [[f64; 3]], t: &[f64; 5], mask: &[u64]) {
    s[0] += t[0];
    s[1] += t[1];
    s[2] += t[2];
    s[3] += t[3];
    s[4] += t[3];
    s[5] += t[4];
    for (wi, &word) in mask.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            let j = wi * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            d[j][0] += t[1];
            d[j][1] += t[2];
            d[j][2] += t[4];
        }
    }
}

/// One resample's Delta of every demotion row, from its base sums `s` and what each row's
/// demotions take away (`d`), then the z-score of r's (r's mean `mean`, standard deviation `sd`).
fn deltas(s: &[f64; 6], d: &[[f64; 3]], mean: f64, sd: f64) -> Vec<Option<f64>> {
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
}

/// The payoff of demoting with each of `rows` (name, kind, V), then the oracle and label-blind
/// calibration.
pub fn payoff(bank: &AuditBank, rows: &[Candidate], resamples: usize, seed: u64) -> Vec<PayoffRow> {
    let n = bank.r.len();
    let mut named: Vec<Candidate> = rows.to_vec();
    named.push(("oracle", kind::ORACLE, &bank.u));
    let flags: Vec<Vec<bool>> =
        named.iter().map(|(_, _, v)| (0..n).map(|i| demotes(bank.r[i], v[i])).collect()).collect();
    let unscored: Vec<usize> = named.iter().map(|(_, _, v)| unscored(v)).collect();
    let mut named: Vec<(&str, &'static str, Vec<f64>)> =
        named.into_iter().map(|(name, k, v)| (name, k, demote(&bank.r, v))).collect();
    named.push(("calibration", kind::CALIBRATION, z_scores(&bank.r)));
    let reps = if resamples == 0 { vec![Vec::new(); named.len()] } else { bootstrap(bank, &flags, resamples, seed) };
    let before = pearson(&bank.r, &bank.u);
    named
        .into_iter()
        .zip(reps)
        .enumerate()
        .map(|(j, ((name, k, q2), reps))| {
            let demoted: Vec<usize> = flags.get(j).map_or(Vec::new(), |f| (0..n).filter(|&i| f[i]).collect());
            PayoffRow {
                verifier: name.into(),
                kind: k.into(),
                demoted: demoted.len(),
                unscored: unscored.get(j).copied().unwrap_or(0),
                demoted_correct: demoted.iter().filter(|&&i| bank.u[i] >= 0.5).count(),
                demoted_reuse: bank.n.as_ref().map(|reuse| demoted.iter().map(|&i| reuse[i]).sum::<f64>() + 0.0),
                before,
                after: pearson(&q2, &bank.u),
                delta: delta(&q2, &bank.u, before),
                lo: quantile(&reps, 0.025),
                hi: quantile(&reps, 0.975),
                p_gt_0: (!reps.is_empty())
                    .then(|| reps.iter().filter(|&&x| x > 1e-12).count() as f64 / reps.len() as f64),
            }
        })
        .collect()
}
