//! `kind: memory_loop` — the Memento-style agent of one arm and seed (`episodes`, `calls`), in
//! the domain its config names ([`crate::domain`]). Per task in the seed's order: the top-k
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

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{Float32Array, Int64Array, RecordBatch, UInt64Array};
use serde::{Deserialize, Serialize};

use crate::agent::arms::{ArmSpec, Mode, arm_spec};
use crate::agent::bank::Bank;
use crate::agent::episode::{Agent, OracleFn, Roles};
use crate::agent::prompts::Prompts;
use crate::agent::records::{CallRecord, Episode};
use crate::agent::retrieval::{DrawRow, Retrieval, draws_table};
use crate::agent::tables::{calls_table, episodes_table};
use crate::domain::factual::FactualDomain;
use crate::domain::sql::SqlDomain;
use crate::domain::sql::detector::DetectorConfig;
use crate::domain::sql::schema::SchemaStyle;
use crate::domain::{DomainConfig, Judge, check_channels};
use crate::error::{Error, Invalid, Result};
use crate::llm::{ChatModel, ModelConfig};
use crate::pipeline::checkpoint::{load_parts, save_part};
use crate::pipeline::stage::{Inputs, Stage, StageContext};
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
    /// The domain and its options (default: text-to-SQL, `{kind: sql}`).
    #[serde(default)]
    pub domain: DomainConfig,
    // The text-to-SQL domain's options at the top level, as before domains existed: accepted
    // with the sql domain, an error with another, and with the same option under `domain:`.
    // Never serialized: the cache key holds the domain with them folded in, so both spellings
    // of one config share a key.
    /// (sql) How the schema is shown.
    #[serde(default, skip_serializing)]
    pub schema_style: Option<SchemaStyle>,
    /// (sql) Schema characters shown.
    #[serde(default, skip_serializing)]
    pub schema_chars: Option<usize>,
    /// (sql) Result rows shown to the self-grader.
    #[serde(default, skip_serializing)]
    pub preview_rows: Option<usize>,
    /// (sql) Query timeout, seconds.
    #[serde(default, skip_serializing)]
    pub timeout_secs: Option<f64>,
    /// (sql) Row cap per query.
    #[serde(default, skip_serializing)]
    pub max_rows: Option<u64>,
    /// (sql) The answer-free detector.
    #[serde(default, skip_serializing)]
    pub detector: Option<DetectorConfig>,
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

impl MemoryLoopStage {
    /// The domain's config, with the top-level text-to-SQL options folded in.
    fn fold_domain(&self) -> std::result::Result<DomainConfig, Invalid> {
        let legacy = [
            ("schema_style", self.schema_style.is_some()),
            ("schema_chars", self.schema_chars.is_some()),
            ("preview_rows", self.preview_rows.is_some()),
            ("timeout_secs", self.timeout_secs.is_some()),
            ("max_rows", self.max_rows.is_some()),
            ("detector", self.detector.is_some()),
        ];
        let Some((first, _)) = legacy.iter().find(|(_, set)| *set) else { return Ok(self.domain.clone()) };
        let DomainConfig::Sql(c) = &self.domain else {
            return Err(Invalid(format!(
                "`{first}` is a text-to-SQL option; the {} domain takes its options under `domain:`",
                self.domain.kind()
            )));
        };
        // An option written both at the top and under `domain:` (away from its default) is ambiguous.
        let under = serde_json::to_value(c).unwrap_or_default();
        let default = serde_json::to_value(crate::domain::sql::SqlConfig::default()).unwrap_or_default();
        if let Some((key, _)) = legacy.iter().find(|(k, set)| *set && under.get(*k) != default.get(*k)) {
            return Err(Invalid(format!("`{key}` is set both at the top of the config and under `domain:`: keep one")));
        }
        let mut c = c.clone();
        c.schema_style = self.schema_style.unwrap_or(c.schema_style);
        c.schema_chars = self.schema_chars.unwrap_or(c.schema_chars);
        c.preview_rows = self.preview_rows.unwrap_or(c.preview_rows);
        c.timeout_secs = self.timeout_secs.unwrap_or(c.timeout_secs);
        c.max_rows = self.max_rows.unwrap_or(c.max_rows);
        if let Some(d) = &self.detector {
            c.detector = d.clone();
        }
        Ok(DomainConfig::Sql(c))
    }

    /// [`Self::fold_domain`], checked: a registered kind, a factual domain's options.
    fn domain_config(&self, ctx: &StageContext) -> Result<DomainConfig> {
        let invalid = |e: Invalid| Error::stage(&ctx.stage_id, e);
        let config = self.fold_domain().map_err(invalid)?;
        match &config {
            DomainConfig::Factual(c) => c.check().map_err(invalid)?,
            DomainConfig::Other { kind, .. } if registered(kind).is_none() => {
                return Err(invalid(
                    format!(
                        "unknown domain '{kind}': use sql or factual, or register it (memory_loop::register_domain)"
                    )
                    .into(),
                ));
            }
            _ => {}
        }
        Ok(config)
    }

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

impl Stage for MemoryLoopStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn version(&self) -> u32 {
        // 2: SQL extraction keeps quoted identifiers whole; a verdict's first word decides.
        // 3: domains; episodes gain `channels`.
        // 4 (score-ranked policies only, so similarity loops keep their keys): `draws.draw_order`.
        if self.writes_draws() { 4 } else { 3 }
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
        let mut names = vec!["episodes".to_string(), "calls".into()];
        if self.writes_draws() {
            names.push("draws".into());
        }
        names
    }

