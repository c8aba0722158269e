//! `kind: memory_loop` — the Memento-style agent of one arm and seed (`episodes`, `calls`). Per
//! task in the seed's order: the top-k earlier episodes of this arm and seed by similarity alone
//! (from the seed's `retrieval` table; their stored labels are shown, never used to rank) ->
//! planner -> executor -> sandbox (twice) -> self-grade -> detector -> stored label by the arm's
//! rule -> stored in the bank. Only a stage configured with `read_gold: true` (and `gold` in its
//! inputs) may run the oracle arm, and it may run nothing else.
//!
//! Scheduling: episode t depends only on the k episodes it retrieves (their plan, SQL and stored
//! label are all of the bank its prompts see), so the stream is a DAG. An episode starts as soon
//! as the episodes it retrieves are stored, up to `concurrency` at once, lowest step first
//! ([`crate::pipeline::dag`]); every prompt is the one the sequential loop would send, and with
//! `concurrency: 1` the order is the sequential one. The no-memory arm retrieves nothing, so all
//! its episodes are ready at once. Finished episodes are written as parts of consecutive steps
//! every `chunk_size` episodes (and every 10 s); a killed run loads whatever set is on disk and
//! runs the rest, losing and duplicating nothing. The instance's manifest entry notes its
//! critical path (the longest retrieval chain: the rounds of model latency it needs at unbounded
//! concurrency) and the peak number of episodes ready or in flight; `lucid status` shows done /
//! in flight / ready and an ETA while it runs.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{Float32Array, Int64Array, RecordBatch, StringArray, UInt64Array};
use serde::{Deserialize, Serialize};

use crate::agent::arms::{ArmSpec, Mode, arm_spec};
use crate::agent::bank::Bank;
use crate::agent::detector::DetectorConfig;
use crate::agent::episode::{CallRecord, Episode, calls_table, episodes_table};
use crate::agent::prompts::Prompts;
use crate::agent::schema::SchemaStyle;
use crate::agent::step::{Agent, AgentTask, OracleFn, Roles, Worker};
use crate::error::{Error, Result};
use crate::fingerprint::file_fingerprint;
use crate::llm::cache::CachedModel;
use crate::llm::{ChatModel, ModelConfig};
use crate::pipeline::checkpoint::{load_parts, save_part};
use crate::pipeline::stage::{Inputs, Stage, StageContext};
use crate::sql::sandbox::Limits;
use crate::table::column;

/// Config of the memory-loop stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryLoopStage {
    /// The model for every role (default: local SmolLM2).
    #[serde(default)]
    pub model: ModelConfig,
    /// Folder of prompt templates.
    #[serde(default = "default_prompts")]
    pub prompts: String,
    /// Memories shown to the planner (at most the retrieve stage's k).
    #[serde(default = "default_k")]
    pub k: usize,
    /// Decoding per role.
    #[serde(default)]
    pub roles: Roles,
    /// How the schema is shown: create (CREATE TABLE statements) | compact (`table(col TYPE, ..)`).
    #[serde(default)]
    pub schema_style: SchemaStyle,
    /// Schema shown to the model, in characters (0: all).
    #[serde(default = "default_schema_chars")]
    pub schema_chars: usize,
    /// Result rows shown to the self-grader.
    #[serde(default = "default_preview")]
    pub preview_rows: usize,
    /// Query timeout, seconds.
    #[serde(default = "default_timeout")]
    pub timeout_secs: f64,
    /// Row cap per query.
    #[serde(default = "default_max_rows")]
    pub max_rows: u64,
    /// The answer-free detector.
    #[serde(default)]
    pub detector: DetectorConfig,
    /// Arm name -> behaviour (the names no-memory, memento, lucid, oracle need no entry).
    #[serde(default)]
    pub arms: BTreeMap<String, ArmSpec>,
    /// This stage runs the oracle arm and reads `gold` (a ceiling, not a method).
    #[serde(default)]
    pub read_gold: bool,
    // Operational: how fast, not what. `skip_serializing` keeps them out of the cache key (the
    // key is this struct serialized), so changing one reuses the stored output and resumes exactly.
    /// Finished episodes per durable write (operational).
    #[serde(default = "default_chunk", skip_serializing)]
    pub chunk_size: usize,
    /// Episodes in flight at once, each as soon as the episodes it retrieves are stored
    /// (operational; the endpoint's `max_concurrency` still bounds its calls).
    #[serde(default = "default_concurrency", skip_serializing)]
    pub concurrency: usize,
    /// Use the response cache, `<cache>/responses.sqlite` (operational).
    #[serde(default = "default_true", skip_serializing)]
    pub response_cache: bool,
}

