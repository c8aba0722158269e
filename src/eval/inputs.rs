//! Reading `lucid eval`'s inputs the way BIRD's evaluator does: predictions (BIRD's
//! `{"idx": "SQL\t----- bird -----\tdb_id"}` JSON, a JSON list, or a Parquet table), gold
//! (`dev_gold.sql` lines or a BIRD/Spider question JSON) and difficulties (`--diff-json`).
//! Predictions and gold are paired by position; a count mismatch is an error, never a silent zip.

use std::path::{Path, PathBuf};

use arrow::array::{Array, Int64Array, StringArray};
use serde::Deserialize;
use serde_json::Value as Json;

use crate::datasets::bird::{read_gold_sql, read_json};
use crate::error::{Error, Result};
use crate::table::column;

/// BIRD's separator between a predicted query and its database id.
pub const BIRD_SEPARATOR: &str = "\t----- bird -----\t";

/// One prediction. `sql` is `None` when the entry is not a string (it scores 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prediction {
    /// The predicted query, without BIRD's `\t----- bird -----\tdb_id` suffix.
    pub sql: Option<String>,
    /// The question id, where the file gives one (Parquet `question_id` column).
    pub question_id: Option<i64>,
    /// The database named after BIRD's separator; BIRD's evaluator runs the pair on it.
    pub db_id: Option<String>,
}

/// Read predictions from `.json` or `.parquet`, in file order.
pub fn read_predictions(path: &Path) -> Result<Vec<Prediction>> {
    if path.extension().is_some_and(|e| e == "parquet") {
        return read_parquet_predictions(path);
    }
    let json: Json = read_json(path)?;
    let values: Vec<&Json> = match &json {
        Json::Object(map) => map.values().collect(),
        Json::Array(list) => list.iter().collect(),
        _ => return Err(Error::input(path, "expected a JSON object {\"0\": \"SQL...\"} or a list of strings")),
    };
    Ok(values.into_iter().map(|v| Prediction::parse(v.as_str(), None)).collect())
}

impl Prediction {
    /// A prediction from BIRD's `SQL\t----- bird -----\tdb_id` string (or plain SQL); `None` is
    /// a value that is not a string.
    pub fn parse(text: Option<&str>, question_id: Option<i64>) -> Prediction {
        let Some(text) = text else { return Prediction { sql: None, question_id, db_id: None } };
        match text.split_once(BIRD_SEPARATOR) {
            Some((sql, db)) => Prediction { sql: Some(sql.into()), question_id, db_id: Some(db.trim().into()) },
            None => Prediction { sql: Some(text.into()), question_id, db_id: None },
        }
    }
}

fn read_parquet_predictions(path: &Path) -> Result<Vec<Prediction>> {
    let batch = crate::table::read_parquet(path)?;
    let name = ["sql", "predicted_sql"]
        .into_iter()
        .find(|n| batch.column_by_name(n).is_some())
        .ok_or_else(|| Error::input(path, "needs a string column 'sql' (or 'predicted_sql')"))?;
    let sql = column::<StringArray>(&batch, path, name)?;
    let qid = match batch.column_by_name("question_id") {
        Some(_) => Some(column::<Int64Array>(&batch, path, "question_id")?),
        None => None,
    };
    Ok((0..batch.num_rows())
        .map(|i| {
            Prediction::parse(sql.is_valid(i).then(|| sql.value(i)), qid.filter(|q| q.is_valid(i)).map(|q| q.value(i)))
        })
        .collect())
}

/// One gold query with where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoldItem {
    /// The reference query.
    pub sql: String,
    /// Its database id.
    pub db_id: String,
    /// Where it stands in its file ("line 18", "entry 17"), for error messages.
    pub location: String,
    /// Its question id, where the file gives one.
    pub question_id: Option<i64>,
    /// Its difficulty, where the file gives one.
    pub difficulty: Option<String>,
}

#[derive(Deserialize)]
struct GoldEntry {
    db_id: String,
    #[serde(rename = "SQL")]
    sql: Option<String>,
    query: Option<String>,
    question_id: Option<i64>,
    difficulty: Option<String>,
}

