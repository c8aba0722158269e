//! Seeded random variates: standard normal, binomial, Gamma, Beta and multinomial draws from a
//! [`SplitMix64`], for the bootstraps of [`super::stats`] and [`super::clusters`] and the audits'
//! resamples.

use crate::rng::SplitMix64;

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