fn default_prompts() -> String {
    "pipelines/prompts".into()
}
fn default_k() -> usize {
    4
}
fn default_schema_chars() -> usize {
    6000
}
fn default_preview() -> usize {
    5
}
fn default_timeout() -> f64 {
    30.0
}
fn default_max_rows() -> u64 {
    1_000_000
}
fn default_chunk() -> usize {
    8
}
fn default_concurrency() -> usize {
    4
}
fn default_true() -> bool {
    true
}

struct Loaded {
    tasks: HashMap<i64, AgentTask>,
    order: Vec<i64>,
    /// Neighbours (step, similarity) per step, best first.
    neighbours: Vec<Vec<(usize, f32)>>,
    gold: HashMap<i64, String>,
}

impl MemoryLoopStage {
    fn arm(&self, ctx: &StageContext) -> Result<ArmSpec> {
        let name = ctx.arm().ok_or_else(|| {
            Error::stage(&ctx.stage_id, "a memory_loop stage must expand over arms: add `matrix: [seed, arm]`")
        })?;
        let spec = arm_spec(&self.arms, name).ok_or_else(|| {
            Error::stage(
                &ctx.stage_id,
                format!(
                    "unknown arm '{name}': use no-memory, memento, lucid or oracle, or map it under `arms:` to a mode"
                ),
            )
        })?;
        match (spec.mode == Mode::Oracle, self.read_gold) {
            (true, false) => Err(Error::stage(
                &ctx.stage_id,
                format!(
                    "arm '{name}' is an oracle (it reads gold): run it in its own stage with `read_gold: true`, \
                     `gold` in its inputs and `arms: [{name}]`"
                ),
            )),
            (false, true) => {
                Err(Error::stage(&ctx.stage_id, format!("reads gold, so it may run only oracle arms, not '{name}'")))
            }
            _ => Ok(spec),
        }
    }

    /// The model config with its file paths resolved against the run's base folder.
    fn resolved_model(&self, ctx: &StageContext) -> ModelConfig {
        let mut model = self.model.clone();
        match &mut model {
            ModelConfig::Local(c) => c.gguf = c.gguf.take().map(|p| ctx.resolve(&p.to_string_lossy())),
            ModelConfig::Replay(c) => c.calls = ctx.resolve(&c.calls.to_string_lossy()),
            _ => {}
        }
        model
    }

    /// Files whose content decides the model's answers (for the cache key).
    fn model_files(&self, ctx: &StageContext) -> Result<Vec<PathBuf>> {
        Ok(match self.resolved_model(ctx) {
            ModelConfig::Local(c) => vec![c.gguf_path(&crate::models::models_dir(&ctx.cache_dir))?],
            ModelConfig::Replay(c) => crate::llm::replay::calls_files(&c.calls)?,
            _ => Vec::new(),
        })
    }

    fn load(&self, ctx: &StageContext, inputs: &Inputs, mode: Mode) -> Result<Loaded> {
        let p = |n: &str| PathBuf::from(n);
        let tasks: HashMap<i64, AgentTask> = super::tasks(ctx, inputs)?
            .into_iter()
            .map(|t| {
                let task = AgentTask {
                    question_id: t.question_id,
                    db_id: t.db_id,
                    question: t.question,
                    evidence: t.evidence,
                    db_path: t.db_path,
                };
                (task.question_id, task)
            })
            .collect();
        let order = super::permutation::read_order(inputs.get(ctx, "order")?)?;
        if let Some(q) = order.iter().find(|q| !tasks.contains_key(q)) {
            return Err(Error::stage(&ctx.stage_id, format!("question_id {q} of the order is not a task")));
        }
        let mut neighbours = vec![Vec::new(); order.len()];
        if mode != Mode::NoMemory && self.k > 0 {
            let r = inputs
                .tables
                .get("retrieval")
                .ok_or_else(|| Error::stage(&ctx.stage_id, "memory arms need the `retrieval` input"))?;
            let (step, qid) = (
                column::<UInt64Array>(r, &p("retrieval"), "step")?,
                column::<Int64Array>(r, &p("retrieval"), "question_id")?,
            );
            let (nstep, sim) = (
                column::<UInt64Array>(r, &p("retrieval"), "neighbor_step")?,
                column::<Float32Array>(r, &p("retrieval"), "similarity")?,
            );
            for i in 0..r.num_rows() {
                let s = step.value(i) as usize;
                if order.get(s) != Some(&qid.value(i)) || nstep.value(i) as usize >= s {
                    return Err(Error::input(
                        "retrieval",
                        format!("row {i}: step {s} does not match this seed's order (rerun the retrieve stage)"),
                    ));
                }
                neighbours[s].push((nstep.value(i) as usize, sim.value(i)));
            }
            for n in &mut neighbours {
                n.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                n.truncate(self.k);
            }
        }
        let mut gold = HashMap::new();
        if self.read_gold {
            let g = inputs.get(ctx, "gold")?;
            let (gq, gs) = (
                column::<Int64Array>(g, &p("gold"), "question_id")?,
                column::<StringArray>(g, &p("gold"), "gold_sql")?,
            );
            gold = (0..g.num_rows()).map(|i| (gq.value(i), gs.value(i).to_string())).collect();
        }
        Ok(Loaded { tasks, order, neighbours, gold })
    }

