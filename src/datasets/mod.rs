//! Benchmark loaders shared beyond one domain: BIRD layout, Spider layout and the bundled mini
//! benchmark (read by `lucid load`, `lucid eval` and the text-to-SQL domain), the question-answer
//! layout ([`qa`]: the factual domain's tables, which `lucid import` also writes) and pinned data
//! wheels ([`wheels`]). A domain's own sources live in its folder. Loading splits
//! every benchmark into `tasks` (what the agent may see) and `gold` (reference SQL, read only by
//! evaluation): two types, so gold cannot reach an agent stage by accident.

pub mod bird;
pub mod bundled;
pub mod pip;
pub mod qa;
pub mod spider;
pub mod tables;
pub mod wheels;

use std::path::PathBuf;

/// One task as the agent sees it. It has no field that could hold a reference answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// Stable id within the benchmark.
    pub question_id: i64,
    /// Database id (folder name).
    pub db_id: String,
    /// The natural-language question.
    pub question: String,
    /// BIRD's external-knowledge hint ("" when the benchmark has none).
    pub evidence: String,
    /// simple / moderate / challenging, or "unknown".
    pub difficulty: String,
    /// The SQLite file the question is asked against.
    pub db_path: PathBuf,
}

/// The reference SQL of one task. Only evaluation reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoldQuery {
    /// The task it belongs to.
    pub question_id: i64,
    /// The reference query.
    pub gold_sql: String,
}

/// A loaded benchmark: tasks and their gold, in the benchmark's order.
#[derive(Clone, Debug)]
pub struct Benchmark {
    /// Short name (e.g. "bundled", "bird:dev").
    pub name: String,
    /// What the agent may see.
    pub tasks: Vec<Task>,
    /// What only evaluation may read, aligned with `tasks`.
    pub gold: Vec<GoldQuery>,
}
