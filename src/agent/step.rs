//! One episode: planner -> executor -> sandboxed execution (twice) -> self-grade -> detector ->
//! stored label. Model failures are recorded in the episode and its call rows, never dropped;
//! only broken inputs (a missing database, a template error) stop the stage.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::arms::{ArmSpec, Mode, stored_q};
use super::detector::{DetectorConfig, Observed};
use super::episode::{CallRecord, Episode, Retrieved};
use super::parse::{Verdict, extract_sql, parse_verdict};
use super::prompts::{PromptVars, Prompts, ShownMemory};
use super::schema::{SchemaStyle, Schemas};
use crate::error::Result;
use crate::llm::cache::request_key;
use crate::llm::{ChatModel, ChatRequest, Decoding, Message};
use crate::sql::connections::Connections;
use crate::sql::outcome::Outcome;
use crate::sql::sandbox::{Limits, OpenOptions};

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

/// A task as the agent sees it: no reference answer anywhere.
#[derive(Clone, Debug)]
pub struct AgentTask {
    /// Id.
    pub question_id: i64,
    /// Database id.
    pub db_id: String,
    /// Question.
    pub question: String,
    /// Evidence (hint).
    pub evidence: String,
    /// Database file.
    pub db_path: PathBuf,
}

/// Everything an episode needs besides its task and memories.
pub struct Agent<'a> {
    /// The model (all roles).
    pub model: &'a dyn ChatModel,
    /// Prompt templates.
    pub prompts: &'a Prompts,
    /// Decoding per role.
    pub roles: &'a Roles,
    /// How the schema is written.
    pub schema_style: SchemaStyle,
    /// Schema budget in characters.
    pub schema_chars: usize,
    /// Result rows shown to the grader.
    pub preview_rows: usize,
    /// Execution limits (`run_twice` on).
    pub limits: &'a Limits,
    /// The detector.
    pub detector: &'a DetectorConfig,
    /// The arm.
    pub arm: &'a ArmSpec,
}

/// A worker's open databases and schemas.
pub struct Worker {
    conns: Connections,
    schemas: Schemas,
}

impl Default for Worker {
    fn default() -> Self {
        Worker { conns: Connections::new(OpenOptions::default()), schemas: Schemas::default() }
    }
}

/// The oracle arm's label function: U of (task, SQL). Supplied only by a gold-reading stage.
pub type OracleFn<'a> = dyn Fn(&AgentTask, Option<&str>) -> Result<u8> + Sync + 'a;

impl Agent<'_> {
    /// Run one episode. `memories` pairs what is recorded with what the planner is shown.
    pub fn episode(
        &self,
        w: &mut Worker,
        step: u64,
        task: &AgentTask,
        memories: Vec<(Retrieved, ShownMemory)>,
        oracle: Option<&OracleFn<'_>>,
    ) -> Result<(Episode, Vec<CallRecord>)> {
        let schema = w.schemas.get(&task.db_path, self.schema_style, self.schema_chars)?.to_string();
        let (retrieved, shown): (Vec<Retrieved>, Vec<ShownMemory>) = memories.into_iter().unzip();
        let mut ep = Episode {
            step,
            question_id: task.question_id,
            db_id: task.db_id.clone(),
            retrieved,
            exec_status: "error".into(),
            grade: "skipped".into(),
            ..Episode::default()
        };
        let mut calls = Vec::new();
        let base =
            PromptVars { question: &task.question, evidence: &task.evidence, schema: &schema, ..Default::default() };

        let planner = self.prompts.render("planner.txt", &PromptVars { memories: &shown, ..base.clone() })?;
        ep.plan = self.call("planner", planner, &self.roles.planner, task, step, &mut ep, &mut calls)?;
        if let Some(plan) = ep.plan.clone() {
            let executor =
                self.prompts.render("executor.txt", &PromptVars { plan: &plan, memories: &shown, ..base.clone() })?;
            if let Some(text) =
                self.call("executor", executor, &self.roles.executor, task, step, &mut ep, &mut calls)?
            {
                ep.sql = extract_sql(&text);
                if ep.sql.is_none() {
                    ep.exec_error = Some("no SQL query in the executor's answer".into());
                }
            } else {
                ep.exec_error = Some("executor call failed".into());
            }
        } else {
            ep.exec_error = Some("planner call failed".into());
        }

        if let Some(sql) = ep.sql.clone() {
            let exec = w.conns.get(&task.db_path)?.execute(&sql, self.limits);
            ep.exec_status = exec.outcome.status().as_str().into();
            let result = match &exec.outcome {
                Outcome::Ok(rows) => rows.preview(self.preview_rows),
                Outcome::Nondeterministic(rows) => {
                    format!("{}\n(two identical runs returned different results)", rows.preview(self.preview_rows))
                }
                Outcome::Error(e) => e.clone(),
                Outcome::Timeout => format!("interrupted after {:?}", self.limits.timeout),
            };
            ep.exec_error = exec.outcome.error().map(str::to_string);
            if ep.exec_status == "timeout" {
                ep.exec_error = Some(result.clone());
            }
            if let Some(rows) = exec.outcome.rows() {
                ep.n_rows = Some(rows.n_rows);
                ep.all_null = rows.all_null;
                ep.result_hash = Some(format!("{:032x}", rows.set_hash));
            }
            let grader = self.prompts.render(
                "grader.txt",
                &PromptVars { sql: &sql, status: &ep.exec_status.clone(), result: &result, ..base.clone() },
            )?;
            let verdict = self.call("grader", grader, &self.roles.grader, task, step, &mut ep, &mut calls)?;
            match verdict {
                Some(text) => {
                    let v = parse_verdict(&text);
                    ep.grade = v.as_str().into();
                    ep.r = Verdict::r(v);
                }
                None => ep.grade = "failed".into(),
            }
        }

        let observed =
            Observed { sql: ep.sql.as_deref(), status: &ep.exec_status, n_rows: ep.n_rows, all_null: ep.all_null };
        ep.flags = self.detector.detect(&task.question, &task.evidence, &observed);
        ep.flagged = ep.flags.flagged(self.arm.channels.as_deref().unwrap_or(&self.detector.channels));
        let u = match (self.arm.mode, oracle) {
            (Mode::Oracle, Some(f)) => Some(f(task, ep.sql.as_deref())?),
            _ => None,
        };
        ep.stored_q = stored_q(self.arm.mode, ep.r, ep.flagged, u);
        Ok((ep, calls))
    }

    /// One model call, recorded; the answer text, or None when it failed after its retries.
    #[allow(clippy::too_many_arguments)]
    fn call(
        &self,
        role: &'static str,
        user: String,
        decoding: &Decoding,
        task: &AgentTask,
        step: u64,
        ep: &mut Episode,
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
            question_id: task.question_id,
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
