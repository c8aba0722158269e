//! The runner's state machine: one [`Slot`] per instance. An instance leaves `Pending` as soon as
//! every input is settled — never waiting for unrelated instances — and goes key -> serve (a
//! verified store hit) -> execute (on one of `max_parallel` workers) -> `Ready`; a failed input
//! skips it, an input a dry run would recompute leaves it unknown. Each step is recorded in the
//! manifest as it happens.

use std::collections::{BTreeMap, VecDeque};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::cache_key::{CacheKey, STORE_FORMAT};
use super::job::{InputHashes, Job, Outcome, context, run_job};
use super::manifest::{InstanceRecord, Manifest, State};
use super::options::RunOptions;
use super::plan::Plan;
use super::progress::Display;
use super::shared::Shared;
use super::stage::StageContext;
use super::store::Store;
use crate::error::Result;

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
