//! Calls run against BFCL's multi-turn environments inside lucid's Python sandbox: BFCL's own
//! sources (its executor `execute_multi_turn_func_call` and the environment classes) and mpmath's,
//! read from the pinned wheels and served to the interpreter from the job (the sandbox has no file
//! system), driven by `driver.py`. One run replays a task from its initial configuration through
//! every step given (the environments are deterministic there: seeded `random`, a virtual clock,
//! hash seed 0), so a run's results and states repeat exactly. The run holds no ground truth:
//! only the initial configuration and the calls to make. The driver runs a call only when it is
//! one call of a tool of the task with literal arguments (any other text is refused with an error
//! result, see `driver.py`), so no call can rewrite the driver's report; [`parse`] refuses records
//! out of the driver's order all the same.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use super::data::MultiTurnTask;
use crate::error::{Error, Invalid, Result};
use crate::python::{PyLimits, PyOutcome, Python};

/// The driver the sandbox runs (and `data/multiturn.py` runs natively).
pub const DRIVER: &str = include_str!("driver.py");

/// BFCL's executor, its multi-turn checker and the environments of the multi-turn categories,
/// under `bfcl_eval/`.
const MODULES: &[&str] = &[
    "constants/executable_backend_config",
    "eval_checker/multi_turn_eval/multi_turn_utils",
    "eval_checker/multi_turn_eval/multi_turn_checker",
    "eval_checker/multi_turn_eval/func_source_code/long_context",
    "eval_checker/multi_turn_eval/func_source_code/gorilla_file_system",
    "eval_checker/multi_turn_eval/func_source_code/math_api",
    "eval_checker/multi_turn_eval/func_source_code/message_api",
    "eval_checker/multi_turn_eval/func_source_code/posting_api",
    "eval_checker/multi_turn_eval/func_source_code/ticket_api",
    "eval_checker/multi_turn_eval/func_source_code/trading_bot",
    "eval_checker/multi_turn_eval/func_source_code/travel_booking",
    "eval_checker/multi_turn_eval/func_source_code/vehicle_control",
];

/// The packages above them (empty `__init__`s in the wheel).
const PACKAGES: &[&str] = &[
    "bfcl_eval",
    "bfcl_eval.constants",
    "bfcl_eval.eval_checker",
    "bfcl_eval.eval_checker.multi_turn_eval",
    "bfcl_eval.eval_checker.multi_turn_eval.func_source_code",
];

/// The stdout records a run may write (states of long-context environments reach tens of KB per
/// step).
const RECORDS_CAP: usize = 64 << 20;

/// The environment class that imports mpmath.
const NEEDS_MPMATH: &str = "MathAPI";

/// The Python sources a run is served: BFCL's, and mpmath's for the math environment.
pub struct Sources {
    bfcl: BTreeMap<String, String>,
    mpmath: BTreeMap<String, String>,
    mpmath_packages: Vec<String>,
}

impl Sources {
    /// Read BFCL's modules from its unpacked wheel `bfcl_dir` (the folder holding `bfcl_eval/`)
    /// and mpmath's from `mpmath_dir` (the folder holding `mpmath/`, its tests left out).
    pub fn read(bfcl_dir: &Path, mpmath_dir: &Path) -> Result<Sources> {
        let mut bfcl = BTreeMap::new();
        for m in MODULES {
            let path = bfcl_dir.join("bfcl_eval").join(format!("{m}.py"));
            let text = std::fs::read_to_string(&path).map_err(|source| Error::Read { path, source })?;
            bfcl.insert(format!("bfcl_eval.{}", m.replace('/', ".")), text);
        }
        let (mut mpmath, mut mpmath_packages) = (BTreeMap::new(), Vec::new());
        walk(&mpmath_dir.join("mpmath"), "mpmath", &mut mpmath, &mut mpmath_packages)?;
        Ok(Sources { bfcl, mpmath, mpmath_packages })
    }
}

