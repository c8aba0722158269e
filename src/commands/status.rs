//! `lucid status`: the state of every instance of a run.

use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use clap::Args;

use super::werr;
use crate::error::Result;
use crate::pipeline::manifest::{Manifest, State};
use crate::pipeline::store::Store;

/// `lucid status`.
pub fn run(a: &StatusArgs) -> Result<()> {
    let m = Manifest::read(&a.run)?;
    let mut out = std::io::stdout().lock();
    let state = match m.finished {
        Some(_) => "finished".to_string(),
        None => "in progress (or interrupted)".to_string(),
    };
    writeln!(out, "run {} ({}) from {}", m.name, state, m.pipeline).map_err(werr)?;
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for r in &m.instances {
        let alive = r.pid.is_some_and(|p| Path::new(&format!("/proc/{p}")).exists());
        let st = match r.state {
            State::Running if !alive => "interrupted",
            s => s.as_str(),
        };
        *counts.entry(st).or_default() += 1;
        let rows: usize = r.rows.values().sum();
        let mut detail =
            r.error.clone().unwrap_or_else(|| if rows > 0 { format!("{rows} rows") } else { String::new() });
        if let Some(cp) = r.notes.get("critical_path") {
            detail.push_str(&format!(", critical path {cp} of {} episodes", r.notes.get("episodes").unwrap_or(cp)));
        }
        if st == "running" {
            detail = live(&a.run, r.key.as_deref()).unwrap_or(detail);
        }
        writeln!(out, "  {st:<11} {:<28} {:>7.2}s  {detail}", format!("{}[{}]", r.stage, r.label), r.seconds)
            .map_err(werr)?;
    }
    let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    writeln!(out, "{}", summary.join(", ")).map_err(werr)?;
    if let Some(url) = &a.store {
        let names: std::collections::HashMap<&str, String> =
            m.instances.iter().filter_map(|r| Some((r.key.as_deref()?, format!("{}[{}]", r.stage, r.label)))).collect();
        let remote = crate::remote::Remote::open(url)?;
        let standings = crate::remote::claims::standings(&remote)?;
        writeln!(out, "claims in {url} ({}):", standings.len()).map_err(werr)?;
        for s in standings {
            let what =
                names.get(s.key.as_str()).cloned().unwrap_or_else(|| format!("{}…", &s.key[..12.min(s.key.len())]));
            writeln!(
                out,
                "  {:<7} {what:<28} epoch {}  {}  renewed {:.1}s ago (lease {:.0}s)",
                s.state(),
                s.record.epoch,
                s.record.holder,
                s.idle_ms as f64 / 1e3,
                s.record.lease_ms as f64 / 1e3
            )
            .map_err(werr)?;
        }
    }
    Ok(())
}

/// Where a running memory loop stands: its status file in its work folder (in the store beside
/// the run), written as episodes finish.
fn live(run: &Path, key: Option<&str>) -> Option<String> {
    let work_dir = Store::in_runs_dir(run.parent()?).work_dir(key?);
    crate::memory_loop::scheduler::LoopProgress::read(&work_dir).map(|p| p.to_string())
}

/// `lucid status`.
#[derive(Args, Debug)]
pub struct StatusArgs {
    /// The run folder (`runs/<name>`).
    pub run: PathBuf,
    /// Also show the claims of every worker sharing this store (`s3://…`, `file:///…`).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
}
