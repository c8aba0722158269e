//! The statistics every report and audit shares: Wilson score intervals, ordinary least squares
//! with one or two regressors, Pearson and Spearman correlation, and a seeded bootstrap.
//!
//! The bootstrap works on a histogram of distinct observations (a value, or a (y, x) pair) with
//! counts, and draws each resample as multinomial counts over them (sequential binomials), so it
//! costs O(distinct values) per resample, not O(n): a report over millions of episodes whose
//! outcomes are 0/1 and whose corruption takes k + 1 values resamples in microseconds. The
//! histogram is sorted before drawing, so the result does not depend on the order rows arrive in.

use super::variates::multinomial;
use crate::rng::SplitMix64;

/// The normal quantile of a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Resamples of every bootstrap in the reports.
pub const RESAMPLES: usize = 2000;

/// The seed of every bootstrap in the reports (a report is a function of its tables).
pub const BOOT_SEED: u64 = 0x5EED_2025;

/// Wilson score interval for `k` successes in `n` trials at normal quantile `z`; `None` when
/// `n` is 0.
pub fn wilson(k: f64, n: f64, z: f64) -> Option<(f64, f64)> {
    if n <= 0.0 {
        return None;
    }
    let p = k / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    Some(((center - half).max(0.0), (center + half).min(1.0)))
}

/// Weighted sums of one or two regressors and a response.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Moments {
    pub(super) n: f64,
    pub(super) y: f64,
    pub(super) x1: f64,
    pub(super) x2: f64,
    pub(super) x1x1: f64,
    pub(super) x2x2: f64,
    pub(super) x1x2: f64,
    pub(super) x1y: f64,
    pub(super) x2y: f64,
}

impl Moments {
    pub(super) fn add(&mut self, w: f64, y: f64, x1: f64, x2: f64) {
        self.n += w;
        self.y += w * y;
        self.x1 += w * x1;
        self.x2 += w * x2;
        self.x1x1 += w * x1 * x1;
        self.x2x2 += w * x2 * x2;
        self.x1x2 += w * x1 * x2;
        self.x1y += w * x1 * y;
        self.x2y += w * x2 * y;
    }

    /// Centred (co)variances times n: (S11, S22, S12, S1y, S2y).
    fn centred(&self) -> (f64, f64, f64, f64, f64) {
        let n = self.n;
        (
            self.x1x1 - self.x1 * self.x1 / n,
            self.x2x2 - self.x2 * self.x2 / n,
            self.x1x2 - self.x1 * self.x2 / n,
            self.x1y - self.x1 * self.y / n,
            self.x2y - self.x2 * self.y / n,
        )
    }

    /// (intercept, slope) of y on x1; None when x1 has no spread.
    pub(super) fn ols(&self) -> Option<(f64, f64)> {
        let (s11, _, _, s1y, _) = self.centred();
        if self.n < 2.0 || s11 <= 1e-12 * self.n {
            return None;
        }
        let slope = s1y / s11;
        Some(((self.y - slope * self.x1) / self.n, slope))
    }

    /// (intercept, b1, b2) of y on x1 and x2; None when they are collinear or constant.
    fn ols2(&self) -> Option<(f64, f64, f64)> {
        let (s11, s22, s12, s1y, s2y) = self.centred();
        let det = s11 * s22 - s12 * s12;
        if self.n < 3.0 || det <= 1e-12 * self.n * self.n {
            return None;
        }
        let b1 = (s22 * s1y - s12 * s2y) / det;
        let b2 = (s11 * s2y - s12 * s1y) / det;
        Some(((self.y - b1 * self.x1 - b2 * self.x2) / self.n, b1, b2))
    }
}

/// (intercept, slope) of the least-squares line of `y` on `x`.
pub fn ols(y: &[f64], x: &[f64]) -> Option<(f64, f64)> {
    let mut m = Moments::default();
    y.iter().zip(x).for_each(|(&y, &x)| m.add(1.0, y, x, 0.0));
    m.ols()
}

/// (intercept, b1, b2) of the least-squares plane of `y` on `x1` and `x2`.
pub fn ols2(y: &[f64], x1: &[f64], x2: &[f64]) -> Option<(f64, f64, f64)> {
    let mut m = Moments::default();
    for i in 0..y.len() {
        m.add(1.0, y[i], x1[i], x2[i]);
    }
    m.ols2()
}

