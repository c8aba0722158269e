//! The code `tasks` and `gold` tables, defined column by column (`schemas/code/`). `tasks` holds
//! what the agent may see: the prompt (signature and docstring) as `question`, and the function's
//! name; `gold` holds the hidden tests and the reference body, read only by the evaluate stage,
//! the oracle arm and post-hoc analysis.

use std::path::Path;

use arrow::array::{Int64Array, RecordBatch, StringArray};

use crate::columns::{Column, Getter, Table};
use crate::domains::code::data::humaneval::Problem;
use crate::error::Result;

/// The value of `tasks.domain` for code tasks.
pub const DOMAIN: &str = "code";

/// A task as the agent sees it: never the tests or the reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeTask {
    /// 0-based position in the source.
    pub question_id: i64,
    /// The source's own id (`HumanEval/0`).
    pub task_id: String,
    /// The prompt: signature and docstring.
    pub question: String,
    /// The function the tests call.
    pub entry_point: String,
    /// The task id before its first '/', else `tasks`.
    pub suite: String,
}

/// A task's gold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeGold {
    /// The task.
    pub question_id: i64,
    /// The hidden tests (`check(candidate)`).
    pub test: String,
    /// A reference body (may be empty in a user's file).
    pub canonical_solution: String,
}

/// The tasks and gold of `problems`, in order.
pub fn split(problems: &[Problem]) -> (Vec<CodeTask>, Vec<CodeGold>) {
    problems
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let suite = p.task_id.split_once('/').map_or("tasks", |(s, _)| s).to_string();
            (
                CodeTask {
                    question_id: i as i64,
                    task_id: p.task_id.clone(),
                    question: p.prompt.clone(),
                    entry_point: p.entry_point.clone(),
                    suite,
                },
                CodeGold {
                    question_id: i as i64,
                    test: p.test.clone(),
                    canonical_solution: p.canonical_solution.clone(),
                },
            )
        })
        .unzip()
}

const WRITTEN_BY: &str = "the benchmark stage (code sources)";

/// The code `tasks` table.
pub fn tasks_table() -> Table<CodeTask> {
    type T = Getter<CodeTask>;
    Table {
        name: "tasks",
        description: "One row per coding task, as the agent may see it: the prompt (signature and docstring), never the tests or a reference solution.",
        written_by: WRITTEN_BY,
        matrix: &[],
        columns: vec![
            Column::new(
                "question_id",
                T::I64(|t| t.question_id),
                "0-based position in the source: the Int64 key every table joins on.",
            ),
            Column::new("task_id", T::Str(|t| &t.task_id), "The source's own id (HumanEval/0)."),
            Column::new("domain", T::Str(|_| DOMAIN), "The task's domain: code."),
            Column::new("question", T::Str(|t| &t.question), "The prompt: the function's signature and docstring."),
            Column::new("entry_point", T::Str(|t| &t.entry_point), "The function's name."),
            Column::new("suite", T::Str(|t| &t.suite), "The task id before its first '/' (HumanEval), else 'tasks'."),
        ],
    }
}

/// The code `gold` table.
pub fn gold_table() -> Table<CodeGold> {
    type G = Getter<CodeGold>;
    Table {
        name: "gold",
        description: "The hidden tests per coding task, and its reference body. Read only by evaluation, the oracle arm and post-hoc analysis.",
        written_by: WRITTEN_BY,
        matrix: &[],
        columns: vec![
            Column::new("question_id", G::I64(|g| g.question_id), "The task (joins tasks.question_id)."),
            Column::new("test", G::Str(|g| &g.test), "The hidden tests: Python defining check(candidate)."),
            Column::new(
                "canonical_solution",
                G::Str(|g| &g.canonical_solution),
                "A reference body completing the prompt (empty when the source gives none).",
            ),
        ],
    }
}

/// The tasks of a code `tasks` table read from `path`.
pub fn tasks_from_batch(b: &RecordBatch, path: &Path) -> Result<Vec<CodeTask>> {
    crate::table::require_domain(b, path, DOMAIN)?;
    let t = tasks_table();
    let qid = t.column::<Int64Array>(b, path, "question_id")?;
    let s = |n| t.column::<StringArray>(b, path, n);
    let (id, q, entry, suite) = (s("task_id")?, s("question")?, s("entry_point")?, s("suite")?);
    Ok((0..b.num_rows())
        .map(|i| CodeTask {
            question_id: qid.value(i),
            task_id: id.value(i).to_string(),
            question: q.value(i).to_string(),
            entry_point: entry.value(i).to_string(),
            suite: suite.value(i).to_string(),
        })
        .collect())
}

/// The gold of a code `gold` table read from `path`.
pub fn gold_from_batch(b: &RecordBatch, path: &Path) -> Result<Vec<CodeGold>> {
    let t = gold_table();
    let qid = t.column::<Int64Array>(b, path, "question_id")?;
    let (test, reference) =
        (t.column::<StringArray>(b, path, "test")?, t.column::<StringArray>(b, path, "canonical_solution")?);
    Ok((0..b.num_rows())
        .map(|i| CodeGold {
            question_id: qid.value(i),
            test: test.value(i).to_string(),
            canonical_solution: reference.value(i).to_string(),
        })
        .collect())
}
