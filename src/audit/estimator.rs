//! The hand-label audit's estimates and intervals. Every quantity is a smooth function f of
//! totals over the whole bank of per-memory terms that are affine in U (U is 0 or 1); the
//! labelled memories of each stratum stand for the rest of it (weights N_h / n_h: the stratified
//! estimator, unbiased for the totals whatever the strata are, and a weighted sample, so a
//! correlation stays in [-1, 1]). The variance is the stratified, linearized one with the
//! finite-population correction, `sum_h N_h^2 (1 - n_h / N_h) S_h^2 / n_h`, S_h^2 the variance
//! within the stratum of z_i = grad f . t_i(U_i) = d_i + U_i c_i, where d_i and c_i are known for
//! every memory (the terms t_i(U) = a_i + U b_i are affine in U).
//!
//! **The floor.** A stratum whose labels agree (no right memory seen among 12) has S_h^2 = 0,
//! and one whose rare members (the few memories an accurate verifier gets wrong) were not drawn
//! has an S_h^2 that misses them: the jackknife this replaces then gave intervals of width 0, or
//! far too narrow, around estimates that were off. Here S_h^2 is at least the variance of z
//! over the **whole** stratum (d and c are known for every memory, drawn or not) were U a coin of the
//! stratum's share p_h, with p_h kept [`PSEUDO`] labels of the other truth away from 0 and 1
//! (1 / (n_h + 1) after n_h agreeing labels). A stratum with a single label gets at most the
//! variance of a fair coin, and a stratum whose labels were all left blank is estimated at
//! U = 1/2 with the variance of a share that can be anything. So a thin stratum widens, never
//! narrows; only a stratum labelled in full contributes nothing, and only a bank labelled in
//! full has intervals of width 0.
//!
//! **Intervals** use Student's t with Satterthwaite's degrees of freedom (few labels in the
//! strata that carry the variance: fewer degrees): proportions as Wilson intervals at the
//! effective sample size p(1 - p) / var (Korn and Graubard), correlations through Fisher's z,
//! differences of correlations (the payoff) as they are. Measured coverage: `just
//! audit-coverage` (`tests/bench/results/hand_labels.md`); an independent numpy computation
//! agrees (`tests/golden/hand_labels.py`).
//!
//! **The labeller.** With one labeller, labels are taken as the truth (the output says so). Where
//! a second labeller labelled some of the same memories (column `u2` of the sheet), their
//! disagreement d estimates a labelling error rate e under the assumption that both err
//! independently and as often on right memories as on wrong ones (d = 2e(1 - e)); each label L is
//! then read as the unbiased (L - e) / (1 - 2e), and e's own uncertainty (d's binomial variance,
//! with half a pseudo-disagreement) is added to the variance by the delta method.

use crate::analysis::stats::{t95, wilson};

/// The weight of the pseudo-memory of the other truth that floors every stratum's variance.
pub const PSEUDO: f64 = 1.0;

/// The labelled memories of a bank: which, their (first) labels, and a second labeller's where
/// one labelled them too.
#[derive(Clone, Debug, Default)]
pub struct Labels {
    /// The labelled memories (indices into the bank).
    pub picked: Vec<usize>,
    /// Their labels, 0 or 1.
    pub u: Vec<f64>,
    /// A second labeller's label of the same memory (None: not labelled twice).
    pub second: Vec<Option<f64>>,
    /// Rows of the sheet (not spares) left without a label.
    pub blanks: usize,
}

impl Labels {
    /// One labeller's labels.
    pub fn single(picked: Vec<usize>, u: Vec<f64>) -> Labels {
        let second = vec![None; picked.len()];
        Labels { picked, u, second, blanks: 0 }
    }

    /// Memories labelled twice, and how many of them the two labels disagree on.
    pub fn twice(&self) -> (usize, usize) {
        let pairs: Vec<bool> =
            self.u.iter().zip(&self.second).filter_map(|(a, b)| b.map(|b| (a - b).abs() > 0.5)).collect();
        (pairs.len(), pairs.iter().filter(|&&d| d).count())
    }

