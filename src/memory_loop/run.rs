//! The loop itself, in any domain: the tasks, order and neighbours loaded, the episodes run as the
//! scheduler readies them, written in durable parts, resumed after a kill.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{Float32Array, Int64Array, RecordBatch, UInt64Array};

use crate::error::{Error, Result};
use crate::llm::ChatModel;
use crate::memory_loop::arms::{ArmSpec, Mode};
use crate::memory_loop::bank::Bank;
use crate::memory_loop::episode::{Agent, OracleFn, ProgramRun};
use crate::memory_loop::prompts::Prompts;
use crate::memory_loop::retrieval::{DrawRow, Retrieval, draws_table};
use crate::pipeline::checkpoint::{load_parts, save_part};
use crate::pipeline::stage::{Inputs, StageContext};
use crate::seam::records::{CallRecord, Episode};
use crate::seam::tables::{calls_table, episodes_table};
use crate::seam::{Judge, check_channels};
use crate::table::column;

use super::MemoryLoopStage;

struct Loaded<D: Judge> {
    tasks: HashMap<i64, D::Task>,
    order: Vec<i64>,
    /// Candidates (step, similarity) per step, best first: the k most similar, or the
    /// `candidates` most similar under a score-ranked policy.
    neighbours: Vec<Vec<(usize, f32)>>,
    gold: HashMap<i64, D::Gold>,
}

impl MemoryLoopStage {
    fn load<D: Judge>(&self, domain: &D, ctx: &StageContext, inputs: &Inputs, arm: &ArmSpec) -> Result<Loaded<D>> {
        let policy = self.policy(arm);
        let (mode, width) = (arm.mode, policy.width(self.k));
        let p = |n: &str| PathBuf::from(n);
        let tasks: HashMap<i64, D::Task> =
            domain.tasks(inputs.get(ctx, "tasks")?, &p("tasks"))?.into_iter().map(|t| (D::id(&t), t)).collect();
        let order = crate::memory_loop::order::read_order(inputs.get(ctx, "order")?)?;
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
    /// The loop in `domain`.
    pub fn run_in<D: Judge>(
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
            Some(_) if D::DIALOGUE => {
                let why = format!(
                    "agent: the {} domain's episodes are dialogues with an environment, which an agent program cannot hold yet: use lucid's executor (no `agent:`)",
                    D::NAME
                );
                return Err(Error::stage(&ctx.stage_id, why));
            }
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
        let model = crate::pipeline::models::chat_model(&self.model, ctx, self.response_cache)?;
        let roles =
            [("planner", &self.roles.planner), ("executor", &self.roles.executor), ("grader", &self.roles.grader)];
        for (role, decoding) in roles {
            crate::pipeline::models::check_choices(ctx, model.as_ref(), decoding, &format!("roles.{role}.choices"))?;
        }
        let prompts = Prompts::load(&ctx.resolve(self.prompts_dir(D::PROMPTS)))?;
        if !D::PLANNER_OPTIONAL && !prompts.has_planner() && self.agent.is_none() {
            return Err(Error::input(
                ctx.resolve(self.prompts_dir(D::PROMPTS)).join(crate::memory_loop::prompts::OPTIONAL),
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
        let critical = crate::memory_loop::scheduler::depths(&deps).into_iter().max().unwrap_or(0);
        ctx.progress.note("episodes", total.into());
        ctx.progress.note("critical_path", critical.into());
        let mut peak_ready = 0usize;
        let outcome = crate::memory_loop::scheduler::schedule(
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
        let temperature =
            (policy.policy == crate::memory_loop::retrieval::Policy::Softmax).then_some(policy.temperature);
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
fn coverage<D: Judge>(domain: &D, ctx: &StageContext, data: &Loaded<D>, flag_by: &[String]) {
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
