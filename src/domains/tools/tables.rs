//! The tool-use `tasks` and `gold` tables, defined column by column (`schemas/tools/`).

use std::path::Path;

use arrow::array::{Int64Array, RecordBatch, StringArray};

use crate::columns::{Column, Getter, Table};
use crate::error::Result;

/// The value of `tasks.domain` for tool-use tasks.
pub const DOMAIN: &str = "tools";

/// A task as the agent sees it: the request and the functions it may call, never its category
/// (`irrelevance` would say that no call is right) nor its possible answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolsTask {
    /// 0-based position in the source.
    pub question_id: i64,
    /// BFCL's id (`simple_python_0`, `live_multiple_12-4-0`).
    pub task_id: String,
    /// BFCL's category (`simple_python`, `parallel`, `live_irrelevance`, ...): the group, for
    /// reports; not shown to the agent.
    pub category: String,
    /// The request: the turn's messages, a system message as `System: ...` above the user's.
    pub question: String,
    /// The function documents, as BFCL's JSON (a list of `{name, description, parameters}`).
    pub functions: String,
    /// The same documents, parsed once when the task is read (what the contract and the checker
    /// read on every call).
    pub documents: std::sync::Arc<serde_json::Value>,
}

/// A task's possible answers. Only evaluation reads them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolsGold {
    /// The task.
    pub question_id: i64,
    /// The category (evaluation's rules depend on it).
    pub category: String,
    /// BFCL's `ground_truth` as JSON: single-turn, `[{function: {parameter: [possible values]}}]`
    /// (`[]` for the irrelevance categories, where no call is right); multi-turn, the calls per
    /// turn as BFCL's execution strings (`[["cd(folder='document')", ...], ...]`).
    pub ground_truth: String,
}

const WRITTEN_BY: &str = "the benchmark stage (tools and tools_multiturn sources)";

/// The tool-use `tasks` table.
pub fn tasks_table() -> Table<ToolsTask> {
    type T = Getter<ToolsTask>;
    Table {
        name: "tasks",
        description: "One row per BFCL function-calling task, as the agent may see it: the request and the function documents, never the possible answers.",
        written_by: WRITTEN_BY,
        matrix: &[],
        columns: vec![
            Column::new(
                "question_id",
                T::I64(|t| t.question_id),
                "0-based position in the source: the Int64 key every table joins on.",
            ),
            Column::new("task_id", T::Str(|t| &t.task_id), "BFCL's id (simple_python_0)."),
            Column::new("domain", T::Str(|_| DOMAIN), "The task's domain: tools."),
            Column::new(
                "category",
                T::Str(|t| &t.category),
                "BFCL's category (simple_python, multiple, parallel, parallel_multiple, irrelevance, live_*): the group of reports, never shown to the agent.",
            ),
            Column::new("question", T::Str(|t| &t.question), "The request (a system message above the user's)."),
            Column::new(
                "functions",
                T::Str(|t| &t.functions),
                "The functions the agent may call: BFCL's JSON documents (name, description, parameters with types, required, enums).",
            ),
        ],
    }
}

/// The tool-use `gold` table.
pub fn gold_table() -> Table<ToolsGold> {
    type G = Getter<ToolsGold>;
    Table {
        name: "gold",
        description: "BFCL's possible answers per task. Read only by evaluation, the oracle arm and post-hoc analysis.",
        written_by: WRITTEN_BY,
        matrix: &[],
        columns: vec![
            Column::new("question_id", G::I64(|g| g.question_id), "The task (joins tasks.question_id)."),
            Column::new("category", G::Str(|g| &g.category), "BFCL's category (its rules of evaluation)."),
            Column::new(
                "ground_truth",
                G::Str(|g| &g.ground_truth),
                "BFCL's ground truth as JSON: single-turn, per call the possible values of each parameter (\"\" marks an optional one), [] where no call is right; multi-turn, the calls per turn as BFCL's execution strings.",
            ),
        ],
    }
}

/// The tasks of a tool-use `tasks` table read from `path`.
pub fn tasks_from_batch(b: &RecordBatch, path: &Path) -> Result<Vec<ToolsTask>> {
    crate::table::require_domain(b, path, DOMAIN)?;
    let t = tasks_table();
    let qid = t.column::<Int64Array>(b, path, "question_id")?;
    let s = |n| t.column::<StringArray>(b, path, n);
    let (id, category, q, functions) = (s("task_id")?, s("category")?, s("question")?, s("functions")?);
    (0..b.num_rows())
        .map(|i| {
            let documents = serde_json::from_str(functions.value(i))
                .map_err(|e| crate::error::Error::input(path, format!("row {i}: `functions` is not JSON: {e}")))?;
            Ok(ToolsTask {
                question_id: qid.value(i),
                task_id: id.value(i).to_string(),
                category: category.value(i).to_string(),
                question: q.value(i).to_string(),
                functions: functions.value(i).to_string(),
                documents: std::sync::Arc::new(documents),
            })
        })
        .collect()
}

/// The gold of a tool-use `gold` table read from `path`.
pub fn gold_from_batch(b: &RecordBatch, path: &Path) -> Result<Vec<ToolsGold>> {
    let t = gold_table();
    let qid = t.column::<Int64Array>(b, path, "question_id")?;
    let category = t.column::<StringArray>(b, path, "category")?;
    let truth = t.column::<StringArray>(b, path, "ground_truth")?;
    Ok((0..b.num_rows())
        .map(|i| ToolsGold {
            question_id: qid.value(i),
            category: category.value(i).to_string(),
            ground_truth: truth.value(i).to_string(),
        })
        .collect())
}
