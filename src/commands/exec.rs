//! `lucid exec`: one query through the sandbox, with the detector's checks.

use super::timeout;
use crate::cli::ExecArgs;
use crate::error::Result;
use crate::sql::{Limits, OpenOptions, Sandbox, checks};

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
    println!("flag_exec: {:?}", checks::execution_flag(&exec));
    println!("flag_degenerate: {:?}", checks::degeneracy(&exec));
    println!("ungrounded literals: {:?}", checks::ungrounded_literals(&a.question, &a.evidence, &a.sql));
    Ok(())
}
