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
//! **The labeller.** A labeller errs at a rate per label value: a wrong memory labelled right
//! (a) and a right one labelled wrong (b), stated (`--labeller-error`) or, where a second
//! labeller labelled some of the same memories (column `u2`), estimated from their disagreement d
//! as one rate e = a = b, assuming both err independently and equally (d = 2e(1 - e)). Each label
//! L is read as the unbiased (L - a) / (1 - a - b) (Rogan and Gladen; two labels of a memory are
//! averaged), the noise of that reading enters every stratum's variance without the
//! finite-population correction (a stratum labelled in full is still not certain), and an
//! estimated e's own uncertainty (d's binomial variance, with half a pseudo-disagreement) is
//! added by the delta method.

use serde::Serialize;

use crate::analysis::stats::{t95, wilson};

/// The weight of the pseudo-memory of the other truth that floors every stratum's variance.
pub const PSEUDO: f64 = 1.0;

/// How often a labeller errs, per label value (the misclassification of Rogan and Gladen: one
/// minus the labeller's specificity and sensitivity).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LabelError {
    /// Chance that a wrong memory is labelled right.
    pub wrong_as_right: f64,
    /// Chance that a right memory is labelled wrong.
    pub right_as_wrong: f64,
}

impl LabelError {
    /// The same rate on both label values.
    pub fn symmetric(e: f64) -> LabelError {
        LabelError { wrong_as_right: e, right_as_wrong: e }
    }

    /// Whether the labeller never errs.
    pub fn none(&self) -> bool {
        self.wrong_as_right == 0.0 && self.right_as_wrong == 0.0
    }

    /// 1 - a - b: how much of the truth a label carries (at most 1; the rates must leave it above 0).
    fn signal(&self) -> f64 {
        1.0 - self.wrong_as_right - self.right_as_wrong
    }

    /// The label `l` read as an unbiased estimate of U: (l - a) / (1 - a - b).
    fn read(&self, l: f64) -> f64 {
        (l - self.wrong_as_right) / self.signal()
    }

    /// The variance of a read label around U, at U = `u` (clamped to [0, 1]).
    fn noise(&self, u: f64) -> f64 {
        let (a, b, u) = (self.wrong_as_right, self.right_as_wrong, u.clamp(0.0, 1.0));
        (u * b * (1.0 - b) + (1.0 - u) * a * (1.0 - a)) / self.signal().powi(2)
    }
}

/// How two labellers' labels of the same memories agree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LabellerAgreement {
    /// Memories both labelled right.
    pub both_right: usize,
    /// Memories both labelled wrong.
    pub both_wrong: usize,
    /// The first labeller said right, the second wrong.
    pub first_right_second_wrong: usize,
    /// The first said wrong, the second right.
    pub first_wrong_second_right: usize,
    /// Cohen's kappa: (p_o - p_e) / (1 - p_e), p_e the agreement of labellers labelling at their
    /// own rates by chance (None: no pair, or both labelled everything alike).
    pub kappa: Option<f64>,
}

impl LabellerAgreement {
    /// Memories labelled twice.
    pub fn pairs(&self) -> usize {
        self.both_right + self.both_wrong + self.first_right_second_wrong + self.first_wrong_second_right
    }

    /// Of them, the labels disagree.
    pub fn disagreements(&self) -> usize {
        self.first_right_second_wrong + self.first_wrong_second_right
    }
}

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
    /// The first and the second labeller's stated error rates (None: not stated; one stated
    /// stands for both).
    pub stated: [Option<LabelError>; 2],
    /// Memories on rows of the labels file left unlabelled (blank rows and spares).
    pub unlabelled: Vec<usize>,
}

/// The labelling error the estimates read the labels through.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Errors {
    /// The first labeller's.
    pub first: LabelError,
    /// The second's.
    pub second: LabelError,
    /// The variance of an estimated rate (0: stated, or no labeller error).
    pub var: f64,
    /// Estimated from the disagreements (not stated).
    pub estimated: bool,
}

impl Labels {
    /// One labeller's labels.
    pub fn single(picked: Vec<usize>, u: Vec<f64>) -> Labels {
        let second = vec![None; picked.len()];
        Labels { picked, u, second, blanks: 0, stated: [None, None], unlabelled: Vec::new() }
    }

