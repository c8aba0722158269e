//! Model-written SQL is untrusted: every hostile query is refused or stopped by its limit (row
//! cap, byte cap, deadline, value length), and the database files do not change by a single byte.
//! Each limit is checked with queries that only it can stop, so the machine's load decides nothing.

use std::time::Duration;

use lucid::sql::value::Value;
use lucid::sql::{Limits, OpenOptions, Outcome, Sandbox};

use crate::support::{DbRoot, hash_tree};

/// A deadline no query here comes near: where a cap is under test, the cap decides, whatever the
/// machine's load.
const NEVER: Duration = Duration::from_secs(24 * 3600);

/// Counts up forever, one row at a time.
const ENDLESS: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c)";

const HOSTILE: &[&str] = &[
    "INSERT INTO t VALUES (99, 'x', 1, 'z')",
    "UPDATE t SET name = 'pwned'",
    "DELETE FROM t",
    "DROP TABLE t",
    "CREATE TABLE evil(x)",
    "CREATE TEMP TABLE evil(x)",
    "CREATE TEMP VIEW v AS SELECT 1",
    "CREATE TRIGGER tr AFTER INSERT ON t BEGIN DELETE FROM t; END",
    "CREATE INDEX i ON t(name)",
    "ALTER TABLE t ADD COLUMN y",
    "ATTACH DATABASE 'ATTACHED' AS other",
    "DETACH DATABASE main",
    "PRAGMA writable_schema = 1",
    "PRAGMA journal_mode = DELETE",
    "PRAGMA query_only = 0",
    "PRAGMA user_version = 7",
    "PRAGMA case_sensitive_like = 1",
    "SELECT load_extension('libevil')",
    "VACUUM",
    "VACUUM INTO 'VACUUMED'",
    "BEGIN",
    "REINDEX",
    "ANALYZE",
    "SELECT 1; DELETE FROM t",
    "WITH x AS (SELECT 1) DELETE FROM t",
    "REPLACE INTO t VALUES (1, 'x', 1, 'z')",
];

#[test]
fn hostile_queries_are_refused_and_the_database_is_unchanged() {
    let root = DbRoot::new();
    let db = root.add("people", crate::support::PEOPLE);
    let before = hash_tree(root.path());
    let sandbox = Sandbox::open(&db, &OpenOptions::default()).unwrap();
    let limits = Limits { timeout: NEVER, ..Limits::default() };
    for sql in HOSTILE {
        let sql = sql
            .replace("ATTACHED", &root.path().join("other.sqlite").to_string_lossy())
            .replace("VACUUMED", &root.path().join("copy.sqlite").to_string_lossy());
        let out = sandbox.execute(&sql, &limits).outcome;
        assert!(matches!(out, Outcome::Error(_)), "{sql}: expected a refusal, got {out:?}");
    }
    // Reading still works, and reads the original data.
    let out = sandbox.execute("SELECT count(*), min(name) FROM t", &limits).outcome;
    assert_eq!(out.rows().unwrap().rows[0][1], Value::Text("ann".into()));
    drop(sandbox);
    assert_eq!(before, hash_tree(root.path()), "database folder changed (or gained files)");
}

/// A sandbox on a 2000-row table `n(x)`, and the database folder's hashes before it opened.
struct Big {
    root: DbRoot,
    before: Vec<(std::path::PathBuf, String)>,
    sandbox: Sandbox,
}

impl Big {
    fn open() -> Big {
        let root = DbRoot::new();
        let db =
            root.add("big", &format!("CREATE TABLE n(x INTEGER); {ENDLESS} INSERT INTO n SELECT x FROM c LIMIT 2000;"));
        let before = hash_tree(root.path());
        let sandbox = Sandbox::open(&db, &OpenOptions::default()).unwrap();
        Big { root, before, sandbox }
    }

    fn run(&self, sql: &str, limits: &Limits) -> Outcome {
        self.sandbox.execute(sql, limits).outcome
    }

    /// Close the sandbox; the database folder must be byte for byte as before.
    fn close(self) {
        let Big { root, before, sandbox } = self;
        drop(sandbox);
        assert_eq!(before, hash_tree(root.path()), "database folder changed (or gained files)");
    }
}

#[test]
fn a_runaway_query_is_cut_at_exactly_the_row_cap() {
    let big = Big::open();
    let limits = Limits { timeout: NEVER, max_rows: 10_000, ..Limits::default() };
    // Endless rows, and an 8e9-row cross join streamed: the row cap is the only limit in reach.
    for sql in [format!("{ENDLESS} SELECT x FROM c"), "SELECT * FROM n a, n b, n c".into()] {
        let out = big.run(&sql, &limits);
        let rows = out.rows().unwrap_or_else(|| panic!("{sql}: expected rows, got {out:?}"));
        assert!(rows.truncated && rows.n_rows == 10_000, "{sql}: truncated {} at {} rows", rows.truncated, rows.n_rows);
    }
    big.close();
}