    /// The labelling error rate the disagreements imply, and its variance (0, 0 without pairs).
    pub fn error_rate(&self) -> (f64, f64) {
        let (pairs, disagree) = self.twice();
        if pairs == 0 {
            return (0.0, 0.0);
        }
        let d = (disagree as f64 / pairs as f64).min(0.49);
        let smooth = (disagree as f64 + 0.5) / (pairs as f64 + 1.0);
        let var_d = smooth * (1.0 - smooth) / pairs as f64;
        let root = (1.0 - 2.0 * d).sqrt();
        ((1.0 - root) / 2.0, var_d / (4.0 * root * root))
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

impl Scale {
    /// The quantity's whole range.
    fn range(self) -> (f64, f64) {
        match self {
            Scale::Proportion => (0.0, 1.0),
            Scale::Correlation => (-1.0, 1.0),
            Scale::Difference => (-2.0, 2.0),
        }
    }
}

/// An estimate with its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// The estimate (None: undefined in this sample — a correlation without spread — and the
    /// interval is the quantity's whole range).
    pub value: Option<f64>,
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// The standard error (linearized, floored).
    pub se: f64,
    /// Degrees of freedom of the interval's t.
    pub df: f64,
}

/// A bank's labelled sample: the strata of its memories and the labels.
#[derive(Clone, Debug)]
pub struct Design {
    /// The stratum of every memory of the bank.
    of: Vec<usize>,
    /// N_h.
    sizes: Vec<usize>,
    /// The labelled memories of each stratum, with their labels read through the labelling error.
    members: Vec<Vec<(usize, f64)>>,
    /// The labelling error rate and its variance.
    error: (f64, f64),
    /// Each memory's label as given (None: unlabelled).
    raw: Vec<Option<f64>>,
}

impl Design {
    /// The design of a bank whose memories are in strata `of` (`strata` of them), labelled by `labels`.
    pub fn new(of: &[usize], strata: usize, labels: &Labels) -> Design {
        let mut sizes = vec![0; strata];
        of.iter().for_each(|&h| sizes[h] += 1);
        let mut raw = vec![None; of.len()];
        for (&i, &u) in labels.picked.iter().zip(&labels.u) {
            raw[i] = Some(u);
        }
        let error = labels.error_rate();
        let mut d = Design { of: of.to_vec(), sizes, members: Vec::new(), error, raw };
        d.members = d.read(error.0);
        d
    }

    /// Each stratum's labelled memories with every label L read as (L - e) / (1 - 2e).
    fn read(&self, e: f64) -> Vec<Vec<(usize, f64)>> {
        let mut members = vec![Vec::new(); self.sizes.len()];
        for (i, l) in self.raw.iter().enumerate() {
            if let Some(l) = l {
                members[self.of[i]].push((i, (l - e) / (1.0 - 2.0 * e)));
            }
        }
        members
    }

    /// The labels moved PSEUDO labels toward the other truth in every stratum.
    fn nudged(&self) -> Vec<Vec<(usize, f64)>> {
        self.members
            .iter()
            .map(|m| {
                let step = PSEUDO / (m.len() as f64 + PSEUDO);
                m.iter().map(|&(i, u)| (i, u + (1.0 - 2.0 * u) * step)).collect()
            })
            .collect()
    }

    /// Whether every memory is labelled by a labeller taken as the truth (no sampling error).
    fn census(&self) -> bool {
        self.raw.iter().all(Option::is_some) && self.error.0 == 0.0
    }

