//! One instance's job on a worker of the [`super::schedule`] state machine: the miss it was
//! queued as, running its stage (inputs read from the store, the matrix columns added to its
//! outputs), checking the files it read did not change, publishing and storing its outputs, and
//! recording each step in the manifest.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use arrow::array::{ArrayRef, RecordBatch, StringArray, UInt64Array};
use arrow::datatypes::{Field, Schema};

use super::cache_key::CacheKey;
use super::manifest::{InstanceRecord, Manifest, State};
use super::options::RunOptions;
use super::plan::Plan;
use super::progress::Display;
use super::shared::{Holding, Shared};
use super::stage::{AxisValue, Inputs, StageContext};
use super::store::{Store, StoredInstance};
use crate::error::{Error, Result};

/// Input table -> object hashes of its producers' outputs, in binding order.
pub(super) type InputHashes = BTreeMap<String, Vec<String>>;

/// A miss waiting for a worker.
pub(super) struct Job {
    pub(super) i: usize,
    pub(super) key: CacheKey,
    pub(super) digest: String,
    pub(super) inputs: InputHashes,
    pub(super) claim: Option<crate::remote::claims::Claim>,
    /// Why it must run (printed when it starts).
    pub(super) why: String,
}

/// How a job ended.
pub(super) enum Outcome {
    /// Computed (or adopted from another worker that published first): output hashes.
    Done(BTreeMap<String, String>),
    /// Failed with this error.
    Failed(String),
    /// Another worker took the instance over while this one worked: wait for its result.
    Lost(String),
}

/// Execute one miss on a worker: state `Running` in the manifest, the stage, the store entry.
pub(super) fn run_job(
    plan: &Plan,
    opts: &RunOptions,
    store: &Store,
    shared: Option<&Shared>,
    display: &Display,
    manifest: &Mutex<Manifest>,
    job: Job,
) -> Outcome {
    let save = |m: &Manifest| if opts.dry_run { Ok(()) } else { m.write(&run_dir(plan, opts)) };
    {
        let mut m = manifest.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        m.instances[job.i].state = State::Running;
        m.instances[job.i].pid = Some(std::process::id());
        let _ = save(&m);
    }
    let ctx = context(plan, job.i, opts, (store, shared), &job.digest, display);
    let holding = match (shared, job.claim.clone()) {
        (Some(sh), Some(claim)) => match sh.hold(claim, &ctx.work_dir) {
            Ok(h) => Some(h),
            Err(e) => return Outcome::Failed(e.to_string()),
        },
        _ => None,
    };
    let start = Instant::now();
    let result = execute(plan, job.i, &ctx, store, &job.inputs).and_then(|out| {
        unchanged_since_keyed(plan, &job, &ctx)?;
        Ok(out)
    });
    ctx.progress.finish();
    let seconds = start.elapsed().as_secs_f64();
    // Publishing to a shared store is network I/O: done before the manifest is locked, so other
    // instances' progress is never held up behind an upload.
    let mut lost = None;
    let stored = result.and_then(|(outs, rows)| {
        let entry = StoredInstance { key: job.key.clone(), outputs: outs, rows, seconds };
        store_entry(store, shared.zip(holding.as_ref()), &job.digest, entry, &mut lost)
    });
    drop(holding);
    let mut m = manifest.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let r: &mut InstanceRecord = &mut m.instances[job.i];
    r.pid = None;
    r.seconds = seconds;
    r.notes = ctx.progress.notes();
    let out = match (stored, lost) {
        (Ok(entry), _) => {
            r.state = State::Done;
            r.outputs = entry.outputs.clone();
            r.rows = entry.rows;
            Outcome::Done(entry.outputs)
        }
        (Err(_), Some(why)) => {
            r.state = State::Pending;
            Outcome::Lost(why)
        }
        (Err(e), None) => {
            r.state = State::Failed;
            r.error = Some(e.to_string());
            Outcome::Failed(e.to_string())
        }
    };
    let _ = save(&m);
    out
}

/// The files the key was computed from (prompts, models, SQL) must be the ones the stage read: an
/// edit while it ran would store new answers under the old key. An error naming the changed ones.
fn unchanged_since_keyed(plan: &Plan, job: &Job, ctx: &StageContext) -> Result<()> {
    let stage = &plan.spec.stages[plan.instances[job.i].stage];
    let now = stage.stage.fingerprint(ctx)?;
    let changed: Vec<&String> = now
        .iter()
        .filter(|(f, h)| job.key.fingerprint.get(*f) != Some(*h))
        .map(|(f, _)| f)
        .chain(job.key.fingerprint.keys().filter(|f| !now.contains_key(*f)))
        .collect();
    if changed.is_empty() {
        Ok(())
    } else {
        let list: Vec<&str> = changed.iter().map(|s| s.as_str()).collect();
        Err(Error::stage(
            &stage.id,
            format!("files it reads changed while it ran ({}): not stored; run again", list.join(", ")),
        ))
    }
}

