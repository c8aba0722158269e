//! `lucid report`: the study's tables and plots for one or more runs.

use super::werr;
use crate::cli::ReportArgs;
use crate::error::Result;

/// `lucid report`.
pub fn run(a: &ReportArgs) -> Result<()> {
    let out = a.out.clone().unwrap_or_else(|| a.runs[0].join("report"));
    let (html, _) = write_report(&a.runs, &out)?;
    use std::io::Write;
    writeln!(std::io::stdout().lock(), "report: {}", html.display()).map_err(werr)
}

/// Build and write the report of `runs` into `out`; the HTML page's path and the headline table.
pub fn write_report(
    runs: &[std::path::PathBuf],
    out: &std::path::Path,
) -> Result<(std::path::PathBuf, Option<arrow::array::RecordBatch>)> {
    let report = crate::report::build(runs)?;
    let html = crate::report::write(&report, out)?;
    Ok((html, report.table("headline").cloned()))
}
