//! A function scored against hidden tests (`check(candidate)` of asserts, HumanEval's layout)
//! so that the function cannot fool the score. Running the candidate and the asserts in one
//! interpreter cannot be made sound: the candidate can exit with success before the asserts run,
//! return an object equal to anything, patch builtins or the test's names, read the expected
//! values out of the test's frames, or print a forged success line (nothing is secret inside one
//! process). So the verdict is made where no candidate code ever runs:
//!
//! 1. **strip** (trusted, no candidate): the test with each `assert` replaced by the candidate
//!    calls it makes, in order — the expected values never reach the candidate's run;
//! 2. **record** (untrusted): the candidate runs under the stripped test; each call is written out
//!    as data — its arguments, its result copied into plain built-in values (a result with
//!    behaviour of its own, such as an `__eq__` that always says yes, is refused as a
//!    `TypeError`), or the exception it raised; its own output is discarded;
//! 3. **replay** (trusted, no candidate): the real test's `check` runs against a stand-in that
//!    demands the recorded arguments (type-strict) and answers the recorded results. The verdict
//!    is this run's, and nothing else's.
//!
//! The worst the candidate can do is claim "f(args) = value", which must then pass the real
//! asserts. Every run is in [`super::Python`]'s sandbox under the same limits; a run stopped by a
//! limit fails the check with that limit named. Left open: a test that keeps expected values in
//! its own variables (not in asserts) shows them to the candidate's run (5 of HumanEval's 164),
//! results must be plain values, and in-place changes to arguments are not replayed.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use serde_json::{Value, json};

use super::{PyLimits, Python};
use crate::error::Invalid;

const COMMON: &str = include_str!("gold/common.py");
const STRIP: &str = include_str!("gold/strip.py");
const RECORD: &str = include_str!("gold/record.py");
const REPLAY: &str = include_str!("gold/replay.py");

/// The verdict on one candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoldVerdict {
    /// The real asserts passed on the candidate's recorded calls.
    pub passed: bool,
    /// Why not (what the candidate did, or the assert that failed), "" when passed.
    pub why: String,
    /// The sandbox limit that stopped a run (`fuel`, `stack`, `wall-clock`), if one did.
    pub limit: Option<&'static str>,
    /// Fuel of the record and replay runs.
    pub fuel: u64,
    /// Candidate calls recorded.
    pub calls: usize,
}

impl GoldVerdict {
    fn fail(why: impl Into<String>, limit: Option<&'static str>, fuel: u64, calls: usize) -> GoldVerdict {
        GoldVerdict { passed: false, why: why.into(), limit, fuel, calls }
    }
}

/// Stripped tests by their text (the strip run is the same for every candidate of a problem).
static STRIPPED: LazyLock<Mutex<HashMap<String, std::result::Result<String, Invalid>>>> =
    LazyLock::new(Default::default);

fn stripped(py: &Python, test: &str, entry: &str, limits: &PyLimits) -> std::result::Result<String, Invalid> {
    let key = format!("{entry}\n{test}");
    if let Some(hit) = STRIPPED.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return hit;
    }
    let job = json!({"test": test, "entry": entry}).to_string();
    let o = py.run_code(STRIP, job.as_bytes(), limits);
    let out =
        if o.success() { Ok(o.stdout) } else { Err(Invalid(format!("the test cannot be stripped: {}", o.summary()))) };
    if let Ok(mut m) = STRIPPED.lock() {
        m.insert(key, out.clone());
    }
    out
}

/// Score `completion` (the body completing `prompt`) against `test`'s `check(entry_point)`.
pub fn check(
    py: &Python,
    prompt: &str,
    completion: &str,
    test: &str,
    entry_point: &str,
    limits: &PyLimits,
) -> GoldVerdict {
    let stripped = match stripped(py, test, entry_point, limits) {
        Ok(s) => s,
        Err(why) => return GoldVerdict::fail(why.0, None, 0, 0),
    };
    // A tag framing the records apart from anything else on stdout (not a secret: a forged record
    // must still pass the real asserts). Derived from the inputs, so a run repeats exactly.
    let tag = super::mark(&[prompt, completion, test]);
    let job = json!({"tag": tag, "prompt": prompt, "completion": completion, "test": stripped, "entry": entry_point});
    let rec = py.run_code(&format!("{COMMON}\n{RECORD}"), job.to_string().as_bytes(), limits);
    let mut records: Vec<Value> = Vec::new();
    let mut ended = false;
    for line in rec.stdout.lines() {
        if let Some(payload) = line.strip_prefix(&format!("{tag} R ")) {
            match serde_json::from_str::<Value>(payload) {
                Ok(r) if r.as_array().is_some_and(|a| a.len() == 3) => records.push(r),
                _ => {
                    return GoldVerdict::fail(
                        "the candidate's run wrote a malformed call record",
                        None,
                        rec.fuel,
                        records.len(),
                    );
                }
            }
        } else if line == format!("{tag} END null") {
            ended = true;
        }
    }
    if let Some(limit) = rec.limit() {
        return GoldVerdict::fail(
            format!("the candidate's run hit the {limit} limit"),
            Some(limit),
            rec.fuel,
            records.len(),
        );
    }
    let job = json!({"prompt": prompt, "test": test, "entry": entry_point, "records": records});
    let rep = py.run_code(&format!("{COMMON}\n{REPLAY}"), job.to_string().as_bytes(), limits);
    let fuel = rec.fuel + rep.fuel;
    let calls = records.len();
    if rep.success() && rep.stdout.trim() == "PASS" {
        return GoldVerdict { passed: true, why: String::new(), limit: None, fuel, calls };
    }
    let how_rec = match (ended, rec.success()) {
        (true, true) => String::new(),
        (true, false) => format!("; the candidate's run: {}", rec.summary()),
        (false, _) => format!("; the candidate's run ended before the tests did ({})", rec.summary()),
    };
    let why = match rep.limit() {
        Some(l) => format!("the replay hit the {l} limit"),
        None if rep.success() => format!("the replay made fewer calls than recorded ({})", rep.stdout.trim()),
        None => format!("{}{how_rec}", rep.summary()),
    };
    GoldVerdict::fail(why, rep.limit(), fuel, calls)
}