    /// The stratified totals of `terms` with the labels `members` (a stratum left all blank: its
    /// memories at U = 1/2).
    fn totals(&self, t: &Terms, members: &[Vec<(usize, f64)>]) -> Vec<f64> {
        let mut total = vec![0.0; t.k];
        for (h, m) in members.iter().enumerate() {
            if m.is_empty() {
                (0..self.of.len()).filter(|&i| self.of[i] == h).for_each(|i| t.add(&mut total, i, 0.5, 1.0));
                continue;
            }
            let w = self.sizes[h] as f64 / m.len() as f64;
            m.iter().for_each(|&(i, u)| t.add(&mut total, i, u, w));
        }
        total
    }

    /// The estimate of `f` over `terms(memory, u)` (affine in u) on `scale`, with its interval.
    pub fn summary(
        &self,
        terms: impl Fn(usize, f64) -> Vec<f64>,
        f: impl Fn(&[f64]) -> Option<f64>,
        scale: Scale,
    ) -> Summary {
        let t = Terms::new(self.of.len(), &terms);
        let total = self.totals(&t, &self.members);
        let range = scale.range();
        let whole = |value| Summary { value, lo: range.0, hi: range.1, se: f64::NAN, df: f64::NAN };
        let Some(value) = f(&total) else { return whole(None) };
        if self.census() {
            return Summary { value: Some(value), lo: value, hi: value, se: 0.0, df: f64::INFINITY };
        }
        // A correlation of +-1 in the sample (no labelled exception to it) is where the
        // linearization fails (its gradient is 0): linearize instead where the labels are moved
        // PSEUDO labels toward the other truth, as the floor reads a unanimous stratum.
        let edge = scale == Scale::Correlation && value.abs() > 1.0 - 1e-9;
        let point = if edge { self.totals(&t, &self.nudged()) } else { total.clone() };
        let Some(center) = f(&point) else { return whole(Some(value)) };
        let Some(g) = gradient(&f, &point) else { return whole(Some(value)) };
        // z_i = d_i + U_i c_i, the linearized terms: d and c known for every memory.
        let d: Vec<f64> = (0..self.of.len()).map(|i| t.dot(&g, i, 0.0)).collect();
        let c: Vec<f64> = (0..self.of.len()).map(|i| t.dot_slope(&g, i)).collect();
        let mut by: Vec<Vec<usize>> = vec![Vec::new(); self.sizes.len()];
        self.of.iter().enumerate().for_each(|(i, &h)| by[h].push(i));
        // Per stratum: its variance contribution and the degrees of freedom of its S_h^2.
        let mut parts: Vec<(f64, f64)> = Vec::new();
        for (h, m) in self.members.iter().enumerate() {
            let (big, n) = (self.sizes[h] as f64, m.len() as f64);
            if n == big {
                continue;
            }
            if n == 0.0 {
                // Blank stratum: its share anywhere in [0, 1] (uniform): the total's spread, and
                // each memory's own Bernoulli variance on average (E p(1 - p) = 1/6).
                let sum: f64 = by[h].iter().map(|&i| c[i]).sum();
                parts.push((sum * sum / 12.0 + by[h].iter().map(|&i| c[i] * c[i]).sum::<f64>() / 6.0, 1.0));
                continue;
            }
            let zs: Vec<f64> = m.iter().map(|&(i, u)| d[i] + u * c[i]).collect();
            let mean = zs.iter().sum::<f64>() / n;
            let s2 = if n > 1.0 { zs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
            // The floor: the variance of z over the whole stratum (d and c known for every memory)
            // were U a coin of the stratum's share, that share kept at least PSEUDO labels of the
            // other truth away from 0 and 1.
            let right: f64 = m.iter().map(|&(_, u)| u).sum();
            let p = (right / n).clamp(PSEUDO / (n + PSEUDO), n / (n + PSEUDO));
            let mean = |x: &dyn Fn(usize) -> f64| by[h].iter().map(|&i| x(i)).sum::<f64>() / big;
            let m1 = mean(&|i| d[i] + p * c[i]);
            let floor = mean(&|i| (d[i] + p * c[i] - m1).powi(2)) + p * (1.0 - p) * mean(&|i| c[i] * c[i]);
            parts.push((big * big * (1.0 - n / big) * s2.max(floor) / n, (n - 1.0).max(1.0)));
        }
        let mut var: f64 = parts.iter().map(|p| p.0).sum();
        let (e, var_e) = self.error;
        if var_e > 0.0 {
            // e's own uncertainty, by the delta method on the estimate.
            let (up, down) = ((e + 1e-4).min(0.49), (e - 1e-4).max(0.0));
            let at = |e: f64| f(&self.totals(&t, &self.read(e)));
            if let (Some(a), Some(b)) = (at(up), at(down)) {
                let slope = (a - b) / (up - down);
                var += slope * slope * var_e;
            }
        }
        let df = {
            let den: f64 = parts.iter().map(|(v, d)| v * v / d).sum();
            if den > 0.0 { (var * var / den).max(1.0) } else { f64::INFINITY }
        };
        if var <= 0.0 {
            // Nothing left to linearize (labels read through a labelling error can put a
            // correlation at its bound): the sample does not bound it.
            return whole(Some(value));
        }
        let (lo, hi) = interval(center, var, t95(df), scale);
        Summary { value: Some(value), lo: lo.min(value), hi: hi.max(value), se: var.sqrt(), df }
    }
}

/// The 95 % interval of `value` with variance `var` and t quantile `tq` on `scale`.
fn interval(value: f64, var: f64, tq: f64, scale: Scale) -> (f64, f64) {
    if var <= 0.0 {
        return (value, value);
    }
    match scale {
        Scale::Proportion => {
            // Wilson at the effective sample size; at 0 or 1 (no spread among the labels, the
            // floored variance only) the t interval, cut to [0, 1].
            let p = value.clamp(0.0, 1.0);
            let half = tq * var.sqrt();
            if p * (1.0 - p) <= 0.0 {
                return ((p - half).max(0.0), (p + half).min(1.0));
            }
            let n_eff = (p * (1.0 - p) / var).clamp(1.0, 1e12);
            let (lo, hi) = wilson(p * n_eff, n_eff, tq).unwrap_or((0.0, 1.0));
            (lo.min(p), hi.max(p))
        }
        Scale::Correlation => {
            let r = value.clamp(-0.9999, 0.9999);
            let half = tq * var.sqrt() / (1.0 - r * r);
            ((r.atanh() - half).tanh().min(value), (r.atanh() + half).tanh().max(value))
        }
        Scale::Difference => {
            let half = tq * var.sqrt();
            (value - half, value + half)
        }
    }
}

/// The gradient of `f` at `x` by central differences (None where f is undefined nearby).
fn gradient(f: &impl Fn(&[f64]) -> Option<f64>, x: &[f64]) -> Option<Vec<f64>> {
    let mut g = Vec::with_capacity(x.len());
    let mut y = x.to_vec();
    for j in 0..x.len() {
        let h = 1e-6 * x[j].abs().max(1.0);
        y[j] = x[j] + h;
        let a = f(&y)?;
        y[j] = x[j] - h;
        let b = f(&y)?;
        y[j] = x[j];
        g.push((a - b) / (2.0 * h));
    }
    Some(g)
}

/// Every memory's terms at U = 0 and their slope in U (terms(1) - terms(0)).
struct Terms {
    k: usize,
    base: Vec<Vec<f64>>,
    slope: Vec<Vec<f64>>,
}

impl Terms {
    fn new(n: usize, terms: &impl Fn(usize, f64) -> Vec<f64>) -> Terms {
        let base: Vec<Vec<f64>> = (0..n).map(|i| terms(i, 0.0)).collect();
        let slope: Vec<Vec<f64>> =
            (0..n).map(|i| terms(i, 1.0).iter().zip(&base[i]).map(|(a, b)| a - b).collect()).collect();
        Terms { k: base.first().map_or(0, Vec::len), base, slope }
    }

