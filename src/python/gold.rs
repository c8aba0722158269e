//! A function scored against hidden tests (`check(candidate)` of asserts, HumanEval's layout)
//! so that the function cannot fool the score. Running the candidate and the asserts in one
//! interpreter cannot be made sound: the candidate can exit with success before the asserts run,
//! return an object equal to anything, patch builtins or the test's names, read the expected
//! values out of the test's frames or code, or print a forged success line (nothing is secret
//! inside one process). So no process that runs candidate code holds an expected value, and the
//! verdict is made where no candidate code ever runs:
//!
//! 1. **strip** (trusted, no candidate): the test with each `assert` replaced by the candidate
//!    calls it makes, in order;
//! 2. **calls** (trusted, no candidate): the stripped test runs against a stand-in that writes
//!    down each call's arguments as plain data (`calls.py`); the first listing (no answers yet)
//!    is the same for every candidate of a problem and kept with the stripped test;
//! 3. **run** (untrusted): a fresh interpreter loads the candidate and calls it with those
//!    arguments, and nothing else — no test, no frame of it, no expected value exists there
//!    (`run.py`). Each call's result is copied as HumanEval's harness would compare it (a
//!    subclass of a built-in value as its base's content, a `Fraction` or `Decimal` as itself, an
//!    iterator consumed) or refused by what it is (an object with an `__eq__` of its own), or
//!    its exception is named by its nearest built-in class, and written apart from anything the
//!    candidate prints;
//! 4. when the test's later arguments may depend on earlier results (it keeps a result, or a
//!    call raised), steps 2–3 repeat, the calls run getting the recorded answers, until every
//!    call the test makes has an answer ([`MAX_ROUNDS`] at most). A test that only calls the
//!    candidate in statements of their own (most of HumanEval's, once stripped) needs one round
//!    when no call raised;
//! 5. **replay** (trusted, no candidate): the real test's `check` runs against a stand-in that
//!    demands the recorded arguments (type-strict) and answers the recorded results. The verdict
//!    is this run's, and nothing else's.
//!
//! The worst the candidate can do is claim "f(args) = value", which must then pass the real
//! asserts. Every run is in [`super::Python`]'s sandbox under the same limits; a run stopped by a
//! limit fails the check with that limit named — except the wall-clock backstop, a fault of the
//! machine, never of the code: such a check is retried ([`WALL_CLOCK_TRIES`] in all) and then
//! left *unscored*. The limit is named by the host only, and every run of a check (all rounds
//! and the replay) draws on one fuel budget. The test's random stream is seeded in the trusted
//! runs only, from a secret (`test_seed`). Left open: in-place changes to arguments are not
//! replayed, and the candidate's state is fresh in each round (it keeps state across the calls
//! of one round, in the test's order).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use serde_json::{Value, json};

use super::{PyLimits, Python};
use crate::error::Invalid;

const COMMON: &str = include_str!("gold/common.py");
const STRIP: &str = include_str!("gold/strip.py");
const CALLS: &str = include_str!("gold/calls.py");
const RUN: &str = include_str!("gold/run.py");
const REPLAY: &str = include_str!("gold/replay.py");

/// The verdict on one candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoldVerdict {
    /// The real asserts passed on the candidate's recorded calls.
    pub passed: bool,
    /// Why not (what the candidate did, or the assert that failed), "" when passed.
    pub why: String,
    /// The sandbox limit that stopped a run (`fuel`, `memory`, `stack`, `wall-clock`), if one did.
    pub limit: Option<&'static str>,
    /// Fuel of the calls, candidate and replay runs.
    pub fuel: u64,
    /// Candidate calls recorded.
    pub calls: usize,
    /// No verdict: the machine failed the check (the wall-clock backstop, every try), not the code.
    pub unscored: bool,
}

impl GoldVerdict {
    fn fail(why: impl Into<String>, limit: Option<&'static str>, fuel: u64, calls: usize) -> GoldVerdict {
        GoldVerdict { passed: false, why: why.into(), limit, fuel, calls, unscored: false }
    }
}

/// Rounds of calls and candidate runs at most (each round answers at least one more call).
pub const MAX_ROUNDS: usize = 8;
/// Tries of a check whose runs hit the wall-clock backstop before it is left unscored.
pub const WALL_CLOCK_TRIES: usize = 3;
/// Bytes of call records a candidate run may write.
const RECORDS_CAP: usize = 64 << 20;

