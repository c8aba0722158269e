//! `kind: memory_loop` — the Memento-style agent of one arm and seed (`episodes`, `calls`), in
//! the domain its config names ([`crate::seam`]). Per task in the seed's order: the top-k
//! earlier episodes of this arm and seed by similarity alone (from the seed's `retrieval` table;
//! their stored labels are shown, never used to rank) -> planner (when the prompts have one) ->
//! executor -> the domain observes the artifact (text-to-SQL: the sandbox, twice) -> self-grade
//! -> the domain's answer-free channels -> stored label by the arm's rule -> stored in the bank. Only a stage configured with `read_gold: true` (and `gold` in its
//! inputs) may run the oracle arm, and it may run nothing else.
//!
//! Scheduling: episode t depends only on the k episodes it retrieves (their plan, artifact and
//! stored label are all of the bank its prompts see), so the stream is a DAG. An episode starts as soon
//! as the episodes it retrieves are stored, up to `concurrency` at once, lowest step first
//! ([`crate::pipeline::episode_scheduler`]); every prompt is the one the sequential loop would send, and with
//! `concurrency: 1` the order is the sequential one. The no-memory arm retrieves nothing, so all
//! its episodes are ready at once. Finished episodes are written as parts of consecutive steps
//! every `chunk_size` episodes (and every 10 s); a killed run loads whatever set is on disk and
//! runs the rest, losing and duplicating nothing. The instance's manifest entry notes its
//! critical path (the longest retrieval chain: the rounds of model latency it needs at unbounded
//! concurrency) and the peak number of episodes ready or in flight; `lucid status` shows done /
//! in flight / ready and an ETA while it runs.

mod stage;

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{Float32Array, Int64Array, RecordBatch, UInt64Array};
use serde::{Deserialize, Serialize};

use crate::agent::arms::{ArmSpec, Mode, arm_spec};
use crate::agent::bank::Bank;
use crate::agent::episode::{Agent, OracleFn, ProgramRun, Roles};
use crate::agent::program::AgentProgram;
use crate::agent::prompts::Prompts;
use crate::agent::retrieval::{DrawRow, Retrieval, draws_table};
use crate::agent::tables::{calls_table, episodes_table};
use crate::domains::DomainKind;
use crate::error::{Error, Result};
use crate::llm::{ChatModel, ModelConfig};
use crate::pipeline::checkpoint::{load_parts, save_part};
use crate::pipeline::stage::{Inputs, StageContext};
use crate::seam::records::{CallRecord, Episode};
use crate::seam::{Judge, check_channels};
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
    /// How an episode's memories are picked among the most similar earlier ones (default:
    /// similarity only, Memento's; softmax and hybrid rank by stored label too: see
    /// [`crate::agent::retrieval`]). An arm may set its own under `arms:`.
    #[serde(default, skip_serializing_if = "Retrieval::is_similarity")]
    pub retrieval: Retrieval,
    /// The domain and its options (default: text-to-SQL, `{kind: sql}`; `lucid domains` lists
    /// the kinds and their options).
    #[serde(default)]
    pub domain: DomainBlock,
    // The text-to-SQL domain's options at the top level, as before domains existed: accepted
    // with the sql domain, an error with another, and with the same option under `domain:`.
    // Never serialized: the cache key holds the domain with them folded in, so both spellings
    // of one config share a key.
    /// (sql) How the schema is shown.
    #[serde(default, skip_serializing)]
    pub schema_style: Option<serde_json::Value>,
    /// (sql) Schema characters shown.
    #[serde(default, skip_serializing)]
    pub schema_chars: Option<serde_json::Value>,
    /// (sql) Result rows shown to the self-grader.
    #[serde(default, skip_serializing)]
    pub preview_rows: Option<serde_json::Value>,
    /// (sql) Query timeout, seconds.
    #[serde(default, skip_serializing)]
    pub timeout_secs: Option<serde_json::Value>,
    /// (sql) Row cap per query.
    #[serde(default, skip_serializing)]
    pub max_rows: Option<serde_json::Value>,
    /// (sql) The answer-free detector.
    #[serde(default, skip_serializing)]
    pub detector: Option<serde_json::Value>,
    /// Arm name -> behaviour (the names no-memory, memento, lucid, oracle need no entry).
    #[serde(default)]
    pub arms: BTreeMap<String, ArmSpec>,
    /// This stage runs the oracle arm and reads `gold` (a ceiling, not a method).
    #[serde(default)]
    pub read_gold: bool,
    /// An agent program in place of lucid's planner and executor (`{command: [python3,
    /// agent.py], files: [agent.py], grade: lucid | agent, timeout_secs}`; protocol in
    /// [`crate::agent::program`]); its model calls go through lucid's loopback endpoint to
    /// `model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentProgram>,
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
fn default_chunk() -> usize {
    8
}
fn default_concurrency() -> usize {
    4
}
fn default_true() -> bool {
    true
}

