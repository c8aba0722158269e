//! The runner's state machine: one [`Slot`] per instance. An instance leaves `Pending` as soon as
//! every input is settled — never waiting for unrelated instances — and goes key -> serve (a
//! verified store hit) -> execute (on one of `max_parallel` workers) -> `Ready`; a failed input
//! skips it, an input a dry run would recompute leaves it unknown. Each step is recorded in the
//! manifest as it happens.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, RecordBatch, StringArray, UInt64Array};
use arrow::datatypes::{Field, Schema};

use super::cache_key::{CacheKey, STORE_FORMAT};
use super::manifest::{InstanceRecord, Manifest, State};
use super::options::RunOptions;
use super::plan::Plan;
use super::progress::Display;
use super::shared::Shared;
use super::stage::{AxisValue, Inputs, StageContext};
use super::store::{Store, StoredInstance};
use crate::error::{Error, Result};

/// Where one instance stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Slot {
    /// Not part of this run (`--only`).
    Unneeded,
    /// Waiting for its inputs.
    Pending,
    /// Missed the store: queued for, or on, a worker.
    Running,
    /// Claimed by another worker sharing the store: polled until it publishes or its lease lapses.
    Held,
    /// Finished, from the store or computed: its output tables' object hashes.
    Ready(BTreeMap<String, String>),
    /// A dry run would compute it, so its outputs (and what reads them) are unknown.
    Unknown,
    /// Failed, or skipped because an input failed.
    Failed,
}

/// Input table -> object hashes of its producers' outputs, in binding order.
type InputHashes = BTreeMap<String, Vec<String>>;

/// A miss waiting for a worker.
struct Job {
    i: usize,
    key: CacheKey,
    digest: String,
    inputs: InputHashes,
    claim: Option<crate::remote::claims::Claim>,
    /// Why it must run (printed when it starts).
    why: String,
}

/// How a job ended.
enum Outcome {
    /// Computed (or adopted from another worker that published first): output hashes.
    Done(BTreeMap<String, String>),
    /// Failed with this error.
    Failed(String),
    /// Another worker took the instance over while this one worked: wait for its result.
    Lost(String),
}

/// Drives every instance of a plan to a final slot.
pub struct Scheduler<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// Run options.
    pub opts: &'a RunOptions,
    /// The stage store.
    pub store: &'a Store,
    /// The shared store, when workers share the pipeline (`--store`).
    pub shared: Option<&'a Shared>,
    /// Progress output.
    pub display: &'a Display,
    /// The run's manifest, written as states change.
    pub manifest: &'a Arc<Mutex<Manifest>>,
    /// The manifest of the previous run of this name, to explain misses.
    pub previous: Option<&'a Manifest>,
    /// One slot per instance.
    pub slots: Vec<Slot>,
    /// Instances computed.
    pub computed: usize,
    /// Instances served from the store.
    pub cached: usize,
    /// `label: error` of each failed instance.
    pub failed: Vec<String>,
}

