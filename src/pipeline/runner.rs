//! Executes a plan: prepares the manifest, lets the [`Scheduler`] take every instance through
//! key -> serve -> execute as soon as its inputs exist (bounded by `max_parallel`), then lays the
//! run folder out as `runs/<name>/<table>/<instance>.parquet`. One run name is locked by one
//! process at a time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow::array::RecordBatch;

use super::manifest::{InstanceRecord, Manifest, State, now};
use super::options::RunOptions;
use super::plan::{self, Plan};
use super::progress::Display;
use super::schedule::{Scheduler, Slot};
use super::shared::Shared;
use super::store::Store;
use crate::error::{Error, Result};

/// What a run did.
#[derive(Debug)]
pub struct RunSummary {
    /// The run folder.
    pub run_dir: PathBuf,
    /// Instances computed.
    pub computed: usize,
    /// Instances served from the store.
    pub cached: usize,
    /// Failed instances with their errors.
    pub failed: Vec<String>,
    /// The output tables of stages that print them (report stages), by name.
    pub printed: Vec<(String, RecordBatch)>,
    /// The pipeline asks for the study's report (`report: true`), nothing failed and this was no
    /// dry run: the command that ran it writes the report of the run folder (a partial run,
    /// `--only` or `--shard`, reports what its folder holds). The runner knows no report.
    pub report_due: bool,
}

/// Load, validate and run the pipeline at `pipeline`, its stage kinds read with `R`.
pub fn run<R: super::registry::Registry>(pipeline: &Path, opts: &RunOptions) -> Result<RunSummary> {
    let text = std::fs::read_to_string(pipeline).map_err(|source| Error::Read { path: pipeline.into(), source })?;
    run_text::<R>(pipeline, &text, opts)
}

/// Validate and run the pipeline `text` (YAML or JSON), named `pipeline` in errors: a command
/// that builds its pipeline in memory (`lucid import`) runs it without a file.
pub fn run_text<R: super::registry::Registry>(pipeline: &Path, text: &str, opts: &RunOptions) -> Result<RunSummary> {
    let text = text.to_string();
    let mut spec = super::spec::parse::<R>(pipeline, &text, &opts.overrides)?;
    if let Some(n) = opts.limit {
        for s in &mut spec.stages {
            if let Some(limited) = s.stage.limited(n) {
                s.stage = limited;
            }
        }
    }
    let plan = plan::build(pipeline, &text, spec)?;
    plan::check_stages(pipeline, &text, &plan, &opts.base_dir)?;
    let name = &plan.spec.name;
    if name.is_empty() || name.starts_with('.') || name.contains(['/', '\\']) {
        return Err(Error::input(pipeline, format!("run name {name:?} must be a plain folder name")));
    }
    let runs_dir = opts.base_dir.join(&plan.spec.runs_dir);
    let run_dir = runs_dir.join(name);
    let store = Store::in_runs_dir(&runs_dir);
    let needed = needed_instances(&plan, &opts.only, opts.sharing.shard)?;
    let shared = match &opts.sharing.store {
        Some(url) => Some(Shared::open(url, opts.sharing.lease_s.unwrap_or(super::shared::DEFAULT_LEASE_S))?),
        None => None,
    };

    std::fs::create_dir_all(&run_dir).map_err(|source| Error::Write { path: run_dir.clone(), source })?;
    let _lock = lock_run(&run_dir)?;
    let previous = Manifest::read(&run_dir).ok();
    let display = Display::new(opts.quiet);
    let manifest = Arc::new(Mutex::new(initial_manifest(&plan, pipeline, opts, &needed, previous.as_ref())));
    let save = |m: &Manifest| -> Result<()> { if opts.dry_run { Ok(()) } else { m.write(&run_dir) } };
    save(&manifest.lock().expect("manifest lock"))?;

    let mut sched = Scheduler {
        plan: &plan,
        opts,
        store: &store,
        shared: shared.as_ref(),
        display: &display,
        manifest: &manifest,
        previous: previous.as_ref(),
        slots: needed.iter().map(|&n| if n { Slot::Pending } else { Slot::Unneeded }).collect(),
        computed: 0,
        cached: 0,
        failed: Vec::new(),
    };
    sched.drive(plan.spec.max_parallel.unwrap_or_else(crate::par::default_jobs).max(1));
    let Scheduler { slots, computed, cached, failed, .. } = sched;
    if opts.dry_run {
        return Ok(RunSummary { run_dir, computed: 0, cached, failed, printed: Vec::new(), report_due: false });
    }
    let m = {
        let mut m = manifest.lock().expect("manifest lock");
        m.finished = Some(now());
        m.clone()
    };
    lay_out_run(&run_dir, &store, &m, previous.as_ref())?;
    m.write(&run_dir)?;
    if let Some(sh) = &shared {
        publish_listing(sh, &m, &slots, &display)?;
    }
    let printed = printed_tables(&plan, &slots, &store)?;
    let report_due = plan.spec.report && failed.is_empty();
    Ok(RunSummary { run_dir, computed, cached, failed, printed, report_due })
}

