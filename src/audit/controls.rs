//! Generic filtering controls at the selected verifier's budget K (what it demotes): a
//! confidence threshold on r (a no-op by Lemma 1 when r does not separate trusted memories), a
//! self-consistency prune (when the bank has `sc`; memories without sc are never pruned), and a
//! budget sweep at 25/50/75/100 % of K of the verifier's own flags, most confident first, beside K'
//! random trusted memories at each share. Ties are never broken by row order: a tie at a
//! threshold score is kept whole, and a tie inside the verifier's flags is sampled (seeded, the
//! mean over draws).

use serde::Serialize;

use super::AuditBank;
use super::bank::{demotes, unscored_note};
use super::eia::delta;
use crate::analysis::stats::pearson;
use crate::rng::SplitMix64;

/// One filtering control at the budget.
#[derive(Clone, Debug, Serialize)]
pub struct ControlRow {
    /// What was demoted.
    pub control: String,
    /// Memories demoted (mean over draws for a sampled control).
    pub demoted: f64,
    /// Of them, correct ones (mean over draws for a sampled control).
    pub demoted_correct: f64,
    /// Delta Corr(Q, U) (mean over draws for a sampled control).
    pub delta: Option<f64>,
    /// What was left out or substituted (unscored memories, ties sampled), empty when nothing.
    pub note: String,
}

/// The trusted memories with the lowest `score` (a NaN score: never picked), at most `k` of them,
/// ties kept whole: a tie at the boundary is demoted entirely or not at all (a label-blind score
/// cannot split it).
fn lowest(score: &[f64], trusted: &[usize], k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = trusted.iter().copied().filter(|&i| !score[i].is_nan()).collect();
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

/// Demoting `demoted` (Q = 0) on `bank`: (demoted, of them correct, Delta Corr(Q, U)).
fn measure(bank: &AuditBank, before: Option<f64>, demoted: &[usize]) -> (f64, f64, Option<f64>) {
    let mut q = bank.r.clone();
    for &i in demoted {
        q[i] = 0.0;
    }
    let correct = demoted.iter().filter(|&&i| bank.u[i] >= 0.5).count() as f64;
    (demoted.len() as f64, correct, delta(&q, &bank.u, before))
}

/// The mean over `draws` seeded draws of demoting what `pick` draws.
fn sampled(
    bank: &AuditBank,
    before: Option<f64>,
    draws: usize,
    seed: u64,
    mut pick: impl FnMut(&mut SplitMix64) -> Vec<usize>,
) -> (f64, f64, Option<f64>) {
    let mut rng = SplitMix64(seed);
    let (mut n, mut correct, mut deltas) = (0.0, 0.0, Vec::new());
    for _ in 0..draws.max(1) {
        let (d, c, x) = measure(bank, before, &pick(&mut rng));
        n += d;
        correct += c;
        deltas.extend(x);
    }
    let m = draws.max(1) as f64;
    (n / m, correct / m, (!deltas.is_empty()).then(|| deltas.iter().sum::<f64>() / deltas.len() as f64))
}

/// `m` distinct members of `pool` (a seeded partial Fisher-Yates; `pool` is reordered).
fn draw(rng: &mut SplitMix64, pool: &mut [usize], m: usize) -> Vec<usize> {
    for j in 0..m {
        let pick = j + (rng.next_u64() % (pool.len() - j) as u64) as usize;
        pool.swap(j, pick);
    }
    pool[..m].to_vec()
}

/// The `m` most confident of `flags` (sorted by V, lowest first): the flags below the boundary
/// score, then the boundary's tie sampled.
fn most_confident(rng: &mut SplitMix64, v: &[f64], flags: &[usize], m: usize) -> Vec<usize> {
    if m == 0 {
        return Vec::new();
    }
    let t = v[flags[m - 1]];
    let mut out: Vec<usize> = flags.iter().copied().filter(|&i| v[i] < t).collect();
    let mut tie: Vec<usize> = flags.iter().copied().filter(|&i| v[i] == t).collect();
    let rest = m - out.len();
    out.extend(draw(rng, &mut tie, rest));
    out
}

/// The controls at the budget of verifier `(name, v)` (NaN: unscored, never flagged).
pub fn controls(bank: &AuditBank, (name, v): (&str, &[f64]), draws: usize, seed: u64) -> Vec<ControlRow> {
    let n = bank.r.len();
    let before = pearson(&bank.r, &bank.u);
    let row = |control: String, (demoted, demoted_correct, delta): (f64, f64, Option<f64>), note: String| ControlRow {
        control,
        demoted,
        demoted_correct,
        delta,
        note,
    };
    let trusted: Vec<usize> = (0..n).filter(|&i| bank.r[i] >= 0.5).collect();
    let mut flags: Vec<usize> = trusted.iter().copied().filter(|&i| demotes(bank.r[i], v[i])).collect();
    flags.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let k = flags.len();
    let mut out =
        vec![row(format!("{name} (selected verifier), K = {k}"), measure(bank, before, &flags), unscored_note(v))];
    let conf = lowest(&bank.r, &trusted, k);
    let tie_note = |got: usize| {
        if got == k { String::new() } else { format!("{got} of K: a tie at the cut-off is kept whole") }
    };
    out.push(row("confidence threshold on r".into(), measure(bank, before, &conf), tie_note(conf.len())));
    if let Some(sc) = &bank.sc {
        let pruned = lowest(sc, &trusted, k);
        let missing = trusted.iter().filter(|&&i| sc[i].is_nan()).count();
        let mut note = tie_note(pruned.len());
        if missing > 0 {
            let sep = if note.is_empty() { "" } else { "; " };
            note = format!("{note}{sep}{missing} trusted without sc: never pruned");
        }
        out.push(row("self-consistency prune".into(), measure(bank, before, &pruned), note));
    }
    // Share 1 draws with `seed` itself; the other shares with their own seeds.
    let salt = |share: f64| seed ^ ((1.0 - share) * 1000.0) as u64;
    for share in [0.25, 0.5, 0.75, 1.0] {
        let m = ((k as f64) * share).round() as usize;
        let pct = share * 100.0;
        let tied = m > 0 && m < k && v[flags[m - 1]] == v[flags[m]];
        let own = if tied {
            sampled(bank, before, draws, salt(share) ^ 0x7135, |rng| most_confident(rng, v, &flags, m))
        } else {
            measure(bank, before, &flags[..m])
        };
        let note = if tied {
            format!("a tie in V at the cut-off: mean of {} seeded draws", draws.max(1))
        } else {
            String::new()
        };
        out.push(row(format!("{name} at {pct:.0} % of K"), own, note));
        if draws > 0 {
            let mut pool = trusted.clone();
            let random = sampled(bank, before, draws, salt(share), |rng| draw(rng, &mut pool, m));
            out.push(row(
                format!("random prune at {pct:.0} % of K (mean of {draws} seeded draws)"),
                random,
                String::new(),
            ));
        }
    }
    out
}
