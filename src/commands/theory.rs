//! `lucid theory`: the paper's closed forms on the command line (the report uses the same code).

use std::io::Write;

use serde_json::json;

use super::werr;
use crate::analysis::theory::{self, AttractorInputs};
use crate::cli::{TextOrJson, TheoryArgs, TheoryCommand};
use crate::error::{Error, Result};

/// `lucid theory`.
pub fn run(a: &TheoryArgs) -> Result<()> {
    let value = match a.which {
        TheoryCommand::Attractor { kappa, leniency, sensitivity, e0 } => {
            let inputs = AttractorInputs { kappa, leniency, sensitivity, e0 };
            let t = theory::attractor(inputs).map_err(Error::usage)?;
            json!({"inputs": inputs, "p_star": t.p_star, "p0": t.p0, "ratio": t.ratio, "slope": t.slope,
                   "stable": t.stable, "kappa_critical": t.kappa_critical})
        }
        TheoryCommand::Amplification { b, temperature, wrong, right, tau_b, tau_0 } => {
            if temperature <= 0.0 || tau_0 <= 0.0 || wrong + right <= 0.0 {
                return Err(Error::usage("--temperature and --tau-0 must be > 0, and --wrong + --right > 0"));
            }
            let t = theory::amplification(b, temperature, wrong, right, tau_b, tau_0);
            json!({"a_ret": t.a_ret, "a_tr": t.a_tr, "a": t.a})
        }
        TheoryCommand::Threshold { g, h, rho } => {
            if g + h <= 0.0 {
                return Err(Error::usage("--g + --h must be > 0"));
            }
            let rho_star = theory::precision_threshold(g, h);
            let effect = rho.map(|r| theory::per_flag_effect(r, g, h));
            json!({"rho_star": rho_star, "per_flag_effect": effect, "beneficial": rho.map(|r| r > rho_star)})
        }
        TheoryCommand::Pull { var_b, cov_nu_b, var_nu } => {
            serde_json::to_value(theory::pull(var_b, cov_nu_b, var_nu)).map_err(|e| Error::usage_from("", e))?
        }
    };
    let mut out = std::io::stdout().lock();
    match a.format {
        TextOrJson::Json => writeln!(out, "{value}").map_err(werr),
        TextOrJson::Text => {
            let show = |v: &serde_json::Value| match v.as_f64() {
                Some(x) => format!("{x:.3}"),
                None => v.to_string(),
            };
            for (k, v) in value.as_object().into_iter().flatten() {
                match v.as_object() {
                    Some(inner) => {
                        for (k, v) in inner {
                            writeln!(out, "{k:<16} {}", show(v)).map_err(werr)?;
                        }
                    }
                    None => writeln!(out, "{k:<16} {}", show(v)).map_err(werr)?,
                }
            }
            Ok(())
        }
    }
}