/// Store a computed instance's `entry` under `digest`: published to the shared store first when
/// `held` (where another worker published first, its entry is the result), then put in `store`
/// and the work folder removed. A publish that failed because the claim was lost sets `lost`.
fn store_entry(
    store: &Store,
    held: Option<(&Shared, &Holding)>,
    digest: &str,
    mut entry: StoredInstance,
    lost: &mut Option<String>,
) -> Result<StoredInstance> {
    if let Some((sh, h)) = held {
        match sh.publish(store, digest, &entry, h) {
            Ok(published) => entry = published,
            Err(e) if h.check(&sh.remote).is_err() => {
                *lost = Some(e.to_string());
                return Err(e);
            }
            Err(e) => return Err(e),
        }
    }
    store.put_entry(digest, &entry)?;
    let _ = std::fs::remove_dir_all(store.work_dir(digest));
    Ok(entry)
}

/// `runs/<name>` of this plan.
fn run_dir(plan: &Plan, opts: &RunOptions) -> PathBuf {
    opts.base_dir.join(&plan.spec.runs_dir).join(&plan.spec.name)
}

/// The context instance `i` runs in: its work folder in `store` (`_` and no progress line when
/// `digest` is empty, for keying), its matrix and the run's folders.
pub(super) fn context(
    plan: &Plan,
    i: usize,
    opts: &RunOptions,
    (store, shared): (&Store, Option<&Shared>),
    digest: &str,
    display: &Display,
) -> StageContext {
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
        shared_responses: shared.map(|s| s.remote.clone()),
    }
}

/// Read inputs, run the stage, add matrix columns, store the outputs.
type Stored = (BTreeMap<String, String>, BTreeMap<String, usize>);

fn execute(plan: &Plan, i: usize, ctx: &StageContext, store: &Store, hashes: &InputHashes) -> Result<Stored> {
    let inst = &plan.instances[i];
    let spec = &plan.spec.stages[inst.stage];
    let mut inputs = Inputs::default();
    for (table, objects) in hashes {
        let mut batches = Vec::new();
        for hash in objects {
            batches.push(store.read_table(hash)?);
        }
        let Some(first) = batches.first() else {
            return Err(Error::stage(
                &spec.id,
                format!("no instance of the stages writing '{table}' matches {} (check their `arms:`)", inst.label),
            ));
        };
        let schema = first.schema();
        inputs.tables.insert(table.clone(), arrow::compute::concat_batches(&schema, &batches)?);
    }
    let produced = spec.stage.run(ctx, &inputs)?;
    let declared = spec.stage.outputs(&spec.id);
    let mut outs = BTreeMap::new();
    let mut rows = BTreeMap::new();
    for (name, batch) in produced {
        if !declared.contains(&name) {
            return Err(Error::stage(&spec.id, format!("produced undeclared table '{name}'")));
        }
        let batch = with_matrix_columns(&batch, &inst.matrix, &spec.id, &name)?;
        rows.insert(name.clone(), batch.num_rows());
        outs.insert(name, store.put_table(&batch)?);
    }
    for d in declared {
        if !outs.contains_key(&d) {
            return Err(Error::stage(&spec.id, format!("did not produce table '{d}'")));
        }
    }
    Ok((outs, rows))
}

/// Prepend the matrix columns ([`crate::columns::SEED`], [`crate::columns::ARM`]) for the
/// instance's matrix values to table `name` of stage `stage`.
fn with_matrix_columns(
    batch: &RecordBatch,
    matrix: &BTreeMap<String, AxisValue>,
    stage: &str,
    name: &str,
) -> Result<RecordBatch> {
    if matrix.is_empty() {
        return Ok(batch.clone());
    }
    let n = batch.num_rows();
    let mut fields = Vec::new();
    let mut cols: Vec<ArrayRef> = Vec::new();
    for column in [&crate::columns::SEED, &crate::columns::ARM] {
        let col: ArrayRef = match matrix.get(column.name) {
            Some(AxisValue::Seed(s)) => Arc::new(UInt64Array::from(vec![*s; n])),
            Some(AxisValue::Arm(a)) => Arc::new(StringArray::from(vec![a.as_str(); n])),
            None => continue,
        };
        fields.push(Field::new(column.name, (column.ty)(), false));
        cols.push(col);
    }
    let schema = batch.schema();
    for f in schema.fields() {
        if fields.iter().any(|g| g.name() == f.name()) {
            return Err(Error::stage(stage, format!("table '{name}' already has a matrix column '{}'", f.name())));
        }
    }
    fields.extend(schema.fields().iter().map(|f| f.as_ref().clone()));
    cols.extend(batch.columns().iter().cloned());
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)
        .map_err(|e| Error::stage(stage, format!("table '{name}' {e}")))
}