struct Loaded<D: Judge> {
    tasks: HashMap<i64, D::Task>,
    order: Vec<i64>,
    /// Candidates (step, similarity) per step, best first: the k most similar, or the
    /// `candidates` most similar under a score-ranked policy.
    neighbours: Vec<Vec<(usize, f32)>>,
    gold: HashMap<i64, D::Gold>,
}

/// The memory loop's `domain:` block: `kind` (absent: the registry's default, text-to-SQL) and
/// the domain's options beside it, as written (the registry fills in their defaults for the key).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DomainBlock {
    /// The domain's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Its options (the block without `kind`).
    #[serde(flatten)]
    pub options: serde_json::Map<String, serde_json::Value>,
}

impl<'de> Deserialize<'de> for DomainBlock {
    fn deserialize<De: serde::Deserializer<'de>>(d: De) -> std::result::Result<Self, De::Error> {
        use serde::de::Error as _;
        let mut options = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        let kind = match options.remove("kind") {
            None => None,
            Some(serde_json::Value::String(k)) => Some(k),
            Some(other) => return Err(De::Error::custom(format!("domain.kind must be a name, not {other}"))),
        };
        Ok(DomainBlock { kind, options })
    }
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
        match self.gold_refusal(name, &spec) {
            Some(why) => Err(Error::stage(&ctx.stage_id, why)),
            None => Ok(spec),
        }
    }

    /// Why arm `name` may not run in this stage, if it may not: an oracle needs a stage that
    /// reads gold, and such a stage runs nothing else.
    fn gold_refusal(&self, name: &str, spec: &ArmSpec) -> Option<String> {
        match (spec.mode == Mode::Oracle, self.read_gold) {
            (true, false) => Some(format!(
                "arm '{name}' is an oracle (it reads gold): run it in its own stage with `read_gold: true`, \
                 `gold` in its inputs and `arms: [{name}]`"
            )),
            (false, true) => Some(format!("reads gold, so it may run only oracle arms, not '{name}'")),
            _ => None,
        }
    }

    /// The retrieval policy of `arm`: its own, else the stage's.
    fn policy(&self, arm: &ArmSpec) -> Retrieval {
        arm.retrieval.unwrap_or(self.retrieval)
    }

    /// Whether any arm of the stage ranks by score (then it writes the `draws` table).
    fn writes_draws(&self) -> bool {
        !self.retrieval.is_similarity() || self.arms.values().any(|a| a.retrieval.is_some_and(|r| !r.is_similarity()))
    }

    fn load<D: Judge>(&self, domain: &D, ctx: &StageContext, inputs: &Inputs, arm: &ArmSpec) -> Result<Loaded<D>> {
        let policy = self.policy(arm);
        let (mode, width) = (arm.mode, policy.width(self.k));
        let p = |n: &str| PathBuf::from(n);
        let tasks: HashMap<i64, D::Task> =
            domain.tasks(inputs.get(ctx, "tasks")?, &p("tasks"))?.into_iter().map(|t| (D::id(&t), t)).collect();
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
            for (t, n) in neighbours.iter_mut().enumerate() {
                n.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                // Score-ranked policies need their candidates; similarity shows what there is.
                if !policy.is_similarity() && n.len() < width.min(t) {
                    return Err(Error::stage(
                        &ctx.stage_id,
                        format!(
                            "step {t} has {} retrieved neighbours, the arm's retrieval needs {}: raise the retrieve \
                             stage's k to at least {width}",
                            n.len(),
                            width.min(t)
                        ),
                    ));
                }
                n.truncate(width);
            }
        }
        let gold = if self.read_gold { domain.gold(inputs.get(ctx, "gold")?, &p("gold"))? } else { HashMap::new() };
        Ok(Loaded { tasks, order, neighbours, gold })
    }
}