/// The manifest a run starts with: every instance pending, except that with `--only` an instance
/// not run now (not `needed`) keeps what the `previous` run recorded for it.
fn initial_manifest(
    plan: &Plan,
    pipeline: &Path,
    opts: &RunOptions,
    needed: &[bool],
    previous: Option<&Manifest>,
) -> Manifest {
    let mut records: Vec<InstanceRecord> = plan
        .instances
        .iter()
        .map(|inst| {
            let s = &plan.spec.stages[inst.stage];
            InstanceRecord {
                stage: s.id.clone(),
                kind: s.stage.kind().into(),
                label: inst.label.clone(),
                matrix: inst.matrix.clone(),
                state: State::Pending,
                key: None,
                key_components: None,
                outputs: BTreeMap::new(),
                rows: BTreeMap::new(),
                seconds: 0.0,
                pid: None,
                error: None,
                notes: Default::default(),
            }
        })
        .collect();
    // With --only, keep what the previous run recorded for instances not run now.
    for (i, r) in records.iter_mut().enumerate() {
        if !needed[i]
            && let Some(old) = previous.and_then(|m| m.find(&r.stage, &r.label))
        {
            *r = old.clone();
        }
    }
    Manifest {
        name: plan.spec.name.clone(),
        pipeline: pipeline.display().to_string(),
        overrides: opts.overrides.clone(),
        lucid_version: env!("CARGO_PKG_VERSION").into(),
        started: now(),
        finished: None,
        instances: records,
    }
}

/// The output tables of the stages that print them (report stages) among the `Ready` instances,
/// read back from `store`, by name.
fn printed_tables(plan: &Plan, slots: &[Slot], store: &Store) -> Result<Vec<(String, RecordBatch)>> {
    let mut printed = Vec::new();
    for (i, inst) in plan.instances.iter().enumerate() {
        let s = &plan.spec.stages[inst.stage];
        if s.stage.prints_outputs()
            && let Slot::Ready(outs) = &slots[i]
        {
            for (t, h) in outs {
                printed.push((t.clone(), store.read_table(h)?));
            }
        }
    }
    Ok(printed)
}

/// A complete run through a shared store publishes its tables as the run's newest listing
/// (a partial one, `--only` or `--shard`, leaves the listing to the run that completes it).
fn publish_listing(sh: &Shared, m: &Manifest, slots: &[Slot], display: &Display) -> Result<()> {
    if slots.iter().any(|s| !matches!(s, Slot::Ready(_))) {
        display.println("  listing not published: the run is partial (--only, --shard or a failure)");
        return Ok(());
    }
    let mut tables: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for r in &m.instances {
        for (table, hash) in &r.outputs {
            tables.entry(table.clone()).or_default().insert(r.label.clone(), hash.clone());
        }
    }
    let epoch = crate::remote::listing::publish(&sh.remote, &m.name, &sh.holder, tables)?;
    display.println(&format!("  listed  {}/runs/{} (epoch {epoch})", sh.remote.url(), m.name));
    Ok(())
}

/// Which instances to process: all, or the `--only` stages and everything they read. With
/// `--shard i/n`, of those only instance i, i + n, ... of each stage that has several (a seed, an
/// arm) and what they read; a stage with one instance (a report over all seeds) is left to the
/// plain run that completes the shards, unless a shard's instance reads it.
fn needed_instances(plan: &Plan, only: &[String], shard: Option<(usize, usize)>) -> Result<Vec<bool>> {
    let n = plan.instances.len();
    if only.is_empty() && shard.is_none() {
        return Ok(vec![true; n]);
    }
    let ids: Vec<&str> = plan.spec.stages.iter().map(|s| s.id.as_str()).collect();
    for o in only {
        if !ids.contains(&o.as_str()) {
            return Err(Error::usage(format!("--only {o}: no such stage (stages: {})", ids.join(", "))));
        }
    }
    let mut needed = vec![false; n];
    let stage_of = |i: usize| &plan.spec.stages[plan.instances[i].stage].id;
    let mut rank = vec![0; n];
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, r) in rank.iter_mut().enumerate() {
        let c = seen.entry(stage_of(i)).or_default();
        *r = *c;
        *c += 1;
    }
    let mut stack: Vec<usize> = (0..n)
        .filter(|&i| only.is_empty() || only.iter().any(|o| o == stage_of(i)))
        .filter(|&i| shard.is_none_or(|(k, of)| seen[stage_of(i).as_str()] > 1 && rank[i] % of == k))
        .collect();
    while let Some(i) = stack.pop() {
        if !needed[i] {
            needed[i] = true;
            stack.extend(plan.instances[i].inputs.values().flatten().copied());
        }
    }
    Ok(needed)
}

/// Link every output into `run_dir/<table>/<instance>.parquet` and remove files of instances
/// and tables the run no longer has (only those an earlier manifest of this run recorded).
fn lay_out_run(run_dir: &Path, store: &Store, m: &Manifest, previous: Option<&Manifest>) -> Result<()> {
    let mut keep: std::collections::HashSet<PathBuf> = Default::default();
    for r in &m.instances {
        if !matches!(r.state, State::Done | State::Cached) {
            continue;
        }
        for (table, hash) in &r.outputs {
            let dest = run_dir.join(table).join(format!("{}.parquet", r.label));
            store.link(hash, &dest)?;
            keep.insert(dest);
        }
    }
    for r in previous.map(|p| p.instances.as_slice()).unwrap_or_default() {
        for table in r.outputs.keys() {
            let old = run_dir.join(table).join(format!("{}.parquet", r.label));
            if !keep.contains(&old) {
                let _ = std::fs::remove_file(&old);
                let _ = std::fs::remove_dir(run_dir.join(table));
            }
        }
    }
    Ok(())
}

/// An exclusive lock on the run folder for this process's lifetime.
fn lock_run(run_dir: &Path) -> Result<std::fs::File> {
    let path = run_dir.join(".lock");
    let file = std::fs::File::create(&path).map_err(|source| Error::Write { path: path.clone(), source })?;
    if file.try_lock().is_err() {
        eprintln!("waiting for another lucid run on {} to finish...", run_dir.display());
        file.lock().map_err(|source| Error::Write { path: path.clone(), source })?;
    }
    Ok(file)
}
