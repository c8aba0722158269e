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
use crate::sql::{Limits, OpenOptions, Outcome, lexer};

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
    let run = |c: &mut Connections, sql: &str, twice: bool| match c.get(path) {
        Ok(sb) => sb.execute(sql, &Limits { run_twice: twice, ..limits.clone() }).outcome,
        Err(e) => Outcome::Error(e.to_string()),
    };
    let rows = match run(plain, sql, true) {
        Outcome::Ok(r) => r,
        Outcome::Error(e) => return vec![("error", e)],
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
    let differs = |out: Outcome| match out {
        Outcome::Ok(other) if other.set_hash != rows.set_hash => Some(other.n_rows),
        _ => None,
    };
    if let Some(n) = differs(run(reversed, sql, false)) {
        found.push((
            "order_dependent",
            format!("{} rows normally, {n} rows with unordered scans reversed", rows.n_rows),
        ));
    } else if let Some([asc, desc]) = tie_break_variants(sql, rows.columns.len()) {
        let (a, d) = (run(plain, &asc, false), run(plain, &desc, false));
        if matches!((&a, &d), (Outcome::Ok(x), Outcome::Ok(y)) if x.set_hash != y.set_hash) {
            found
                .push(("order_dependent", "ties at the LIMIT cut: the rows kept depend on how ties are broken".into()));
        }
    }
    if let Some(n) = differs(run(case_sensitive, sql, false)) {
        found.push((
            "case_dependent",
            format!("{} rows normally, {n} rows with case-sensitive text comparison", rows.n_rows),
        ));
    }
    found
}

/// For a query whose top level has `ORDER BY ... LIMIT`, two rewrites that break ties at the cut
/// in opposite ways (by every output column ascending, then descending). If they keep different
/// rows, the original's answer depends on an order SQL leaves unspecified.
pub fn tie_break_variants(sql: &str, ncols: usize) -> Option<[String; 2]> {
    let tokens = lexer::tokenize(sql);
    let mut depth = 0i32;
    let (mut order_by, mut limit) = (None, None);
    for (i, t) in tokens.iter().enumerate() {
        match t.text {
            "(" => depth += 1,
            ")" => depth -= 1,
            _ if depth == 0 && t.is_keyword("ORDER") => {
                let next = tokens[i + 1..].iter().find(|t| t.is_significant());
                if next.is_some_and(|n| n.is_keyword("BY")) {
                    order_by = Some(i);
                    limit = None;
                }
            }
            _ if depth == 0 && order_by.is_some() && t.is_keyword("LIMIT") => limit = Some(t.start),
            _ => {}
        }
    }
    let (Some(_), Some(cut), true) = (order_by, limit, ncols > 0) else { return None };
    let keys = |dir: &str| (1..=ncols).map(|c| format!("{c} {dir}")).collect::<Vec<_>>().join(", ");
    Some(["ASC", "DESC"].map(|dir| format!("{}, {} {}", sql[..cut].trim_end(), keys(dir), &sql[cut..])))
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