    fn build_model(&self, ctx: &StageContext) -> Result<Arc<dyn ChatModel>> {
        let model = self.resolved_model(ctx);
        let inner = model.build(&crate::models::models_dir(&ctx.cache_dir))?;
        Ok(if self.response_cache {
            Arc::new(CachedModel::new(inner, &responses_path(&ctx.cache_dir))?)
        } else {
            inner
        })
    }
}

impl MemoryLoopStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "memory_loop";
}

impl Stage for MemoryLoopStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn version(&self) -> u32 {
        // 2: SQL extraction keeps quoted identifiers whole; a verdict's first word decides.
        2
    }

    fn required_inputs(&self) -> &'static [&'static str] {
        &["tasks", "order"]
    }

    fn optional_inputs(&self) -> &'static [&'static str] {
        &["retrieval", "gold"]
    }

    fn reads_gold(&self) -> bool {
        self.read_gold
    }

    fn outputs(&self, _: &str) -> Vec<String> {
        vec!["episodes".into(), "calls".into()]
    }

    /// The config without its operational fields (they are never serialized).
    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serializes")
    }

    fn fingerprint(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        self.arm(ctx)?; // a misconfigured arm fails before any file is read
        let mut fp = Prompts::fingerprint(&ctx.resolve(&self.prompts))?;
        for f in self.model_files(ctx)? {
            fp.insert(format!("model/{}", f.file_name().unwrap_or_default().to_string_lossy()), file_fingerprint(&f)?);
        }
        Ok(fp)
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let arm = self.arm(ctx)?;
        let data = self.load(ctx, inputs, arm.mode)?;
        let model = self.build_model(ctx)?;
        let roles =
            [("planner", &self.roles.planner), ("executor", &self.roles.executor), ("grader", &self.roles.grader)];
        if let Some((role, _)) = roles.iter().find(|(_, d)| !d.choices.is_empty() && !model.supports_choices()) {
            return Err(Error::stage(
                &ctx.stage_id,
                format!(
                    "roles.{role}.choices asks for forced choice, which needs a backend that scores continuations \
                     (local); the {} backend generates",
                    model.identity().backend
                ),
            ));
        }
        let prompts = Prompts::load(&ctx.resolve(&self.prompts))?;
        let timeout = Duration::try_from_secs_f64(self.timeout_secs)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| Error::stage(&ctx.stage_id, "timeout_secs must be positive"))?;
        let limits = Limits { timeout, max_rows: self.max_rows, run_twice: true, ..Limits::default() };
        let agent = Agent {
            model: model.as_ref(),
            prompts: &prompts,
            roles: &self.roles,
            schema_style: self.schema_style,
            schema_chars: self.schema_chars,
            preview_rows: self.preview_rows,
            limits: &limits,
            detector: &self.detector,
            arm: &arm,
        };
        let eval_opts = crate::eval::EvalOptions {
            timeout,
            jobs: 1,
            cache: Some(ctx.cache_dir.join("gold-results.sqlite")),
            ..Default::default()
        };
        let oracle_fn = |task: &AgentTask, sql: Option<&str>| -> Result<u8> {
            let gold = data
                .gold
                .get(&task.question_id)
                .ok_or_else(|| Error::stage(&ctx.stage_id, format!("question_id {} has no gold", task.question_id)))?;
            let pair = crate::eval::Pair { pred: sql, gold, db: &task.db_path };
            let (r, _) = crate::eval::evaluate(&[pair], &eval_opts)?;
            Ok(r[0].verdict.res())
        };
        let oracle: Option<&OracleFn<'_>> = (arm.mode == Mode::Oracle).then_some(&oracle_fn as &OracleFn<'_>);

        let total = data.order.len();
        let names = ["episodes", "calls"];
        ctx.progress.set_total(total as u64);
        // Episodes already on disk (a killed run's finished set, in any shape) go into the bank.
        let mut state =
            LoopState { bank: Bank::default(), pending: BTreeMap::new(), parts: Vec::new(), flushed: Instant::now() };
        let mut done = vec![false; total];
        for (range, part) in load_parts(ctx, total, &names) {
            state.bank.load(&part[0])?;
            done[range.clone()].iter_mut().for_each(|d| *d = true);
            ctx.progress.advance(range.len() as u64);
            state.parts.push((range, part));
        }
        // Episode t depends on the episodes it retrieves, and on nothing else.
        let deps: Vec<Vec<usize>> = data.neighbours.iter().map(|n| n.iter().map(|&(s, _)| s).collect()).collect();
        let critical = crate::pipeline::dag::depths(&deps).into_iter().max().unwrap_or(0);
        ctx.progress.note("episodes", total.into());
        ctx.progress.note("critical_path", critical.into());
        let status_file = ctx.work_dir.join(crate::pipeline::dag::STATUS_FILE);
        let flush = |st: &mut LoopState| -> Result<()> {
            for (range, eps, calls) in st.take_runs() {
                let part = vec![episodes_table().batch(&eps)?, calls_table().batch(&calls)?];
                save_part(ctx, range.clone(), &names, &part);
                st.parts.push((range, part));
            }
            st.flushed = Instant::now();
            Ok(())
        };
        let mut peak_ready = 0usize;
        let outcome = crate::pipeline::dag::run(
            &deps,
            &done,
            self.concurrency,
            &mut state,
            Worker::default,
            |st, t| st.bank.shown(&data.tasks[&data.order[t]], &data.neighbours[t], &data.tasks),
            |w, t, memories| agent.episode(w, t as u64, &data.tasks[&data.order[t]], memories, oracle),
            |st, t, (ep, calls), status| {
                st.bank.push(&ep);
                st.pending.insert(t, (ep, calls));
                ctx.progress.advance(1);
                peak_ready = peak_ready.max(status.ready + status.in_flight);
                ctx.progress.message(format!(
                    "{} in flight, {} ready, depth left {}, eta {:.0}s",
                    status.in_flight, status.ready, status.depth_left, status.eta_secs
                ));
                if st.pending.len() >= self.chunk_size.max(1) || st.flushed.elapsed() > Duration::from_secs(10) {
                    let _ = std::fs::write(&status_file, serde_json::to_vec(status).unwrap_or_default());
                    flush(st)?;
                }
                Ok(())
            },
        );
        // Whatever finished is kept, error or not: a rerun resumes from it.
        flush(&mut state)?;
        outcome?;
        ctx.progress.note("peak_ready", peak_ready.into());
        state.parts.sort_by_key(|(range, _)| range.start);
        let concat = |i: usize, schema: arrow::datatypes::Schema| -> Result<RecordBatch> {
            let batches: Vec<RecordBatch> = state.parts.iter().map(|p| p.1[i].clone()).collect();
            Ok(arrow::compute::concat_batches(&Arc::new(schema), &batches)?)
        };
        Ok(vec![
            ("episodes".into(), concat(0, episodes_table().schema())?),
            ("calls".into(), concat(1, calls_table().schema())?),
        ])
    }
}

/// The loop's state on the scheduling thread: the bank, finished episodes not yet on disk, and
/// the parts (on disk) that make the output.
struct LoopState {
    bank: Bank,
    pending: BTreeMap<usize, (Episode, Vec<CallRecord>)>,
    parts: Vec<(Range<usize>, Vec<RecordBatch>)>,
    flushed: Instant,
}

impl LoopState {
    /// The pending episodes as runs of consecutive steps (each becomes one part on disk).
    fn take_runs(&mut self) -> Vec<(Range<usize>, Vec<Episode>, Vec<CallRecord>)> {
        let mut runs: Vec<(Range<usize>, Vec<Episode>, Vec<CallRecord>)> = Vec::new();
        for (t, (ep, calls)) in std::mem::take(&mut self.pending) {
            match runs.last_mut() {
                Some(run) if run.0.end == t => {
                    run.0.end = t + 1;
                    run.1.push(ep);
                    run.2.extend(calls);
                }
                _ => runs.push((t..t + 1, vec![ep], calls)),
            }
        }
        runs
    }
}

/// Where the response cache of `cache_dir` lives.
pub fn responses_path(cache_dir: &Path) -> PathBuf {
    cache_dir.join("responses.sqlite")
}
