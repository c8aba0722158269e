//! The hand-label audit's sampling design and its estimators (`lucid audit --sample N` and
//! `--labels FILE`). Most banks have no gold; a person labels a few memories instead, and every
//! quantity of the audit is estimated from them with an interval that accounts for how they were
//! drawn.
//!
//! - **Strata**: every memory of the bank falls in one stratum by what is known without truth —
//!   its label (trusted, r >= 0.5, or not) and which of the bank's verifiers flag it (V < 0.5;
//!   an unscored memory is not flagged), so each verifier's demotions (trusted and flagged), which
//!   its payoff is about, are sampled however rare they are. With many verifiers the patterns
//!   outnumber the labels: when two labels in each non-empty pattern would take more than a
//!   quarter of N (or beyond [`MAX_PATTERN_VERIFIERS`]), the strata are the label x how many
//!   verifiers flag, in as many bands of counts as fit that quarter.
//!   The strata are a function of the bank and N (the rows of the labels file), so `--labels`
//!   recomputes the design `--sample` drew.
//! - **Allocation**: at least two memories per stratum (all of a smaller one), the rest in
//!   proportion to the square root of the strata's sizes (a divisor method): between
//!   proportional allocation, which leaves the rare untrusted or flagged memories — the ones
//!   leniency and the verifiers' errors are about — with a handful, and equal allocation, which
//!   wastes labels on tiny strata. Within a stratum, a seeded simple random sample.
//! - **Estimators** ([`super::estimator`]): every quantity is a function of weighted totals of
//!   per-memory terms, each labelled memory weighted by N_h / n_h, with a stratified variance
//!   floored so that small and unanimous strata keep their uncertainty. Any labelled set is read
//!   this way, so labels from the sheet, blanks, or more labels added later to a stratum at random
//!   are valid; a stratum with fewer than two labels is named in the output and widens.

use crate::error::{Error, Result};
use crate::rng::SplitMix64;

use super::bank::AuditBank;

/// Which stratum each memory of a bank is in.
#[derive(Clone, Debug)]
pub struct Strata {
    /// The stratum of each memory.
    pub of: Vec<usize>,
    /// The strata's names (`trusted, 0 flags`, ...), by index.
    pub names: Vec<String>,
    /// Memories per stratum (N_h).
    pub sizes: Vec<usize>,
}

/// The strata of `bank` for a sample of `n`: label x which verifiers flag (their pattern) when
/// two labels in each of those strata take at most a quarter of `n`, else label x how many flag.
pub fn strata(bank: &AuditBank, n: usize) -> Strata {
    let used = |s: &Strata| s.sizes.iter().filter(|&&s| s > 0).count();
    if bank.verifiers.len() <= MAX_PATTERN_VERIFIERS {
        let by_pattern = strata_by(bank, Some(0));
        if 4 * used(&by_pattern) <= n {
            return by_pattern;
        }
    }
    // Flag counts in as many bands as two labels a stratum allow in a quarter of n.
    let k = bank.verifiers.len();
    (1..=k + 1)
        .rev()
        .map(|bands| strata_by(bank, Some(bands)))
        .find(|s| 4 * used(s) <= n)
        .unwrap_or_else(|| strata_by(bank, Some(1)))
}

/// Beyond this many verifiers the strata are label x flag count (2^12 patterns per label already
/// outnumber any sample a person labels).
pub const MAX_PATTERN_VERIFIERS: usize = 12;

/// Label x flag pattern (`bands` Some(0)) or label x flag count in `bands` bands of equal width
/// (k + 1 bands: every count its own).
fn strata_by(bank: &AuditBank, bands: Option<usize>) -> Strata {
    let k = bank.verifiers.len();
    let bands = bands.unwrap_or(0);
    let pattern = bands == 0;
    let band = |c: usize| c * bands / (k + 1);
    let cells = if pattern { 1usize << k } else { bands };
    let flags = |i: usize| -> usize {
        let flagged = bank.verifiers.iter().map(|(_, v)| v[i] < 0.5);
        if pattern {
            flagged.enumerate().filter(|(_, f)| *f).map(|(j, _)| 1usize << j).sum()
        } else {
            band(flagged.filter(|&f| f).count())
        }
    };
    let of: Vec<usize> = (0..bank.r.len()).map(|i| usize::from(bank.r[i] >= 0.5) * cells + flags(i)).collect();
    let names = (0..2 * cells)
        .map(|h| {
            let label = if h >= cells { "trusted" } else { "untrusted" };
            let c = h % cells;
            if pattern {
                let on: Vec<&str> = bank
                    .verifiers
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| c >> j & 1 == 1)
                    .map(|(_, (n, _))| n.as_str())
                    .collect();
                if on.is_empty() {
                    format!("{label}, flagged by none")
                } else {
                    format!("{label}, flagged by {}", on.join("+"))
                }
            } else {
                let counts: Vec<usize> = (0..=k).filter(|&x| band(x) == c).collect();
                match (counts.first(), counts.last()) {
                    (Some(a), Some(b)) if a == b => format!("{label}, flagged by {a} of {k}"),
                    (Some(a), Some(b)) => format!("{label}, flagged by {a}-{b} of {k}"),
                    _ => format!("{label}, flagged by none of {k} (empty band)"),
                }
            }
        })
        .collect();
    let mut sizes = vec![0; 2 * cells];
    of.iter().for_each(|&h| sizes[h] += 1);
    Strata { of, names, sizes }
}