/// One recorded call: its arguments (`repr`), its result (`repr`) or the exception's name.
type Record = (String, Option<String>, Option<String>);

/// A run stopped by the wall-clock backstop: the check is retried, never scored on it.
struct WallClock;

/// The seed of the test's random stream (`random.seed` before `check`) in the trusted runs: a
/// secret of this lucid process and the problem, never given to the candidate's process (whose
/// own stream starts from WASI's fixed one), so a candidate cannot draw the test's inputs. The
/// same problem gets the same seed within a process (its first listing is shared by every
/// candidate, and a check repeats exactly); another process draws other inputs.
fn test_seed(prompt: &str, test: &str, entry: &str) -> u64 {
    static KEY: LazyLock<[u8; 32]> = LazyLock::new(rand::random);
    let h = blake3::keyed_hash(&KEY, [entry, prompt, test].join("\u{0}").as_bytes());
    u64::from_le_bytes(h.as_bytes()[..8].try_into().expect("8 bytes"))
}

/// A test with its asserts stripped, and whether the candidate's results are out of its reach.
#[derive(Clone)]
struct Stripped {
    test: String,
    bare: bool,
    /// The calls of the first listing (no answers yet: the same for every candidate), if it ran.
    first: Option<Vec<String>>,
}

/// Stripped tests by their text (the strip run is the same for every candidate of a problem).
static STRIPPED: LazyLock<Mutex<HashMap<String, std::result::Result<Stripped, Invalid>>>> =
    LazyLock::new(Default::default);

fn stripped(
    py: &Python,
    prompt: &str,
    test: &str,
    entry: &str,
    limits: &PyLimits,
) -> std::result::Result<std::result::Result<Stripped, Invalid>, WallClock> {
    let key = format!("{entry}\n{prompt}\n{test}");
    let seed = test_seed(prompt, test, entry);
    if let Some(hit) = STRIPPED.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return Ok(hit);
    }
    let job = json!({"test": test, "entry": entry}).to_string();
    let o = py.run_code(STRIP, job.as_bytes(), limits);
    // A fault of the machine is neither kept nor a verdict: the check retries it.
    if o.ended == super::Ended::WallClock {
        return Err(WallClock);
    }
    let parsed = serde_json::from_str::<Value>(o.stdout.trim()).ok().and_then(|v| {
        Some(Stripped { test: v["test"].as_str()?.to_string(), bare: v["bare"].as_bool()?, first: None })
    });
    let out = match parsed {
        Some(mut s) if o.success() => {
            let listed = list_calls(py, prompt, &s.test, entry, seed, &[], limits);
            s.first = listed_calls(&listed.stdout).filter(|_| listed.success()).map(|(calls, _)| calls);
            Ok(s)
        }
        _ => Err(Invalid(format!("the test cannot be stripped: {}", o.summary()))),
    };
    if let Ok(mut m) = STRIPPED.lock() {
        m.insert(key, out.clone());
    }
    Ok(out)
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
    for _ in 0..WALL_CLOCK_TRIES {
        let stripped = match stripped(py, prompt, test, entry_point, limits) {
            Ok(Ok(s)) => s,
            Ok(Err(why)) => return GoldVerdict::fail(why.0, None, 0, 0),
            Err(WallClock) => continue,
        };
        if let Ok(v) = attempt(py, prompt, completion, test, &stripped, entry_point, limits) {
            return v;
        }
    }
    GoldVerdict {
        passed: false,
        why: format!(
            "a run hit the wall-clock backstop ({} s) in each of {WALL_CLOCK_TRIES} tries: an infrastructure failure, no verdict",
            limits.wall_secs
        ),
        limit: Some("wall-clock"),
        fuel: 0,
        calls: 0,
        unscored: true,
    }
}