impl MemoryLoopStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "memory_loop";
}

impl MemoryLoopStage {
    /// The loop in `domain`.
    pub(super) fn run_in<D: DomainKind>(
        &self,
        domain: &D,
        ctx: &StageContext,
        inputs: &Inputs,
    ) -> Result<Vec<(String, RecordBatch)>> {
        let arm = self.arm(ctx)?;
        let (policy, seed) = (self.policy(&arm), ctx.seed().unwrap_or(0));
        let data = self.load(domain, ctx, inputs, &arm)?;
        coverage(domain, ctx, &data, &arm.channels.clone().unwrap_or_else(|| domain.flag_channels()));
        let AgentParts { model, prompts, flag_channels } = self.agent_parts(domain, ctx, &arm)?;
        let program = match &self.agent {
            Some(p) => Some(ProgramRun {
                program: p.clone(),
                dir: ctx.resolve("."),
                proxy: crate::agent::proxy::Proxy::start(model.clone())?,
                seed,
                arm: ctx.arm().unwrap_or_default().to_string(),
            }),
            None => None,
        };
        let agent = Agent {
            domain,
            model: model.as_ref(),
            prompts: &prompts,
            roles: &self.roles,
            arm: &arm,
            flag_channels,
            program: program.as_ref(),
        };
        let oracle_fn = gold_oracle(domain, ctx, &data.gold);
        let oracle: Option<&OracleFn<'_, D::Task>> =
            (arm.mode == Mode::Oracle).then_some(&oracle_fn as &OracleFn<'_, D::Task>);
        let (mut state, done) = resume::<D>(ctx, data.order.len())?;
        let episodes = Episodes { ctx, data: &data, agent, oracle, policy, seed };
        self.run_episodes(&episodes, &mut state, &done)?;
        self.outputs(&episodes, state)
    }

    /// The agent's model, prompts and flag channels, checked against the arm and the domain.
    fn agent_parts<D: Judge>(&self, domain: &D, ctx: &StageContext, arm: &ArmSpec) -> Result<AgentParts> {
        let flag_channels = arm.channels.clone().unwrap_or_else(|| domain.flag_channels());
        check_channels::<D>(&flag_channels, "the arm's channels").map_err(|e| Error::stage(&ctx.stage_id, e))?;
        let model = super::chat_model(&self.model, ctx, self.response_cache)?;
        let roles =
            [("planner", &self.roles.planner), ("executor", &self.roles.executor), ("grader", &self.roles.grader)];
        for (role, decoding) in roles {
            super::check_choices(ctx, model.as_ref(), decoding, &format!("roles.{role}.choices"))?;
        }
        let prompts = Prompts::load(&ctx.resolve(&self.prompts))?;
        if !D::PLANNER_OPTIONAL && !prompts.has_planner() && self.agent.is_none() {
            return Err(Error::input(
                ctx.resolve(&self.prompts).join(crate::agent::prompts::OPTIONAL),
                format!("the {} domain's prompts need a planner template", D::NAME),
            ));
        }
        Ok(AgentParts { model, prompts, flag_channels })
    }

    /// Every episode not yet on disk, scheduled as a DAG, flushed as it goes and once more at the end.
    fn run_episodes<D: Judge>(
        &self,
        run: &Episodes<'_, D>,
        state: &mut LoopState<D::Obs>,
        done: &[bool],
    ) -> Result<()> {
        let (ctx, data) = (run.ctx, run.data);
        let total = data.order.len();
        // Episode t depends on the episodes it may retrieve (a score-ranked policy reads all its
        // candidates' labels), and on nothing else.
        let deps: Vec<Vec<usize>> = data.neighbours.iter().map(|n| n.iter().map(|&(s, _)| s).collect()).collect();
        let critical = crate::pipeline::episode_scheduler::depths(&deps).into_iter().max().unwrap_or(0);
        ctx.progress.note("episodes", total.into());
        ctx.progress.note("critical_path", critical.into());
        let mut peak_ready = 0usize;
        let outcome = crate::pipeline::episode_scheduler::schedule(
            &deps,
            done,
            self.concurrency,
            state,
            || run.agent.domain.worker(),
            |st, t| {
                let label = |s: usize| st.bank.label(s).expect("a candidate is read only once it is stored");
                let draws = run.policy.choose(run.seed, t, &data.neighbours[t], self.k, label);
                let shown: Vec<(usize, f32)> =
                    draws.iter().filter(|d| d.drawn).map(|d| (d.step, d.similarity)).collect();
                st.bank.shown::<D>(&data.tasks[&data.order[t]], &shown, &data.tasks)
            },
            |w, t, memories| run.agent.episode(w, t as u64, &data.tasks[&data.order[t]], memories, run.oracle),
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
                    status.write(&ctx.work_dir);
                    flush::<D>(ctx, st)?;
                }
                Ok(())
            },
        );
        // Whatever finished is kept, error or not: a rerun resumes from it.
        flush::<D>(ctx, state)?;
        outcome?;
        ctx.progress.note("peak_ready", peak_ready.into());
        Ok(())
    }

    /// The output tables: every part's episodes and calls in step order, and the draws when written.
    fn outputs<D: Judge>(
        &self,
        run: &Episodes<'_, D>,
        mut state: LoopState<D::Obs>,
    ) -> Result<Vec<(String, RecordBatch)>> {
        state.parts.sort_by_key(|(range, _)| range.start);
        let concat = |i: usize, schema: arrow::datatypes::Schema| -> Result<RecordBatch> {
            let batches: Vec<RecordBatch> = state.parts.iter().map(|p| p.1[i].clone()).collect();
            Ok(arrow::compute::concat_batches(&Arc::new(schema), &batches)?)
        };
        let mut out = vec![
            ("episodes".into(), concat(0, episodes_table::<D>().schema())?),
            ("calls".into(), concat(1, calls_table().schema())?),
        ];
        if self.writes_draws() {
            out.push(("draws".into(), draws_table().batch(&self.draws(&run.policy, run.seed, run.data, &state.bank))?));
        }
        Ok(out)
    }

    /// Every step's candidates as the policy saw them (the final bank holds the labels it read:
    /// a stored label never changes).
    fn draws<D: Judge>(&self, policy: &Retrieval, seed: u64, data: &Loaded<D>, bank: &Bank) -> Vec<DrawRow> {
        let temperature = (policy.policy == crate::agent::retrieval::Policy::Softmax).then_some(policy.temperature);
        let mut rows = Vec::new();
        for (t, candidates) in data.neighbours.iter().enumerate() {
            let label = |s: usize| bank.label(s).unwrap_or(0);
            for (rank, draw) in policy.choose(seed, t, candidates, self.k, label).into_iter().enumerate() {
                rows.push(DrawRow {
                    step: t as u64,
                    question_id: data.order[t],
                    policy: policy.policy.name(),
                    temperature,
                    candidate_question_id: data.order[draw.step],
                    rank: rank as u32,
                    draw,
                });
            }
        }
        rows
    }
}

