//! `lucid exec`: one query through the sandbox, with the detector's channels (its own rules).

use super::timeout;
use crate::cli::ExecArgs;
use crate::domains::sql::detector::{DetectorConfig, Observed};
use crate::error::Result;
use crate::sql::{Limits, OpenOptions, Sandbox};

/// `lucid exec`.
pub fn run(a: &ExecArgs) -> Result<()> {
    let sandbox = Sandbox::open(&a.db, &OpenOptions::default())?;
    let limits = Limits { timeout: timeout(a.timeout)?, keep_rows: a.rows, run_twice: true, ..Limits::default() };
    let exec = sandbox.execute(&a.sql, &limits);
    println!("status: {} ({:.1} ms)", exec.outcome.status().as_str(), exec.elapsed.as_secs_f64() * 1e3);
    if let Some(e) = exec.outcome.error() {
        println!("error: {e}");
    }
    if let Some(rows) = exec.outcome.rows() {
        println!("{}", rows.preview(a.rows));
    }
    // The detector's own rules, at its defaults: what the loop would record for this query.
    let detector = DetectorConfig::default();
    let flags = detector.detect(&a.question, &a.evidence, &Observed::of(&a.sql, &exec));
    println!("flag_exec: {}", flags.exec);
    println!("flag_degenerate: {}", flags.degenerate);
    println!("flag_literal: {}", flags.literal);
    println!("literals: {}", flags.literals_json().unwrap_or_else(|| "[]".into()));
    println!("flagged: {}", flags.flagged(&detector.channels));
    Ok(())
}
