//! The statistics every report and audit shares: Wilson score intervals, ordinary least squares
//! with one or two regressors, Pearson and Spearman correlation, and a seeded bootstrap.
//!
//! The bootstrap works on a histogram of distinct observations (a value, or a (y, x) pair) with
//! counts, and draws each resample as multinomial counts over them (sequential binomials), so it
//! costs O(distinct values) per resample, not O(n): a report over millions of episodes whose
//! outcomes are 0/1 and whose corruption takes k + 1 values resamples in microseconds. The
//! histogram is sorted before drawing, so the result does not depend on the order rows arrive in.

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
struct Moments {
    n: f64,
    y: f64,
    x1: f64,
    x2: f64,
    x1x1: f64,
    x2x2: f64,
    x1x2: f64,
    x1y: f64,
    x2y: f64,
}

impl Moments {
    fn add(&mut self, w: f64, y: f64, x1: f64, x2: f64) {
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
    fn ols(&self) -> Option<(f64, f64)> {
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

/// A standard normal draw (Box–Muller).
pub fn normal(rng: &mut SplitMix64) -> f64 {
    let u1 = rng.uniform().max(f64::MIN_POSITIVE);
    let u2 = rng.uniform();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A Binomial(n, p) draw: exact (inversion) while n min(p, 1 - p) < 30, else the normal
/// approximation with continuity correction, clamped to [0, n] (its error is far below a
/// bootstrap's own Monte Carlo error at such sizes).
pub fn binomial(rng: &mut SplitMix64, n: u64, p: f64) -> u64 {
    if n == 0 || p <= 0.0 {
        return 0;
    }
    if p >= 1.0 {
        return n;
    }
    if p > 0.5 {
        return n - binomial(rng, n, 1.0 - p);
    }
    let nf = n as f64;
    if nf * p < 30.0 {
        let q = 1.0 - p;
        let ratio = p / q;
        let mut pmf = q.powf(nf);
        let mut cdf = pmf;
        let u = rng.uniform();
        let mut k = 0u64;
        while u > cdf && k < n {
            pmf *= ratio * (nf - k as f64) / (k as f64 + 1.0);
            k += 1;
            cdf += pmf;
            if pmf < 1e-300 {
                break;
            }
        }
        return k;
    }
    let draw = nf * p + (nf * p * (1.0 - p)).sqrt() * normal(rng);
    draw.round().clamp(0.0, nf) as u64
}

/// A Gamma(shape, 1) draw (Marsaglia and Tsang 2000; a shape below 1 boosted by U^(1/shape)).
pub fn gamma(rng: &mut SplitMix64, shape: f64) -> f64 {
    if shape < 1.0 {
        let u = rng.uniform().max(f64::MIN_POSITIVE);
        return gamma(rng, shape + 1.0) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = rng.uniform().max(f64::MIN_POSITIVE);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// A Beta(a, b) draw, as the share of two Gamma draws.
pub fn beta(rng: &mut SplitMix64, a: f64, b: f64) -> f64 {
    let (x, y) = (gamma(rng, a), gamma(rng, b));
    if x + y > 0.0 { x / (x + y) } else { 0.5 }
}

/// Multinomial(n, probs) counts into `out`, by sequential conditional binomials.
pub fn multinomial(rng: &mut SplitMix64, n: u64, probs: &[f64], out: &mut [u64]) {
    let (mut left, mut mass) = (n, 1.0);
    for (i, &p) in probs.iter().enumerate() {
        if i + 1 == probs.len() {
            out[i] = left;
            break;
        }
        let c = if mass > 0.0 { binomial(rng, left, (p / mass).min(1.0)) } else { 0 };
        out[i] = c;
        left -= c;
        mass -= p;
    }
}

/// The design effect of clustered 0/1 outcomes: how much the clusters inflate the variance of
/// the pooled share p = sum s_c / sum n_c over treating every observation as independent, as the
/// ratio of the cluster-robust to the binomial residual sum of squares,
/// `sum_c (s_c - p n_c)^2 / sum_i (x_i - p)^2`, at least 1 (never narrower than independent
/// trials). `clusters` holds each cluster's (n_c, s_c); `sum_sq` is `sum_i x_i^2` (= sum s_c for
/// 0/1 outcomes). Exactly 1 when every cluster holds one observation, or when the observations do
/// not vary (p 0 or 1). Kish's design effect; its inverse scales n to the effective sample size
/// (Korn and Graubard 1998).
pub fn design_effect(clusters: &[(f64, f64)], sum_sq: f64) -> f64 {
    deff_of_cells(&cluster_cells(clusters), sum_sq)
}

fn deff_of_cells(cells: &[(f64, f64, f64)], sum_sq: f64) -> f64 {
    let (n, k) = totals(cells);
    if n <= 0.0 || cells.iter().all(|c| c.0 <= 1.0) {
        return 1.0;
    }
    let p = k / n;
    let within = sum_sq - k * p;
    if !has_spread(within, sum_sq) {
        return 1.0;
    }
    let between: f64 = cells.iter().map(|&(nc, sc, count)| count * (sc - p * nc).powi(2)).sum();
    (between / within).max(1.0)
}

/// The distinct (n_c, s_c) of `clusters` with how many clusters have each, sorted: sums over
/// them take a fixed order (whatever order the rows came in) and cost O(distinct) once built.
fn cluster_cells(clusters: &[(f64, f64)]) -> Vec<(f64, f64, f64)> {
    let mut count: std::collections::HashMap<(u64, u64), f64> = Default::default();
    for &(n, s) in clusters {
        *count.entry((n.to_bits(), s.to_bits())).or_default() += 1.0;
    }
    let mut cells: Vec<(f64, f64, f64)> =
        count.into_iter().map(|((n, s), c)| (f64::from_bits(n), f64::from_bits(s), c)).collect();
    cells.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    cells
}

/// (sum n_c, sum s_c) over cells (n_c, s_c, clusters).
fn totals(cells: &[(f64, f64, f64)]) -> (f64, f64) {
    cells.iter().fold((0.0, 0.0), |(n, k), c| (n + c.2 * c.0, k + c.2 * c.1))
}

/// The Wilson score interval of clustered 0/1 outcomes at normal quantile `z`: Wilson at the
/// effective sample size n / deff ([`design_effect`]), so the same question asked under two
/// seeds counts once when its two answers agree and twice when they are independent; exactly
/// [`wilson`] when every cluster holds one observation. None when there is no observation.
pub fn cluster_wilson(clusters: &[(f64, f64)], sum_sq: f64, z: f64) -> Option<(f64, f64)> {
    let cells = cluster_cells(clusters);
    let (n, k) = totals(&cells);
    let deff = deff_of_cells(&cells, sum_sq);
    wilson(k / deff, n / deff, z)
}

impl Moments {
    /// `w` copies of the sums `m` (a whole cluster) added.
    fn add_sums(&mut self, w: f64, m: &Moments) {
        self.n += w * m.n;
        self.y += w * m.y;
        self.x1 += w * m.x1;
        self.x1x1 += w * m.x1x1;
        self.x1y += w * m.x1y;
    }

    /// The sums a one-regressor fit reads, in a fixed order.
    fn sums(&self) -> [f64; 5] {
        [self.n, self.y, self.x1, self.x1x1, self.x1y]
    }
}

/// `resamples` cluster-bootstrap replicates of `stat` on rows (cluster key, y, x), sorted
/// ascending (resamples where it is undefined are dropped): each resample draws as many clusters
/// as there are, with replacement, and keeps every row of a drawn cluster together. The rows
/// are sorted first and each cluster's sums taken in that order; clusters with equal sums form
/// one cell and a resample is multinomial counts over the sorted cells (as [`Histogram`] does
/// for rows), so the result depends neither on row order nor on the keys' values, and costs
/// O(distinct clusters) per resample.
pub fn cluster_bootstrap(rows: &mut [(i64, f64, f64)], stat: Statistic, resamples: usize, seed: u64) -> Vec<f64> {
    rows.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.total_cmp(&b.2)));
    let mut index: std::collections::HashMap<[u64; 5], usize> = Default::default();
    let mut cells: Vec<(Moments, u64)> = Vec::new();
    for cluster in rows.chunk_by(|a, b| a.0 == b.0) {
        let mut m = Moments::default();
        cluster.iter().for_each(|&(_, y, x)| m.add(1.0, y, x, 0.0));
        let key = m.sums().map(f64::to_bits);
        match index.get(&key) {
            Some(&i) => cells[i].1 += 1,
            None => {
                index.insert(key, cells.len());
                cells.push((m, 1));
            }
        }
    }
    let order = |a: &Moments, b: &Moments| {
        a.sums()
            .iter()
            .zip(b.sums())
            .map(|(x, y)| x.total_cmp(&y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    cells.sort_by(|a, b| order(&a.0, &b.0));
    let clusters: u64 = cells.iter().map(|c| c.1).sum();
    if clusters == 0 {
        return Vec::new();
    }
    let probs: Vec<f64> = cells.iter().map(|c| c.1 as f64 / clusters as f64).collect();
    let mut rng = SplitMix64(seed);
    let mut weights = vec![0u64; cells.len()];
    let mut out = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        multinomial(&mut rng, clusters, &probs, &mut weights);
        let mut m = Moments::default();
        for ((c, _), &w) in cells.iter().zip(&weights) {
            if w > 0 {
                m.add_sums(w as f64, c);
            }
        }
        let v = match stat {
            Statistic::Mean => (m.n > 0.0).then(|| m.y / m.n),
            Statistic::Slope => m.ols().map(|(_, s)| s),
            Statistic::Intercept => m.ols().map(|(i, _)| i),
        };
        out.extend(v);
    }
    out.sort_by(f64::total_cmp);
    out
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

#[cfg(test)]
mod cluster_tests {
    use super::*;

    #[test]
    fn cluster_wilson_is_wilson_for_singletons_and_one_seed_for_copies() {
        let u = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0];
        let k: f64 = u.iter().sum();
        let singletons: Vec<(f64, f64)> = u.iter().map(|&x| (1.0, x)).collect();
        assert_eq!(cluster_wilson(&singletons, k, Z95), wilson(k, 7.0, Z95));
        // The same questions under two seeds with identical answers: deff 2, one seed's interval.
        let copies: Vec<(f64, f64)> = u.iter().map(|&x| (2.0, 2.0 * x)).collect();
        assert!((design_effect(&copies, 2.0 * k) - 2.0).abs() < 1e-12);
        let ((a, b), (c, d)) = (cluster_wilson(&copies, 2.0 * k, Z95).unwrap(), wilson(k, 7.0, Z95).unwrap());
        assert!((a - c).abs() < 1e-12 && (b - d).abs() < 1e-12, "{a} {b} vs {c} {d}");
        assert_eq!(cluster_wilson(&[], 0.0, Z95), None);
        // Constant outcomes: no spread to inflate.
        assert_eq!(design_effect(&[(2.0, 2.0), (3.0, 3.0)], 5.0), 1.0);
    }

    #[test]
    fn cluster_bootstrap_ignores_row_order_and_key_values() {
        let mut rows: Vec<(i64, f64, f64)> =
            (0..60i64).map(|i| (i % 17, f64::from(u8::from((i * 7) % 5 == 0)), (i % 4) as f64 / 4.0)).collect();
        let a = cluster_bootstrap(&mut rows.clone(), Statistic::Slope, 500, 3);
        rows.reverse();
        let mut relabelled: Vec<(i64, f64, f64)> = rows.iter().map(|&(k, y, x)| (1000 - 3 * k, y, x)).collect();
        assert_eq!(a, cluster_bootstrap(&mut rows, Statistic::Slope, 500, 3));
        assert_eq!(a, cluster_bootstrap(&mut relabelled, Statistic::Slope, 500, 3));
        assert!(a.len() == 500 && a[0] < a[499]);
        assert!(cluster_bootstrap(&mut [], Statistic::Mean, 10, 3).is_empty());
    }
}
