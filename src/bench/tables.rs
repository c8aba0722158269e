//! The `tasks` and `gold` Parquet tables (documented in `schemas/tasks.json` and
//! `schemas/gold.json`). `tasks` never holds a reference answer; `gold` holds nothing else.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

use super::{GoldQuery, Task};
use crate::error::Result;
use crate::table::column;

/// Schema of the `tasks` table.
pub fn tasks_schema() -> Schema {
    Schema::new(vec![
        Field::new("question_id", DataType::Int64, false),
        Field::new("db_id", DataType::Utf8, false),
        Field::new("question", DataType::Utf8, false),
        Field::new("evidence", DataType::Utf8, false),
        Field::new("difficulty", DataType::Utf8, false),
        Field::new("db_path", DataType::Utf8, false),
        Field::new("db_hash", DataType::Utf8, false),
    ])
}

/// Schema of the `gold` table.
pub fn gold_schema() -> Schema {
    Schema::new(vec![Field::new("question_id", DataType::Int64, false), Field::new("gold_sql", DataType::Utf8, false)])
}

fn strings<'a>(it: impl Iterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(it))
}

/// Tasks as a record batch; `db_hash` gives each database file's content fingerprint, so a
/// changed database changes `tasks` and everything computed from it.
pub fn tasks_batch(tasks: &[Task], db_hash: impl Fn(&Path) -> Result<String>) -> Result<RecordBatch> {
    let hashes = tasks.iter().map(|t| db_hash(&t.db_path)).collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new(
        Arc::new(tasks_schema()),
        vec![
            Arc::new(Int64Array::from_iter_values(tasks.iter().map(|t| t.question_id))),
            strings(tasks.iter().map(|t| t.db_id.as_str())),
            strings(tasks.iter().map(|t| t.question.as_str())),
            strings(tasks.iter().map(|t| t.evidence.as_str())),
            strings(tasks.iter().map(|t| t.difficulty.as_str())),
            Arc::new(StringArray::from_iter_values(tasks.iter().map(|t| t.db_path.to_string_lossy()))),
            strings(hashes.iter().map(String::as_str)),
        ],
    )?)
}

/// Gold as a record batch.
pub fn gold_batch(gold: &[GoldQuery]) -> Result<RecordBatch> {
    Ok(RecordBatch::try_new(
        Arc::new(gold_schema()),
        vec![
            Arc::new(Int64Array::from_iter_values(gold.iter().map(|g| g.question_id))),
            strings(gold.iter().map(|g| g.gold_sql.as_str())),
        ],
    )?)
}

/// Read a `tasks` table.
pub fn read_tasks(path: &Path) -> Result<Vec<Task>> {
    let b = crate::table::read_parquet(path)?;
    let qid = column::<Int64Array>(&b, path, "question_id")?;
    let s = |n| column::<StringArray>(&b, path, n);
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

/// Write `tasks.parquet` and `gold.parquet` into `dir` (database hashes remembered in `cache_dir`).
pub fn write_benchmark(dir: &Path, bench: &super::Benchmark, cache_dir: &Path) -> Result<()> {
    let tasks = tasks_batch(&bench.tasks, |p| crate::fingerprint::content_hash(p, cache_dir))?;
    crate::table::write_parquet(&dir.join("tasks.parquet"), &tasks)?;
    crate::table::write_parquet(&dir.join("gold.parquet"), &gold_batch(&bench.gold)?)
}
