//! Executes a plan: computes each instance's cache key once its inputs exist, serves hits from
//! the store (after verifying the objects' hashes), runs misses concurrently (bounded by
//! `max_parallel`), records every state change in the manifest, and lays the run folder out as
//! `runs/<name>/<table>/<instance>.parquet`. One run name is locked by one process at a time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use arrow::array::{ArrayRef, RecordBatch, StringArray, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema};

use super::cache_key::{CacheKey, STORE_FORMAT};
use super::manifest::{InstanceRecord, Manifest, State, now};
use super::plan::{self, Plan};
use super::progress::Display;
use super::stage::{AxisValue, Inputs, StageContext};
use super::store::{Entry, Store};
use crate::error::{Error, Result};

/// How to run a pipeline.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// `--set key.path=value` overrides.
    pub overrides: Vec<String>,
    /// Only these stage ids (and what they need).
    pub only: Vec<String>,
    /// Print the plan, run nothing.
    pub dry_run: bool,
    /// Print every changed key component of a cache miss.
    pub explain: bool,
    /// No progress output.
    pub quiet: bool,
    /// lucid's cache folder.
    pub cache_dir: PathBuf,
    /// Folder relative paths resolve against.
    pub base_dir: PathBuf,
}

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
    /// Report tables of the requested report stages.
    pub reports: Vec<(String, RecordBatch)>,
}

/// Outputs of a finished instance (`None` in a dry run for instances that would recompute).
type Outputs = Option<BTreeMap<String, String>>;