/// (intercept, b1, b2) from the sums (n, y, x1, x2, x1², x2², x1x2, x1y, x2y) of a fit that
/// was accumulated elsewhere (a SQL aggregate).
pub fn ols2_from_sums(s: &[f64; 9]) -> Option<(f64, f64, f64)> {
    let m = Moments { n: s[0], y: s[1], x1: s[2], x2: s[3], x1x1: s[4], x2x2: s[5], x1x2: s[6], x1y: s[7], x2y: s[8] };
    m.ols2()
}

/// Arithmetic mean (NaN when empty).
pub fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Population covariance (two passes: the means first).
pub fn covariance(x: &[f64], y: &[f64]) -> f64 {
    let (mx, my) = (mean(x), mean(y));
    x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum::<f64>() / x.len() as f64
}

/// Population variance.
pub fn variance(x: &[f64]) -> f64 {
    covariance(x, x)
}

/// `x` standardised to mean 0 and standard deviation 1 (a constant `x` maps to 0).
pub fn z_scores(x: &[f64]) -> Vec<f64> {
    let (m, sd) = (mean(x), variance(x).sqrt().max(1e-12));
    x.iter().map(|v| (v - m) / sd).collect()
}

/// Whether a centred sum of squares `centred` (n Var) is a spread and not rounding: above
/// 1e-12 of the raw sum of squares `raw` (a constant 0.7 leaves about 1e-17 of it).
pub fn has_spread(centred: f64, raw: f64) -> bool {
    centred > 0.0 && centred > 1e-12 * raw
}

/// Pearson correlation; None when either side is constant (see [`has_spread`]).
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let mut m = Moments::default();
    x.iter().zip(y).for_each(|(&x, &y)| m.add(1.0, y, x, y));
    let (sxx, syy, _, sxy, _) = m.centred();
    (has_spread(sxx, m.x1x1) && has_spread(syy, m.x2x2)).then(|| sxy / (sxx * syy).sqrt())
}

/// Pearson correlation from weighted sums: n, Sx, Sxx, Sy, Syy, Sxy; None when either side is
/// constant (see [`has_spread`]) or n <= 1.
pub fn corr_from_sums(n: f64, sx: f64, sxx: f64, sy: f64, syy: f64, sxy: f64) -> Option<f64> {
    let (cxx, cyy, cxy) = (sxx - sx * sx / n, syy - sy * sy / n, sxy - sx * sy / n);
    (n > 1.0 && has_spread(cxx, sxx) && has_spread(cyy, syy)).then(|| (cxy / (cxx * cyy).sqrt()).clamp(-1.0, 1.0))
}

/// The quantile of Student's t with `df` degrees of freedom (any real df >= 1) for a two-sided
/// 95 % interval: the t whose upper tail is 0.025, by bisection on the tail
/// `I_{df/(df+t^2)}(df/2, 1/2) / 2` (the regularized incomplete beta by its continued fraction),
/// to 1e-12.
pub fn t95(df: f64) -> f64 {
    if !df.is_finite() || df > 1e7 {
        return Z95;
    }
    let df = df.max(1.0);
    let tail = |t: f64| 0.5 * inc_beta(df / (df + t * t), df / 2.0, 0.5);
    let (mut lo, mut hi) = (0.0f64, 1e4f64);
    while hi - lo > 1e-12 * hi.max(1.0) {
        let mid = (lo + hi) / 2.0;
        if tail(mid) > 0.025 { lo = mid } else { hi = mid }
    }
    (lo + hi) / 2.0
}

/// ln Gamma(x) for x > 0 (Lanczos, g = 7, nine coefficients: about 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum: f64 = C[0] + (1..9).map(|i| C[i] / (x + i as f64)).sum::<f64>();
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The regularized incomplete beta I_x(a, b) (Lentz's continued fraction, on the side of x
/// where it converges fast).
fn inc_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - inc_beta(1.0 - x, b, a);
    }
    let tiny = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    d = 1.0 / if d.abs() < tiny { tiny } else { d };
    let mut f = d;
    for m in 1..500 {
        let m = m as f64;
        for num in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + num * d;
            d = 1.0 / if d.abs() < tiny { tiny } else { d };
            c = 1.0 + num / c;
            if c.abs() < tiny {
                c = tiny;
            }
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    front * f / a
}

