//! The paper's theory in closed form: Theorem 1 (amplification of wrong memories through
//! retrieval and trust), Theorem 2 (the corrupted attractor of the self-grading loop),
//! Proposition 1 (the precision threshold for flagging) and Proposition 2 (pulling stored scores
//! toward a verifier). Pure `f64` functions, no I/O: reports check the paper's figures against
//! them, so each one is the equation as printed, with its degenerate corners documented.

use crate::error::Invalid;
use serde::Serialize;

/// Theorem 1, retrieval channel: `A_ret = e^{b/T} (W + R e^{1/T}) / (W e^{b/T} + R e^{1/T})`,
/// the factor by which softmax retrieval at temperature `t` boosts the error mass of `wrong`
/// memories inflated to score `b`, against `right` correct ones at score 1.
///
/// Computed with numerator and denominator divided by `e^{1/T}`, so no exponent overflows at
/// small `t` when `b <= 1`. For `b >= 0`, `1 <= A_ret <= e^{b/T}`; `b = 0` (similarity-only
/// retrieval) gives exactly 1. Needs `t > 0` and `wrong + right > 0`.
pub fn a_ret(b: f64, t: f64, wrong: f64, right: f64) -> f64 {
    (b / t).exp() * (wrong * (-1.0 / t).exp() + right) / (wrong * ((b - 1.0) / t).exp() + right)
}

/// Theorem 1, trust channel: `A_tr = tau(b) / tau(0)`, the trust weight of an inflated memory
/// over that of an honestly scored one. Needs `tau_0 > 0`.
pub fn a_tr(tau_b: f64, tau_0: f64) -> f64 {
    tau_b / tau_0
}

/// Theorem 1: both amplification channels and their product.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Amplification {
    /// Retrieval channel, [`a_ret`].
    pub a_ret: f64,
    /// Trust channel, [`a_tr`].
    pub a_tr: f64,
    /// Total amplification `A = A_ret * A_tr`.
    pub a: f64,
}

/// Theorem 1 in full: [`a_ret`]`(b, t, wrong, right)`, [`a_tr`]`(tau_b, tau_0)` and their product.
pub fn amplification(b: f64, t: f64, wrong: f64, right: f64, tau_b: f64, tau_0: f64) -> Amplification {
    let a_ret = a_ret(b, t, wrong, right);
    let a_tr = a_tr(tau_b, tau_0);
    Amplification { a_ret, a_tr, a: a_ret * a_tr }
}

/// Theorem 2's inputs, in the paper's words.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct AttractorInputs {
    /// Coupling `kappa >= 0`: slope of agent error on retrieved corruption.
    pub kappa: f64,
    /// Leniency `l = P(r=1 | U=0)`: how often the self-grade trusts a wrong memory.
    pub leniency: f64,
    /// Sensitivity `s = P(r=1 | U=1)`: how often the self-grade trusts a correct memory.
    pub sensitivity: f64,
    /// Error rate `e0` at clean retrieval.
    pub e0: f64,
}

/// Theorem 2's outputs: where the self-grading loop settles and whether it stays there.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Attractor {
    /// Trusted-bank corruption the loop settles at: the smallest fixed point of `p = q(e(p))`.
    pub p_star: f64,
    /// Static (no-loop) corruption `p0 = q(e0)`.
    pub p0: f64,
    /// `p* / p0`; 1 when `p0 = 0` (then `p* = 0` too: there is nothing to amplify).
    pub ratio: f64,
    /// `q'(p*) = kappa l s / (e* (l-s) + s)^2`; 0 where `e` is saturated at 1 around `p*`.
    pub slope: f64,
    /// Local stability: `slope < 1`.
    pub stable: bool,
    /// The tipping coupling for these `l, s, e0`, if any (see [`attractor`]).
    pub kappa_critical: Option<f64>,
}