/// The modules and packages the driver is served for environments `classes` (none: it imports
/// from its `sys.path`).
fn served<'a>(sources: Option<&'a Sources>, classes: &[String]) -> (BTreeMap<&'a str, &'a str>, Vec<String>) {
    let (mut modules, mut packages) = (BTreeMap::new(), Vec::new());
    if let Some(s) = sources {
        modules.extend(s.bfcl.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        packages.extend(PACKAGES.iter().map(|p| p.to_string()));
        if classes.iter().any(|c| c == NEEDS_MPMATH) {
            modules.extend(s.mpmath.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            packages.extend(s.mpmath_packages.iter().cloned());
        }
    }
    (modules, packages)
}

/// Every `.py` under `dir` (package `dotted`) into `modules`, each package's name into `packages`.
fn walk(dir: &Path, dotted: &str, modules: &mut BTreeMap<String, String>, packages: &mut Vec<String>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Read { path: dir.into(), source })?;
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    packages.push(dotted.to_string());
    for path in paths {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if path.is_dir() && name != "tests" && path.join("__init__.py").is_file() {
            walk(&path, &format!("{dotted}.{name}"), modules, packages)?;
        } else if let Some(stem) = name.strip_suffix(".py") {
            let text = std::fs::read_to_string(&path).map_err(|source| Error::Read { path: path.clone(), source })?;
            let module = if stem == "__init__" { dotted.to_string() } else { format!("{dotted}.{stem}") };
            modules.insert(module, text);
        }
    }
    Ok(())
}

/// One run's input: a task's environments and the steps to make, each a list of calls (BFCL's
/// execution strings, `cd(folder='document')`) made in one call of BFCL's executor.
pub struct Job<'a> {
    /// BFCL's test id (it names the environments' instances).
    pub test_id: &'a str,
    /// The environments' starting state by class.
    pub initial_config: &'a Value,
    /// The environment classes.
    pub involved_classes: &'a [String],
    /// Whether the environments load their long context.
    pub long_context: bool,
    /// The steps, in order.
    pub steps: &'a [Vec<String>],
    /// Run each step a second time from the state before it and report whether it repeats.
    pub repeat: bool,
}

impl<'a> Job<'a> {
    /// A task's ground truth, one step per turn.
    pub fn ground_truth(task: &'a MultiTurnTask) -> Job<'a> {
        Job {
            test_id: &task.id,
            initial_config: &task.initial_config,
            involved_classes: &task.involved_classes,
            long_context: task.long_context(),
            steps: &task.ground_truth,
            repeat: false,
        }
    }

    /// The driver's standard input, with the sources it imports and the records' tag. Sources
    /// None is the native reference: the driver imports from its `sys.path` and runs calls as
    /// BFCL does, without the gate.
    pub fn stdin(&self, sources: Option<&Sources>) -> Vec<u8> {
        self.input(sources, &self.tag(), json!({}))
    }

    /// [`Job::stdin`] with the records' `tag` and the fields of `more` (another mode's) added.
    pub(super) fn input(&self, sources: Option<&Sources>, tag: &str, more: Value) -> Vec<u8> {
        let (modules, packages) = served(sources, self.involved_classes);
        let mut job = json!({
            "modules": modules,
            "packages": packages,
            "gate": sources.is_some(),
            "test_id": self.test_id,
            "initial_config": self.initial_config,
            "involved_classes": self.involved_classes,
            "long_context": self.long_context,
            "steps": self.steps,
            "repeat": self.repeat,
            "tag": tag,
        });
        if let (Some(job), Value::Object(more)) = (job.as_object_mut(), more) {
            job.extend(more);
        }
        job.to_string().into_bytes()
    }

    /// The records' tag of this job (derived from it, so a run repeats exactly).
    pub fn tag(&self) -> String {
        let steps = serde_json::to_string(self.steps).unwrap_or_default();
        let repeat = if self.repeat { "repeat" } else { "" };
        format!("\u{1}{}", crate::python::mark(&[self.test_id, &self.initial_config.to_string(), &steps, repeat]))
    }
}

/// What a run reported.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Steps {
    /// The environments' state once loaded, before any call.
    pub initial: Value,
    /// Each step's results (one string per call, BFCL's: a result, or `Error during execution:
    /// ...`).
    pub results: Vec<Vec<String>>,
    /// The environments' state after each step (public attributes by class, as BFCL compares them).
    pub states: Vec<Value>,
    /// With [`Job::repeat`]: whether each step, run again from the state before it, gave the same
    /// results and state.
    pub repeats: Vec<bool>,
    /// Whether the driver reached its end (false: a limit or an error stopped it; the steps
    /// before are kept).
    pub finished: bool,
}

impl Steps {
    /// The calls whose result says they failed, as (step, call, result): BFCL's `Error during
    /// execution: ...` (the call raised: an unknown function or argument, a blocked name), or an
    /// environment's own refusal (a JSON object with an `error` key, as the file system's `cat`
    /// of a missing file returns). What the `executes` channel reads; it needs no ground truth.
    pub fn failed_calls(&self) -> Vec<(usize, usize, &str)> {
        let failed = |r: &str| {
            r.starts_with("Error during execution:")
                || serde_json::from_str::<Value>(r).is_ok_and(|v| v.get("error").is_some())
        };
        let each =
            self.results.iter().enumerate().flat_map(|(s, rs)| rs.iter().enumerate().map(move |(c, r)| (s, c, r)));
        each.filter(|(_, _, r)| failed(r)).map(|(s, c, r)| (s, c, r.as_str())).collect()
    }