/// How many memories to draw from strata of `sizes` for `n` in all: at least two per stratum
/// (all of a smaller one), the rest by the square root of the sizes (see the module doc).
pub fn allocate(sizes: &[usize], n: usize) -> Result<Vec<usize>> {
    let total: usize = sizes.iter().sum();
    if n >= total {
        return Ok(sizes.to_vec());
    }
    let mut take: Vec<usize> = sizes.iter().map(|&s| s.min(2)).collect();
    let floor: usize = take.iter().sum();
    if n < floor {
        let strata = sizes.iter().filter(|&&s| s > 0).count();
        return Err(Error::usage(format!(
            "--sample {n} is too few: the bank has {strata} strata (label x verifier flags) and each needs two \
             labelled memories; sample at least {floor}"
        )));
    }
    for _ in floor..n {
        let next = (0..sizes.len())
            .filter(|&h| take[h] < sizes[h])
            .max_by(|&a, &b| {
                let p = |h: usize| (sizes[h] as f64).sqrt() / (take[h] as f64 + 1.0);
                p(a).total_cmp(&p(b)).then(b.cmp(&a))
            })
            .expect("n < total leaves room");
        take[next] += 1;
    }
    Ok(take)
}

/// A seeded stratified sample of `n` memories of `s`, in a shuffled order (the sheet does not
/// group memories by stratum, so a labeller is not primed by their neighbours).
pub fn draw(s: &Strata, n: usize, seed: u64) -> Result<Vec<usize>> {
    let take = allocate(&s.sizes, n)?;
    let mut rng = SplitMix64(seed ^ 0x4C55_4349_445F_4841);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); s.sizes.len()];
    s.of.iter().enumerate().for_each(|(i, &h)| members[h].push(i));
    let mut out = Vec::with_capacity(n);
    for (h, m) in members.iter_mut().enumerate() {
        shuffle(m, &mut rng);
        out.extend_from_slice(&m[..take[h]]);
    }
    shuffle(&mut out, &mut rng);
    Ok(out)
}

/// One spare per picked memory: a seeded draw, without replacement, among the memories of its
/// stratum that are not picked (none where the stratum has no memory left). Pairs (spare, the
/// picked memory it replaces), in the order of `picked`.
pub fn spares(s: &Strata, picked: &[usize], seed: u64) -> Vec<(usize, usize)> {
    let mut rng = SplitMix64(seed ^ 0x5350_4152_4553_2121);
    let taken: std::collections::HashSet<usize> = picked.iter().copied().collect();
    let mut left: Vec<Vec<usize>> = vec![Vec::new(); s.sizes.len()];
    s.of.iter().enumerate().filter(|(i, _)| !taken.contains(i)).for_each(|(i, &h)| left[h].push(i));
    left.iter_mut().for_each(|m| shuffle(m, &mut rng));
    picked.iter().filter_map(|&i| left[s.of[i]].pop().map(|spare| (spare, i))).collect()
}

/// `more[h]` more memories of each stratum h of `s`, a seeded draw among those not `picked`
/// (all that are left where fewer are), in a shuffled order.
pub fn draw_more(s: &Strata, picked: &[usize], more: &[usize], seed: u64) -> Vec<usize> {
    let mut rng = SplitMix64(seed ^ 0x4D4F_5245_4C41_4245);
    let taken: std::collections::HashSet<usize> = picked.iter().copied().collect();
    let mut left: Vec<Vec<usize>> = vec![Vec::new(); s.sizes.len()];
    s.of.iter().enumerate().filter(|(i, _)| !taken.contains(i)).for_each(|(i, &h)| left[h].push(i));
    let mut out = Vec::new();
    for (h, m) in left.iter_mut().enumerate() {
        shuffle(m, &mut rng);
        out.extend_from_slice(&m[..more.get(h).copied().unwrap_or(0).min(m.len())]);
    }
    shuffle(&mut out, &mut rng);
    out
}