    /// Memories labelled twice, and how many of them the two labels disagree on.
    pub fn twice(&self) -> (usize, usize) {
        let a = self.agreement();
        (a.pairs(), a.disagreements())
    }

    /// The two labellers' agreement on the memories both labelled.
    pub fn agreement(&self) -> LabellerAgreement {
        let mut a = LabellerAgreement::default();
        for (&x, y) in self.u.iter().zip(&self.second) {
            match (x > 0.5, y.map(|y| y > 0.5)) {
                (true, Some(true)) => a.both_right += 1,
                (false, Some(false)) => a.both_wrong += 1,
                (true, Some(false)) => a.first_right_second_wrong += 1,
                (false, Some(true)) => a.first_wrong_second_right += 1,
                (_, None) => {}
            }
        }
        let m = a.pairs() as f64;
        if m > 0.0 {
            let p1 = (a.both_right + a.first_right_second_wrong) as f64 / m;
            let p2 = (a.both_right + a.first_wrong_second_right) as f64 / m;
            let po = (a.both_right + a.both_wrong) as f64 / m;
            let pe = p1 * p2 + (1.0 - p1) * (1.0 - p2);
            a.kappa = (pe < 1.0).then(|| (po - pe) / (1.0 - pe));
        }
        a
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

    /// The error the labels are read through: the stated rates, else the rate the disagreements
    /// imply, else none.
    pub fn errors(&self) -> Errors {
        let (first, second) = match self.stated {
            [Some(a), Some(b)] => (a, b),
            [Some(a), None] | [None, Some(a)] => (a, a),
            [None, None] => {
                let (e, var) = self.error_rate();
                let e = LabelError::symmetric(e);
                return Errors { first: e, second: e, var, estimated: var > 0.0 };
            }
        };
        Errors { first, second, var: 0.0, estimated: false }
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
    /// Each memory's read-label variance (0: unlabelled, or a labeller who does not err).
    noise: Vec<f64>,
    /// The labelling error.
    errors: Errors,
    /// Each memory's labels as given (None: unlabelled).
    raw: Vec<Option<(f64, Option<f64>)>>,
}

/// The PPI++ estimate of a quantity: the stratified estimator of the totals with each stratum's
/// labelled terms less lambda times their prediction, plus lambda times the prediction's total
/// over every memory of the stratum; lambda and the predictor chosen to make the variance least
/// (lambda 0: the stratified estimator itself, so a predictor that does not help costs nothing).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ppi {
    /// The estimate and its interval.
    pub summary: Summary,
    /// The power-tuning weight in [0, 1].
    pub lambda: f64,
    /// Which of the predictors it uses (None: lambda 0).
    pub predictor: Option<usize>,
}

/// The linearization of one quantity at its stratified estimate, with what its variance needs.
struct Linear {
    /// z_i = d_i + U_i c_i.
    d: Vec<f64>,
    c: Vec<f64>,
    /// Per stratum: the memories, and the floor of its S_h^2 (read-label noise not included).
    by: Vec<Vec<usize>>,
    floor: Vec<f64>,
    /// Per stratum: the floor's share p, the means of a_i = d_i + p c_i and of a_i^2, and its
    /// coin part p (1 - p) mean(c^2) (what PPI++'s floor of a unanimous stratum is built from).
    coin: Vec<(f64, f64, f64, f64)>,
}

/// Per stratum, for one predictor: the means of b_i = d_i + Uhat_i c_i, a_i b_i and b_i^2.
type Moments = Vec<(f64, f64, f64)>;

impl Linear {
    /// The moments of predictor `p` in every stratum.
    fn moments(&self, p: &[f64]) -> Moments {
        self.by
            .iter()
            .zip(&self.coin)
            .map(|(m, &(share, ..))| {
                let big = m.len().max(1) as f64;
                let (mut mb, mut mab, mut mb2) = (0.0, 0.0, 0.0);
                for &i in m {
                    let (a, b) = (self.d[i] + share * self.c[i], self.d[i] + p[i] * self.c[i]);
                    (mb, mab, mb2) = (mb + b, mab + a * b, mb2 + b * b);
                }
                (mb / big, mab / big, mb2 / big)
            })
            .collect()
    }
}

impl Design {
    /// The design of a bank whose memories are in strata `of` (`strata` of them), labelled by `labels`.
    pub fn new(of: &[usize], strata: usize, labels: &Labels) -> Design {
        let mut sizes = vec![0; strata];
        of.iter().for_each(|&h| sizes[h] += 1);
        let mut raw = vec![None; of.len()];
        for ((&i, &u), &second) in labels.picked.iter().zip(&labels.u).zip(&labels.second) {
            raw[i] = Some((u, second));
        }
        let errors = labels.errors();
        let mut d = Design { of: of.to_vec(), sizes, members: Vec::new(), noise: Vec::new(), errors, raw };
        (d.members, d.noise) = d.read(errors.first, errors.second);
        d
    }

