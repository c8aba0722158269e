//! What one query did, as the execution-accuracy rule and the gold cache both see it.

use std::time::Duration;

/// What one query did, reduced to what the EX rule needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ran {
    /// It returned rows: their set hash and count.
    Rows {
        /// Hash of the rows as a set.
        set_hash: u128,
        /// Rows read.
        n_rows: u64,
        /// A cap stopped reading (the result cannot be compared exactly).
        truncated: bool,
    },
    /// It failed.
    Error(String),
    /// It passed the time limit.
    Timeout,
}

impl Ran {
    /// The status word of a query's run in tables (`None`: the prediction was not a string).
    pub fn status(r: Option<&Ran>) -> &'static str {
        match r {
            None => "not_string",
            Some(Ran::Rows { truncated: true, .. }) => "truncated",
            Some(Ran::Rows { .. }) => "ok",
            Some(Ran::Error(_)) => "error",
            Some(Ran::Timeout) => "timeout",
        }
    }
}

/// One query's result and time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryRun {
    /// What happened.
    pub ran: Ran,
    /// How long it took (as measured when it ran, also for cached results).
    pub elapsed: Duration,
    /// Served from the gold cache.
    pub cached: bool,
}
