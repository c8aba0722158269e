//! `lucid audit`: the paper's bank-level tables for a bank file or an agent run's own bank.

use std::io::Write;

use super::werr;
use crate::audit::{Columns, Options, audit, read_bank, tables};
use crate::cli::{AuditArgs, AuditFormat};
use crate::error::{Error, Result};

/// `lucid audit`.
pub fn run(a: &AuditArgs) -> Result<()> {
    if a.bootstrap == 0 {
        return Err(Error::usage("--bootstrap must be at least 1"));
    }
    let cols = Columns {
        verifiers: a.verifiers.clone(),
        ensemble: a.ensemble.clone(),
        seed: a.seed_col.clone(),
        sc: a.sc_col.clone(),
        n: a.n_col.clone(),
        graded: a.graded_col.clone(),
        truth: true,
    };
    if a.sample.is_some() || a.labels.is_some() {
        return hand(a, &cols);
    }
    // A run with episodes but no truth (an imported bank without gold): its labels against the
    // verifiers, and why the rest cannot be computed.
    if a.bank.is_dir() && a.bank.join("episodes").is_dir() && !a.bank.join("evaluation").exists() {
        let t = crate::audit::no_truth::no_truth(&a.bank, a.arm.as_deref())?;
        let text = match a.format {
            AuditFormat::Json => serde_json::json!({"no_truth": t}).to_string() + "\n",
            _ => crate::audit::no_truth::markdown(&t, &a.bank.display().to_string()),
        };
        return std::io::stdout().lock().write_all(text.as_bytes()).map_err(werr);
    }
    let bank = read_bank(&a.bank, &cols, a.arm.as_deref())?;
    let opts = Options {
        tau_dec: a.tau_dec,
        tau_tru: a.tau_tru,
        bootstrap: a.bootstrap,
        rng_seed: a.rng_seed,
        random_draws: a.random_draws,
    };
    let result = audit(&bank, &opts);
    let source = match &bank.arm {
        Some(arm) => format!("{} (arm {arm})", a.bank.display()),
        None => a.bank.display().to_string(),
    };
    let text = match a.format {
        AuditFormat::Md => tables::markdown(&result, &source),
        AuditFormat::Json => tables::json(&result).to_string() + "\n",
        AuditFormat::Html => tables::html(&result, &source),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).map_err(werr)?;
    if let Some(dir) = &a.out {
        let page = tables::write(&result, &source, dir)?;
        eprintln!("audit written: {}", page.display());
    }
    Ok(())
}

/// `lucid audit --sample N` (the labelling sheet) and `--labels FILE` (the audit from it).
fn hand(a: &AuditArgs, cols: &Columns) -> Result<()> {
    use crate::audit::{design, hand, sheet};
    let m = sheet::memories(&a.bank, cols, a.arm.as_deref())?;
    let mut out = std::io::stdout().lock();
    if let Some(n) = a.sample {
        let picked = design::draw(&design::strata(&m.bank, n), n, a.rng_seed)?;
        out.write_all(sheet::sheet(&m, &picked).as_bytes()).map_err(werr)?;
        eprintln!(
            "{} of {} memories sampled: fill the u column (1 right, 0 wrong, empty when unsure), keep every row, then \
             lucid audit {} --labels SHEET.csv",
            picked.len(),
            m.bank.r.len(),
            a.bank.display()
        );
        return Ok(());
    }
    let path = a.labels.as_ref().expect("called with --sample or --labels");
    let (rows, picked, u) = sheet::labels(path, &m)?;
    let result = hand::hand_audit(&m.bank, rows, &picked, &u, a.tau_dec, a.tau_tru)?;
    let text = match a.format {
        AuditFormat::Json => serde_json::json!({"hand_labels": result}).to_string() + "\n",
        _ => hand::markdown(&result, &a.bank.display().to_string()),
    };
    out.write_all(text.as_bytes()).map_err(werr)
}
