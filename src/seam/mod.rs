//! The domain seam: what of the memory loop is specific to one kind of task, and the episode
//! records every domain shares ([`records`]). The domains themselves (text-to-SQL, factual QA, code)
//! live in the `domains` module, each in its folder, and are reached through one registry
//! (the domains' registry). The loop, the arms, the
//! bank, the scheduler and the tables know a domain only through [`Domain`]: the task as the
//! agent sees it and its prompt variables, the artifact read out of the executor's text, how the
//! artifact is observed without any reference (the SQL run in the sandbox; the answer looked up
//! in an evidence corpus), the named answer-free channels, the preview the grader sees, and the
//! domain's own `episodes` columns. Scoring against gold is a separate trait, [`Judge`], that
//! only gold-reading code (the evaluate stage, the oracle arm) can call: no method of [`Domain`]
//! receives gold, so the label-free discipline is in the types.
//!
//! Task ids: every `tasks` table has `question_id` (Int64: BIRD's own id for text-to-SQL, the
//! 0-based position in the source file for the factual layouts, whose ids may be strings) and, in
//! other domains, `task_id` (Utf8, the source's own id), so every table downstream joins on one
//! Int64 key.

pub mod dialogue;
pub mod recorded;
pub mod records;
pub mod tables;

use std::collections::HashMap;
use std::path::Path;

use arrow::array::RecordBatch;

use self::records::Episode;
pub use self::records::{Channels, Fired};
use crate::columns::Column;
use crate::error::{Invalid, Result};

/// What observing an artifact gives: the domain's record of it and what the grader is shown.
pub struct Observation<O> {
    /// The domain's record (its `episodes` columns).
    pub obs: O,
    /// One word the grader sees (SQL: ok / error / timeout / nondeterministic).
    pub status: String,
    /// The preview the grader sees (SQL: the first rows, or the error).
    pub result: String,
}

/// A kind of task the memory loop can run.
pub trait Domain: Sync {
    /// A task as the agent sees it: no field can hold a reference answer.
    type Task: Send + Sync;
    /// Per-thread resources (open databases, schema texts).
    type Worker: Send;
    /// What observing an artifact records.
    type Obs: Clone + std::fmt::Debug + Default + PartialEq + Send + 'static;

    /// The domain's name (`tasks.domain`, the loop's `domain.kind`).
    const NAME: &'static str;
    /// The `episodes` column of the task's group (SQL: `db_id`; factual: `topic`); memories of
    /// the same group are marked so in the prompts (`same_db`).
    const GROUP: &'static str;
    /// What the group column holds (its documentation).
    const GROUP_DOC: &'static str;
    /// The artifact's name: its `episodes` column and its prompt variable (SQL: `sql`).
    const ARTIFACT: &'static str;
    /// What the artifact column holds (its documentation).
    const ARTIFACT_DOC: &'static str;
    /// The prompt folder a loop in this domain uses when its config names none.
    const PROMPTS: &'static str;
    /// Every channel's name, in order.
    const CHANNELS: &'static [&'static str];
    /// Whether its prompts may leave out `planner.txt` (then episodes make no planner call).
    const PLANNER_OPTIONAL: bool = false;
    /// Whether its episodes are dialogues ([`Domain::dialogue`]), which an agent program cannot
    /// hold yet.
    const DIALOGUE: bool = false;

    /// The tasks of a `tasks` table read from `path`.
    fn tasks(&self, batch: &RecordBatch, path: &Path) -> Result<Vec<Self::Task>>;
    /// A task's id (`question_id`).
    fn id(task: &Self::Task) -> i64;
    /// A task's question (what retrieval compares and the prompts show).
    fn question(task: &Self::Task) -> &str;
    /// A task's group (see [`Domain::GROUP`]).
    fn group(task: &Self::Task) -> &str;
    /// A fresh worker.
    fn worker(&self) -> Self::Worker;
    /// The task's prompt variables besides `question` (SQL: `evidence`, `schema`).
    fn context(&self, w: &mut Self::Worker, task: &Self::Task) -> Result<Vec<(&'static str, String)>>;
    /// The artifact in the executor's answer, or why there is none.
    fn extract(&self, text: &str) -> std::result::Result<String, Invalid>;
    /// The record of an episode with no artifact (`why`: what failed).
    fn unobserved(&self, why: &str) -> Self::Obs;
    /// Observe `artifact` without any reference.
    fn observe(&self, w: &mut Self::Worker, task: &Self::Task, artifact: &str) -> Result<Observation<Self::Obs>>;
    /// Every channel on one episode (`artifact` None: nothing was produced).
    fn channels(&self, task: &Self::Task, artifact: Option<&str>, obs: &Self::Obs) -> Channels;
    /// The channels whose firing flags an episode, unless the arm names its own.
    fn flag_channels(&self) -> Vec<String>;
    /// The domain's `episodes` columns after the artifact (what observing recorded).
    fn observation_columns() -> Vec<Column<Episode<Self::Obs>>>;
    /// Which of its channels can speak to `task` at all (a channel that can speak to none of a
    /// loop's tasks is warned about before its episodes run). Default: every channel, every task.
    fn speaks(&self, _task: &Self::Task) -> Vec<(&'static str, bool)> {
        Self::CHANNELS.iter().map(|c| (*c, true)).collect()
    }
    /// The dialogue of a domain whose executor talks with an environment over several calls
    /// ([`dialogue`]): `first` is the rendered executor prompt (memories, functions, the first
    /// request). Default None: one executor call, whose text [`Domain::extract`] reads.
    fn dialogue<'a>(
        &'a self,
        _w: &'a mut Self::Worker,
        _task: &'a Self::Task,
        _system: &str,
        _first: &str,
    ) -> Result<Option<Box<dyn dialogue::Dialogue + 'a>>> {
        Ok(None)
    }
    /// Columns after `channels` (SQL keeps `flag_exec`, ... for saved queries); default none.
    fn channel_columns() -> Vec<Column<Episode<Self::Obs>>> {
        Vec::new()
    }
}

/// How a domain scores an artifact against gold: only gold-reading code calls it.
pub trait Judge: Domain {
    /// A task's reference.
    type Gold: Send + Sync;
    /// The references of a `gold` table read from `path`, by `question_id`.
    fn gold(&self, batch: &RecordBatch, path: &Path) -> Result<HashMap<i64, Self::Gold>>;
    /// U: 1 when `artifact` answers `task` as `gold` does, else 0.
    fn score(&self, task: &Self::Task, gold: &Self::Gold, artifact: Option<&str>) -> Result<u8>;
    /// Called with every artifact before they are scored one by one, so a judge that reads them
    /// in batches can (tool use reads the replies its own reader refuses with BFCL's decoder in
    /// the sandbox, many to a process). Default: nothing.
    fn prepare(&self, _artifacts: &[&str]) {}
}

/// Check that every name of `names` is a channel of `D` (`what` names the list in errors).
pub fn check_channels<D: Domain>(names: &[String], what: &str) -> std::result::Result<(), Invalid> {
    check_channel_names(D::NAME, D::CHANNELS, names, what)
}

/// Check that every name of `names` is one of `channels`, the channels of domain `domain`.
pub fn check_channel_names(
    domain: &str,
    channels: &[&str],
    names: &[String],
    what: &str,
) -> std::result::Result<(), Invalid> {
    match names.iter().find(|n| !channels.contains(&n.as_str())) {
        Some(n) => Err(Invalid(format!("{what}: '{n}' is not a {domain} channel (channels: {})", channels.join(", ")))),
        None => Ok(()),
    }
}