/// Theorem 2: the corrupted attractor of `e(p) = min(1, e0 + kappa p)`,
/// `q(p) = e l / (e l + (1-e) s)`.
///
/// `p*` is the smallest fixed point of `p = q(e(p))` in `[0, 1]`, the one the loop reaches from
/// the static value (`q` is nondecreasing, so iterates from `p = 0` climb to it). Below
/// saturation it is the smallest root in `[0, (1-e0)/kappa]` of
/// `kappa (l-s) p^2 + (e0 (l-s) + s - kappa l) p - e0 l = 0` (linear when `l = s` or
/// `kappa = 0`), found with the cancellation-free quadratic formula. With no such root every
/// unsaturated `p` has `q(p) > p`, and the loop runs away to `p* = 1`, where `e = 1`, `q = 1`.
/// Conventions: `q = 0` when `e l = 0` (nothing wrong is trusted), so `e0 = 0` or `l = 0` give
/// `p* = p0 = 0`; with `e0 = s = 0 < kappa, l` the slope at `p* = 0` is infinite (`q` jumps to 1).
///
/// The smallest fixed point always has `q'(p*) <= 1`, so stability is lost only where it meets
/// the unstable one and both vanish (a double root, `q' = 1`), and `p*` jumps to 1. That happens
/// only for a strict judge (`s > l`), at `kappa_critical`: the smaller zero of the
/// discriminant, itself a quadratic in `kappa`, when its double root lies below saturation.
/// For `e0 = 0` it is `s / l`, where `q'(0) = kappa l / s` crosses 1.
///
/// Errors name the input when `l`, `s` or `e0` is outside `[0, 1]`, or `kappa` is negative or
/// not finite.
pub fn attractor(inp: AttractorInputs) -> std::result::Result<Attractor, Invalid> {
    let AttractorInputs { kappa, leniency: l, sensitivity: s, e0 } = inp;
    for (name, value) in [("leniency", l), ("sensitivity", s), ("e0", e0)] {
        if !(0.0..=1.0).contains(&value) {
            return Err(Invalid(format!("{name} must be a probability in [0, 1], got {value}")));
        }
    }
    if !kappa.is_finite() || kappa < 0.0 {
        return Err(Invalid(format!("kappa must be a finite coupling >= 0, got {kappa}")));
    }
    let p_star = fixed_point(kappa, l, s, e0);
    let p0 = corruption(e0, l, s);
    let slope = slope_at(p_star, kappa, l, s, e0);
    Ok(Attractor {
        p_star,
        p0,
        ratio: if p0 > 0.0 { p_star / p0 } else { 1.0 },
        slope,
        stable: slope < 1.0,
        kappa_critical: kappa_critical(l, s, e0),
    })
}

/// `q(e)`: the share of trusted memories that are wrong at error rate `e`. When `e l > 0` the
/// denominator is at least the numerator, so the only 0/0 corners have `e l = 0`, taken as 0.
fn corruption(e: f64, l: f64, s: f64) -> f64 {
    let wrong_trusted = e * l;
    if wrong_trusted == 0.0 { 0.0 } else { wrong_trusted / (wrong_trusted + (1.0 - e) * s) }
}

/// The smallest fixed point of `p = q(e(p))` in `[0, 1]` (see [`attractor`]).
fn fixed_point(kappa: f64, l: f64, s: f64, e0: f64) -> f64 {
    let c = -e0 * l;
    if c == 0.0 {
        return 0.0;
    }
    // Largest p where e0 + kappa p <= 1, i.e. where the quadratic describes the loop.
    let unsaturated = if e0 + kappa <= 1.0 { 1.0 } else { (1.0 - e0) / kappa };
    smallest_root(kappa * (l - s), e0 * (l - s) + s - kappa * l, c, unsaturated).unwrap_or(1.0)
}

/// The smallest real root of `a x^2 + b x + c` (with `c != 0`) in `[0, hi]`, capped at 1.
fn smallest_root(a: f64, b: f64, c: f64, hi: f64) -> Option<f64> {
    let roots = if a == 0.0 {
        [-c / b, f64::NAN]
    } else {
        let disc = b * b - 4.0 * a * c;
        // Rounding can push a double root's discriminant just below zero.
        if disc < -4.0 * f64::EPSILON * (b * b + (4.0 * a * c).abs()) {
            return None;
        }
        let q = -0.5 * (b + b.signum() * disc.max(0.0).sqrt());
        [q / a, c / q]
    };
    roots.into_iter().filter(|r| (0.0..=hi + 1e-12).contains(r)).min_by(f64::total_cmp).map(|r| r.min(1.0))
}