/// Load, validate and run the pipeline at `pipeline`.
pub fn run(pipeline: &Path, opts: &RunOptions) -> Result<RunSummary> {
    let text = std::fs::read_to_string(pipeline).map_err(|source| Error::Read { path: pipeline.into(), source })?;
    let spec = super::spec::parse(pipeline, &text, &opts.overrides)?;
    let plan = plan::build(pipeline, &text, spec)?;
    let name = &plan.spec.name;
    if name.is_empty() || name.starts_with('.') || name.contains(['/', '\\']) {
        return Err(Error::input(pipeline, format!("run name {name:?} must be a plain folder name")));
    }
    let runs_dir = opts.base_dir.join(&plan.spec.runs_dir);
    let run_dir = runs_dir.join(name);
    let store = Store::new(runs_dir.join(".store"));
    let needed = needed_instances(&plan, &opts.only)?;

    std::fs::create_dir_all(&run_dir).map_err(|source| Error::Write { path: run_dir.clone(), source })?;
    let _lock = lock_run(&run_dir)?;
    let previous = Manifest::read(&run_dir).ok();
    let display = Display::new(opts.quiet);
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
            }
        })
        .collect();
    // With --only, keep what the previous run recorded for instances not run now.
    for (i, r) in records.iter_mut().enumerate() {
        if !needed[i]
            && let Some(old) = previous.as_ref().and_then(|m| m.find(&r.stage, &r.label))
        {
            *r = old.clone();
        }
    }
    let manifest = Arc::new(Mutex::new(Manifest {
        name: name.clone(),
        pipeline: pipeline.display().to_string(),
        overrides: opts.overrides.clone(),
        lucid_version: env!("CARGO_PKG_VERSION").into(),
        started: now(),
        finished: None,
        instances: records,
    }));
    let save = |m: &Manifest| -> Result<()> { if opts.dry_run { Ok(()) } else { m.write(&run_dir) } };
    save(&manifest.lock().expect("manifest lock"))?;

    let n = plan.instances.len();
    let mut outputs: Vec<Option<Outputs>> = vec![None; n];
    let mut finished = vec![false; n];
    let (mut computed, mut cached) = (0, 0);
    let mut failed = Vec::new();
    let label = |i: usize| format!("{}[{}]", plan.spec.stages[plan.instances[i].stage].id, plan.instances[i].label);
    loop {
        let mut ready = Vec::new();
        for i in 0..n {
            if !needed[i] || finished[i] {
                continue;
            }
            let deps: Vec<usize> = plan.instances[i].inputs.values().flatten().copied().collect();
            if deps.iter().any(|&d| finished[d] && outputs[d].is_none()) {
                finished[i] = true;
                manifest.lock().expect("manifest lock").instances[i].state = State::Skipped;
                display.println(&format!("  skip    {}  (an input failed)", label(i)));
            } else if deps.iter().all(|&d| finished[d]) {
                ready.push(i);
            }
        }
        if ready.is_empty() {
            break;
        }
        let mut to_run = Vec::new();
        for i in ready {
            let inst = &plan.instances[i];
            let stage = &plan.spec.stages[inst.stage];
            let unknown_input = inst.inputs.values().flatten().any(|&d| matches!(outputs[d], Some(None)));
            if unknown_input {
                display.println(&format!("  run     {}  (an input will be recomputed)", label(i)));
                outputs[i] = Some(None);
                finished[i] = true;
                continue;
            }
            let ctx = context(&plan, i, opts, &store, "", &display);
            let key = match instance_key(&plan, i, &outputs, &ctx) {
                Ok(k) => k,
                Err(e) => {
                    fail(&manifest, i, &e.to_string(), &display, &label(i), &mut failed);
                    finished[i] = true;
                    continue;
                }
            };
            let digest = key.digest();
            let entry = store.entry(&digest);
            let entry_exists = entry.is_some();
            let hit = entry.filter(|e| e.outputs.values().all(|h| store.verify(h)));
            let old = previous.as_ref().and_then(|m| m.find(&stage.id, &inst.label));
            {
                let mut m = manifest.lock().expect("manifest lock");
                let r = &mut m.instances[i];
                r.key = Some(digest.clone());
                r.key_components = Some(key.clone());
            }
            match hit {
                Some(entry) => {
                    display.println(&format!("  cached  {}", label(i)));
                    let mut m = manifest.lock().expect("manifest lock");
                    let r = &mut m.instances[i];
                    r.state = State::Cached;
                    r.outputs = entry.outputs.clone();
                    r.rows = entry.rows.clone();
                    outputs[i] = Some(Some(entry.outputs));
                    finished[i] = true;
                    cached += 1;
                }
                None => {
                    let why = miss_reasons(&key, old, entry_exists);
                    let shown = if opts.explain { why.join("; ") } else { why[0].clone() };
                    display.println(&format!("  run     {}  ({shown})", label(i)));
                    if opts.explain {
                        display.println(&format!("          key {digest}"));
                    }
                    to_run.push((i, key, digest));
                }
            }
        }
        if opts.dry_run {
            for (i, _, _) in to_run {
                outputs[i] = Some(None);
                finished[i] = true;
            }
            continue;
        }
        let jobs = plan.spec.max_parallel.unwrap_or_else(crate::par::default_jobs);
        let results = crate::par::par_map_with(
            &to_run,
            jobs,
            || (),
            |_, (i, key, digest)| {
                {
                    let mut m = manifest.lock().expect("manifest lock");
                    m.instances[*i].state = State::Running;
                    m.instances[*i].pid = Some(std::process::id());
                    let _ = save(&m);
                }
                let ctx = context(&plan, *i, opts, &store, digest, &display);
                let start = Instant::now();
                let result = execute(&plan, *i, &ctx, &store, &outputs);
                ctx.progress.finish();
                let seconds = start.elapsed().as_secs_f64();
                let mut m = manifest.lock().expect("manifest lock");
                let r = &mut m.instances[*i];
                r.pid = None;
                r.seconds = seconds;
                let out = match result {
                    Ok((outs, rows)) => {
                        let entry = Entry { key: key.clone(), outputs: outs.clone(), rows: rows.clone(), seconds };
                        match store.put_entry(digest, &entry) {
                            Ok(()) => {
                                let _ = std::fs::remove_dir_all(store.work_dir(digest));
                                r.state = State::Done;
                                r.outputs = outs.clone();
                                r.rows = rows;
                                Ok(outs)
                            }
                            Err(e) => Err(e.to_string()),
                        }
                    }
                    Err(e) => Err(e.to_string()),
                };
                if let Err(e) = &out {
                    r.state = State::Failed;
                    r.error = Some(e.clone());
                }
                let _ = save(&m);
                out
            },
        );
        for ((i, _, _), result) in to_run.iter().zip(results) {
            finished[*i] = true;
            match result {
                Ok(outs) => {
                    outputs[*i] = Some(Some(outs));
                    computed += 1;
                }
                Err(e) => {
                    display.println(&format!("  failed  {}: {e}", label(*i)));
                    failed.push(format!("{}: {e}", label(*i)));
                }
            }
        }
    }
    if opts.dry_run {
        return Ok(RunSummary { run_dir, computed: 0, cached, failed, reports: Vec::new() });
    }
    let m = {
        let mut m = manifest.lock().expect("manifest lock");
        m.finished = Some(now());
        m.clone()
    };
    lay_out_run(&run_dir, &store, &m, previous.as_ref())?;
    m.write(&run_dir)?;
    let mut reports = Vec::new();
    for (i, inst) in plan.instances.iter().enumerate() {
        let s = &plan.spec.stages[inst.stage];
        if needed[i]
            && s.stage.kind() == "report"
            && let Some(Some(outs)) = &outputs[i]
        {
            for (t, h) in outs {
                reports.push((t.clone(), store.read_table(h)?));
            }
        }
    }
    Ok(RunSummary { run_dir, computed, cached, failed, reports })
}

