//! `lucid eval --check-gold`: reads gold only and reports reference queries that cannot be
//! trusted as-is — they fail, time out, disagree with themselves on two runs, depend on
//! unspecified row order (run again with SQLite's `reverse_unordered_selects`, e.g. LIMIT with
//! ties), return nothing or only NULLs, or depend on case-insensitive text comparison (run again
//! with NOCASE made case-sensitive and LIKE case-sensitive).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch, StringArray, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema};

use super::inputs::GoldItem;
use crate::error::Result;
use crate::par::par_map_with;
use crate::sql::connections::Connections;
use crate::sql::{Limits, OpenOptions, Outcome};

/// One problem with one gold query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Position in the gold file.
    pub idx: usize,
    /// Question id, where the gold file gives one.
    pub question_id: Option<i64>,
    /// Database id.
    pub db_id: String,
    /// error / timeout / nondeterministic / order_dependent / empty / all_null / case_dependent.
    pub kind: &'static str,
    /// Details (the error message, row counts).
    pub detail: String,
}

/// Kinds found for one distinct query.
fn diagnose(conns: &mut [Connections; 3], path: &Path, sql: &str, limits: &Limits) -> Vec<(&'static str, String)> {
    let [plain, reversed, case_sensitive] = conns;
    let run = |c: &mut Connections, twice: bool| match c.get(path) {
        Ok(sb) => sb.execute(sql, &Limits { run_twice: twice, ..limits.clone() }).outcome,
        Err(e) => Outcome::Error(e.to_string()),
    };
    let first = run(plain, true);
    let rows = match &first {
        Outcome::Ok(r) => r.clone(),
        Outcome::Error(e) => return vec![("error", e.clone())],
        Outcome::Timeout => return vec![("timeout", format!("over {:?}", limits.timeout))],
        Outcome::Nondeterministic(r) => {
            return vec![("nondeterministic", format!("two runs differ ({} rows first)", r.n_rows))];
        }
    };
    let mut found = Vec::new();
    if rows.is_empty() {
        found.push(("empty", "no rows".to_string()));
    } else if rows.all_null {
        found.push(("all_null", format!("{} rows, every value NULL", rows.n_rows)));
    }
    let mut compare = |c: &mut Connections, kind: &'static str, how: &str| {
        if let Outcome::Ok(other) = run(c, false)
            && other.set_hash != rows.set_hash
        {
            found.push((kind, format!("{} rows normally, {} rows {how}", rows.n_rows, other.n_rows)));
        }
    };
    compare(reversed, "order_dependent", "with unordered scans reversed");
    compare(case_sensitive, "case_dependent", "with case-sensitive text comparison");
    found
}

/// Check every gold query (each distinct (database, text) once) on `jobs` threads.
pub fn check_gold(gold: &[GoldItem], db_paths: &[PathBuf], limits: &Limits, jobs: usize) -> Vec<Finding> {
    let mut distinct: HashMap<(&PathBuf, &str), usize> = HashMap::new();
    let mut items: Vec<(&PathBuf, &str)> = Vec::new();
    let idx_of: Vec<usize> = gold
        .iter()
        .zip(db_paths)
        .map(|(g, p)| {
            *distinct.entry((p, g.sql.as_str())).or_insert_with(|| {
                items.push((p, g.sql.as_str()));
                items.len() - 1
            })
        })
        .collect();
    let limits = Limits { keep_rows: 0, ..limits.clone() };
    let diagnoses = par_map_with(
        &items,
        jobs,
        || {
            [
                Connections::new(OpenOptions::default()),
                Connections::new(OpenOptions { reverse_unordered_selects: true, ..OpenOptions::default() }),
                Connections::new(OpenOptions { case_sensitive_text: true, ..OpenOptions::default() }),
            ]
        },
        |conns, (path, sql)| diagnose(conns, path, sql, &limits),
    );
    let mut findings = Vec::new();
    for (idx, (g, d)) in gold.iter().zip(idx_of).enumerate() {
        for (kind, detail) in &diagnoses[d] {
            findings.push(Finding {
                idx,
                question_id: g.question_id,
                db_id: g.db_id.clone(),
                kind,
                detail: detail.clone(),
            });
        }
    }
    findings
}

/// The findings as a table (`gold_findings`: idx, question_id, db_id, finding, detail).
pub fn findings_batch(findings: &[Finding]) -> Result<RecordBatch> {
    let schema = Schema::new(vec![
        Field::new("idx", DataType::UInt64, false),
        Field::new("question_id", DataType::Int64, true),
        Field::new("db_id", DataType::Utf8, false),
        Field::new("finding", DataType::Utf8, false),
        Field::new("detail", DataType::Utf8, false),
    ]);
    Ok(RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(UInt64Array::from_iter_values(findings.iter().map(|f| f.idx as u64))),
            Arc::new(Int64Array::from(findings.iter().map(|f| f.question_id).collect::<Vec<_>>())),
            Arc::new(StringArray::from_iter_values(findings.iter().map(|f| f.db_id.as_str()))),
            Arc::new(StringArray::from_iter_values(findings.iter().map(|f| f.kind))),
            Arc::new(StringArray::from_iter_values(findings.iter().map(|f| f.detail.as_str()))),
        ],
    )?)
}
