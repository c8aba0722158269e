//! The `.slt` golden files of `tests/slt/` (sqllogictest format, as DataFusion tests its own
//! functions): lucid's SQL functions and every report and view SQL file of `pipelines/reports/`,
//! each on small literal tables, against values computed independently (by hand from a closed
//! form, by numpy, or from a textbook example — each block names its source in a comment).
//!
//! Beyond plain SQL, the session understands one statement, `REPORT <path>`: the SQL file at
//! `<path>` (relative to the project root) run as `lucid report` / `lucid query` run it, over the
//! tables the file has created so far plus the run views ([`lucid::runs::VIEWS`]) they allow.
//! Floating-point values print with 4 decimals, NULL as `NULL`, the empty string as `(empty)`.
//! `LUCID_SLT=name` runs only the files whose name contains `name`.

use std::path::{Path, PathBuf};

use arrow::array::{Array, RecordBatch};
use arrow::datatypes::DataType;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use sqllogictest::{DBOutput, DefaultColumnType};

/// A lucid SQL session (every function lucid registers).
struct Session {
    ctx: datafusion::prelude::SessionContext,
}

#[derive(Debug)]
struct SltError(String);

impl std::fmt::Display for SltError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SltError {}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

impl Session {
    fn new() -> Self {
        Session { ctx: lucid::session::new() }
    }

    /// The SQL to run for `sql`: itself, or the file a `REPORT` statement names (with the run
    /// views its tables allow defined first).
    fn resolve(&mut self, sql: &str) -> Result<String, SltError> {
        let Some(path) = sql.trim().strip_prefix("REPORT ") else { return Ok(sql.to_string()) };
        let path = root().join(path.trim().trim_end_matches(';'));
        let text = std::fs::read_to_string(&path).map_err(|e| SltError(format!("{}: {e}", path.display())))?;
        let tables: Vec<String> = self
            .ctx
            .catalog("datafusion")
            .and_then(|c| c.schema("public"))
            .map(|s| s.table_names())
            .unwrap_or_default();
        lucid::session::block_on(lucid::runs::define_views(&self.ctx, &tables, false))
            .map_err(|e| SltError(e.to_string()))?;
        Ok(text)
    }
}

fn column_type(t: &DataType) -> DefaultColumnType {
    match t {
        t if t.is_integer() => DefaultColumnType::Integer,
        t if t.is_floating() || matches!(t, DataType::Decimal128(..)) => DefaultColumnType::FloatingPoint,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Boolean => DefaultColumnType::Text,
        _ => DefaultColumnType::Any,
    }
}

fn cell(a: &dyn Array, row: usize) -> String {
    if a.is_null(row) {
        return "NULL".into();
    }
    let text = match a.data_type() {
        DataType::Float64 | DataType::Float32 => {
            let v = arrow::compute::cast(&a.slice(row, 1), &DataType::Float64).expect("cast");
            let v = v.as_any().downcast_ref::<arrow::array::Float64Array>().expect("f64").value(0);
            // -0.0000 and 0.0000 are one value.
            let s = format!("{v:.4}");
            if s == "-0.0000" { "0.0000".into() } else { s }
        }
        _ => {
            let f = ArrayFormatter::try_new(a, &FormatOptions::default()).expect("formatter");
            f.value(row).to_string()
        }
    };
    if text.is_empty() { "(empty)".into() } else { text }
}

fn rows(batch: &RecordBatch) -> Vec<Vec<String>> {
    (0..batch.num_rows()).map(|r| batch.columns().iter().map(|c| cell(c.as_ref(), r)).collect()).collect()
}

impl sqllogictest::DB for Session {
    type Error = SltError;
    type ColumnType = DefaultColumnType;

    fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, SltError> {
        let sql = self.resolve(sql)?;
        let ctx = self.ctx.clone();
        let batch =
            lucid::session::block_on(lucid::session::collect(&ctx, &sql)).map_err(|e| SltError(e.to_string()))?;
        let is_statement = sql.trim_start().to_ascii_uppercase().starts_with("CREATE ");
        if is_statement {
            return Ok(DBOutput::StatementComplete(0));
        }
        let types = batch.schema().fields().iter().map(|f| column_type(f.data_type())).collect();
        Ok(DBOutput::Rows { types, rows: rows(&batch) })
    }

    fn engine_name(&self) -> &str {
        "lucid-datafusion"
    }
}

fn slt_files() -> Vec<PathBuf> {
    let dir = root().join("tests/slt");
    let filter = std::env::var("LUCID_SLT").unwrap_or_default();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/slt")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "slt"))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains(&filter)))
        .collect();
    files.sort();
    files
}

/// Every `.slt` file passes (each in a fresh session).
#[test]
fn golden_sql_files() {
    let files = slt_files();
    assert!(!files.is_empty(), "no .slt file under tests/slt matches LUCID_SLT");
    let mut failed = Vec::new();
    for f in &files {
        let mut runner = sqllogictest::Runner::new(|| async { Ok(Session::new()) });
        // Each column's type letter (I integer, R float, T text) must match what the SQL returns.
        runner.with_column_validator(sqllogictest::strict_column_validator);
        if let Err(e) = runner.run_file(f) {
            failed.push(format!("{}:\n{}", f.display(), e.display(false)));
        }
    }
    assert!(failed.is_empty(), "{} of {} .slt files failed:\n{}", failed.len(), files.len(), failed.join("\n\n"));
}

/// Each SQL function lucid registers, and each report and view SQL file, has a block.
#[test]
fn every_function_and_report_file_has_a_golden_block() {
    let all: String = slt_files().iter().map(|f| std::fs::read_to_string(f).expect("read")).collect();
    if std::env::var("LUCID_SLT").is_ok_and(|f| !f.is_empty()) {
        return;
    }
    let ctx = lucid::session::new();
    let state = ctx.state();
    let mut names: Vec<String> =
        state.scalar_functions().keys().chain(state.aggregate_functions().keys()).cloned().collect();
    let builtin = datafusion::prelude::SessionContext::new().state();
    names.retain(|n| !builtin.scalar_functions().contains_key(n) && !builtin.aggregate_functions().contains_key(n));
    let mut missing: Vec<String> = names.into_iter().filter(|n| !all.contains(&format!("{n}("))).collect();
    let mut sql_files = Vec::new();
    collect_sql(&root().join("pipelines/reports"), &mut sql_files);
    for f in sql_files {
        let rel = f.strip_prefix(root()).expect("under root").to_string_lossy().into_owned();
        if !all.contains(&format!("REPORT {rel}")) {
            missing.push(rel);
        }
    }
    missing.sort();
    assert!(missing.is_empty(), "no .slt block for:\n{}", missing.join("\n"));
}

fn collect_sql(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            collect_sql(&p, out);
        } else if p.extension().is_some_and(|x| x == "sql") {
            out.push(p);
        }
    }
}

/// Every query block of every `.slt` file names the independent source of its expected values
/// in a comment starting `# source:`, written since the previous query block.
#[test]
fn every_golden_block_names_its_source() {
    let mut unsourced = Vec::new();
    for f in slt_files() {
        let text = std::fs::read_to_string(&f).expect("read");
        let mut sourced = false;
        for (n, line) in text.lines().enumerate() {
            if line.starts_with("# source:") {
                sourced = true;
            }
            if line.starts_with("query") {
                if !sourced {
                    unsourced.push(format!("{}:{}", f.display(), n + 1));
                }
                sourced = false;
            }
        }
    }
    assert!(unsourced.is_empty(), "query blocks with no `# source:` comment:\n{}", unsourced.join("\n"));
}