/// Read gold from BIRD's `dev_gold.sql` (`SQL<TAB>db_id` lines) or from a question JSON whose
/// entries carry `db_id` and `SQL` (BIRD) or `query` (Spider).
pub fn read_gold(path: &Path) -> Result<Vec<GoldItem>> {
    if path.extension().is_some_and(|e| e == "json") {
        let entries: Vec<GoldEntry> = read_json(path)?;
        return entries
            .into_iter()
            .enumerate()
            .map(|(i, e)| {
                let sql = e
                    .sql
                    .or(e.query)
                    .ok_or_else(|| Error::input(path, format!("entry {i}: no \"SQL\" or \"query\"")))?;
                Ok(GoldItem {
                    sql,
                    db_id: e.db_id,
                    location: format!("entry {i}"),
                    question_id: e.question_id,
                    difficulty: e.difficulty,
                })
            })
            .collect();
    }
    Ok(read_gold_sql(path)?
        .into_iter()
        .map(|(sql, db_id, line)| GoldItem {
            sql,
            db_id,
            location: format!("line {line}"),
            question_id: None,
            difficulty: None,
        })
        .collect())
}

#[derive(Deserialize)]
struct DiffEntry {
    difficulty: Option<String>,
}

/// Difficulties by position from a BIRD question JSON (missing ones are "unknown").
pub fn read_difficulties(path: &Path) -> Result<Vec<String>> {
    let entries: Vec<DiffEntry> = read_json(path)?;
    Ok(entries.into_iter().map(|e| e.difficulty.unwrap_or_else(|| "unknown".into())).collect())
}

/// Everything `lucid eval` scores, validated: one row per prediction, aligned with gold.
#[derive(Clone, Debug)]
pub struct EvalSet {
    /// The predictions, in input order.
    pub predictions: Vec<Prediction>,
    /// The gold queries, aligned.
    pub gold: Vec<GoldItem>,
    /// The database file of each pair: the prediction's (after BIRD's separator), as in BIRD's
    /// evaluator, else the gold's.
    pub db_paths: Vec<PathBuf>,
    /// The difficulty of each pair.
    pub difficulties: Vec<String>,
}

impl EvalSet {
    /// Pair predictions with gold by position and resolve every database, with errors that name
    /// the file and the entry.
    pub fn build(
        pred_path: &Path,
        predictions: Vec<Prediction>,
        gold_path: &Path,
        gold: Vec<GoldItem>,
        db_root: &Path,
        diff: Option<(&Path, Vec<String>)>,
    ) -> Result<EvalSet> {
        if predictions.len() != gold.len() {
            return Err(Error::input(
                pred_path,
                format!(
                    "has {} predictions but {} has {} gold queries",
                    predictions.len(),
                    gold_path.display(),
                    gold.len()
                ),
            ));
        }
        for (i, (p, g)) in predictions.iter().zip(&gold).enumerate() {
            if let (Some(pq), Some(gq)) = (p.question_id, g.question_id)
                && pq != gq
            {
                return Err(Error::input(
                    pred_path,
                    format!("row {i}: question_id {pq} but gold {} has {gq}", g.location),
                ));
            }
        }
        let mut db_paths = resolve_databases(gold_path, &gold, db_root)?;
        for (i, p) in predictions.iter().enumerate() {
            if let Some(db) = p.db_id.as_deref().filter(|db| *db != gold[i].db_id) {
                db_paths[i] = crate::datasets::bird::database_path(db_root, db)
                    .map_err(|m| Error::input(pred_path, format!("entry {i}: {m}")))?;
            }
        }
        let difficulties = match diff {
            Some((path, d)) if d.len() < gold.len() => {
                return Err(Error::input(
                    path,
                    format!("has {} entries but there are {} gold queries", d.len(), gold.len()),
                ));
            }
            Some((_, mut d)) => {
                d.truncate(gold.len());
                d
            }
            None => gold.iter().map(|g| g.difficulty.clone().unwrap_or_else(|| "unknown".into())).collect(),
        };
        Ok(EvalSet { predictions, gold, db_paths, difficulties })
    }
}

/// The database file of each gold query, with an error naming the gold file and entry when one
/// is missing.
pub fn resolve_databases(gold_path: &Path, gold: &[GoldItem], db_root: &Path) -> Result<Vec<PathBuf>> {
    let mut resolved: std::collections::HashMap<&str, PathBuf> = Default::default();
    gold.iter()
        .map(|g| {
            if let Some(p) = resolved.get(g.db_id.as_str()) {
                return Ok(p.clone());
            }
            let p = crate::datasets::bird::database_path(db_root, &g.db_id)
                .map_err(|m| Error::input(gold_path, format!("{}: {m}", g.location)))?;
            resolved.insert(&g.db_id, p.clone());
            Ok(p)
        })
        .collect()
}
