//! `lucid theory`: the paper's closed forms on the command line (the report uses the same code).

use std::io::Write;

use clap::{Args, Subcommand};
use serde_json::json;

use super::werr;
use crate::analysis::theory::{self, AttractorInputs};
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

/// `lucid theory`.
#[derive(Args, Debug)]
pub struct TheoryArgs {
    /// Which closed form.
    #[command(subcommand)]
    pub which: TheoryCommand,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text, global = true)]
    pub format: TextOrJson,
}

/// Text for people, JSON for scripts.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextOrJson {
    /// `name = value` lines.
    Text,
    /// One JSON object.
    Json,
}

/// The closed forms of `lucid theory`.
#[derive(Subcommand, Debug)]
pub enum TheoryCommand {
    /// Theorem 2: the corrupted fixed point p*, the one-shot value p0, q'(p*) and where stability
    /// is lost, from coupling kappa, leniency l, sensitivity s and clean error e0.
    Attractor {
        /// Coupling: error slope on retrieved corruption (>= 0).
        #[arg(long)]
        kappa: f64,
        /// Leniency P(r=1 | U=0), in [0, 1].
        #[arg(long)]
        leniency: f64,
        /// Sensitivity P(r=1 | U=1), in [0, 1].
        #[arg(long)]
        sensitivity: f64,
        /// Error at clean retrieval, in [0, 1].
        #[arg(long)]
        e0: f64,
    },
    /// Theorem 1: amplification of wrong memories' influence by inflated scores (b) under softmax
    /// retrieval at temperature T, and through trust tau.
    Amplification {
        /// Score a wrong memory is inflated to.
        #[arg(long)]
        b: f64,
        /// Retrieval temperature T (> 0).
        #[arg(long)]
        temperature: f64,
        /// Wrong memories W.
        #[arg(long)]
        wrong: f64,
        /// Correct memories R.
        #[arg(long)]
        right: f64,
        /// Trust at the inflated score, tau(b).
        #[arg(long, default_value_t = 1.0)]
        tau_b: f64,
        /// Trust at score 0, tau(0) (> 0).
        #[arg(long, default_value_t = 1.0)]
        tau_0: f64,
    },
    /// Proposition 1: a flag helps iff its precision exceeds rho* = h / (g + h).
    Threshold {
        /// Gain of demoting a wrong memory.
        #[arg(long, default_value_t = 1.0)]
        g: f64,
        /// Harm of demoting a correct one.
        #[arg(long, default_value_t = 1.0)]
        h: f64,
        /// A detector's precision, to get its per-flag effect.
        #[arg(long)]
        rho: Option<f64>,
    },
    /// Proposition 2: pulling scores toward a verifier, from Var(b), Cov(nu, b) and Var(nu).
    Pull {
        /// Variance of the bias b = r - U.
        #[arg(long)]
        var_b: f64,
        /// Covariance of the verifier error nu = V - U with b.
        #[arg(long)]
        cov_nu_b: f64,
        /// Variance of the verifier error.
        #[arg(long)]
        var_nu: f64,
    },
}