/// `q'(p)` along the loop: `kappa l s / (e (l-s) + s)^2` (see [`attractor`] for the corners).
fn slope_at(p: f64, kappa: f64, l: f64, s: f64, e0: f64) -> f64 {
    let e = e0 + kappa * p;
    if e > 1.0 || l == 0.0 {
        return 0.0;
    }
    let d = e * (l - s) + s;
    if d == 0.0 {
        return if kappa > 0.0 { f64::INFINITY } else { 0.0 };
    }
    kappa * l * s / (d * d)
}

/// The smallest `kappa >= 0` at which the attractor loses stability (see [`attractor`]).
fn kappa_critical(l: f64, s: f64, e0: f64) -> Option<f64> {
    if l == 0.0 {
        return None;
    }
    if e0 == 0.0 {
        return Some(s / l);
    }
    if s <= l {
        return None;
    }
    // Discriminant as a quadratic in kappa: l^2 k^2 - 2 l c k + b^2, with roots
    // (c -+ 2 sqrt(e0 s (s-l))) / l; the smaller one written as b^2 / (l * larger).
    let b = e0 * (l - s) + s;
    let c = s + e0 * (s - l);
    let kappa = b * b / (l * (c + 2.0 * (e0 * s * (s - l)).sqrt()));
    let double_root = (b - kappa * l) / (2.0 * kappa * (s - l));
    (double_root <= 1.0 && e0 + kappa * double_root <= 1.0).then_some(kappa)
}

/// Proposition 1: flagging is beneficial iff its precision `rho` exceeds `rho* = h / (g + h)`,
/// with `g` the gain of a correct flag and `h` the harm of a wrong one (the paper uses 0.5).
pub fn precision_threshold(g: f64, h: f64) -> f64 {
    h / (g + h)
}

/// Proposition 1: the expected effect of one flag at precision `rho`: `rho g - (1-rho) h`.
pub fn per_flag_effect(rho: f64, g: f64, h: f64) -> f64 {
    rho * g - (1.0 - rho) * h
}

/// Proposition 2: pulling stored scores toward a verifier, `Q' = Q - alpha (Q - V)`, with the
/// verifier's error written `nu = beta b + eta`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Pull {
    /// `beta = Cov(nu, b) / Var(b)`: how much of the bias the verifier shares.
    pub beta: f64,
    /// `Var(eta) = Var(nu) - beta^2 Var(b)`, rounding negatives clamped to 0.
    pub var_eta: f64,
    /// The best step `alpha* = (1-beta) Var(b) / ((1-beta)^2 Var(b) + Var(eta))` in `[0, 1]`.
    pub alpha_star: f64,
    /// Bias variance removed at `alpha*`: `(1-beta)^2 Var(b)^2 / ((1-beta)^2 Var(b) + Var(eta))`
    /// when that optimum lies in `[0, 1]`; 0 when `beta >= 1`.
    pub removed: f64,
    /// `Var(b')` at `alpha*`, [`var_b_after`].
    pub var_b_after_best: f64,
}

/// Proposition 2 from the moments of the stored bias `b` and the verifier's error `nu`.
///
/// When `beta >= 1` every `alpha` in `(0, 1]` makes the bias worse, so `alpha* = 0` and nothing
/// is removed. When the unconstrained optimum exceeds 1, `alpha* = 1` and `removed` is what that
/// step achieves. `Var(b) <= 0` leaves no bias spread to remove: `beta` is taken as 0, so
/// `Var(eta) = Var(nu)` and `alpha* = removed = 0`.
pub fn pull(var_b: f64, cov_nu_b: f64, var_nu: f64) -> Pull {
    if var_b <= 0.0 {
        let var_eta = var_nu.max(0.0);
        return Pull { beta: 0.0, var_eta, alpha_star: 0.0, removed: 0.0, var_b_after_best: 0.0 };
    }
    let beta = cov_nu_b / var_b;
    let var_eta = (var_nu - beta * beta * var_b).max(0.0);
    let unshared = 1.0 - beta;
    let denom = unshared * unshared * var_b + var_eta;
    let (alpha_star, removed) = if beta >= 1.0 {
        (0.0, 0.0)
    } else if unshared * var_b <= denom {
        (unshared * var_b / denom, unshared * unshared * var_b * var_b / denom)
    } else {
        (1.0, var_b - var_b_after(1.0, beta, var_b, var_eta))
    };
    let var_b_after_best = var_b_after(alpha_star, beta, var_b, var_eta);
    Pull { beta, var_eta, alpha_star, removed, var_b_after_best }
}