fn fail(manifest: &Mutex<Manifest>, i: usize, msg: &str, display: &Display, label: &str, failed: &mut Vec<String>) {
    let mut m = manifest.lock().expect("manifest lock");
    m.instances[i].state = State::Failed;
    m.instances[i].error = Some(msg.into());
    display.println(&format!("  failed  {label}: {msg}"));
    failed.push(format!("{label}: {msg}"));
}

/// Which instances to process: all, or the `--only` stages and everything they read.
fn needed_instances(plan: &Plan, only: &[String]) -> Result<Vec<bool>> {
    let n = plan.instances.len();
    if only.is_empty() {
        return Ok(vec![true; n]);
    }
    let ids: Vec<&str> = plan.spec.stages.iter().map(|s| s.id.as_str()).collect();
    for o in only {
        if !ids.contains(&o.as_str()) {
            return Err(Error::Usage(format!("--only {o}: no such stage (stages: {})", ids.join(", "))));
        }
    }
    let mut needed = vec![false; n];
    let mut stack: Vec<usize> =
        (0..n).filter(|&i| only.iter().any(|o| *o == plan.spec.stages[plan.instances[i].stage].id)).collect();
    while let Some(i) = stack.pop() {
        if !needed[i] {
            needed[i] = true;
            stack.extend(plan.instances[i].inputs.values().flatten().copied());
        }
    }
    Ok(needed)
}

/// Why an instance must run, most useful first.
fn miss_reasons(key: &CacheKey, old: Option<&InstanceRecord>, entry_exists: bool) -> Vec<String> {
    if entry_exists {
        return vec!["cached output missing or corrupted: recomputing".into()];
    }
    match old.and_then(|r| r.key_components.as_ref()) {
        None => vec!["new: no earlier result for this instance in this run".into()],
        Some(prev) => {
            let why = key.explain(prev);
            if why.is_empty() { vec!["no cached result for this key".into()] } else { why }
        }
    }
}

fn context(plan: &Plan, i: usize, opts: &RunOptions, store: &Store, digest: &str, display: &Display) -> StageContext {
    let inst = &plan.instances[i];
    let id = &plan.spec.stages[inst.stage].id;
    StageContext {
        stage_id: id.clone(),
        label: inst.label.clone(),
        matrix: inst.matrix.clone(),
        work_dir: store.work_dir(if digest.is_empty() { "_" } else { digest }),
        cache_dir: opts.cache_dir.clone(),
        base_dir: opts.base_dir.clone(),
        progress: if digest.is_empty() {
            super::progress::Progress::hidden()
        } else {
            display.start(&format!("{id}[{}]", inst.label))
        },
    }
}