/// One try of the check.
fn attempt(
    py: &Python,
    prompt: &str,
    completion: &str,
    test: &str,
    stripped: &Stripped,
    entry: &str,
    limits: &PyLimits,
) -> std::result::Result<GoldVerdict, WallClock> {
    let mut known: Vec<Record> = Vec::new();
    let mut fuel = 0u64;
    let seed = test_seed(prompt, test, entry);
    // One fuel budget for the whole check, every round and the replay together.
    let left = |fuel: u64| PyLimits { fuel: limits.fuel.saturating_sub(fuel), ..limits.clone() };
    for round in 0.. {
        let (calls, answered) = match (&stripped.first, round) {
            (Some(first), 0) => (first.clone(), 0),
            _ => {
                let listed = list_calls(py, prompt, &stripped.test, entry, seed, &known, &left(fuel));
                fuel += listed.fuel;
                if listed.ended == super::Ended::WallClock {
                    return Err(WallClock);
                }
                match listed_calls(&listed.stdout) {
                    Some(l) => l,
                    None => {
                        let why = format!("the test's calls could not be listed: {}", listed.summary());
                        return Ok(GoldVerdict::fail(why, listed.limit(), fuel, known.len()));
                    }
                }
            }
        };
        if answered == calls.len() && calls.len() == known.len() {
            break;
        }
        if round == MAX_ROUNDS {
            let why = format!("the test's calls still depended on the code's results after {MAX_ROUNDS} rounds");
            return Ok(GoldVerdict::fail(why, None, fuel, known.len()));
        }
        // A fresh nonce per run frames the records apart from the candidate's prints (a
        // candidate that finds it still cannot pass a record off as the driver's: see `records`).
        let tag = format!("\u{1}{:032x}", rand::random::<u128>());
        let job = json!({"prompt": prompt, "completion": completion, "entry": entry, "calls": calls, "tag": tag});
        let run = py.run_with_records(
            &["python", "-S", "-c", &format!("{COMMON}\n{RUN}")],
            job.to_string().as_bytes(),
            &left(fuel),
            Some((&tag, RECORDS_CAP)),
        );
        fuel += run.fuel;
        if run.ended == super::Ended::WallClock {
            return Err(WallClock);
        }
        let (answers, ended) = match records(&run.records, &tag, calls.len()) {
            Ok(r) => r,
            Err(why) => return Ok(GoldVerdict::fail(why.0, None, fuel, 0)),
        };
        // A limit is named only by the host: `memory` when wasmtime refused the guest memory and
        // then a call raised (never read from an exception's name or text).
        let raised = answers.iter().any(|a| matches!(a, Reply::Raised(_)));
        let memory = run.memory_refused && raised;
        if let Some(limit) = run.limit().or(memory.then_some("memory")) {
            let why = format!("the candidate's run hit the {limit} limit ({})", run.ending());
            return Ok(GoldVerdict::fail(why, Some(limit), fuel, answers.len()));
        }
        if let Some((i, what)) = answers.iter().enumerate().find_map(|(i, a)| match a {
            Reply::Refused(what) => Some((i, what)),
            _ => None,
        }) {
            let why = format!(
                "call {} of the candidate returned a value lucid does not copy: {what} (results must be values: built-in ones or their subclasses, Fractions, Decimals, iterators)",
                i + 1
            );
            return Ok(GoldVerdict::fail(why, None, fuel, answers.len()));
        }
        if ended && run.proc_exit {
            let why = format!("the candidate's run wrote its records and then exited ({})", run.ending());
            return Ok(GoldVerdict::fail(why, None, fuel, answers.len()));
        }
        if !ended {
            let mut why = format!(
                "the candidate's run ended after {} of {} calls ({})",
                answers.len(),
                calls.len(),
                run.ending()
            );
            if let Some(tail) = run.stderr_tail() {
                why.push_str(&format!(" — its stderr ended {tail}"));
            }
            return Ok(GoldVerdict::fail(why, None, fuel, answers.len()));
        }
        known = calls
            .into_iter()
            .zip(answers)
            .map(|(args, a)| match a {
                Reply::Value(v) => (args, Some(v), None),
                Reply::Raised(e) | Reply::Refused(e) => (args, None, Some(e)),
            })
            .collect();
        // Results the test never looks at and no exception: the placeholders took the path the
        // answers take, so the list is final.
        if stripped.bare && !raised {
            break;
        }
    }
    let job = json!({"prompt": prompt, "test": test, "entry": entry, "seed": seed, "records": known});
    replay(py, &job, known.len(), fuel, &left(fuel))
}

