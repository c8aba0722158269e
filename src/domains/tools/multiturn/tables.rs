//! The multi-turn `tasks` and `gold` tables, defined column by column (`schemas/tools_multiturn/`).
//! A task holds what the agent is given (the user's requests per turn, the function documents,
//! those held out until a turn) and the environments' starting state, which the sandbox reads and
//! no prompt shows (as a database is to text-to-SQL); the ground-truth calls are in `gold` alone,
//! the single-turn categories' table (`crate::domains::tools::tables::gold_table`), which holds
//! them as JSON per turn.

use std::path::Path;

use arrow::array::{Int64Array, RecordBatch, StringArray};

use crate::columns::{Column, Getter, Table};
use crate::error::Result;

/// The value of `tasks.domain` for multi-turn tasks.
pub const DOMAIN: &str = "tools_multiturn";

/// A multi-turn task as the agent loop holds it: never its ground truth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DialogueTask {
    /// 0-based position in the source.
    pub question_id: i64,
    /// BFCL's id (`multi_turn_base_0`).
    pub task_id: String,
    /// BFCL's category (the group, for reports; not shown to the agent).
    pub category: String,
    /// The first turn's request (what retrieval compares and memories show).
    pub question: String,
    /// The user's request per turn, as JSON (a list of texts; "" on a turn that only brings the
    /// held-out functions).
    pub turns: String,
    /// The function documents given at the start, as BFCL's JSON.
    pub functions: String,
    /// The documents held out until a turn, as JSON (`{"3": [documents]}`; `{}` when none).
    pub holdout: String,
    /// The environment classes, as a JSON list.
    pub involved_classes: String,
    /// The environments' starting state by class, as JSON (the sandbox's, never a prompt's).
    pub initial_config: String,
}

const WRITTEN_BY: &str = "the benchmark stage (tools_multiturn sources)";

/// The multi-turn `tasks` table.
pub fn tasks_table() -> Table<DialogueTask> {
    type T = Getter<DialogueTask>;
    Table {
        name: "tasks",
        description: "One row per BFCL multi-turn task: the user's requests per turn, the function documents (and those held out until a turn) and the environments' starting state; never the ground-truth calls.",
        written_by: WRITTEN_BY,
        matrix: &[],
        columns: vec![
            Column::new(
                "question_id",
                T::I64(|t| t.question_id),
                "0-based position in the source: the Int64 key every table joins on.",
            ),
            Column::new("task_id", T::Str(|t| &t.task_id), "BFCL's id (multi_turn_base_0)."),
            Column::new("domain", T::Str(|_| DOMAIN), "The task's domain: tools_multiturn."),
            Column::new(
                "category",
                T::Str(|t| &t.category),
                "BFCL's category (multi_turn_base, multi_turn_miss_func, multi_turn_miss_param, multi_turn_long_context): the group of reports, never shown to the agent.",
            ),
            Column::new("question", T::Str(|t| &t.question), "The first turn's request (what retrieval compares)."),
            Column::new(
                "turns",
                T::Str(|t| &t.turns),
                "The user's request per turn, a JSON list of texts (\"\" on a turn that only brings held-out functions).",
            ),
            Column::new(
                "functions",
                T::Str(|t| &t.functions),
                "The function documents given at the start: BFCL's JSON, the involved classes' in order, without the held-out ones.",
            ),
            Column::new(
                "holdout",
                T::Str(|t| &t.holdout),
                "The documents held out until a turn, JSON {turn: [documents]} ({} outside multi_turn_miss_func).",
            ),
            Column::new(
                "involved_classes",
                T::Str(|t| &t.involved_classes),
                "The environment classes, a JSON list (GorillaFileSystem, TwitterAPI, ...).",
            ),
            Column::new(
                "initial_config",
                T::Str(|t| &t.initial_config),
                "The environments' starting state by class, JSON: read by the sandbox, shown in no prompt.",
            ),
        ],
    }
}

/// The tasks of a multi-turn `tasks` table read from `path`.
pub fn tasks_from_batch(b: &RecordBatch, path: &Path) -> Result<Vec<DialogueTask>> {
    crate::table::require_domain(b, path, DOMAIN)?;
    let t = tasks_table();
    let qid = t.column::<Int64Array>(b, path, "question_id")?;
    let s = |n| t.column::<StringArray>(b, path, n);
    let (id, category, q, turns) = (s("task_id")?, s("category")?, s("question")?, s("turns")?);
    let (functions, holdout, classes, config) =
        (s("functions")?, s("holdout")?, s("involved_classes")?, s("initial_config")?);
    Ok((0..b.num_rows())
        .map(|i| DialogueTask {
            question_id: qid.value(i),
            task_id: id.value(i).to_string(),
            category: category.value(i).to_string(),
            question: q.value(i).to_string(),
            turns: turns.value(i).to_string(),
            functions: functions.value(i).to_string(),
            holdout: holdout.value(i).to_string(),
            involved_classes: classes.value(i).to_string(),
            initial_config: config.value(i).to_string(),
        })
        .collect())
}
