//! The BIRD layout: `<split>.json` (question_id, db_id, question, evidence, SQL, difficulty),
//! `<split>_databases/<db>/<db>.sqlite`, and optionally `<split>_gold.sql` ("SQL\tdb_id" lines).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Benchmark, GoldQuery, Task};
use crate::error::{Error, Invalid, Result};

#[derive(Deserialize)]
struct Entry {
    question_id: Option<i64>,
    db_id: String,
    question: String,
    #[serde(default)]
    evidence: String,
    #[serde(rename = "SQL")]
    sql: Option<String>,
    difficulty: Option<String>,
}

/// Load `dir/<split>.json` against `dir/<split>_databases`.
pub fn load(dir: &Path, split: &str) -> Result<Benchmark> {
    let questions = dir.join(format!("{split}.json"));
    let gold_sql = dir.join(format!("{split}_gold.sql"));
    let gold_sql = gold_sql.is_file().then_some(gold_sql);
    let mut bench = load_files(&questions, &dir.join(format!("{split}_databases")), gold_sql.as_deref())?;
    bench.name = format!("bird:{split}");
    Ok(bench)
}

/// Load a BIRD-style question file against a database root. Gold comes from each entry's `SQL`,
/// or, when entries have none, from `gold_sql` lines by position.
pub fn load_files(questions: &Path, db_root: &Path, gold_sql: Option<&Path>) -> Result<Benchmark> {
    let entries: Vec<Entry> = read_json(questions)?;
    let gold_lines = match gold_sql {
        Some(p) if entries.iter().any(|e| e.sql.is_none()) => Some(read_gold_sql(p)?),
        _ => None,
    };
    if let (Some(lines), Some(p)) = (&gold_lines, gold_sql)
        && lines.len() != entries.len()
    {
        return Err(Error::input(
            p,
            format!("has {} gold lines but {} has {} entries", lines.len(), questions.display(), entries.len()),
        ));
    }
    let mut seen = HashSet::new();
    let mut bench = Benchmark { name: "bird".into(), tasks: Vec::new(), gold: Vec::new() };
    for (i, e) in entries.into_iter().enumerate() {
        let question_id = e.question_id.unwrap_or(i as i64);
        if !seen.insert(question_id) {
            return Err(Error::input(questions, format!("entry {i}: duplicate question_id {question_id}")));
        }
        let db_path = database_path(db_root, &e.db_id)
            .map_err(|m| Error::input(questions, format!("entry {i} (question_id {question_id}): {m}")))?;
        let gold_sql = match (e.sql, &gold_lines) {
            (Some(s), _) => s,
            (None, Some(lines)) => lines[i].0.clone(),
            (None, None) => {
                return Err(Error::input(questions, format!("entry {i}: no \"SQL\" field and no gold file")));
            }
        };
        bench.tasks.push(Task {
            question_id,
            db_id: e.db_id,
            question: e.question,
            evidence: e.evidence,
            difficulty: e.difficulty.unwrap_or_else(|| "unknown".into()),
            db_path,
        });
        bench.gold.push(GoldQuery { question_id, gold_sql });
    }
    Ok(bench)
}

/// `<root>/<db>/<db>.sqlite`, or a message saying it is missing.
pub fn database_path(db_root: &Path, db_id: &str) -> std::result::Result<PathBuf, Invalid> {
    if db_id.is_empty() || db_id.contains(['/', '\\']) || db_id == ".." {
        return Err(Invalid(format!("invalid database id {db_id:?}")));
    }
    let p = db_root.join(db_id).join(format!("{db_id}.sqlite"));
    if p.is_file() { Ok(p) } else { Err(Invalid(format!("database '{db_id}' not found (expected {})", p.display()))) }
}

/// Parse a JSON file, naming the file (and serde's line and column) on failure.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.into(), source })?;
    serde_json::from_str(&text).map_err(|e| Error::input_from(path, "invalid JSON", e))
}

/// BIRD's gold file: one `SQL<TAB>db_id` per line. Returns (sql, db_id, 1-based line number).
pub fn read_gold_sql(path: &Path) -> Result<Vec<(String, String, usize)>> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.into(), source })?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Some((sql, db)) = line.rsplit_once('\t') else {
            return Err(Error::input(path, format!("line {}: expected \"SQL<TAB>db_id\"", n + 1)));
        };
        out.push((sql.to_string(), db.trim().to_string(), n + 1));
    }
    Ok(out)
}