/// The replay (step 5): the real test's `check` against the recorded arguments and answers
/// `known`, its verdict the check's; `fuel` is what the earlier runs burned;
/// `job` holds the prompt, test, entry point, seed and the `calls` records.
fn replay(
    py: &Python,
    job: &Value,
    calls: usize,
    mut fuel: u64,
    limits: &PyLimits,
) -> std::result::Result<GoldVerdict, WallClock> {
    let rep = py.run_code(&format!("{COMMON}\n{REPLAY}"), job.to_string().as_bytes(), limits);
    fuel += rep.fuel;
    if rep.ended == super::Ended::WallClock {
        return Err(WallClock);
    }
    if rep.success() && rep.stdout.trim() == "PASS" {
        return Ok(GoldVerdict { passed: true, why: String::new(), limit: None, fuel, calls, unscored: false });
    }
    let why = match rep.limit() {
        Some(l) => format!("the replay hit the {l} limit"),
        None if rep.success() => format!("the replay made fewer calls than recorded ({})", rep.stdout.trim()),
        None => rep.summary(),
    };
    Ok(GoldVerdict::fail(why, rep.limit(), fuel, calls))
}

/// The calls run (`calls.py`) over the stripped test, with the answers `known` so far.
fn list_calls(
    py: &Python,
    prompt: &str,
    stripped: &str,
    entry: &str,
    seed: u64,
    known: &[Record],
    limits: &PyLimits,
) -> super::PyOutcome {
    let job = json!({"prompt": prompt, "test": stripped, "entry": entry, "seed": seed, "known": known});
    py.run_code(&format!("{COMMON}\n{CALLS}"), job.to_string().as_bytes(), limits)
}

/// The calls run's list: every call's arguments, and how many leading calls had answers.
fn listed_calls(stdout: &str) -> Option<(Vec<String>, usize)> {
    let line = stdout.lines().rev().find_map(|l| l.strip_prefix("CALLS "))?;
    let v: Value = serde_json::from_str(line).ok()?;
    let calls = v["calls"].as_array()?.iter().map(|c| c.as_str().map(str::to_string)).collect::<Option<Vec<_>>>()?;
    Some((calls, v["answered"].as_u64()? as usize))
}

/// What one call of the candidate gave, as its record says.
enum Reply {
    /// Its result, as `run.py` wrote it (read back by `common.py`'s `_lit`).
    Value(String),
    /// The name of the exception it raised.
    Raised(String),
    /// A result lucid does not copy, described by lucid's driver (the type's name quoted).
    Refused(String),
}

/// The candidate run's replies to its `n` calls, and whether its `END` came. The driver writes
/// exactly `R 0`, `R 1`, ... `END`, one write each, and no candidate code runs between a call's
/// return and its record: a record the candidate wrote (with a nonce it found in memory) is a
/// second record of its call, one out of order, or one after `END`, and fails the check, as does
/// a run that exits after its records (`attempt`). So no record is ever taken for the driver's
/// that the driver did not write.
fn records(text: &str, tag: &str, n: usize) -> std::result::Result<(Vec<Reply>, bool), Invalid> {
    let forged = |what: &str| {
        Err(Invalid(format!("the candidate's run wrote a record of its own ({what}): no verdict is taken from it")))
    };
    let mut out = Vec::new();
    let mut ended = false;
    for line in text.lines() {
        let Some(line) = line.strip_prefix(tag) else { return forged("a record line without the run's nonce") };
        if ended {
            return forged("a record after the last");
        }
        if line == " END" && out.len() == n {
            ended = true;
            continue;
        }
        let parsed = line.strip_prefix(" R ").and_then(|r| {
            let (i, rest) = r.split_once(' ')?;
            let (kind, payload) = rest.split_once(' ')?;
            let reply = match kind {
                "v" => Reply::Value(payload.to_string()),
                "e" => Reply::Raised(payload.to_string()),
                "x" => Reply::Refused(payload.to_string()),
                _ => return None,
            };
            Some((i.parse::<usize>().ok()?, reply))
        });
        match parsed {
            Some((i, reply)) if i == out.len() && i < n => out.push(reply),
            _ => return forged("a record out of the driver's order"),
        }
    }
    Ok((out, ended))
}