    /// total += w * terms(i, u).
    fn add(&self, total: &mut [f64], i: usize, u: f64, w: f64) {
        for ((t, b), s) in total.iter_mut().zip(&self.base[i]).zip(&self.slope[i]) {
            *t += w * (b + u * s);
        }
    }

    /// g . terms(i, u).
    fn dot(&self, g: &[f64], i: usize, u: f64) -> f64 {
        g.iter().zip(&self.base[i]).zip(&self.slope[i]).map(|((g, b), s)| g * (b + u * s)).sum()
    }

    /// g . slope(i).
    fn dot_slope(&self, g: &[f64], i: usize) -> f64 {
        g.iter().zip(&self.slope[i]).map(|(g, s)| g * s).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(t: &[f64]) -> Option<f64> {
        (t[0] > 0.0).then(|| t[1] / t[0])
    }

    fn terms(_: usize, u: f64) -> Vec<f64> {
        vec![1.0, u]
    }

    #[test]
    fn a_census_is_exact_and_a_sample_is_not() {
        let of = vec![0, 0, 1, 1, 1];
        let u = [1.0, 0.0, 1.0, 1.0, 0.0];
        let all = Labels::single((0..5).collect(), u.to_vec());
        let s = Design::new(&of, 2, &all).summary(terms, share, Scale::Proportion);
        assert_eq!((s.value, s.lo, s.hi), (Some(0.6), 0.6, 0.6));
        let some = Labels::single(vec![0, 1, 2, 3], u[..4].to_vec());
        let s = Design::new(&of, 2, &some).summary(terms, share, Scale::Proportion);
        assert!(s.lo < s.hi && (s.value.unwrap() - 0.8).abs() < 1e-12, "{s:?}");
    }

    #[test]
    fn weights_undo_the_oversampling_of_a_small_stratum() {
        // 90 memories with U = 1 and 10 with U = 0; two of each labelled.
        let of = [vec![0; 90], vec![1; 10]].concat();
        let labels = Labels::single(vec![0, 1, 90, 91], vec![1.0, 1.0, 0.0, 0.0]);
        let s = Design::new(&of, 2, &labels).summary(terms, share, Scale::Proportion);
        assert!((s.value.unwrap() - 0.9).abs() < 1e-12);
    }

    #[test]
    fn a_unanimous_stratum_keeps_its_uncertainty() {
        // 100 memories in one stratum, 12 labelled, all wrong: the share of right memories is
        // not known to be 0 (the floor: one pseudo-label of 13 right).
        let of = vec![0; 100];
        let labels = Labels::single((0..12).collect(), vec![0.0; 12]);
        let s = Design::new(&of, 1, &labels).summary(terms, share, Scale::Proportion);
        assert_eq!(s.value, Some(0.0));
        assert!(s.hi > 0.15 && s.lo == 0.0, "{s:?}");
    }

    #[test]
    fn a_second_labeller_who_disagrees_widens_and_corrects() {
        let of = vec![0; 400];
        let u: Vec<f64> = (0..100).map(|i| f64::from(u8::from(i % 4 == 0))).collect();
        let one = Labels::single((0..100).collect(), u.clone());
        let mut two = one.clone();
        two.second = (0..100).map(|i| (i < 50).then(|| if i % 5 == 0 { 1.0 - u[i] } else { u[i] })).collect();
        assert_eq!(two.twice(), (50, 10));
        let a = Design::new(&of, 1, &one).summary(terms, share, Scale::Proportion);
        let b = Design::new(&of, 1, &two).summary(terms, share, Scale::Proportion);
        assert!(b.hi - b.lo > 1.3 * (a.hi - a.lo), "{a:?} {b:?}");
        // A labeller who errs reads a share of 0.25 as nearer 0.5; the correction moves it out.
        assert!(b.value.unwrap() < a.value.unwrap(), "{a:?} {b:?}");
    }
}
