//! One episode of any domain: planner -> executor -> the domain reads the artifact out of the
//! answer and observes it (text-to-SQL: runs it in the sandbox, twice) -> self-grade -> the
//! domain's answer-free channels -> stored label. Model failures are recorded in the episode and
//! its call rows, never dropped; only broken inputs (a missing database, a template error) stop
//! the stage.

use serde::{Deserialize, Serialize};

use super::arms::{ArmSpec, Mode, stored_q};
use super::parse::{Verdict, parse_verdict};
use super::prompts::{Prompts, ShownMemory, Vars};
use crate::agent::program::{AgentProgram, GradeBy, PROTOCOL};
use crate::agent::proxy::Proxy;
use crate::error::{Invalid, Result};
use crate::llm::{ChatModel, ChatRequest, Decoding, Message};
use crate::seam::Domain;
use crate::seam::dialogue::{Dialogue, MAX_ASKS, Next};
use crate::seam::recorded::recorded_call;
use crate::seam::records::{CallRecord, Episode, Retrieved};

/// Decoding per role.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Roles {
    /// Planner decoding.
    #[serde(default = "planner")]
    pub planner: Decoding,
    /// Executor decoding (stops at the end of the query).
    #[serde(default = "executor")]
    pub executor: Decoding,
    /// Self-grader decoding.
    #[serde(default = "grader")]
    pub grader: Decoding,
}

fn planner() -> Decoding {
    Decoding { max_tokens: 256, ..Decoding::default() }
}
fn executor() -> Decoding {
    Decoding { max_tokens: 256, stop: vec![";".into()], ..Decoding::default() }
}
fn grader() -> Decoding {
    Decoding { max_tokens: 128, ..Decoding::default() }
}

impl Default for Roles {
    fn default() -> Self {
        Roles { planner: planner(), executor: executor(), grader: grader() }
    }
}

/// Everything an episode needs besides its task and memories.
pub struct Agent<'a, D: Domain> {
    /// The domain.
    pub domain: &'a D,
    /// The model (all roles).
    pub model: &'a dyn ChatModel,
    /// Prompt templates.
    pub prompts: &'a Prompts,
    /// Decoding per role.
    pub roles: &'a Roles,
    /// The arm.
    pub arm: &'a ArmSpec,
    /// The channels that flag an episode (the arm's, else the domain's).
    pub flag_channels: Vec<String>,
    /// An agent program in place of the planner and executor ([`crate::agent::program`]).
    pub program: Option<&'a ProgramRun>,
}

/// An agent program as a loop runs it: the `agent:` block, the folder it runs from, the
/// endpoint its model calls go through, and the instance's seed and arm.
pub struct ProgramRun {
    /// The `agent:` block.
    pub program: AgentProgram,
    /// Where the command runs (the pipeline's folder).
    pub dir: std::path::PathBuf,
    /// The loopback endpoint.
    pub proxy: Proxy,
    /// The instance's seed.
    pub seed: u64,
    /// The instance's arm.
    pub arm: String,
}

/// Count call `rec` into episode `ep`'s totals.
fn tally<O>(ep: &mut Episode<O>, rec: &CallRecord) {
    ep.calls = ep.calls.saturating_add(1);
    ep.cache_hits = ep.cache_hits.saturating_add(u32::from(rec.cache_hit));
    ep.failed_calls = ep.failed_calls.saturating_add(u32::from(rec.error.is_some()));
    ep.tokens_in += rec.tokens_in;
    ep.tokens_out += rec.tokens_out;
    ep.latency_ms += rec.latency_ms;
}

/// The oracle arm's label function: U of (task, artifact). Supplied only by a gold-reading stage.
pub type OracleFn<'a, T> = dyn Fn(&T, Option<&str>) -> Result<u8> + Sync + 'a;

