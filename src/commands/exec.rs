//! `lucid exec`: one query through the sandbox, with the detector's channels (its own rules).

use std::path::PathBuf;

use clap::Args;

use super::timeout;
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

/// `lucid exec`.
#[derive(Args, Debug)]
pub struct ExecArgs {
    /// The SQLite database file.
    #[arg(long, value_name = "FILE")]
    pub db: PathBuf,
    /// The question the query answers (for the literal-grounding check).
    #[arg(long, default_value = "")]
    pub question: String,
    /// The question's evidence / hint.
    #[arg(long, default_value = "")]
    pub evidence: String,
    /// Timeout in seconds.
    #[arg(long, default_value_t = 30.0)]
    pub timeout: f64,
    /// Rows to show.
    #[arg(long, default_value_t = 20)]
    pub rows: usize,
    /// The query.
    pub sql: String,
}
