//! Statistics of clustered observations (a question asked under several seeds: its rows are not
//! independent trials): the design effect, the Wilson interval at the effective sample size, and
//! a bootstrap that resamples whole clusters.

use super::stats::{Moments, Statistic, has_spread, wilson};
use super::variates::multinomial;
use crate::rng::SplitMix64;

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
/// one cell and a resample is multinomial counts over the sorted cells (as [`Histogram`](super::stats::Histogram) does
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
    use crate::analysis::stats::Z95;

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