/// The tables of one part on disk, in order.
const PART_TABLES: [&str; 2] = ["episodes", "calls"];

/// What the agent owns for a run: its model, prompts, and the channels that flag an episode.
struct AgentParts {
    model: Arc<dyn ChatModel>,
    prompts: Prompts,
    flag_channels: Vec<String>,
}

/// What every episode of a run reads: the context, the loaded data, the agent and its oracle,
/// the retrieval policy and the seed.
struct Episodes<'a, D: Judge> {
    ctx: &'a StageContext,
    data: &'a Loaded<D>,
    agent: Agent<'a, D>,
    oracle: Option<&'a OracleFn<'a, D::Task>>,
    policy: Retrieval,
    seed: u64,
}

/// The oracle arm's label function: the domain's score of an artifact against the task's gold.
fn gold_oracle<'a, D: Judge>(
    domain: &'a D,
    ctx: &'a StageContext,
    gold: &'a HashMap<i64, D::Gold>,
) -> impl Fn(&D::Task, Option<&str>) -> Result<u8> + Sync + 'a {
    move |task: &D::Task, artifact: Option<&str>| -> Result<u8> {
        let id = D::id(task);
        let gold = gold.get(&id).ok_or_else(|| Error::stage(&ctx.stage_id, format!("question_id {id} has no gold")))?;
        domain.score(task, gold, artifact)
    }
}

