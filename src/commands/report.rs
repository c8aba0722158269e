//! `lucid report`: the study's tables and plots for one or more runs.

use super::werr;
use crate::cli::ReportArgs;
use crate::error::Result;

/// `lucid report`.
pub fn run(a: &ReportArgs) -> Result<()> {
    let out = a.out.clone().unwrap_or_else(|| a.runs[0].join(crate::report::FOLDER));
    let written = crate::report::build_and_write(&a.runs, &out)?;
    use std::io::Write;
    writeln!(std::io::stdout().lock(), "report: {}", written.html.display()).map_err(werr)
}
