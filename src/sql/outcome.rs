//! The typed outcome of running one query in the sandbox.

use std::time::Duration;

use super::value::Row;

/// Rows a query returned, normalised once: kept rows for display, and the set hash that every
/// comparison uses (equal set hashes <=> equal results as sets of rows under Python equality).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultSet {
    /// Column names as SQLite reports them.
    pub columns: Vec<String>,
    /// The first rows, up to the `keep_rows` limit, in the order SQLite returned them.
    pub rows: Vec<Row>,
    /// Rows read (all rows unless `truncated`).
    pub n_rows: u64,
    /// True when a row or memory cap stopped reading: `n_rows` and `set_hash` cover only a prefix.
    pub truncated: bool,
    /// Hash of the distinct rows as a set.
    pub set_hash: u128,
    /// At least one row and every value NULL.
    pub all_null: bool,
}

impl ResultSet {
    /// No rows at all.
    pub fn is_empty(&self) -> bool {
        self.n_rows == 0
    }

    /// A plain-text preview of the first `max_rows` rows (for a self-grader or a person).
    pub fn preview(&self, max_rows: usize) -> String {
        let mut out = self.columns.join(" | ");
        for row in self.rows.iter().take(max_rows) {
            out.push('\n');
            out.push_str(&row.iter().map(|v| v.render()).collect::<Vec<_>>().join(" | "));
        }
        let shown = self.rows.len().min(max_rows) as u64;
        if self.n_rows > shown || self.truncated {
            let more = if self.truncated { "at least " } else { "" };
            out.push_str(&format!("\n... ({more}{} rows in all)", self.n_rows));
        }
        out
    }
}

/// What happened to a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It ran; the rows.
    Ok(ResultSet),
    /// SQLite (or the sandbox) refused or failed it; the message.
    Error(String),
    /// It passed its wall-clock limit and was interrupted.
    Timeout,
    /// Two identical runs returned different results (as sets); the first run's rows.
    Nondeterministic(ResultSet),
}

impl Outcome {
    /// The status word used in tables: ok / error / timeout / nondeterministic.
    pub fn status(&self) -> Status {
        match self {
            Outcome::Ok(_) => Status::Ok,
            Outcome::Error(_) => Status::Error,
            Outcome::Timeout => Status::Timeout,
            Outcome::Nondeterministic(_) => Status::Nondeterministic,
        }
    }

    /// The rows, when the query ran (deterministically or not).
    pub fn rows(&self) -> Option<&ResultSet> {
        match self {
            Outcome::Ok(r) | Outcome::Nondeterministic(r) => Some(r),
            _ => None,
        }
    }

    /// The error message, if any.
    pub fn error(&self) -> Option<&str> {
        match self {
            Outcome::Error(e) => Some(e),
            _ => None,
        }
    }
}

/// The outcome's kind, as stored in tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Ran.
    Ok,
    /// Failed.
    Error,
    /// Interrupted at the time limit.
    Timeout,
    /// Different results on two runs.
    Nondeterministic,
}

impl Status {
    /// The lower-case word.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Timeout => "timeout",
            Status::Nondeterministic => "nondeterministic",
        }
    }
}

/// An outcome with the wall-clock time it took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Execution {
    /// What happened.
    pub outcome: Outcome,
    /// Wall-clock time of all runs together.
    pub elapsed: Duration,
}
