//! One episode of any domain: planner -> executor -> the domain reads the artifact out of the
//! answer and observes it (text-to-SQL: runs it in the sandbox, twice) -> self-grade -> the
//! domain's answer-free channels -> stored label. Model failures are recorded in the episode and
//! its call rows, never dropped; only broken inputs (a missing database, a template error) stop
//! the stage.

use serde::{Deserialize, Serialize};

use super::arms::{ArmSpec, Mode, stored_q};
use super::parse::{Verdict, parse_verdict};
use super::prompts::{Prompts, ShownMemory, Vars};
use crate::domain::Domain;
use crate::domain::records::{CallRecord, Episode, Retrieved};
use crate::error::{Invalid, Result};
use crate::llm::cache::request_key;
use crate::llm::{ChatModel, ChatRequest, Decoding, Message};

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

        // Without a planner template the executor runs with an empty plan (and `plan` stays null).
        let plan = if self.prompts.has_planner() {
            let planner = self.prompts.render("planner.txt", &with(vec![("memories", shown_value.clone())]))?;
            ep.plan = self.call("planner", planner, &self.roles.planner, step, &mut ep, &mut calls)?;
            ep.plan.clone()
        } else {
            Some(String::new())
        };
        let artifact = match plan {
            None => Err(Invalid::from("planner call failed")),
            Some(plan) => {
                let vars = with(vec![("plan", plan.into()), ("memories", shown_value)]);
                let executor = self.prompts.render("executor.txt", &vars)?;
                match self.call("executor", executor, &self.roles.executor, step, &mut ep, &mut calls)? {
                    Some(text) => self.domain.extract(&text),
                    None => Err(Invalid::from("executor call failed")),
                }
            }
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
                let grader = self.prompts.render("grader.txt", &vars)?;
                ep.artifact = Some(artifact);
                match self.call("grader", grader, &self.roles.grader, step, &mut ep, &mut calls)? {
                    Some(text) => {
                        let v = parse_verdict(&text);
                        ep.grade = v.as_str().into();
                        ep.r = Verdict::r(v);
                    }
                    None => ep.grade = "failed".into(),
                }
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

    /// One model call, recorded; the answer text, or None when it failed after its retries.
    fn call(
        &self,
        role: &'static str,
        user: String,
        decoding: &Decoding,
        step: u64,
        ep: &mut Episode<D::Obs>,
        calls: &mut Vec<CallRecord>,
    ) -> Result<Option<String>> {
        let req = ChatRequest {
            messages: vec![Message::system(self.prompts.system()), Message::user(user)],
            decoding: decoding.clone(),
            sample_index: 0,
        };
        let id = self.model.identity();
        let key = request_key(&id, &req);
        let mut rec = CallRecord {
            step,
            question_id: ep.question_id,
            role,
            key,
            backend: id.backend,
            model: id.model,
            endpoint: id.endpoint,
            text: None,
            error: None,
            tokens_in: 0,
            tokens_out: 0,
            latency_ms: 0.0,
            attempts: 0,
            cache_hit: false,
        };
        ep.calls += 1;
        let out = match self.model.chat(&req) {
            Ok(c) => {
                rec.tokens_in = c.tokens_in;
                rec.tokens_out = c.tokens_out;
                rec.latency_ms = c.latency.as_secs_f64() * 1e3;
                rec.attempts = c.attempts;
                rec.cache_hit = c.cache_hit;
                rec.text = Some(c.text.clone());
                ep.cache_hits += u8::from(c.cache_hit);
                Some(c.text)
            }
            Err(f) => {
                rec.attempts = f.attempts;
                rec.error = Some(f.message);
                ep.failed_calls += 1;
                None
            }
        };
        ep.tokens_in += rec.tokens_in;
        ep.tokens_out += rec.tokens_out;
        ep.latency_ms += rec.latency_ms;
        calls.push(rec);
        Ok(out)
    }
}