fn instance_key(plan: &Plan, i: usize, outputs: &[Option<Outputs>], ctx: &StageContext) -> Result<CacheKey> {
    let inst = &plan.instances[i];
    let stage = &plan.spec.stages[inst.stage].stage;
    let mut inputs = BTreeMap::new();
    for (table, producers) in &inst.inputs {
        let hashes = producers
            .iter()
            .map(|&p| {
                outputs[p].clone().flatten().and_then(|o| o.get(table).cloned()).ok_or_else(|| {
                    Error::Usage(format!("input '{table}' of {} is not available", plan.spec.stages[inst.stage].id))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        inputs.insert(table.clone(), hashes);
    }
    Ok(CacheKey {
        format: STORE_FORMAT,
        kind: stage.kind().into(),
        version: stage.version(),
        config: stage.config_json(),
        matrix: inst.matrix.clone(),
        inputs,
        fingerprint: stage.fingerprint(ctx)?,
    })
}

/// Read inputs, run the stage, add matrix columns, store the outputs.
type Stored = (BTreeMap<String, String>, BTreeMap<String, usize>);

fn execute(plan: &Plan, i: usize, ctx: &StageContext, store: &Store, outputs: &[Option<Outputs>]) -> Result<Stored> {
    let inst = &plan.instances[i];
    let spec = &plan.spec.stages[inst.stage];
    let mut inputs = Inputs::default();
    for (table, producers) in &inst.inputs {
        let mut batches = Vec::new();
        for &p in producers {
            let hash = outputs[p].clone().flatten().and_then(|o| o.get(table).cloned()).expect("producer finished");
            batches.push(store.read_table(&hash)?);
        }
        let schema = batches[0].schema();
        inputs.tables.insert(table.clone(), arrow::compute::concat_batches(&schema, &batches)?);
    }
    let produced = spec.stage.run(ctx, &inputs)?;
    let declared = spec.stage.outputs(&spec.id);
    let mut outs = BTreeMap::new();
    let mut rows = BTreeMap::new();
    for (name, batch) in produced {
        if !declared.contains(&name) {
            return Err(Error::Usage(format!("stage '{}' produced undeclared table '{name}'", spec.id)));
        }
        let batch = with_matrix_columns(&batch, &inst.matrix)?;
        rows.insert(name.clone(), batch.num_rows());
        outs.insert(name, store.put_table(&batch)?);
    }
    for d in declared {
        if !outs.contains_key(&d) {
            return Err(Error::Usage(format!("stage '{}' did not produce table '{d}'", spec.id)));
        }
    }
    Ok((outs, rows))
}

/// Prepend `seed` (UInt64) and `arm` (Utf8) columns for the instance's matrix values.
fn with_matrix_columns(batch: &RecordBatch, matrix: &BTreeMap<String, AxisValue>) -> Result<RecordBatch> {
    if matrix.is_empty() {
        return Ok(batch.clone());
    }
    let n = batch.num_rows();
    let mut fields = Vec::new();
    let mut cols: Vec<ArrayRef> = Vec::new();
    for axis in ["seed", "arm"] {
        match matrix.get(axis) {
            Some(AxisValue::Seed(s)) => {
                fields.push(Field::new(axis, DataType::UInt64, false));
                cols.push(Arc::new(UInt64Array::from(vec![*s; n])));
            }
            Some(AxisValue::Arm(a)) => {
                fields.push(Field::new(axis, DataType::Utf8, false));
                cols.push(Arc::new(StringArray::from(vec![a.as_str(); n])));
            }
            None => {}
        }
    }
    let schema = batch.schema();
    for f in schema.fields() {
        if fields.iter().any(|g| g.name() == f.name()) {
            return Err(Error::Usage(format!("a stage output already has a matrix column '{}'", f.name())));
        }
    }
    fields.extend(schema.fields().iter().map(|f| f.as_ref().clone()));
    cols.extend(batch.columns().iter().cloned());
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?)
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
