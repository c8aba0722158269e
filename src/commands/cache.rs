//! `lucid cache ls|gc`: the stage store of a runs folder.

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::werr;
use crate::error::{Error, Result};
use crate::pipeline::manifest::Manifest;
use crate::pipeline::store::Store;

/// `lucid cache ls|gc`.
pub fn run(a: &CacheArgs) -> Result<()> {
    let store = Store::in_runs_dir(&a.runs_dir);
    let mut out = std::io::stdout().lock();
    let size = |h: &str| std::fs::metadata(store.object_path(h)).map_or(0, |m| m.len());
    match a.action {
        CacheAction::Ls => {
            let entries = store.entries();
            let mut total = 0;
            for (key, e) in &entries {
                let bytes: u64 = e.outputs.values().map(|h| size(h)).sum();
                total += bytes;
                let tables: Vec<&String> = e.outputs.keys().collect();
                writeln!(out, "{}  {:<12} {:>10} B  {:>8.2}s  {:?}", &key[..16], e.key.kind, bytes, e.seconds, tables)
                    .map_err(werr)?;
            }
            writeln!(
                out,
                "{} entries, {} objects, {total} bytes in {}",
                entries.len(),
                store.objects().len(),
                store.root().display()
            )
            .map_err(werr)?;
        }
        CacheAction::Gc => {
            if let Some(url) = &a.store {
                let remote = crate::remote::Remote::open(url)?;
                let live: Vec<String> = crate::remote::claims::standings(&remote)?
                    .into_iter()
                    .filter(|s| s.state() == "held")
                    .map(|s| format!("{} (by {})", s.key, s.record.holder))
                    .collect();
                if !live.is_empty() {
                    return Err(Error::usage(format!(
                        "gc refused: {} instance(s) claimed by live workers of {url} may still read what it would delete: {}",
                        live.len(),
                        live.join(", ")
                    )));
                }
            }
            let (mut keep_keys, mut keep_objects) = (HashSet::new(), HashSet::new());
            let runs =
                std::fs::read_dir(&a.runs_dir).map_err(|source| Error::Read { path: a.runs_dir.clone(), source })?;
            for d in runs.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.join("manifest.json").is_file()) {
                let m = Manifest::read(&d)?;
                for r in m.instances {
                    keep_keys.extend(r.key);
                    keep_objects.extend(r.outputs.into_values());
                }
            }
            let (mut entries, mut objects, mut bytes) = (0, 0, 0);
            for (key, e) in store.entries() {
                if keep_keys.contains(&key) {
                    keep_objects.extend(e.outputs.into_values());
                } else {
                    store.remove_entry(&key);
                    entries += 1;
                }
            }
            for h in store.objects() {
                if !keep_objects.contains(&h) {
                    bytes += size(&h);
                    let _ = std::fs::remove_file(store.object_path(&h));
                    objects += 1;
                }
            }
            writeln!(
                out,
                "removed {entries} entries and {objects} objects ({bytes} bytes); kept what the runs in {} use",
                a.runs_dir.display()
            )
            .map_err(werr)?;
        }
    }
    Ok(())
}

/// `lucid cache`.
#[derive(Args, Debug)]
pub struct CacheArgs {
    /// ls: list stage entries; gc: delete what no run in the runs folder uses.
    #[arg(value_enum)]
    pub action: CacheAction,
    /// The runs folder holding `.store/`.
    #[arg(long, default_value = "runs", value_name = "DIR")]
    pub runs_dir: PathBuf,
    /// The store shared with other workers: gc refuses while any of them holds a live claim.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
}

/// `lucid cache` actions.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheAction {
    /// List entries.
    Ls,
    /// Delete entries and objects no kept run uses.
    Gc,
}