    /// The config without its operational fields (they are never serialized), the top-level
    /// text-to-SQL options folded into `domain`.
    fn config_json(&self) -> serde_json::Value {
        let mut keyed = self.clone();
        if let Ok(d) = self.fold_domain() {
            keyed.domain = d;
        }
        let mut json = serde_json::to_value(keyed).expect("config serializes");
        // Only the knobs a policy reads enter the key (a temperature sweep under hybrid reuses).
        if !self.retrieval.is_similarity() {
            json["retrieval"] = self.retrieval.keyed();
        }
        for (name, arm) in &self.arms {
            if let Some(r) = arm.retrieval {
                json["arms"][name]["retrieval"] = r.keyed();
            }
        }
        json
    }

    fn fingerprint(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        // A misconfigured domain or arm (or one naming channels its domain lacks) fails before
        // any file is read.
        self.domain_config(ctx)?;
        let arm = self.arm(ctx)?;
        self.policy(&arm).check(self.k).map_err(|e| Error::stage(&ctx.stage_id, e))?;
        if let Some(names) = arm.channels {
            let checked = match &self.domain {
                DomainConfig::Sql(_) => check_channels::<SqlDomain>(&names, "the arm's channels"),
                DomainConfig::Factual(_) => check_channels::<FactualDomain>(&names, "the arm's channels"),
                DomainConfig::Other { .. } => Ok(()),
            };
            checked.map_err(|e| Error::stage(&ctx.stage_id, e))?;
        }
        let mut fp = Prompts::fingerprint(&ctx.resolve(&self.prompts))?;
        if let DomainConfig::Factual(c) = &self.domain {
            fp.insert("evidence".into(), c.corpus_fingerprint(|p| ctx.resolve(p))?);
        }
        fp.extend(super::model_fingerprint(&self.model, ctx)?);
        Ok(fp)
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let gold_cache = Some(ctx.cache_dir.join("gold-results.sqlite"));
        let invalid = |e: Invalid| Error::stage(&ctx.stage_id, e);
        match self.domain_config(ctx)? {
            DomainConfig::Sql(c) => self.run_in(&SqlDomain::new(c, gold_cache).map_err(invalid)?, ctx, inputs),
            DomainConfig::Factual(c) => {
                self.run_in(&FactualDomain::load(c, |p| ctx.resolve(p), &ctx.cache_dir)?, ctx, inputs)
            }
            DomainConfig::Other { kind, options } => {
                let runner = registered(&kind).ok_or_else(|| {
                    Error::stage(
                        &ctx.stage_id,
                        format!(
                            "unknown domain '{kind}': use sql or factual, or register it (memory_loop::register_domain)"
                        ),
                    )
                })?;
                runner(self, &options, ctx, inputs)
            }
        }
    }
}

impl MemoryLoopStage {
    /// The loop in `domain`.
    fn run_in<D: Judge>(&self, domain: &D, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let arm = self.arm(ctx)?;
        let (policy, seed) = (self.policy(&arm), ctx.seed().unwrap_or(0));
        let data = self.load(domain, ctx, inputs, &arm)?;
        let AgentParts { model, prompts, flag_channels } = self.agent_parts(domain, ctx, &arm)?;
        let agent =
            Agent { domain, model: model.as_ref(), prompts: &prompts, roles: &self.roles, arm: &arm, flag_channels };
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
        if !D::PLANNER_OPTIONAL && !prompts.has_planner() {
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

/// A domain added from outside lucid's source: how it is built from its `domain:` options.
pub trait Configured: Judge + Sized + 'static {
    /// The domain from the options of its `domain:` block (without `kind`).
    fn configure(options: &serde_json::Value, ctx: &StageContext) -> Result<Self>;
}

/// How the loop runs a registered domain.
type Runner = fn(&MemoryLoopStage, &serde_json::Value, &StageContext, &Inputs) -> Result<Vec<(String, RecordBatch)>>;

static REGISTERED: std::sync::LazyLock<std::sync::Mutex<BTreeMap<String, Runner>>> =
    std::sync::LazyLock::new(Default::default);

/// Register domain `D` under `name`, so a memory_loop stage with `domain: {kind: <name>, ...}`
/// runs it: the one line a new domain adds besides its own folder.
pub fn register_domain<D: Configured>(name: &str) {
    let runner: Runner = |stage, options, ctx, inputs| stage.run_in(&D::configure(options, ctx)?, ctx, inputs);
    REGISTERED.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(name.to_string(), runner);
}

fn registered(name: &str) -> Option<Runner> {
    REGISTERED.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(name).copied()
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