/// Proposition 2: bias variance after a pull of size `alpha`:
/// `Var(b') = (1 - alpha (1-beta))^2 Var(b) + alpha^2 Var(eta)`.
pub fn var_b_after(alpha: f64, beta: f64, var_b: f64, var_eta: f64) -> f64 {
    let kept = 1.0 - alpha * (1.0 - beta);
    kept * kept * var_b + alpha * alpha * var_eta
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(kappa: f64, leniency: f64, sensitivity: f64, e0: f64) -> AttractorInputs {
        AttractorInputs { kappa, leniency, sensitivity, e0 }
    }

    fn solve(kappa: f64, l: f64, s: f64, e0: f64) -> Attractor {
        attractor(inputs(kappa, l, s, e0)).expect("valid inputs")
    }

    fn close(actual: f64, expected: f64, tol: f64) -> bool {
        (actual - expected).abs() <= tol
    }

    #[test]
    fn attractor_matches_the_papers_bird_figures() {
        let at = solve(0.38, 0.76, 0.90, 0.32);
        assert!(close(at.p_star, 0.448, 5e-4), "{at:?}");
        assert!(close(at.p0, 0.284, 5e-4), "{at:?}");
        assert!(close(at.ratio, 1.58, 5e-3), "{at:?}");
        assert!(close(at.slope, 0.376, 5e-4), "{at:?}");
        assert!(at.stable);
        assert!(close(corruption(0.32 + 0.38 * at.p_star, 0.76, 0.90), at.p_star, 1e-12));
    }

    #[test]
    fn p_star_is_where_the_loop_settles_from_the_static_value() {
        let cases = [
            (0.38, 0.76, 0.90, 0.32),
            (0.4, 0.7, 0.4, 0.2),
            (0.2, 0.6, 0.6, 0.1),
            (0.0, 0.3, 0.8, 0.5),
            (2.0, 0.9, 0.2, 0.3),
        ];
        for (kappa, l, s, e0) in cases {
            let mut p: f64 = 0.0;
            for _ in 0..10_000 {
                p = corruption((e0 + kappa * p).min(1.0), l, s);
            }
            let at = solve(kappa, l, s, e0);
            assert!(close(at.p_star, p, 1e-9), "{kappa} {l} {s} {e0}: {at:?} vs {p}");
        }
    }

    #[test]
    fn kappa_critical_is_a_tipping_point_for_a_strict_judge() {
        let kc = solve(0.0, 0.2, 0.9, 0.3).kappa_critical.expect("s > l has a tipping point");
        assert!(close(kc, 1.202_587, 1e-6), "{kc}");
        let below = solve(kc - 1e-6, 0.2, 0.9, 0.3);
        assert!(below.stable && below.slope > 0.99 && below.p_star < 0.3, "{below:?}");
        assert!(close(solve(kc, 0.2, 0.9, 0.3).slope, 1.0, 1e-6));
        let above = solve(kc + 1e-6, 0.2, 0.9, 0.3);
        assert!(close(above.p_star, 1.0, 0.0), "the loop runs away: {above:?}");
        let zero_e0 = solve(0.0, 0.2, 0.9, 0.0).kappa_critical;
        assert_eq!(zero_e0, Some(0.9 / 0.2));
        assert!(!solve(4.6, 0.2, 0.9, 0.0).stable && solve(4.4, 0.2, 0.9, 0.0).stable);
    }

    #[test]
    fn papers_judge_and_lenient_judges_never_tip() {
        assert_eq!(solve(0.38, 0.76, 0.90, 0.32).kappa_critical, None);
        assert_eq!(solve(0.38, 0.9, 0.2, 0.3).kappa_critical, None);
        for i in 0..=5_000 {
            let at = solve(f64::from(i) / 100.0, 0.76, 0.90, 0.32);
            assert!(at.stable, "{at:?}");
        }
    }

    #[test]
    fn bad_attractor_inputs_name_the_input() {
        let err = |inp| attractor(inp).expect_err("invalid input");
        assert!(err(inputs(0.38, 1.2, 0.9, 0.32)).0.contains("leniency"));
        assert!(err(inputs(0.38, 0.76, -0.1, 0.32)).0.contains("sensitivity"));
        assert!(err(inputs(0.38, 0.76, 0.9, f64::NAN)).0.contains("e0"));
        assert!(err(inputs(-1.0, 0.76, 0.9, 0.32)).0.contains("kappa"));
    }

    #[test]
    fn retrieval_amplification_is_one_without_inflation_and_bounded_by_the_boost() {
        for t in [0.05, 0.1, 0.5, 1.0, 2.0] {
            for (w, r) in [(1.0, 0.0), (0.0, 1.0), (3.0, 7.0), (50.0, 5.0)] {
                assert!(close(a_ret(0.0, t, w, r), 1.0, 1e-12));
                for i in 0..=10 {
                    let b = f64::from(i) / 10.0;
                    let (a, boost) = (a_ret(b, t, w, r), (b / t).exp());
                    assert!(a >= 1.0 - 1e-12 && a <= boost * (1.0 + 1e-12), "{b} {t} {w} {r}: {a}");
                    let printed = boost * (w + r * (1.0 / t).exp()) / (w * boost + r * (1.0 / t).exp());
                    assert!(close(a, printed, 1e-9 * printed));
                }
            }
        }
        let amp = amplification(0.5, 0.1, 3.0, 7.0, 0.9, 0.6);
        assert!(close(amp.a_ret, 147.989, 1e-3) && close(amp.a_tr, 1.5, 1e-12));
        assert!(close(amp.a, amp.a_ret * 1.5, 1e-9));
    }

    #[test]
    fn best_pull_removes_the_closed_form_and_is_the_minimum() {
        let p = pull(1.0, 0.3, 0.5);
        assert!(close(p.beta, 0.3, 1e-12) && close(p.var_eta, 0.41, 1e-12));
        assert!(close(p.alpha_star, 0.7 / 0.9, 1e-12) && close(p.removed, 0.49 / 0.9, 1e-12));
        let best = var_b_after(p.alpha_star, p.beta, 1.0, p.var_eta);
        assert!(close(best, 1.0 - p.removed, 1e-12) && close(best, p.var_b_after_best, 1e-12));
        for i in 0..=100 {
            assert!(var_b_after(f64::from(i) / 100.0, p.beta, 1.0, p.var_eta) >= best - 1e-12);
        }
    }

    #[test]
    fn pull_corners() {
        let shared = pull(1.0, 1.2, 2.0);
        assert!(close(shared.alpha_star, 0.0, 0.0) && close(shared.removed, 0.0, 0.0));
        assert!(var_b_after(0.5, shared.beta, 1.0, shared.var_eta) > 1.0);
        let clamped = pull(1.0, 0.5, 0.25);
        assert!(close(clamped.alpha_star, 1.0, 0.0) && close(clamped.removed, 0.75, 1e-12));
        let flat = pull(0.0, 0.0, 0.3);
        assert!(close(flat.alpha_star, 0.0, 0.0) && close(flat.var_b_after_best, 0.0, 0.0));
    }

    #[test]
    fn precision_threshold_and_flag_effect() {
        assert!(close(precision_threshold(1.0, 1.0), 0.5, 1e-12));
        assert!(close(per_flag_effect(precision_threshold(2.0, 1.0), 2.0, 1.0), 0.0, 1e-12));
        assert!(per_flag_effect(0.6, 1.0, 1.0) > 0.0 && per_flag_effect(0.4, 1.0, 1.0) < 0.0);
    }
}