impl Scheduler<'_> {
    /// Run until no instance can move, with at most `jobs` executing at once.
    pub fn drive(&mut self, jobs: usize) {
        let (tx, rx) = mpsc::channel::<(usize, Outcome)>();
        let mut queue: VecDeque<Job> = VecDeque::new();
        let mut running = 0;
        let poll = self
            .shared
            .map_or(Duration::from_secs(1), |s| Duration::from_millis((s.lease_ms / 4).clamp(100, 1000) as u64));
        let mut poll_held = false;
        std::thread::scope(|scope| {
            loop {
                self.advance(&mut queue, std::mem::take(&mut poll_held));
                while running < jobs {
                    let Some(mut job) = queue.pop_front() else { break };
                    if !self.start(&mut job) {
                        continue;
                    }
                    running += 1;
                    let tx = tx.clone();
                    let this = &*self;
                    let (plan, opts, store, shared, display, manifest) =
                        (this.plan, this.opts, this.store, this.shared, this.display, this.manifest);
                    let i = job.i;
                    scope.spawn(move || {
                        // A panicking stage is a failed instance, never a run that waits forever.
                        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            run_job(plan, opts, store, shared, display, manifest, job)
                        }))
                        .unwrap_or_else(|p| {
                            let why = p
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                                .unwrap_or_default();
                            Outcome::Failed(format!("the stage panicked: {why}"))
                        });
                        let _ = tx.send((i, out));
                    });
                }
                let held = self.slots.contains(&Slot::Held);
                if running == 0 {
                    if !held {
                        break;
                    }
                    std::thread::sleep(poll);
                    poll_held = true;
                    continue;
                }
                let (i, out) = if held {
                    match rx.recv_timeout(poll) {
                        Ok(got) => got,
                        Err(_) => {
                            poll_held = true;
                            continue;
                        }
                    }
                } else {
                    rx.recv().expect("a worker reports")
                };
                running -= 1;
                match out {
                    Outcome::Done(outs) => {
                        self.computed += 1;
                        self.slots[i] = Slot::Ready(outs);
                    }
                    Outcome::Failed(e) => self.fail(i, &e),
                    Outcome::Lost(e) => {
                        self.display.println(&format!("  lost    {}  ({e})", self.label(i)));
                        self.slots[i] = Slot::Held;
                    }
                }
            }
        });
    }

    /// Move every pending instance whose inputs are settled: skip, mark unknown, serve from the
    /// store, or queue for a worker. Repeats until nothing moves (a hit may settle another).
    /// With `poll_held`, instances another worker holds are looked at again first.
    fn advance(&mut self, queue: &mut VecDeque<Job>, poll_held: bool) {
        if poll_held {
            for i in 0..self.slots.len() {
                if self.slots[i] == Slot::Held {
                    self.key_and_serve(i, queue);
                }
            }
        }
        loop {
            let mut moved = false;
            for i in 0..self.slots.len() {
                if self.slots[i] != Slot::Pending {
                    continue;
                }
                let deps: Vec<&Slot> =
                    self.plan.instances[i].inputs.values().flatten().map(|&d| &self.slots[d]).collect();
                if deps.iter().any(|s| matches!(s, Slot::Pending | Slot::Running | Slot::Held)) {
                    continue;
                }
                moved = true;
                if deps.iter().any(|s| **s == Slot::Failed) {
                    self.set_state(i, State::Skipped);
                    self.slots[i] = Slot::Failed;
                    self.display.println(&format!("  skip    {}  (an input failed)", self.label(i)));
                } else if deps.iter().any(|s| **s == Slot::Unknown) {
                    self.display.println(&format!("  run     {}  (an input will be recomputed)", self.label(i)));
                    self.slots[i] = Slot::Unknown;
                } else {
                    self.key_and_serve(i, queue);
                }
            }
            if !moved {
                return;
            }
        }
    }

    /// Key the instance; serve a verified hit, or queue the miss (a dry run only reports it).
    fn key_and_serve(&mut self, i: usize, queue: &mut VecDeque<Job>) {
        let inst = &self.plan.instances[i];
        let inputs: InputHashes = inst
            .inputs
            .iter()
            .map(|(table, producers)| {
                let hashes = producers
                    .iter()
                    .map(|&p| match &self.slots[p] {
                        Slot::Ready(o) => o.get(table).cloned().unwrap_or_default(),
                        _ => unreachable!("inputs are settled"),
                    })
                    .collect();
                (table.clone(), hashes)
            })
            .collect();
        let ctx = context(self.plan, i, self.opts, (self.store, self.shared), "", self.display);
        let key = match instance_key(self.plan, i, inputs.clone(), &ctx) {
            Ok(k) => k,
            Err(e) => return self.fail(i, &e.to_string()),
        };
        let digest = key.digest();
        let was_held = self.slots[i] == Slot::Held;
        let entry = self.store.entry(&digest);
        let entry_exists = entry.is_some();
        let mut hit = entry.filter(|e| e.outputs.values().all(|h| self.store.verify(h)));
        if let Some(shared) = self.shared {
            let shared_result = match &hit {
                Some(local) => shared.share_hit(self.store, &digest, local),
                None => shared.fetch(self.store, &digest).map(|found| hit = found),
            };
            if let Err(e) = shared_result {
                return self.fail(i, &e.to_string());
            }
        }
        let stage = &self.plan.spec.stages[inst.stage];
        let old = self.previous.and_then(|m| m.find(&stage.id, &inst.label));
        {
            let mut m = self.manifest.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let r = &mut m.instances[i];
            r.key = Some(digest.clone());
            r.key_components = Some(key.clone());
            if let Some(entry) = &hit {
                r.state = State::Cached;
                r.outputs = entry.outputs.clone();
                r.rows = entry.rows.clone();
            }
        }
        if let Some(entry) = hit {
            self.display.println(&format!("  cached  {}", self.label(i)));
            self.cached += 1;
            self.slots[i] = Slot::Ready(entry.outputs);
            return;
        }
        if was_held {
            // Still another worker's: queued again, its claim is retried when a worker is free.
            self.slots[i] = Slot::Running;
            queue.push_back(Job { i, key, digest, inputs, claim: None, why: String::new() });
            return;
        }
        let why = miss_reasons(&key, old, entry_exists);
        let shown = if self.opts.explain { why.join("; ") } else { why[0].clone() };
        if self.opts.explain {
            self.display.println(&format!("          key {digest}"));
        }
        if self.opts.dry_run {
            self.display.println(&format!("  run     {}  ({shown})", self.label(i)));
            self.slots[i] = Slot::Unknown;
        } else {
            self.slots[i] = Slot::Running;
            queue.push_back(Job { i, key, digest, inputs, claim: None, why: shown });
        }
    }

    /// A job about to start: with a shared store, claim it first (one worker computes each
    /// instance); false when another worker holds it (the slot waits as `Held`) or it failed.
    fn start(&mut self, job: &mut Job) -> bool {
        let i = job.i;
        if let Some(shared) = self.shared {
            match shared.claim(&job.digest) {
                Ok(crate::remote::claims::ClaimAttempt::Won(c)) => {
                    if let Some(prev) = &c.took_over {
                        job.why = format!("took over from {} (epoch {}), whose lease lapsed", prev.holder, prev.epoch);
                    }
                    job.claim = Some(c);
                }
                Ok(crate::remote::claims::ClaimAttempt::Held { record, .. }) => {
                    if !job.why.is_empty() {
                        let msg =
                            format!("  held    {}  (by {}, epoch {})", self.label(i), record.holder, record.epoch);
                        self.display.println(&msg);
                    }
                    self.slots[i] = Slot::Held;
                    return false;
                }
                Err(e) => {
                    self.fail(i, &e.to_string());
                    return false;
                }
            }
        }
        if !job.why.is_empty() {
            self.display.println(&format!("  run     {}  ({})", self.label(i), job.why));
        }
        true
    }

    fn label(&self, i: usize) -> String {
        let inst = &self.plan.instances[i];
        format!("{}[{}]", self.plan.spec.stages[inst.stage].id, inst.label)
    }

    fn set_state(&self, i: usize, state: State) {
        self.manifest.lock().unwrap_or_else(std::sync::PoisonError::into_inner).instances[i].state = state;
    }

    fn fail(&mut self, i: usize, msg: &str) {
        {
            let mut m = self.manifest.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            m.instances[i].state = State::Failed;
            m.instances[i].error = Some(msg.into());
        }
        let label = self.label(i);
        self.display.println(&format!("  failed  {label}: {msg}"));
        self.failed.push(format!("{label}: {msg}"));
        self.slots[i] = Slot::Failed;
    }
}