impl<D: Domain> Agent<'_, D> {
    /// Run one episode. `memories` pairs what is recorded with what the planner is shown.
    pub fn episode(
        &self,
        w: &mut D::Worker,
        step: u64,
        task: &D::Task,
        memories: Vec<(Retrieved, ShownMemory)>,
        oracle: Option<&OracleFn<'_, D::Task>>,
    ) -> Result<(Episode<D::Obs>, Vec<CallRecord>)> {
        let (retrieved, shown): (Vec<Retrieved>, Vec<ShownMemory>) = memories.into_iter().unzip();
        let mut ep = Episode {
            step,
            question_id: D::id(task),
            group: D::group(task).to_string(),
            retrieved,
            grade: "skipped".into(),
            ..Episode::default()
        };
        let mut calls = Vec::new();
        // Every template sees every variable, empty where it does not apply.
        let mut base = Vars::new();
        base.insert("question", D::question(task).into());
        for (k, v) in [("plan", ""), (D::ARTIFACT, ""), ("status", ""), ("result", "")] {
            base.insert(k, v.into());
        }
        base.insert("memories", minijinja::Value::from_serialize(Vec::<ShownMemory>::new()));
        for (k, v) in self.domain.context(w, task)? {
            base.insert(k, v.into());
        }
        let with = |pairs: Vec<(&'static str, minijinja::Value)>| {
            let mut vars = base.clone();
            vars.extend(pairs);
            vars
        };
        let shown_value = minijinja::Value::from_serialize(&shown);

        let (artifact, agent_r) = match self.program {
            Some(p) => self.program_artifact(p, w, task, &shown, &mut ep, &mut calls)?,
            None => (self.planned_artifact(w, task, &with, shown_value, &mut ep, &mut calls)?, None),
        };
        match artifact {
            Err(why) => ep.obs = self.domain.unobserved(&why.0),
            Ok(artifact) => {
                let seen = self.domain.observe(w, task, &artifact)?;
                ep.obs = seen.obs;
                let vars = with(vec![
                    (D::ARTIFACT, artifact.as_str().into()),
                    ("status", seen.status.into()),
                    ("result", seen.result.into()),
                ]);
                ep.artifact = Some(artifact);
                self.self_grade(&vars, agent_r, &mut ep, &mut calls)?;
            }
        }

        ep.channels = self.domain.channels(task, ep.artifact.as_deref(), &ep.obs);
        ep.flagged = ep.channels.any_of(&self.flag_channels);
        let u = match (self.arm.mode, oracle) {
            (Mode::Oracle, Some(f)) => Some(f(task, ep.artifact.as_deref())?),
            _ => None,
        };
        ep.stored_q = stored_q(self.arm.mode, ep.r, ep.flagged, u);
        Ok((ep, calls))
    }

    /// The agent program run on `task` through its loopback endpoint (its model calls and its own
    /// row recorded in `calls`, its plan in `ep`): the artifact the domain extracts from its
    /// reply, or why there is none, and the program's own grade r when it gave one.
    fn program_artifact(
        &self,
        p: &ProgramRun,
        w: &mut D::Worker,
        task: &D::Task,
        shown: &[ShownMemory],
        ep: &mut Episode<D::Obs>,
        calls: &mut Vec<CallRecord>,
    ) -> Result<(std::result::Result<String, Invalid>, Option<u8>)> {
        let step = ep.step;
        if D::DIALOGUE {
            let why =
                "this domain's episodes are dialogues with an environment, which an agent program cannot hold yet";
            return Ok((Err(Invalid::from(why)), None));
        }
        let mut task_json = serde_json::Map::new();
        task_json.insert("question".into(), D::question(task).into());
        for (k, v) in self.domain.context(w, task)? {
            task_json.insert(k.into(), v.into());
        }
        let scope = format!("{}/{}/{step}/{}", p.seed, p.arm, ep.question_id);
        let ticket = p.proxy.open(step, ep.question_id, scope)?;
        let request = serde_json::json!({
            "protocol": PROTOCOL,
            "episode": {"seed": p.seed, "arm": p.arm, "step": step, "question_id": ep.question_id},
            "task": task_json,
            "artifact": D::ARTIFACT,
            "memories": shown,
            "openai": {"base_url": ticket.base_url, "api_key": "lucid-dummy-key"},
        });
        let (reply, rec) =
            crate::agent::program::run(&p.program, &p.dir, &request, &ticket.base_url, step, ep.question_id);
        let inner = p.proxy.close(ticket);
        // The program's row keeps its own time: its model calls' time is in their rows,
        // so the episode's latency counts each second once.
        let mut rec = rec;
        rec.latency_ms = (rec.latency_ms - inner.iter().map(|c| c.latency_ms).sum::<f64>()).max(0.0);
        for c in inner.into_iter().chain([rec]) {
            tally(ep, &c);
            calls.push(c);
        }
        Ok(match reply {
            Some(reply) => {
                ep.plan = reply.plan.clone();
                (self.domain.extract(&reply.artifact), reply.r())
            }
            None => (Err(Invalid::from("the agent program failed")), None),
        })
    }

    /// Grade the observed artifact into `ep` (grade and r): the agent program's own grade `agent_r`
    /// when it grades, else the self-grader's verdict on the template variables `vars`.
    fn self_grade(
        &self,
        vars: &Vars,
        agent_r: Option<u8>,
        ep: &mut Episode<D::Obs>,
        calls: &mut Vec<CallRecord>,
    ) -> Result<()> {
        if self.program.is_some_and(|p| p.program.grade == GradeBy::Agent) {
            // The program's own grade; none readable is a failed grade, as a failed grader call.
            ep.r = agent_r;
            ep.grade = match agent_r {
                Some(1) => "correct",
                Some(_) => "incorrect",
                None => "failed",
            }
            .into();
        } else {
            let grader = self.prompts.render("grader.txt", vars)?;
            match self.call("grader", grader, &self.roles.grader, ep, calls)? {
                Some(text) => {
                    let v = parse_verdict(&text);
                    ep.grade = v.as_str().into();
                    ep.r = Verdict::r(v);
                }
                None => ep.grade = "failed".into(),
            }
        }
        Ok(())
    }

    /// The planner (when the prompts have one) and the executor: the artifact the domain
    /// extracts from the executor's answer, or why there is none. `with` makes a template's
    /// variables.
    fn planned_artifact(
        &self,
        w: &mut D::Worker,
        task: &D::Task,
        with: &dyn Fn(Vec<(&'static str, minijinja::Value)>) -> Vars,
        shown_value: minijinja::Value,
        ep: &mut Episode<D::Obs>,
        calls: &mut Vec<CallRecord>,
    ) -> Result<std::result::Result<String, Invalid>> {
        // Without a planner template the executor runs with an empty plan (and `plan` stays null).
        let plan = if self.prompts.has_planner() {
            let planner = self.prompts.render("planner.txt", &with(vec![("memories", shown_value.clone())]))?;
            ep.plan = self.call("planner", planner, &self.roles.planner, ep, calls)?;
            ep.plan.clone()
        } else {
            Some(String::new())
        };
        Ok(match plan {
            None => Err(Invalid::from("planner call failed")),
            Some(plan) => {
                let vars = with(vec![("plan", plan.into()), ("memories", shown_value)]);
                let executor = self.prompts.render("executor.txt", &vars)?;
                // Only a domain whose episodes are dialogues is asked for one.
                if D::DIALOGUE {
                    return match self.domain.dialogue(w, task, self.prompts.system(), &executor)? {
                        Some(mut dialogue) => self.converse(dialogue.as_mut(), ep, calls),
                        None => Ok(Err(Invalid::from(
                            "the domain's episodes are dialogues, but it gave none for this task",
                        ))),
                    };
                }
                match self.call("executor", executor, &self.roles.executor, ep, calls)? {
                    Some(text) => self.domain.extract(&text),
                    None => Err(Invalid::from("executor call failed")),
                }
            }
        })
    }

    /// A dialogue's executor calls, each recorded, until it is done: its artifact, or why there is
    /// none (a dialogue that asks more than [`MAX_ASKS`] times gives none).
    fn converse(
        &self,
        dialogue: &mut dyn Dialogue,
        ep: &mut Episode<D::Obs>,
        calls: &mut Vec<CallRecord>,
    ) -> Result<std::result::Result<String, Invalid>> {
        let mut next = dialogue.start()?;
        for _ in 0..MAX_ASKS {
            let Next::Ask(messages) = next else { break };
            let reply = self.call_with("executor", messages, &self.roles.executor, ep, calls)?;
            next = dialogue.next(reply.as_deref())?;
        }
        Ok(match next {
            Next::Done(artifact) => artifact,
            Next::Ask(_) => Err(Invalid(format!("the dialogue asked for more than {MAX_ASKS} executor calls"))),
        })
    }

    /// One model call, recorded; the answer text, or None when it failed after its retries.
    fn call(
        &self,
        role: &'static str,
        user: String,
        decoding: &Decoding,
        ep: &mut Episode<D::Obs>,
        calls: &mut Vec<CallRecord>,
    ) -> Result<Option<String>> {
        let messages = vec![Message::system(self.prompts.system()), Message::user(user)];
        self.call_with(role, messages, decoding, ep, calls)
    }

    /// A call of `messages`, recorded; the answer text, or None when it failed after its retries.
    fn call_with(
        &self,
        role: &'static str,
        messages: Vec<Message>,
        decoding: &Decoding,
        ep: &mut Episode<D::Obs>,
        calls: &mut Vec<CallRecord>,
    ) -> Result<Option<String>> {
        let req = ChatRequest { messages, decoding: decoding.clone(), sample_index: 0, scope: None };
        let (out, rec) = recorded_call(self.model, &req, ep.step, ep.question_id, role);
        tally(ep, &rec);
        calls.push(rec);
        Ok(out.ok().map(|c| c.text))
    }
}
