//! The `tasks` and `gold` Parquet tables, defined column by column (their documentation in
//! `schemas/tasks.json` and `schemas/gold.json` comes from these definitions). `tasks` never
//! holds a reference answer; `gold` holds nothing else.

use std::path::{Path, PathBuf};

use arrow::array::{Int64Array, RecordBatch, StringArray};

use super::{GoldQuery, Task};
use crate::columns::{Column, Getter, Table};
use crate::error::Result;

/// A `tasks` row: the task and its database's content fingerprint.
pub struct TaskRow<'a> {
    /// The task.
    pub task: &'a Task,
    /// blake3 of its database file.
    pub db_hash: &'a str,
}

/// The `tasks` table: one definition per column (schema, batch, reader, `schemas/tasks.json`).
pub fn tasks_table<'a>() -> Table<TaskRow<'a>> {
    type T<'a> = Getter<TaskRow<'a>>;
    Table {
        name: "tasks",
        description: "One row per benchmark question, as the agent may see it. Never holds a reference answer: gold lives in its own table.",
        written_by: WRITTEN_BY,
        matrix: &[],
        columns: vec![
            Column::new(
                "question_id",
                T::I64(|r| r.task.question_id),
                "Stable id within the benchmark (BIRD's question_id, else the position).",
            ),
            Column::new(
                "db_id",
                T::Str(|r| &r.task.db_id),
                "Database id: the folder <db_root>/<db_id>/<db_id>.sqlite.",
            ),
            Column::new("question", T::Str(|r| &r.task.question), "The natural-language question."),
            Column::new(
                "evidence",
                T::Str(|r| &r.task.evidence),
                "BIRD's external-knowledge hint; empty string when the benchmark has none.",
            ),
            Column::new("difficulty", T::Str(|r| &r.task.difficulty), "simple / moderate / challenging, or unknown."),
            Column::new(
                "db_path",
                T::Text(|r| r.task.db_path.to_string_lossy().into_owned()),
                "Absolute or run-relative path of the SQLite file.",
            ),
            Column::new(
                "db_hash",
                T::Str(|r| r.db_hash),
                "blake3 (hex) of the database file's bytes: a changed database changes tasks, so every stage that reads it (the loop, evaluate) reruns; computed once per (path, size, modification time) and remembered in <cache>/file-hashes.sqlite.",
            ),
        ],
    }
}

/// The `gold` table: one definition per column (schema, batch, reader, `schemas/gold.json`).
pub fn gold_table() -> Table<GoldQuery> {
    type G = Getter<GoldQuery>;
    Table {
        name: "gold",
        description: "Reference SQL per question. Read only by evaluation and post-hoc analysis, never by an agent stage.",
        written_by: WRITTEN_BY,
        matrix: &[],
        columns: vec![
            Column::new(
                "question_id",
                G::I64(|g| g.question_id),
                "The task this reference answers (joins tasks.question_id).",
            ),
            Column::new(
                "gold_sql",
                G::Str(|g| &g.gold_sql),
                "The reference query text, exactly as the benchmark gives it.",
            ),
        ],
    }
}

const WRITTEN_BY: &str = "lucid load (and the benchmark stage of a pipeline)";

/// Tasks as a record batch; `db_hash` gives each database file's content fingerprint, so a
/// changed database changes `tasks` and everything computed from it.
pub fn tasks_batch(tasks: &[Task], db_hash: impl Fn(&Path) -> Result<String>) -> Result<RecordBatch> {
    let hashes = tasks.iter().map(|t| db_hash(&t.db_path)).collect::<Result<Vec<_>>>()?;
    let rows: Vec<TaskRow<'_>> = tasks.iter().zip(&hashes).map(|(task, h)| TaskRow { task, db_hash: h }).collect();
    tasks_table().batch(&rows)
}

/// Gold as a record batch.
pub fn gold_batch(gold: &[GoldQuery]) -> Result<RecordBatch> {
    gold_table().batch(gold)
}

/// The tasks of a `tasks` table (`path` names it in errors): the one reader every stage uses.
pub fn tasks_from_batch(b: &RecordBatch, path: &Path) -> Result<Vec<Task>> {
    let t = tasks_table();
    let qid = t.column::<Int64Array>(b, path, "question_id")?;
    let s = |n| t.column::<StringArray>(b, path, n);
    let (db, q, ev, diff, dbp) = (s("db_id")?, s("question")?, s("evidence")?, s("difficulty")?, s("db_path")?);
    Ok((0..b.num_rows())
        .map(|i| Task {
            question_id: qid.value(i),
            db_id: db.value(i).to_string(),
            question: q.value(i).to_string(),
            evidence: ev.value(i).to_string(),
            difficulty: diff.value(i).to_string(),
            db_path: PathBuf::from(dbp.value(i)),
        })
        .collect())
}

/// Read a `tasks` table file.
pub fn read_tasks(path: &Path) -> Result<Vec<Task>> {
    tasks_from_batch(&crate::table::read_parquet(path)?, path)
}

/// Write `tasks.parquet` and `gold.parquet` into `dir` (database hashes remembered in `cache_dir`).
pub fn write_benchmark(dir: &Path, bench: &super::Benchmark, cache_dir: &Path) -> Result<()> {
    let tasks = tasks_batch(&bench.tasks, |p| crate::fingerprint::content_hash(p, cache_dir))?;
    crate::table::write_parquet(&dir.join("tasks.parquet"), &tasks)?;
    crate::table::write_parquet(&dir.join("gold.parquet"), &gold_batch(&bench.gold)?)
}