/// Ranks with ties given their average rank (1-based).
pub fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut out = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            out[k] = avg;
        }
        i = j + 1;
    }
    out
}

/// Spearman rank correlation (Pearson on average ranks).
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    pearson(&ranks(x), &ranks(y))
}

/// The `q` quantile of `sorted` by linear interpolation between order statistics (numpy's
/// default); None when empty.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let pos = q.clamp(0.0, 1.0) * last as f64;
    let (lo, frac) = (pos.floor() as usize, pos - pos.floor());
    let hi = (lo + 1).min(last);
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// What a bootstrap estimates from a resample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    /// Mean of y.
    Mean,
    /// Slope of y on x.
    Slope,
    /// Intercept of y on x.
    Intercept,
}

/// Distinct (y, x) observations with their counts, sorted: the data a bootstrap resamples.
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    /// (y, x, count), sorted by (y, x) after [`Histogram::finish`].
    cells: Vec<(f64, f64, u64)>,
    index: std::collections::HashMap<(u64, u64), usize>,
}

impl Histogram {
    /// Add `count` copies of (y, x) (NaN in either is skipped).
    pub fn add(&mut self, y: f64, x: f64, count: u64) {
        if y.is_nan() || x.is_nan() || count == 0 {
            return;
        }
        // Outcomes and corruption levels take few values: a short scan beats hashing.
        if self.cells.len() <= 32 {
            if let Some(c) =
                self.cells.iter_mut().find(|c| c.0.to_bits() == y.to_bits() && c.1.to_bits() == x.to_bits())
            {
                c.2 += count;
                return;
            }
            if self.cells.len() < 32 {
                self.cells.push((y, x, count));
                return;
            }
            // The 33rd distinct value: index every cell from now on.
            self.index = self.cells.iter().enumerate().map(|(i, c)| ((c.0.to_bits(), c.1.to_bits()), i)).collect();
        }
        let key = (y.to_bits(), x.to_bits());
        match self.index.get(&key) {
            Some(&i) => self.cells[i].2 += count,
            None => {
                self.index.insert(key, self.cells.len());
                self.cells.push((y, x, count));
            }
        }
    }

    /// Every cell of `other` added to this one.
    pub fn merge(&mut self, other: &Histogram) {
        for &(y, x, c) in &other.cells {
            self.add(y, x, c);
        }
    }

    /// Observations.
    pub fn n(&self) -> u64 {
        self.cells.iter().map(|c| c.2).sum()
    }

    /// The cells (y, x, count), in insertion order.
    pub fn cells(&self) -> &[(f64, f64, u64)] {
        &self.cells
    }

    fn statistic(&self, weights: &[u64], stat: Statistic) -> Option<f64> {
        let mut m = Moments::default();
        for (&(y, x, _), &w) in self.cells.iter().zip(weights) {
            if w > 0 {
                m.add(w as f64, y, x, 0.0);
            }
        }
        match stat {
            Statistic::Mean => (m.n > 0.0).then(|| m.y / m.n),
            Statistic::Slope => m.ols().map(|(_, s)| s),
            Statistic::Intercept => m.ols().map(|(i, _)| i),
        }
    }

    /// The statistic on the data itself.
    pub fn estimate(&self, stat: Statistic) -> Option<f64> {
        let w: Vec<u64> = self.cells.iter().map(|c| c.2).collect();
        self.statistic(&w, stat)
    }

