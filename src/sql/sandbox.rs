//! Runs untrusted, model-written SQL against a benchmark database without letting it change,
//! escape or outlast anything: read-only (and immutable) open, an authorizer that allows reading
//! only, a wall-clock deadline through the progress handler, caps on rows and bytes held, and an
//! optional second run that detects nondeterminism. It never modifies the database file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use super::lexer;
use super::outcome::{Execution, Outcome, ResultSet};
use super::value::{self, Row, Value};
use crate::error::{Error, Result};

/// Limits on one execution.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Wall-clock limit (default 30 s, as in the paper and BIRD's evaluator).
    pub timeout: Duration,
    /// Stop reading after this many rows and mark the result truncated.
    pub max_rows: u64,
    /// Stop reading once the rows held (kept values plus 16 bytes of hash per row) pass this.
    pub max_bytes: usize,
    /// How many rows to keep as values (for previews); all rows are hashed regardless.
    pub keep_rows: usize,
    /// Run the query a second time and report `Nondeterministic` when the results differ.
    pub run_twice: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(30),
            max_rows: 1_000_000,
            max_bytes: 256 << 20,
            keep_rows: 100,
            run_twice: false,
        }
    }
}

/// How a database is opened. The defaults are the sandbox; the other switches exist for trusted
/// gold-query diagnostics (`lucid eval --check-gold`).
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// Open with `immutable=1` (no locking, no journal lookups). Safe for benchmark files that
    /// nothing writes while lucid runs.
    pub immutable: bool,
    /// `PRAGMA reverse_unordered_selects`: scans without ORDER BY run backwards, exposing queries
    /// whose answer depends on unspecified row order (e.g. LIMIT with ties).
    pub reverse_unordered_selects: bool,
    /// Make text comparison case-sensitive (NOCASE behaves as BINARY, LIKE is case-sensitive),
    /// exposing queries that only work because of case-insensitive comparison.
    pub case_sensitive_text: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions { immutable: true, reverse_unordered_selects: false, case_sensitive_text: false }
    }
}

/// Largest string or blob SQLite may build (bounds memory of `zeroblob(1e12)` and friends).
const MAX_VALUE_BYTES: i32 = 16 << 20;

/// SQLite's process-wide heap limit (bytes).
const SQLITE_HEAP_LIMIT: i64 = 2 << 30;

/// Read-only pragmas model SQL may use (they read schema, never change behaviour).
const READ_ONLY_PRAGMAS: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "collation_list",
];

/// Microseconds since a process-wide origin; deadlines are stored in this unit.
fn now_us() -> u64 {
    static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_micros() as u64
}

/// One sandboxed connection to one database file.
pub struct Sandbox {
    conn: Connection,
    deadline_us: Arc<AtomicU64>,
    path: PathBuf,
}