    /// The steps that, run again from the state before them, gave other results or another state
    /// (what the `repeat` channel reads; it needs no ground truth).
    pub fn not_repeating(&self) -> Vec<usize> {
        self.repeats.iter().enumerate().filter(|(_, same)| !**same).map(|(i, _)| i).collect()
    }
}

/// One sandboxed run.
#[derive(Clone, Debug)]
pub struct EnvRun {
    /// What the driver reported.
    pub steps: Steps,
    /// The limit that ended the run, if one did (`fuel`, `memory`, `stack`, `output`).
    pub limit: Option<&'static str>,
    /// How the interpreter ended, and the tail of its standard error when it failed.
    pub ending: String,
    /// Fuel used.
    pub fuel: u64,
}

/// Run the driver in the sandbox on `stdin`, its records tagged `tag` kept apart.
pub(super) fn drive(py: &Python, stdin: &[u8], tag: &str, limits: &PyLimits) -> PyOutcome {
    py.run_with_records(&["python", "-S", "-c", DRIVER], stdin, limits, Some((tag, RECORDS_CAP)))
}

/// Run `job` in the sandbox with `sources`.
pub fn run(py: &Python, sources: &Sources, job: &Job, limits: &PyLimits) -> EnvRun {
    let out = drive(py, &job.stdin(Some(sources)), &job.tag(), limits);
    let (steps, ending) = match parse(&out.records, job) {
        Ok(s) if out.success() && s.finished => (s, out.ending()),
        Ok(s) => (Steps { finished: false, ..s }, out.summary()),
        Err(e) => (Steps::default(), format!("the driver's report is unreadable ({}); {}", e.0, out.summary())),
    };
    EnvRun { steps, limit: out.limit(), ending, fuel: out.fuel }
}

/// The driver's records (`<tag> T|S|R <i> <json>`, `<tag> END`) of `job` read back. They must
/// come in the driver's order — the loaded state first, then each step's results, state (and
/// repeat), then one END after the job's last step — or the report is refused as unreadable. A
/// last line cut short (the records cap) is left out, the steps before it kept.
pub fn parse(records: &str, job: &Job) -> std::result::Result<Steps, Invalid> {
    let (tag, expected) = (job.tag(), job.steps.len());
    let complete = records.rfind('\n').map_or("", |end| &records[..=end]);
    let (mut steps, mut seen) = (Steps::default(), 0usize);
    for line in complete.lines() {
        let Some(rest) = line.strip_prefix(tag.as_str()).and_then(|r| r.strip_prefix(' ')) else { continue };
        let out_of_order = || Invalid::from(format!("a record out of order: {line:.80}"));
        if steps.finished {
            return Err(out_of_order());
        }
        if rest == "END" {
            if seen == 0 || steps.states.len() != expected || (job.repeat && steps.repeats.len() != expected) {
                return Err(out_of_order());
            }
            steps.finished = true;
            continue;
        }
        let mut parts = rest.splitn(3, ' ');
        let (kind, i, body) = (parts.next(), parts.next(), parts.next().unwrap_or_default());
        let i: i64 = i.and_then(|i| i.parse().ok()).ok_or_else(|| format!("a record without a step: {line:.80}"))?;
        let value: Value = serde_json::from_str(body).map_err(|e| format!("step {i}: {e}"))?;
        let (done, stated, repeated) =
            (steps.results.len() as i64, steps.states.len() as i64, steps.repeats.len() as i64);
        let repeated_all = !job.repeat || repeated == stated;
        match kind {
            Some("T") if i == -1 && seen == 0 => steps.initial = value,
            Some("S") if seen > 0 && i == done && i == stated && repeated_all && (i as usize) < expected => {
                steps.results.push(serde_json::from_value(value).map_err(|e| format!("step {i}: results: {e}"))?)
            }
            Some("T") if seen > 0 && i == stated && i + 1 == done => steps.states.push(value),
            Some("R") if job.repeat && i == repeated && i + 1 == stated => {
                steps.repeats.push(value.as_bool().ok_or_else(|| format!("step {i}: repeat: not a boolean"))?)
            }
            _ => return Err(out_of_order()),
        }
        seen += 1;
    }
    Ok(steps)
}