#[test]
fn a_query_that_returns_no_rows_is_stopped_by_its_deadline() {
    let big = Big::open();
    let limits = Limits { timeout: Duration::from_millis(100), ..Limits::default() };
    // None of these ever returns a row or ends (the cross join has 3.2e16 rows): no cap applies,
    // so only the deadline can stop them. How long that took is the machine's, and not checked.
    for sql in [
        format!("{ENDLESS} SELECT count(*) FROM c"),
        format!("{ENDLESS} SELECT x FROM c WHERE x < 0"),
        "SELECT count(*) FROM n a, n b, n c, n d, n e".into(),
    ] {
        let out = big.run(&sql, &limits);
        assert_eq!(out, Outcome::Timeout, "{sql}");
    }
    big.close();
}

/// Bytes the sandbox counts against `Limits::max_bytes` for kept `rows`: each row's 16-byte hash
/// and its values, each in its slot.
fn held_bytes(rows: &[lucid::sql::value::Row]) -> usize {
    rows.iter().map(|r| 16 + r.iter().map(|v| v.heap_bytes() + std::mem::size_of::<Value>()).sum::<usize>()).sum()
}

#[test]
fn wide_rows_are_cut_by_the_byte_cap() {
    let big = Big::open();
    let limits = Limits { timeout: NEVER, max_bytes: 8 << 20, ..Limits::default() };
    // 2 MB a row, 2000 rows: the byte cap (8 MiB) is reached after a few rows, long before the
    // row cap.
    let sql = "SELECT printf('%.*c', 1000000, 'x'), printf('%.*c', 1000000, 'y') FROM n";
    let out = big.run(sql, &limits);
    let rows = out.rows().unwrap_or_else(|| panic!("expected rows, got {out:?}"));
    assert!(rows.truncated && rows.n_rows < 2000, "truncated {} at {} rows", rows.truncated, rows.n_rows);
    // Every row read is kept here (fewer than `keep_rows`), so the result is what the sandbox
    // held: reading stopped once that passed the cap, so it is over the cap by less than a row.
    assert_eq!(rows.rows.len() as u64, rows.n_rows);
    let (held, last) = (held_bytes(&rows.rows), held_bytes(&rows.rows[rows.rows.len() - 1..]));
    assert!(held > limits.max_bytes && held - last <= limits.max_bytes, "held {held} bytes, cap {}", limits.max_bytes);
    big.close();
}

#[test]
fn a_value_past_sqlites_length_limit_is_an_error_not_an_allocation() {
    let big = Big::open();
    let limits = Limits { timeout: NEVER, ..Limits::default() };
    // One huge value, and one grown row by row to 20 MB: each fails at the sandbox's length limit
    // (16 MiB) instead of taking the memory.
    for sql in [
        "SELECT zeroblob(1000000000)".to_string(),
        "SELECT printf('%.*c', 2000000000, 'x')".into(),
        format!("{ENDLESS} SELECT group_concat(printf('%.*c', 1000, 'x'), '') FROM (SELECT x FROM c LIMIT 20000)"),
    ] {
        let out = big.run(&sql, &limits);
        assert!(out.error().is_some_and(|e| e.contains("too big")), "{sql}: expected a length error, got {out:?}");
    }
    big.close();
}

#[test]
fn nondeterminism_is_detected_on_a_second_run() {
    let root = DbRoot::new();
    let db = root.add("people", crate::support::PEOPLE);
    let sandbox = Sandbox::open(&db, &OpenOptions::default()).unwrap();
    let twice = Limits { run_twice: true, ..Limits::default() };
    let out = sandbox.execute("SELECT name FROM t ORDER BY random() LIMIT 1", &twice).outcome;
    // One of four names each time: the two runs agree with probability 1/4; retry a few times.
    let mut seen_nondet = matches!(out, Outcome::Nondeterministic(_));
    for _ in 0..20 {
        if seen_nondet {
            break;
        }
        seen_nondet = matches!(
            sandbox.execute("SELECT name FROM t ORDER BY random() LIMIT 1", &twice).outcome,
            Outcome::Nondeterministic(_)
        );
    }
    assert!(seen_nondet, "random() never flagged in 21 tries");
    let stable = sandbox.execute("SELECT name FROM t ORDER BY id", &twice).outcome;
    assert!(matches!(stable, Outcome::Ok(_)));
}
