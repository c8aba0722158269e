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
//!   quarter of N, the strata are the label x how many verifiers flag (2 (k + 1) strata for k verifiers).
//!   The strata are a function of the bank and N (the rows of the labels file), so `--labels`
//!   recomputes the design `--sample` drew.
//! - **Allocation**: at least two memories per stratum (all of a smaller one), the rest in
//!   proportion to the square root of the strata's sizes (a divisor method): between
//!   proportional allocation, which leaves the rare untrusted or flagged memories — the ones
//!   leniency and the verifiers' errors are about — with a handful, and equal allocation, which
//!   wastes labels on tiny strata. Within a stratum, a seeded simple random sample.
//! - **Estimators**: each quantity is a smooth function of weighted totals of per-memory terms,
//!   each labelled memory weighted by N_h / n_h (its stratum's size over its labelled memories).
//!   Any labelled set is read this way, so labels from the sheet, or more labels added later to a
//!   stratum at random, are valid; a stratum with memories and no label is an error.
//! - **Variance**: the stratified delete-one jackknife with the finite-population correction
//!   (1 - n_h / N_h) per stratum — a census stratum adds nothing, a bank labelled in full has no
//!   sampling error — computed from stratum totals, O(labels x terms) per quantity. Intervals use
//!   Student's t with n - H degrees of freedom (H strata): proportions as Wilson intervals at the effective
//!   sample size p(1 - p) / var (Korn and Graubard's approach), correlations through Fisher's z,
//!   differences of correlations (the payoff) as they are. A sample with no spread where the
//!   bank has some (no labelled exception to a perfect correlation, none of a verifier's
//!   demotions labelled) gets the quantity's whole range: it does not know.

use crate::analysis::stats::{t95, wilson};
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
    let by_pattern = strata_by(bank, true);
    let used = by_pattern.sizes.iter().filter(|&&s| s > 0).count();
    if 4 * used <= n { by_pattern } else { strata_by(bank, false) }
}

/// Label x flag pattern (`pattern`) or label x flag count.
fn strata_by(bank: &AuditBank, pattern: bool) -> Strata {
    let k = bank.verifiers.len();
    let cells = if pattern { 1usize << k.min(16) } else { k + 1 };
    let flags = |i: usize| -> usize {
        let flagged = bank.verifiers.iter().map(|(_, v)| v[i] < 0.5);
        if pattern {
            flagged.enumerate().filter(|(_, f)| *f).map(|(j, _)| 1usize << j.min(15)).sum()
        } else {
            flagged.filter(|&f| f).count()
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
                format!("{label}, flagged by {c} of {k}")
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
    /// The sample of the memories `picked` among strata `s`; an error names a stratum with
    /// memories and no label.
    pub fn new(s: &Strata, picked: &[usize]) -> Result<Sample> {
        let stratum: Vec<usize> = picked.iter().map(|&i| s.of[i]).collect();
        let mut labelled = vec![0; s.sizes.len()];
        stratum.iter().for_each(|&h| labelled[h] += 1);
        if let Some(h) = (0..s.sizes.len()).find(|&h| s.sizes[h] > 0 && labelled[h] == 0) {
            return Err(Error::usage(format!(
                "no labelled memory in the stratum '{}' ({} memories): its share of the bank cannot be estimated; \
                 label some of them (lucid audit --sample draws from every stratum)",
                s.names[h], s.sizes[h]
            )));
        }
        Ok(Sample { stratum, sizes: s.sizes.clone(), labelled })
    }

    /// Whether every memory of the bank is labelled (no sampling error).
    pub fn census(&self) -> bool {
        self.labelled == self.sizes
    }

    /// Degrees of freedom of the intervals: labelled memories minus strata.
    pub fn df(&self) -> f64 {
        let strata = self.labelled.iter().filter(|&&n| n > 0).count();
        (self.stratum.len() as f64 - strata as f64).max(1.0)
    }

    /// Weighted totals of `terms` (per labelled memory, K terms each) with weights N_h / n_h.
    fn totals(&self, terms: &[Vec<f64>], k: usize) -> (Vec<Vec<f64>>, Vec<f64>) {
        let mut per = vec![vec![0.0; k]; self.sizes.len()];
        for (t, &h) in terms.iter().zip(&self.stratum) {
            per[h].iter_mut().zip(t).for_each(|(a, b)| *a += b);
        }
        let mut total = vec![0.0; k];
        for (h, s) in per.iter().enumerate() {
            if self.labelled[h] > 0 {
                let w = self.sizes[h] as f64 / self.labelled[h] as f64;
                total.iter_mut().zip(s).for_each(|(a, b)| *a += w * b);
            }
        }
        (per, total)
    }

    /// The estimate of `f` over weighted totals of `terms` and its jackknife variance (None
    /// where `f` is undefined at the estimate, or in a replicate).
    pub fn estimate(&self, terms: &[Vec<f64>], f: impl Fn(&[f64]) -> Option<f64>) -> Option<(f64, f64)> {
        let k = terms.first().map_or(0, Vec::len);
        let (per, total) = self.totals(terms, k);
        let theta = f(&total)?;
        let mut var = 0.0;
        let mut reps = vec![Vec::new(); self.sizes.len()];
        for (t, &h) in terms.iter().zip(&self.stratum) {
            let (nh, big) = (self.labelled[h] as f64, self.sizes[h] as f64);
            if nh < 2.0 {
                continue;
            }
            let (w, w2) = (big / nh, big / (nh - 1.0));
            let rep: Vec<f64> = (0..k).map(|j| total[j] - w * per[h][j] + w2 * (per[h][j] - t[j])).collect();
            reps[h].push(f(&rep)?);
        }
        for (h, r) in reps.iter().enumerate() {
            if r.is_empty() {
                continue;
            }
            let nh = r.len() as f64;
            let fpc = 1.0 - self.labelled[h] as f64 / self.sizes[h] as f64;
            let mean = r.iter().sum::<f64>() / nh;
            let vh = fpc * (nh - 1.0) / nh * r.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
            var += vh;
        }
        Some((theta, var))
    }
}

/// What a quantity is, which decides its interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// A share in [0, 1]: Wilson at the effective sample size.
    Proportion,
    /// A correlation: through Fisher's z.
    Correlation,
    /// A difference (of correlations): Wald.
    Difference,
}

/// An estimate with its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// The estimate (NaN: a correlation undefined in the sample, its interval the whole range).
    pub value: f64,
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
}