/// Execute one miss on a worker: state `Running` in the manifest, the stage, the store entry.
fn run_job(
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
        // The files the key was computed from (prompts, models, SQL) must be the ones the stage
        // read: an edit while it ran would store new answers under the old key.
        let stage = &plan.spec.stages[plan.instances[job.i].stage];
        let now = stage.stage.fingerprint(&ctx)?;
        let changed: Vec<&String> = now
            .iter()
            .filter(|(f, h)| job.key.fingerprint.get(*f) != Some(*h))
            .map(|(f, _)| f)
            .chain(job.key.fingerprint.keys().filter(|f| !now.contains_key(*f)))
            .collect();
        if changed.is_empty() {
            Ok(out)
        } else {
            let list: Vec<&str> = changed.iter().map(|s| s.as_str()).collect();
            Err(Error::stage(
                &stage.id,
                format!("files it reads changed while it ran ({}): not stored; run again", list.join(", ")),
            ))
        }
    });
    ctx.progress.finish();
    let seconds = start.elapsed().as_secs_f64();
    // Publishing to a shared store is network I/O: done before the manifest is locked, so other
    // instances' progress is never held up behind an upload.
    let mut lost = None;
    let stored = result.and_then(|(outs, rows)| {
        let mut entry = StoredInstance { key: job.key.clone(), outputs: outs, rows, seconds };
        if let (Some(sh), Some(h)) = (shared, &holding) {
            match sh.publish(store, &job.digest, &entry, h) {
                Ok(published) => entry = published,
                Err(e) if h.check(&sh.remote).is_err() => {
                    lost = Some(e.to_string());
                    return Err(e);
                }
                Err(e) => return Err(e),
            }
        }
        store.put_entry(&job.digest, &entry)?;
        let _ = std::fs::remove_dir_all(store.work_dir(&job.digest));
        Ok(entry)
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

/// `runs/<name>` of this plan.
fn run_dir(plan: &Plan, opts: &RunOptions) -> PathBuf {
    opts.base_dir.join(&plan.spec.runs_dir).join(&plan.spec.name)
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

fn context(
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

fn instance_key(plan: &Plan, i: usize, inputs: InputHashes, ctx: &StageContext) -> Result<CacheKey> {
    let inst = &plan.instances[i];
    let stage = &plan.spec.stages[inst.stage].stage;
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
