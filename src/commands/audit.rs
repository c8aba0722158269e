//! `lucid audit`: the EIA table and the de-inflation payoff of a memory bank.

use std::io::Write;

use super::werr;
use crate::audit::{eia, payoff, read_bank};
use crate::cli::{AuditArgs, TextOrJson};
use crate::error::{Error, Result};

/// `lucid audit`.
pub fn run(a: &AuditArgs) -> Result<()> {
    if a.bootstrap == 0 {
        return Err(Error::Usage("--bootstrap must be at least 1".into()));
    }
    let bank = read_bank(&a.bank, &a.verifiers)?;
    let (eia, payoff) = (eia(&bank, a.tau_dec, a.tau_tru), payoff(&bank, a.bootstrap, a.rng_seed));
    let mut out = std::io::stdout().lock();
    if a.format == TextOrJson::Json {
        let v = serde_json::json!({"memories": bank.r.len(), "tau_dec": a.tau_dec, "tau_tru": a.tau_tru,
                                   "eia": eia, "payoff": payoff});
        return writeln!(out, "{v}").map_err(werr);
    }
    let f = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:+.3}"));
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
    Ok(())
}