    /// `resamples` bootstrap replicates of `stat` (resamples where it is undefined are dropped),
    /// sorted ascending.
    pub fn bootstrap(&self, stat: Statistic, resamples: usize, seed: u64) -> Vec<f64> {
        let mut cells = self.cells.clone();
        cells.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let sorted = Histogram { cells, index: Default::default() };
        let n = sorted.n();
        let probs: Vec<f64> = sorted.cells.iter().map(|c| c.2 as f64 / n as f64).collect();
        let mut rng = SplitMix64(seed);
        let mut weights = vec![0u64; probs.len()];
        let mut out = Vec::with_capacity(resamples);
        for _ in 0..resamples {
            multinomial(&mut rng, n, &probs, &mut weights);
            if let Some(v) = sorted.statistic(&weights, stat) {
                out.push(v);
            }
        }
        out.sort_by(f64::total_cmp);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t95_matches_the_table() {
        // Two-sided 95 % quantiles of Student's t (any statistics table).
        for (df, t) in [
            (1.0, 12.706),
            (2.0, 4.303),
            (3.0, 3.182),
            (4.0, 2.776),
            (5.0, 2.571),
            (10.0, 2.228),
            (30.0, 2.042),
            (120.0, 1.980),
        ] {
            assert!((t95(df) - t).abs() < 2e-3, "df {df}: {} vs {t}", t95(df));
        }
        assert!((t95(1e9) - Z95).abs() < 1e-6);
        // Exact where the table is (df 1: tan(0.475 pi); df 2: 4.302652729749464) and between its rows.
        assert!((t95(1.0) - (0.475 * std::f64::consts::PI).tan()).abs() < 1e-9);
        assert!((t95(2.0) - 4.302_652_729_749_464).abs() < 1e-9);
        assert!(t95(1.5) < t95(1.0) && t95(1.5) > t95(2.0));
    }

    #[test]
    fn wilson_matches_the_textbook_interval() {
        // 8 of 10: Wilson 95 % interval [0.4902, 0.9433] (Newcombe 1998, and scipy's binomtest).
        let (lo, hi) = wilson(8.0, 10.0, Z95).unwrap();
        assert!((lo - 0.4902).abs() < 5e-4 && (hi - 0.9433).abs() < 5e-4, "{lo} {hi}");
        assert_eq!(wilson(0.0, 0.0, Z95), None);
        let (lo, hi) = wilson(0.0, 20.0, Z95).unwrap();
        assert_eq!(lo, 0.0);
        assert!(hi > 0.0 && hi < 0.2);
    }

    #[test]
    fn least_squares_recover_planted_coefficients() {
        let x1: Vec<f64> = (0..50).map(|i| (i % 5) as f64 / 4.0).collect();
        let x2: Vec<f64> = (0..50).map(|i| (i % 7) as f64 / 6.0).collect();
        let y: Vec<f64> = x1.iter().zip(&x2).map(|(a, b)| 0.3 + 0.4 * a - 0.15 * b).collect();
        let (e0, b1, b2) = ols2(&y, &x1, &x2).unwrap();
        assert!((e0 - 0.3).abs() < 1e-12 && (b1 - 0.4).abs() < 1e-12 && (b2 + 0.15).abs() < 1e-12);
        let (i, s) = ols(&x1.iter().map(|x| 1.0 + 2.0 * x).collect::<Vec<_>>(), &x1).unwrap();
        assert!((i - 1.0).abs() < 1e-12 && (s - 2.0).abs() < 1e-12);
        assert_eq!(ols(&[1.0, 2.0], &[3.0, 3.0]), None);
    }

    #[test]
    fn rank_correlation_handles_ties() {
        assert_eq!(ranks(&[3.0, 1.0, 3.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
        let s = spearman(&[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 30.0, 1000.0]).unwrap();
        assert!((s - 1.0).abs() < 1e-12);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), Some(2.5));
    }

    #[test]
    fn bootstrap_is_order_free_and_centred() {
        let (mut a, mut b) = (Histogram::default(), Histogram::default());
        let vals = [1.0, 0.0, -1.0, 0.0, 1.0, 1.0, 0.0, 1.0];
        for v in vals {
            a.add(v, 0.0, 1);
        }
        for v in vals.iter().rev() {
            b.add(*v, 0.0, 1);
        }
        let (ra, rb) = (a.bootstrap(Statistic::Mean, 500, 7), b.bootstrap(Statistic::Mean, 500, 7));
        assert_eq!(ra, rb, "row order does not matter");
        let mean = a.estimate(Statistic::Mean).unwrap();
        let mid = quantile(&ra, 0.5).unwrap();
        assert!((mid - mean).abs() < 0.13, "{mid} vs {mean}");
        // Large counts: the resampled mean's spread matches sqrt(p(1-p)/n).
        let mut big = Histogram::default();
        big.add(1.0, 0.0, 300_000);
        big.add(0.0, 0.0, 700_000);
        let r = big.bootstrap(Statistic::Mean, 2000, 1);
        let sd = (quantile(&r, 0.8413).unwrap() - quantile(&r, 0.1587).unwrap()) / 2.0;
        let want = (0.21f64 / 1e6).sqrt();
        assert!((sd / want - 1.0).abs() < 0.1, "{sd} vs {want}");
    }
}
