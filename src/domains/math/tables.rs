//! The math `tasks` and `gold` tables, defined column by column (`schemas/math/`), and the
//! problems file they are read from: JSON Lines of `{id, module, difficulty, question, answer}`
//! (what `lucid models fetch math` generates, or a user's file in that layout).

use std::path::Path;

use arrow::array::{Int64Array, RecordBatch, StringArray};
use serde::Deserialize;

use crate::columns::{Column, Getter, Table};
use crate::error::{Error, Result};

/// The value of `tasks.domain` for math tasks.
pub const DOMAIN: &str = "math";

/// A problem as the agent sees it: never its answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MathTask {
    /// 0-based position in the source.
    pub question_id: i64,
    /// The source's own id.
    pub task_id: String,
    /// The question.
    pub question: String,
    /// The generator's module (`algebra__linear_1d`): the kind of problem, and its group.
    pub module: String,
    /// The generator's difficulty (`train-easy`, `train-medium`, `train-hard`).
    pub difficulty: String,
}

/// A problem's answer. Only evaluation reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MathGold {
    /// The task.
    pub question_id: i64,
    /// The exact answer, as the generator writes it.
    pub answer: String,
}

/// One line of a problems file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    id: String,
    module: String,
    #[serde(default)]
    difficulty: Option<String>,
    question: String,
    answer: String,
}

/// The tasks and gold of a problems file, in its order (an error names the file and line).
pub fn read(path: &Path) -> Result<(Vec<MathTask>, Vec<MathGold>)> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.into(), source })?;
    let mut out = (Vec::new(), Vec::new());
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let l: Line = serde_json::from_str(line).map_err(|e| Error::input(path, format!("line {}: {e}", n + 1)))?;
        let question_id = out.0.len() as i64;
        out.0.push(MathTask {
            question_id,
            task_id: l.id,
            question: l.question,
            module: l.module,
            difficulty: l.difficulty.unwrap_or_else(|| "unknown".into()),
        });
        out.1.push(MathGold { question_id, answer: l.answer });
    }
    Ok(out)
}

const WRITTEN_BY: &str = "the benchmark stage (math sources)";

/// The math `tasks` table.
pub fn tasks_table() -> Table<MathTask> {
    type T = Getter<MathTask>;
    Table {
        name: "tasks",
        description: "One row per math problem, as the agent may see it: the question, its module and difficulty, never the answer.",
        written_by: WRITTEN_BY,
        matrix: &[],
        columns: vec![
            Column::new(
                "question_id",
                T::I64(|t| t.question_id),
                "0-based position in the source: the Int64 key every table joins on.",
            ),
            Column::new(
                "task_id",
                T::Str(|t| &t.task_id),
                "The source's own id (s0-train-easy-algebra__linear_1d-0000).",
            ),
            Column::new("domain", T::Str(|_| DOMAIN), "The task's domain: math."),
            Column::new("question", T::Str(|t| &t.question), "The question."),
            Column::new(
                "module",
                T::Str(|t| &t.module),
                "The generator's module: the kind of problem (algebra__linear_1d).",
            ),
            Column::new(
                "difficulty",
                T::Str(|t| &t.difficulty),
                "The generator's difficulty (train-easy, train-medium, train-hard).",
            ),
        ],
    }
}

/// The math `gold` table.
pub fn gold_table() -> Table<MathGold> {
    type G = Getter<MathGold>;
    Table {
        name: "gold",
        description: "The exact answer per math problem. Read only by evaluation, the oracle arm and post-hoc analysis.",
        written_by: WRITTEN_BY,
        matrix: &[],
        columns: vec![
            Column::new("question_id", G::I64(|g| g.question_id), "The task (joins tasks.question_id)."),
            Column::new(
                "answer",
                G::Str(|g| &g.answer),
                "The exact answer as the generator writes it (-2/7, 4*(c - 8)*(c - 4), True, 4:55 AM).",
            ),
        ],
    }
}

/// The tasks of a math `tasks` table read from `path`.
pub fn tasks_from_batch(b: &RecordBatch, path: &Path) -> Result<Vec<MathTask>> {
    crate::table::require_domain(b, path, DOMAIN)?;
    let t = tasks_table();
    let qid = t.column::<Int64Array>(b, path, "question_id")?;
    let s = |n| t.column::<StringArray>(b, path, n);
    let (id, q, module, difficulty) = (s("task_id")?, s("question")?, s("module")?, s("difficulty")?);
    Ok((0..b.num_rows())
        .map(|i| MathTask {
            question_id: qid.value(i),
            task_id: id.value(i).to_string(),
            question: q.value(i).to_string(),
            module: module.value(i).to_string(),
            difficulty: difficulty.value(i).to_string(),
        })
        .collect())
}

/// The gold of a math `gold` table read from `path`.
pub fn gold_from_batch(b: &RecordBatch, path: &Path) -> Result<Vec<MathGold>> {
    let t = gold_table();
    let qid = t.column::<Int64Array>(b, path, "question_id")?;
    let answer = t.column::<StringArray>(b, path, "answer")?;
    Ok((0..b.num_rows()).map(|i| MathGold { question_id: qid.value(i), answer: answer.value(i).to_string() }).collect())
}