/// Fisher-Yates with `rng`.
fn shuffle(x: &mut [usize], rng: &mut SplitMix64) {
    for i in (1..x.len()).rev() {
        let j = ((u128::from(rng.next_u64()) * (i as u128 + 1)) >> 64) as usize;
        x.swap(i, j);
    }
}

/// The labelled memories as a stratified sample: their strata, and the strata's sizes.
#[derive(Clone, Debug)]
pub struct Sample {
    /// The stratum of each labelled memory.
    pub stratum: Vec<usize>,
    /// N_h: memories per stratum in the bank.
    pub sizes: Vec<usize>,
    /// n_h: labelled memories per stratum.
    pub labelled: Vec<usize>,
}

impl Sample {
    /// The sample of the memories `picked` among strata `s`.
    pub fn new(s: &Strata, picked: &[usize]) -> Sample {
        let stratum: Vec<usize> = picked.iter().map(|&i| s.of[i]).collect();
        let mut labelled = vec![0; s.sizes.len()];
        stratum.iter().for_each(|&h| labelled[h] += 1);
        Sample { stratum, sizes: s.sizes.clone(), labelled }
    }

    /// Whether every memory of the bank is labelled (no sampling error).
    pub fn census(&self) -> bool {
        self.labelled == self.sizes
    }

    /// Strata with memories left unlabelled and fewer than two labels: their share rests on the
    /// prior more than on labels (the output names them).
    pub fn thin(&self) -> Vec<usize> {
        (0..self.sizes.len()).filter(|&h| self.labelled[h] < self.sizes[h] && self.labelled[h] < 2).collect()
    }
}

/// A share: `num / den` of totals.
pub fn ratio(t: &[f64]) -> Option<f64> {
    (t[0] > 0.0).then(|| t[1] / t[0])
}

/// The correlation of x and y from totals [n, x, x^2, y, y^2, xy].
pub fn corr(t: &[f64]) -> Option<f64> {
    crate::analysis::stats::corr_from_sums(t[0], t[1], t[2], t[3], t[4], t[5])
}

/// The terms of [`corr`] for one memory (zero outside the domain: `inside` false).
pub fn corr_terms(x: f64, y: f64, inside: bool) -> Vec<f64> {
    if inside { vec![1.0, x, x * x, y, y * y, x * y] } else { vec![0.0; 6] }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocation_gives_every_stratum_two_and_the_rest_by_square_root() {
        let a = allocate(&[900, 100, 1, 0], 40).unwrap();
        assert_eq!(a.iter().sum::<usize>(), 40);
        assert_eq!((a[2], a[3]), (1, 0));
        // sqrt(900) : sqrt(100) = 3 : 1 beyond the floor of two.
        assert!(a[0] > 2 * a[1] && a[1] >= 2, "{a:?}");
        assert!(allocate(&[10, 10, 10], 5).is_err());
        assert_eq!(allocate(&[3, 4], 100).unwrap(), vec![3, 4]);
    }

    #[test]
    fn more_verifiers_than_patterns_fit_stratify_by_count() {
        let n = 40;
        let bank = AuditBank {
            r: (0..n).map(|i| f64::from(u8::from(i % 3 != 0))).collect(),
            verifiers: (0..20)
                .map(|j| (format!("v{j}"), (0..n).map(|i| f64::from(u8::from((i + j) % 4 != 0))).collect()))
                .collect(),
            ..AuditBank::default()
        };
        let s = strata(&bank, 1000);
        assert_eq!(s.sizes.len(), 2 * 21);
        let few = strata(&bank, 30);
        assert!(4 * few.sizes.iter().filter(|&&x| x > 0).count() <= 30, "{:?}", few.names);
        assert_eq!(s.sizes.iter().sum::<usize>(), n);
        assert!(draw(&s, 30, 0).is_ok());
    }

    #[test]
    fn spares_come_from_the_same_stratum_and_are_not_in_the_sample() {
        let s = Strata { of: vec![0, 0, 0, 1, 1], names: vec!["a".into(), "b".into()], sizes: vec![3, 2] };
        let sp = spares(&s, &[0, 3, 4], 1);
        // Stratum b has nothing left: one spare, for memory 0, from stratum a.
        assert_eq!(sp.len(), 1);
        assert!(sp[0].1 == 0 && [1, 2].contains(&sp[0].0), "{sp:?}");
        assert_eq!(sp, spares(&s, &[0, 3, 4], 1), "seeded");
    }

    #[test]
    fn a_stratum_without_enough_labels_is_named() {
        let s = Strata { of: vec![0, 0, 0, 1, 1, 1], names: vec!["a".into(), "b".into()], sizes: vec![3, 3] };
        let sample = Sample::new(&s, &[0, 1, 3]);
        assert_eq!(sample.thin(), vec![1]);
        assert!(Sample::new(&s, &[0, 1, 2, 3, 4, 5]).thin().is_empty());
    }
}
