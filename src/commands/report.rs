//! `lucid report`: the study's tables and plots for one or more runs.

use std::path::PathBuf;

use clap::Args;

use super::werr;
use crate::error::Result;

/// `lucid report`.
pub fn run(a: &ReportArgs) -> Result<()> {
    let out = a.out.clone().unwrap_or_else(|| a.runs[0].join(crate::report::FOLDER));
    let written = crate::report::build_and_write(&a.runs, &out)?;
    use std::io::Write;
    writeln!(std::io::stdout().lock(), "report: {}", written.html.display()).map_err(werr)
}

/// `lucid report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Run folders (`runs/<name>`), side by side.
    #[arg(required = true, num_args = 1..)]
    pub runs: Vec<PathBuf>,
    /// Where report.md, report.json and report.html go (default: `<first run>/report`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Cache folder (default: $LUCID_CACHE_DIR, else ~/.cache/lucid).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}