/// A share: `num / den` of weighted totals.
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

/// Fisher's z of a correlation, kept finite at +-1.
fn fisher(r: f64) -> f64 {
    r.clamp(-1.0 + 1e-12, 1.0 - 1e-12).atanh()
}

/// The estimate of `f` over `terms` on `scale` with its 95 % interval; `domain`: labelled
/// memories the quantity is over (the Wilson interval's size where the variance is 0).
pub fn interval(
    sample: &Sample,
    terms: &[Vec<f64>],
    f: impl Fn(&[f64]) -> Option<f64>,
    scale: Scale,
    domain: usize,
) -> Option<Interval> {
    if sample.census() {
        let value = f(&sample.totals(terms, terms.first().map_or(0, Vec::len)).1)?;
        return Some(Interval { value, lo: value, hi: value });
    }
    let t = t95(sample.df());
    match scale {
        Scale::Proportion => {
            let (p, var) = sample.estimate(terms, &f)?;
            let n_eff = if var > 0.0 { (p * (1.0 - p) / var).clamp(1.0, 1e12) } else { domain.max(1) as f64 };
            let (lo, hi) = wilson(p * n_eff, n_eff, t)?;
            Some(Interval { value: p, lo: lo.min(p), hi: hi.max(p) })
        }
        Scale::Correlation => {
            // A sample that shows no spread, or no exception to a perfect correlation (a verifier
            // that erred on none of the labelled memories), says nothing about how far from
            // perfect the bank is: the interval is the whole range, the estimate shown as it is.
            let value = f(&sample.totals(terms, terms.first().map_or(0, Vec::len)).1);
            let whole = Interval { value: value.unwrap_or(f64::NAN), lo: -1.0, hi: 1.0 };
            match (value, sample.estimate(terms, |x| f(x).map(fisher))) {
                (Some(value), Some((z, var))) if var > 0.0 && value.abs() < 1.0 - 1e-9 => {
                    let half = t * var.sqrt();
                    Some(Interval { value, lo: (z - half).tanh(), hi: (z + half).tanh() })
                }
                _ => Some(whole),
            }
        }
        Scale::Difference => {
            // No spread among the labelled memories (none of a verifier's demotions labelled, so
            // the payoff looks exactly 0) says nothing: the whole range of a difference of
            // correlations.
            let (d, var) = sample.estimate(terms, &f)?;
            if var == 0.0 {
                return Some(Interval { value: d, lo: -2.0, hi: 2.0 });
            }
            let half = t * var.sqrt();
            Some(Interval { value: d, lo: d - half, hi: d + half })
        }
    }
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
    fn a_census_has_no_sampling_error() {
        let s = Strata { of: vec![0, 0, 1, 1, 1], names: vec!["a".into(), "b".into()], sizes: vec![2, 3] };
        let sample = Sample::new(&s, &[0, 1, 2, 3, 4]).unwrap();
        let terms: Vec<Vec<f64>> = [1.0, 0.0, 1.0, 1.0, 0.0].iter().map(|&u| vec![1.0, u]).collect();
        let (p, var) = sample.estimate(&terms, ratio).unwrap();
        assert!((p - 0.6).abs() < 1e-12 && var == 0.0);
    }

    #[test]
    fn weights_undo_the_oversampling_of_a_small_stratum() {
        // 90 memories with U = 1 and 10 with U = 0; two of each labelled.
        let s = Strata {
            of: [vec![0; 90], vec![1; 10]].concat(),
            names: vec!["a".into(), "b".into()],
            sizes: vec![90, 10],
        };
        let sample = Sample::new(&s, &[0, 1, 90, 91]).unwrap();
        let terms = vec![vec![1.0, 1.0], vec![1.0, 1.0], vec![1.0, 0.0], vec![1.0, 0.0]];
        assert!((sample.estimate(&terms, ratio).unwrap().0 - 0.9).abs() < 1e-12);
        assert!(Sample::new(&s, &[0, 1]).is_err(), "a stratum without labels");
    }
}