impl Sandbox {
    /// Open `path` read-only with the sandbox's authorizer, limits and progress handler.
    pub fn open(path: &Path, options: &OpenOptions) -> Result<Sandbox> {
        let err = |source| Error::Sqlite { path: path.to_path_buf(), source };
        if !path.is_file() {
            return Err(Error::input(path, "database file not found"));
        }
        let uri = file_uri(path, options.immutable);
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&uri, flags).map_err(err)?;
        conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0).map_err(err)?;
        conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES).map_err(err)?;
        conn.pragma_update(None, "query_only", true).map_err(err)?;
        conn.pragma_update(None, "trusted_schema", false).map_err(err)?;
        // Process-wide bound on SQLite's heap: a runaway query fails with "out of memory".
        conn.pragma_update(None, "hard_heap_limit", SQLITE_HEAP_LIMIT).map_err(err)?;
        if options.reverse_unordered_selects {
            conn.pragma_update(None, "reverse_unordered_selects", true).map_err(err)?;
        }
        if options.case_sensitive_text {
            conn.create_collation("NOCASE", |a: &str, b: &str| a.cmp(b)).map_err(err)?;
            conn.pragma_update(None, "case_sensitive_like", true).map_err(err)?;
        }
        conn.authorizer(Some(authorize)).map_err(err)?;
        let deadline_us = Arc::new(AtomicU64::new(u64::MAX));
        let watched = Arc::clone(&deadline_us);
        conn.progress_handler(1000, Some(move || now_us() > watched.load(Ordering::Relaxed))).map_err(err)?;
        Ok(Sandbox { conn, deadline_us, path: path.to_path_buf() })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Run `sql` under `limits`, its deadline starting now.
    pub fn execute(&self, sql: &str, limits: &Limits) -> Execution {
        self.execute_until(sql, limits, Instant::now() + limits.timeout)
    }

    /// Run `sql` under `limits` with an explicit deadline (shared by a pair of queries).
    pub fn execute_until(&self, sql: &str, limits: &Limits, deadline: Instant) -> Execution {
        let start = Instant::now();
        let first = self.run_once(sql, limits, deadline);
        let outcome = match first {
            Outcome::Ok(rows) if limits.run_twice => match self.run_once(sql, limits, deadline) {
                Outcome::Ok(again) if again.set_hash == rows.set_hash => Outcome::Ok(rows),
                Outcome::Ok(_) => Outcome::Nondeterministic(rows),
                other => other,
            },
            other => other,
        };
        Execution { outcome, elapsed: start.elapsed() }
    }

    fn run_once(&self, sql: &str, limits: &Limits, deadline: Instant) -> Outcome {
        if !lexer::is_single_statement(sql) {
            return Outcome::Error("You can only execute one statement at a time.".into());
        }
        if !lexer::starts_read_only(sql) {
            return Outcome::Error(
                "not a query: only SELECT, WITH, VALUES, EXPLAIN and read-only PRAGMA run here".into(),
            );
        }
        if lexer::is_empty_statement(sql) {
            return Outcome::Ok(ResultSet {
                columns: vec![],
                rows: vec![],
                n_rows: 0,
                truncated: false,
                set_hash: value::set_hash(&mut Vec::new()),
                all_null: false,
            });
        }
        let remaining = deadline.saturating_duration_since(Instant::now());
        let deadline_us = now_us().saturating_add(remaining.as_micros() as u64);
        self.deadline_us.store(deadline_us, Ordering::Relaxed);
        let result = self.read_rows(sql, limits, deadline_us);
        self.deadline_us.store(u64::MAX, Ordering::Relaxed);
        match result {
            Ok(rows) => Outcome::Ok(rows),
            Err(Stop::Timeout) => Outcome::Timeout,
            Err(Stop::Error(_)) if now_us() > deadline_us => Outcome::Timeout,
            Err(Stop::Error(message)) => Outcome::Error(message),
        }
    }

    fn read_rows(&self, sql: &str, limits: &Limits, deadline_us: u64) -> Result<ResultSet, Stop> {
        let mut stmt = self.conn.prepare(sql)?;
        let columns: Vec<String> = stmt.column_names().map(str::to_string).collect();
        let mut rows_out: Vec<Row> = Vec::new();
        let mut hashes: Vec<u128> = Vec::new();
        let mut held = 0usize;
        let mut all_null = true;
        let mut truncated = false;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            if hashes.len() as u64 >= limits.max_rows || held > limits.max_bytes {
                truncated = true;
                break;
            }
            if hashes.len() % 256 == 255 && now_us() > deadline_us {
                return Err(Stop::Timeout);
            }
            let mut values: Row = Vec::with_capacity(columns.len());
            for (i, column) in columns.iter().enumerate() {
                values.push(canonical(row.get_ref(i)?, column)?);
            }
            all_null &= values.iter().all(Value::is_null);
            hashes.push(value::row_hash(&values));
            held += 16;
            if rows_out.len() < limits.keep_rows {
                held += values.iter().map(|v| v.heap_bytes() + std::mem::size_of::<Value>()).sum::<usize>();
                rows_out.push(values);
            }
        }
        let n_rows = hashes.len() as u64;
        Ok(ResultSet {
            columns,
            rows: rows_out,
            n_rows,
            truncated,
            set_hash: value::set_hash(&mut hashes),
            all_null: n_rows > 0 && all_null,
        })
    }
}

/// Why reading stopped early.
enum Stop {
    Timeout,
    Error(String),
}

impl From<rusqlite::Error> for Stop {
    fn from(e: rusqlite::Error) -> Self {
        Stop::Error(sqlite_message(&e))
    }
}

/// The SQLite message without rusqlite's wrapping.
fn sqlite_message(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        other => other.to_string(),
    }
}

/// Convert one cell to its canonical value. Text that is not UTF-8 is an error, as in Python's
/// `sqlite3` ("Could not decode to UTF-8"), so such a query scores 0 there and here.
fn canonical(v: ValueRef<'_>, column: &str) -> Result<Value, Stop> {
    Ok(match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::from_f64(f),
        ValueRef::Text(t) => match std::str::from_utf8(t) {
            Ok(s) => Value::Text(s.to_string()),
            Err(_) => return Err(Stop::Error(format!("Could not decode to UTF-8 column '{column}'"))),
        },
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    })
}

/// The authorizer: reading and computing are allowed; every write, schema change, attach,
/// transaction, behaviour-changing pragma and extension load is denied at prepare time.
fn authorize(ctx: AuthContext<'_>) -> Authorization {
    match ctx.action {
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Recursive => Authorization::Allow,
        AuthAction::Function { function_name } => {
            if function_name.eq_ignore_ascii_case("load_extension") {
                Authorization::Deny
            } else {
                Authorization::Allow
            }
        }
        AuthAction::Pragma { pragma_name, .. } => {
            if READ_ONLY_PRAGMAS.iter().any(|p| p.eq_ignore_ascii_case(pragma_name)) {
                Authorization::Allow
            } else {
                Authorization::Deny
            }
        }
        _ => Authorization::Deny,
    }
}

/// An SQLite URI for `path`, percent-encoding what URI syntax would misread.
fn file_uri(path: &Path, immutable: bool) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for b in abs.to_string_lossy().bytes() {
        match b {
            b'?' | b'#' | b'%' | b' ' | 0x80.. => uri.push_str(&format!("%{b:02X}")),
            _ => uri.push(b as char),
        }
    }
    uri.push_str("?mode=ro");
    if immutable {
        uri.push_str("&immutable=1");
    }
    uri
}