/// The loop's state resumed from the parts already on disk (a killed run's finished set, in any
/// shape, goes into the bank), and which steps they cover.
fn resume<D: Judge>(ctx: &StageContext, total: usize) -> Result<(LoopState<D::Obs>, Vec<bool>)> {
    ctx.progress.set_total(total as u64);
    let mut state =
        LoopState { bank: Bank::default(), pending: BTreeMap::new(), parts: Vec::new(), flushed: Instant::now() };
    let mut done = vec![false; total];
    for (range, part) in load_parts(ctx, total, &PART_TABLES) {
        state.bank.load::<D>(&part[0])?;
        done[range.clone()].iter_mut().for_each(|d| *d = true);
        ctx.progress.advance(range.len() as u64);
        state.parts.push((range, part));
    }
    Ok((state, done))
}

/// Write the pending episodes as parts on disk, one per run of consecutive steps.
fn flush<D: Judge>(ctx: &StageContext, st: &mut LoopState<D::Obs>) -> Result<()> {
    for (range, eps, calls) in st.take_runs() {
        let part = vec![episodes_table::<D>().batch(&eps)?, calls_table().batch(&calls)?];
        save_part(ctx, range.clone(), &PART_TABLES, &part);
        st.parts.push((range, part));
    }
    st.flushed = Instant::now();
    Ok(())
}

/// How often each channel of `domain` can speak to the loop's tasks, noted in the manifest
/// (`channels_speak`: the share of tasks per channel); a flagging channel that can speak to none of them
/// is warned about before any episode runs (LUCID's arm would then store what memento does).
fn coverage<D: DomainKind>(domain: &D, ctx: &StageContext, data: &Loaded<D>, flag_by: &[String]) {
    let mut speaks: BTreeMap<&'static str, usize> = BTreeMap::new();
    for q in &data.order {
        for (name, can) in domain.speaks(&data.tasks[q]) {
            *speaks.entry(name).or_default() += usize::from(can);
        }
    }
    let n = data.order.len().max(1) as f64;
    let shares: serde_json::Map<String, serde_json::Value> =
        speaks.iter().map(|(k, v)| (k.to_string(), serde_json::json!(*v as f64 / n))).collect();
    ctx.progress.note("channels_speak", shares.into());
    for (name, count) in &speaks {
        if *count == 0 && flag_by.iter().any(|f| f == name) && !data.order.is_empty() {
            ctx.progress.warn(&format!(
                "{}: channel '{name}' can speak to none of the {} tasks (e.g. no evidence for their topics): it will never flag",
                ctx.stage_id,
                data.order.len()
            ));
        }
    }
}

/// The loop's state on the scheduling thread: the bank, finished episodes not yet on disk, and
/// the parts (on disk) that make the output.
struct LoopState<O> {
    bank: Bank,
    pending: BTreeMap<usize, (Episode<O>, Vec<CallRecord>)>,
    parts: Vec<(Range<usize>, Vec<RecordBatch>)>,
    flushed: Instant,
}

/// Consecutive finished episodes and their calls: one part on disk.
type Run<O> = (Range<usize>, Vec<Episode<O>>, Vec<CallRecord>);

impl<O> LoopState<O> {
    /// The pending episodes as runs of consecutive steps (each becomes one part on disk).
    fn take_runs(&mut self) -> Vec<Run<O>> {
        let mut runs: Vec<Run<O>> = Vec::new();
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