    /// Each stratum's labelled memories with every label L read as (L - a) / (1 - a - b) (two
    /// labels of a memory averaged), and each memory's read-label variance.
    fn read(&self, first: LabelError, second: LabelError) -> (Vec<Vec<(usize, f64)>>, Vec<f64>) {
        let mut members = vec![Vec::new(); self.sizes.len()];
        let mut noise = vec![0.0; self.of.len()];
        for (i, l) in self.raw.iter().enumerate() {
            let Some((l, l2)) = *l else { continue };
            let (u, v) = match l2 {
                Some(l2) => {
                    let u = (first.read(l) + second.read(l2)) / 2.0;
                    (u, (first.noise(u) + second.noise(u)) / 4.0)
                }
                None => {
                    let u = first.read(l);
                    (u, first.noise(u))
                }
            };
            members[self.of[i]].push((i, u));
            noise[i] = v;
        }
        (members, noise)
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
        self.raw.iter().all(Option::is_some) && self.errors.first.none() && self.errors.second.none()
    }

    /// The stratified totals of `terms` with the labels `members` (a stratum left all blank: its
    /// memories at U = 1/2); with a predictor `pred` and weight `lambda`, the PPI++ totals.
    fn totals(&self, t: &Terms, members: &[Vec<(usize, f64)>], pred: Option<(&[f64], f64)>) -> Vec<f64> {
        let mut total = vec![0.0; t.k];
        for (h, m) in members.iter().enumerate() {
            if m.is_empty() {
                (0..self.of.len()).filter(|&i| self.of[i] == h).for_each(|i| t.add(&mut total, i, 0.5, 1.0));
                continue;
            }
            let w = self.sizes[h] as f64 / m.len() as f64;
            m.iter().for_each(|&(i, u)| t.add(&mut total, i, u, w));
            if let Some((p, lambda)) = pred {
                m.iter().for_each(|&(i, _)| t.add(&mut total, i, p[i], -lambda * w));
                (0..self.of.len()).filter(|&i| self.of[i] == h).for_each(|i| t.add(&mut total, i, p[i], lambda));
            }
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
        self.fit(&terms, &f, scale, &[]).0
    }

    /// The stratified estimate (as [`Design::summary`]) and the PPI++ one with the best of
    /// `predictors` (each a prediction of U for every memory of the bank, in [0, 1]).
    pub fn summary_ppi(
        &self,
        terms: impl Fn(usize, f64) -> Vec<f64>,
        f: impl Fn(&[f64]) -> Option<f64>,
        scale: Scale,
        predictors: &[Vec<f64>],
    ) -> (Summary, Ppi) {
        let (s, ppi) = self.fit(&terms, &f, scale, predictors);
        (s, ppi.unwrap_or(Ppi { summary: s, lambda: 0.0, predictor: None }))
    }

    fn fit(
        &self,
        terms: &impl Fn(usize, f64) -> Vec<f64>,
        f: &impl Fn(&[f64]) -> Option<f64>,
        scale: Scale,
        predictors: &[Vec<f64>],
    ) -> (Summary, Option<Ppi>) {
        let t = Terms::new(self.of.len(), terms);
        let total = self.totals(&t, &self.members, None);
        let range = scale.range();
        let whole = |value| (Summary { value, lo: range.0, hi: range.1, se: f64::NAN, df: f64::NAN }, None);
        let Some(value) = f(&total) else { return whole(None) };
        if self.census() {
            return (Summary { value: Some(value), lo: value, hi: value, se: 0.0, df: f64::INFINITY }, None);
        }
        // A correlation of +-1 in the sample (no labelled exception to it) is where the
        // linearization fails (its gradient is 0): linearize instead where the labels are moved
        // PSEUDO labels toward the other truth, as the floor reads a unanimous stratum.
        let edge = scale == Scale::Correlation && value.abs() > 1.0 - 1e-9;
        let point = if edge { self.totals(&t, &self.nudged(), None) } else { total.clone() };
        let Some(center) = f(&point) else { return whole(Some(value)) };
        let Some(g) = gradient(f, &point) else { return whole(Some(value)) };
        let lin = self.linear(&t, &g);
        // e's own uncertainty, by the delta method on the estimate.
        let mut var_e = 0.0;
        let Errors { first, var, .. } = self.errors;
        if var > 0.0 {
            let e = first.wrong_as_right;
            let (up, down) = ((e + 1e-4).min(0.49), (e - 1e-4).max(0.0));
            let at = |e: f64| {
                let e = LabelError::symmetric(e);
                f(&self.totals(&t, &self.read(e, e).0, None))
            };
            if let (Some(a), Some(b)) = (at(up), at(down)) {
                let slope = (a - b) / (up - down);
                var_e = slope * slope * var;
            }
        }
        let (var, df) = self.variance(&lin, None, var_e);
        if var <= 0.0 {
            // Nothing left to linearize (labels read through a labelling error can put a
            // correlation at its bound): the sample does not bound it.
            return whole(Some(value));
        }
        let summary = finish(value, center, var, df, scale);
        if edge || predictors.is_empty() {
            return (summary, None);
        }
        // PPI++: the predictor and lambda of least variance (lambda 0 first: ties keep it).
        let mut best: (f64, f64, Option<usize>, f64) = (var, 0.0, None, df);
        for (k, p) in predictors.iter().enumerate() {
            let mom = lin.moments(p);
            for step in 1..=20 {
                let lambda = f64::from(step) / 20.0;
                let (v, df) = self.variance(&lin, Some((p, lambda, &mom)), var_e);
                if v > 0.0 && v < best.0 {
                    best = (v, lambda, Some(k), df);
                }
            }
        }
        let (v, lambda, Some(k), df) = best else { return (summary, None) };
        let Some(estimate) = f(&self.totals(&t, &self.members, Some((&predictors[k], lambda)))) else {
            return (summary, None);
        };
        let ppi = finish(estimate, estimate, v, df, scale);
        if ppi.hi - ppi.lo >= summary.hi - summary.lo {
            return (summary, None);
        }
        (summary, Some(Ppi { summary: ppi, lambda, predictor: Some(k) }))
    }

    /// The linearized terms z_i = d_i + U_i c_i of gradient `g` (d and c known for every memory)
    /// and each stratum's floor.
    fn linear(&self, t: &Terms, g: &[f64]) -> Linear {
        let d: Vec<f64> = (0..self.of.len()).map(|i| t.dot(g, i, 0.0)).collect();
        let c: Vec<f64> = (0..self.of.len()).map(|i| t.dot_slope(g, i)).collect();
        let mut by: Vec<Vec<usize>> = vec![Vec::new(); self.sizes.len()];
        self.of.iter().enumerate().for_each(|(i, &h)| by[h].push(i));
        let coin: Vec<(f64, f64, f64, f64)> = self
            .members
            .iter()
            .enumerate()
            .map(|(h, m)| {
                let (big, n) = (self.sizes[h] as f64, m.len() as f64);
                if n == 0.0 || big == 0.0 {
                    return (0.5, 0.0, 0.0, 0.0);
                }
                // The variance of z over the whole stratum were U a coin of the stratum's share,
                // that share kept at least PSEUDO labels of the other truth away from 0 and 1.
                let right: f64 = m.iter().map(|&(_, u)| u).sum();
                let p = (right / n).clamp(PSEUDO / (n + PSEUDO), n / (n + PSEUDO));
                let mean = |x: &dyn Fn(usize) -> f64| by[h].iter().map(|&i| x(i)).sum::<f64>() / big;
                let (ma, ma2) = (mean(&|i| d[i] + p * c[i]), mean(&|i| (d[i] + p * c[i]).powi(2)));
                (p, ma, ma2, p * (1.0 - p) * mean(&|i| c[i] * c[i]))
            })
            .collect();
        let floor = coin.iter().map(|&(_, ma, ma2, bern)| (ma2 - ma * ma).max(0.0) + bern).collect();
        Linear { d, c, by, floor, coin }
    }

    /// The stratified variance of the linearized estimate (with predictor `pred` and weight
    /// lambda: of its PPI++ residuals z_i - lambda zhat_i) and Satterthwaite's degrees of freedom;
    /// `extra` (an estimated error rate's share) added.
    fn variance(&self, lin: &Linear, pred: Option<(&[f64], f64, &Moments)>, extra: f64) -> (f64, f64) {
        let Linear { d, c, by, floor, coin } = lin;
        // Per stratum: A_h = N_h^2 (1 - f_h) / n_h, S_h^2 of the residuals and of z, the
        // read-label noise mean(c^2 V) of its labels, and n_h.
        let mut rows: Vec<(f64, f64, f64, f64, f64, usize)> = Vec::new();
        let mut parts: Vec<(f64, f64)> = Vec::new();
        for (h, m) in self.members.iter().enumerate() {
            let (big, n) = (self.sizes[h] as f64, m.len() as f64);
            if big == 0.0 {
                continue;
            }
            if n == 0.0 {
                // Blank stratum: its share anywhere in [0, 1] (uniform): the total's spread, and
                // each memory's own Bernoulli variance on average (E p(1 - p) = 1/6).
                let sum: f64 = by[h].iter().map(|&i| c[i]).sum();
                parts.push((sum * sum / 12.0 + by[h].iter().map(|&i| c[i] * c[i]).sum::<f64>() / 6.0, 1.0));
                continue;
            }
            let z = |&(i, u): &(usize, f64)| d[i] + u * c[i];
            let resid = |&(i, u): &(usize, f64)| match pred {
                Some((p, lambda, _)) => d[i] + u * c[i] - lambda * (d[i] + p[i] * c[i]),
                None => d[i] + u * c[i],
            };
            let s2 = |x: &dyn Fn(&(usize, f64)) -> f64| {
                if n < 2.0 {
                    return 0.0;
                }
                let mean = m.iter().map(x).sum::<f64>() / n;
                m.iter().map(|y| (x(y) - mean).powi(2)).sum::<f64>() / (n - 1.0)
            };
            let noise = m.iter().map(|&(i, _)| c[i] * c[i] * self.noise[i]).sum::<f64>() / n;
            rows.push((big * big * (1.0 - n / big) / n, s2(&resid), s2(&z), noise, big, h));
        }
        // PPI++'s floor. A stratum whose labels show both truths: its floor shrinks by the share of
        // variance the predictions explain over such strata. A unanimous one shows nothing of
        // what the predictions know: its floor is the residual's variance were U a coin of its
        // share whatever the prediction (so a prediction that varies there widens it).
        let spread = |r: &(f64, f64, f64, f64, f64, usize)| r.2 > 0.0;
        let (num, den) = rows.iter().filter(|r| spread(r)).fold((0.0, 0.0), |(a, b), r| (a + r.0 * r.1, b + r.0 * r.2));
        let ratio = if den > 0.0 { (num / den).min(1.0) } else { 1.0 };
        for r in &rows {
            let &(a, s2, _, noise, big, h) = r;
            let n = self.members[h].len() as f64;
            let fl = match pred {
                None => floor[h],
                Some(_) if spread(r) => ratio * floor[h],
                Some((_, lambda, mom)) => {
                    let ((_, ma, ma2, bern), (mb, mab, mb2)) = (coin[h], mom[h]);
                    let second = ma2 - 2.0 * lambda * mab + lambda * lambda * mb2;
                    (second - (ma - lambda * mb).powi(2)).max(0.0) + bern
                }
            };
            let sampling = a * s2.max(fl + noise);
            parts.push((sampling + big * noise, if n == big { 1e6 } else { (n - 1.0).max(1.0) }));
        }
        let var: f64 = parts.iter().map(|p| p.0).sum::<f64>() + extra;
        let den: f64 = parts.iter().map(|(v, d)| v * v / d).sum();
        (var, if den > 0.0 { (var * var / den).max(1.0) } else { f64::INFINITY })
    }
}

/// The summary of `value` with an interval around `center` of variance `var`.
fn finish(value: f64, center: f64, var: f64, df: f64, scale: Scale) -> Summary {
    let (lo, hi) = interval(center, var, t95(df), scale);
    Summary { value: Some(value), lo: lo.min(value), hi: hi.max(value), se: var.sqrt(), df }
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

    #[test]
    fn a_stated_error_corrects_the_share_and_a_census_keeps_its_noise() {
        // 100 memories, 30 right; the labeller reads 10 % the wrong way round: 36 labelled right
        // (27 of the right, 9 of the wrong). Read through 10 %: (0.36 - 0.1) / 0.8 = 0.325.
        let of = vec![0; 100];
        let u: Vec<f64> = (0..100).map(|i| f64::from(u8::from(i < 27 || (30..39).contains(&i)))).collect();
        let mut labels = Labels::single((0..100).collect(), u);
        let taken = Design::new(&of, 1, &labels).summary(terms, share, Scale::Proportion);
        assert_eq!(
            (taken.value, taken.lo, taken.hi),
            (Some(0.36), 0.36, 0.36),
            "a census by a labeller taken as truth"
        );
        labels.stated = [Some(LabelError::symmetric(0.1)), None];
        let read = Design::new(&of, 1, &labels).summary(terms, share, Scale::Proportion);
        assert!((read.value.unwrap() - 0.325).abs() < 1e-12, "{read:?}");
        // The noise of reading 100 labels: sqrt(0.1 * 0.9 / 0.64 / 100) = 0.0375.
        assert!((read.se - 0.0375).abs() < 1e-9 && read.lo < 0.3 && read.hi > 0.35, "{read:?}");
    }

    #[test]
    fn ppi_narrows_with_a_predictor_and_never_widens_without_one() {
        // One stratum of 1000; U follows a score that varies within it; 100 labelled.
        let n = 1000;
        let of = vec![0; n];
        let mut rng = crate::rng::SplitMix64(3);
        let score: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
        let truth: Vec<f64> = score.iter().map(|&s| f64::from(u8::from(rng.uniform() < s))).collect();
        let labels = Labels::single((0..100).collect(), truth[..100].to_vec());
        let d = Design::new(&of, 1, &labels);
        let coin: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
        let (plain, good) = d.summary_ppi(terms, share, Scale::Proportion, std::slice::from_ref(&score));
        assert!(good.lambda > 0.5 && good.predictor == Some(0), "{good:?}");
        let ratio = (good.summary.hi - good.summary.lo) / (plain.hi - plain.lo);
        assert!(ratio < 0.9, "{ratio}: {plain:?} {good:?}");
        let (_, bad) = d.summary_ppi(terms, share, Scale::Proportion, &[coin]);
        assert!(bad.summary.hi - bad.summary.lo <= plain.hi - plain.lo, "{bad:?} {plain:?}");
    }

    #[test]
    fn agreement_counts_and_kappa() {
        let mut l = Labels::single((0..10).collect(), vec![1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0]);
        l.second =
            vec![Some(1.0), Some(1.0), Some(0.0), Some(1.0), Some(0.0), Some(0.0), Some(1.0), Some(1.0), None, None];
        let a = l.agreement();
        assert_eq!((a.both_right, a.both_wrong, a.first_right_second_wrong, a.first_wrong_second_right), (4, 2, 1, 1));
        // p_o = 6/8, p1 = p2 = 5/8, p_e = 25/64 + 9/64 = 34/64: kappa = (48 - 34) / (64 - 34).
        assert!((a.kappa.unwrap() - 14.0 / 30.0).abs() < 1e-12, "{a:?}");
    }
}
