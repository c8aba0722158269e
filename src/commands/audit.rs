//! `lucid audit`: the EIA table and the de-inflation payoff of a memory bank.

use std::io::Write;

use super::werr;
use crate::audit::calibration::calibration;
use crate::audit::controls::{controls, proposition2};
use crate::audit::loso::loso;
use crate::audit::{eia, payoff, read_bank};
use crate::cli::{AuditArgs, TextOrJson};
use crate::error::{Error, Result};

/// `lucid audit`.
pub fn run(a: &AuditArgs) -> Result<()> {
    if a.bootstrap == 0 {
        return Err(Error::Usage("--bootstrap must be at least 1".into()));
    }
    let bank = read_bank(&a.bank, &a.verifiers, &a.seed_col)?;
    let (eia, payoff) = (eia(&bank, a.tau_dec, a.tau_tru), payoff(&bank, a.bootstrap, a.rng_seed));
    let prop2 = proposition2(&bank);
    // The budget to match: the EIA-passing verifier that pays most, else the one that pays most.
    let pays = |p: &&crate::audit::PayoffRow| p.delta.unwrap_or(f64::NEG_INFINITY);
    let verifiers = &payoff[..bank.verifiers.len()];
    let passing: Vec<&crate::audit::PayoffRow> =
        verifiers.iter().filter(|p| eia.iter().any(|e| e.pass && e.verifier == p.verifier)).collect();
    let best = passing
        .into_iter()
        .max_by(|a, b| pays(a).total_cmp(&pays(b)))
        .or_else(|| verifiers.iter().max_by(|a, b| pays(a).total_cmp(&pays(b))));
    let ctl = best.map(|b| controls(&bank, b, 200, a.rng_seed));
    let cal = calibration(&bank);
    let folds = loso(&bank, a.tau_dec, a.tau_tru);
    let mut out = std::io::stdout().lock();
    if a.format == TextOrJson::Json {
        let v = serde_json::json!({"memories": bank.r.len(), "tau_dec": a.tau_dec, "tau_tru": a.tau_tru,
                                   "eia": eia, "payoff": payoff, "proposition2": prop2, "controls": ctl,
                                   "calibration": cal, "leave_one_seed_out": folds});
        return writeln!(out, "{v}").map_err(werr);
    }
    let f = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{:+.3}", if x.abs() < 5e-4 { 0.0 } else { x }));
    writeln!(out, "EIA ({} memories; pass: |Corr(nu,b)| < {} and Corr(V,U) > {})", bank.r.len(), a.tau_dec, a.tau_tru)
        .map_err(werr)?;
    for e in &eia {
        let verdict = if e.pass { "PASS".to_string() } else { format!("FAIL: {}", e.failure) };
        writeln!(out, "  {:<16} Corr(nu,b) {}  Corr(V,U) {}  {verdict}", e.verifier, f(e.corr_nu_b), f(e.corr_v_u))
            .map_err(werr)?;
    }
    writeln!(out, "De-inflation payoff (demotion only; Delta Corr(Q,U), 95 % bootstrap, {} resamples)", a.bootstrap)
        .map_err(werr)?;
    for p in &payoff {
        writeln!(
            out,
            "  {:<16} demoted {:>5} ({} correct)  {} -> {}  Delta {} [{}, {}]  P(Delta>0) {}",
            p.verifier,
            p.demoted,
            p.demoted_correct,
            f(p.before),
            f(p.after),
            f(p.delta),
            f(p.lo),
            f(p.hi),
            p.p_gt_0.map_or("-".into(), |x| format!("{x:.3}"))
        )
        .map_err(werr)?;
    }
    writeln!(out, "Proposition 2 (pull toward the verifier; Var(b) removed at alpha*: predicted / measured)")
        .map_err(werr)?;
    for p in &prop2 {
        writeln!(
            out,
            "  {:<16} beta {:+.3}  Var(eta) {:.4}  alpha* {:.3}  removed {:.4} / {:.4}",
            p.verifier, p.beta, p.var_eta, p.alpha_star, p.removed_predicted, p.removed_measured
        )
        .map_err(werr)?;
    }
    if let Some(c) = &ctl {
        writeln!(
            out,
            "Controls at {}'s budget K = {}: random prune Delta {} ({:.1} correct memories demoted, mean of {} draws)",
            c.verifier,
            c.budget,
            f(c.random_delta),
            c.random_correct_demoted,
            c.draws
        )
        .map_err(werr)?;
        for (share, m, d) in &c.sweep {
            writeln!(out, "  {:>4.0} % of its flags ({m} demoted): Delta {}", share * 100.0, f(*d)).map_err(werr)?;
        }
    }
    writeln!(out, "Global calibration of r (label-blind maps leave every rank statistic unchanged)").map_err(werr)?;
    for c in &cal {
        writeln!(
            out,
            "  {:<20} Spearman {}  AUC {}  top-10 gold {:.2}{}",
            c.map,
            f(c.spearman),
            c.auc.map_or("-".into(), |x| format!("{x:.3}")),
            c.top10,
            if c.reads_u { "  (reads U)" } else { "" }
        )
        .map_err(werr)?;
    }
    if !folds.is_empty() {
        writeln!(out, "Leave-one-seed-out (select on the other seeds, measure on the held-out one)").map_err(werr)?;
        for fold in &folds {
            writeln!(
                out,
                "  seed {:<6} selected {:<16} held-out Delta {}  PASS - FAIL {}",
                fold.held_out,
                fold.selected.as_deref().unwrap_or("(none passes)"),
                f(fold.held_out_delta),
                f(fold.pass_minus_fail)
            )
            .map_err(werr)?;
        }
    }
    Ok(())
}
