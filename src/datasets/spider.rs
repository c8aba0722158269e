//! The Spider layout: `tables.json`, `database/<db>/<db>.sqlite`, and question files such as
//! `dev.json` whose entries carry `db_id`, `question` and the reference `query`. Spider has no
//! question ids (the position is used) and no evidence; its hardness needs Spider's SQL parser,
//! so difficulty is "unknown" unless an entry carries a `difficulty` field.

use std::path::Path;

use serde::Deserialize;

use super::bird::{database_path, read_json};
use super::{Benchmark, GoldQuery, Task};
use crate::error::{Error, Result};

#[derive(Deserialize)]
struct Entry {
    db_id: String,
    question: String,
    query: String,
    difficulty: Option<String>,
}

/// Load `dir/<questions_file>` against `dir/database`.
pub fn load(dir: &Path, questions_file: &str) -> Result<Benchmark> {
    let questions = dir.join(questions_file);
    let entries: Vec<Entry> = read_json(&questions)?;
    let db_root = dir.join("database");
    let mut bench = Benchmark { name: format!("spider:{questions_file}"), tasks: Vec::new(), gold: Vec::new() };
    for (i, e) in entries.into_iter().enumerate() {
        let question_id = i as i64;
        let db_path =
            database_path(&db_root, &e.db_id).map_err(|m| Error::input(&questions, format!("entry {i}: {m}")))?;
        bench.tasks.push(Task {
            question_id,
            db_id: e.db_id,
            question: e.question,
            evidence: String::new(),
            difficulty: e.difficulty.unwrap_or_else(|| "unknown".into()),
            db_path,
        });
        bench.gold.push(GoldQuery { question_id, gold_sql: e.query });
    }
    Ok(bench)
}
