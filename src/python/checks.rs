//! The answer-free channels of a Python function, computed in the sandbox from what the agent
//! sees (the prompt's signature and docstring) and its own code — never the hidden tests:
//!
//! - `syntax`: prompt + completion does not parse or compile;
//! - `examples`: one of the docstring's `>>>` examples gives other output than the docstring
//!   shows (doctest's comparison, ELLIPSIS and NORMALIZE_WHITESPACE, then equal Python literals:
//!   `'21'` shown as `"21"`; `f(x) == y` with no output line wants `True`); silent where the
//!   prompt has none (75 of HumanEval's 164 prompts have readable ones; examples in prose are not
//!   read);
//! - `runtime`: the code raises when loaded or on an example, or the run ends before the driver
//!   reports (an exit, a crash, a sandbox limit);
//! - `types`: an example call's result is not of the type the prompt's signature annotates (the
//!   outer type and one level of element types: `-> List[int]` answered with `None`, a string or
//!   `["1"]`; `float` takes an int); silent where the prompt annotates no return type or has no
//!   example call.
//!
//! One sandbox run of a trusted driver (`checks/channels.py`, after `checks/prompt.py`, which
//! reads the prompt's examples for it and for the behaviour driver). The candidate runs in the same
//! interpreter, so a program written to forge the driver's report could: these are signals about
//! honest mistakes, and the score that matters is [`super::gold`]'s.
//!
//! Also the pieces of the code verifiers: [`behaviour`] and [`agree`] (self-consistency by
//! behaviour: two programs agree when they give the same results on the example calls) and
//! [`selftest`] (a candidate against tests its author wrote).

use serde::Deserialize;
use serde_json::json;

use super::{PyLimits, Python};

const DRIVER: &str = include_str!("checks/channels.py");
/// Prepended to the drivers that read the prompt's examples.
const PROMPT: &str = include_str!("checks/prompt.py");

/// The channels of one candidate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodeChannels {
    /// Does not parse or compile.
    pub syntax: bool,
    /// A docstring example gives other output (None: the prompt has no `>>>` example).
    pub examples: Option<bool>,
    /// Raised on load or on an example, or the run ended early.
    pub runtime: bool,
    /// An example call's result is not of the annotated return type (None: no annotation or no
    /// example call to check).
    pub types: Option<bool>,
    /// Each example as run: its source and what it printed (or `raised ...`), in order.
    pub ran: Vec<(String, String)>,
    /// The docstring's examples.
    pub n_examples: usize,
    /// What fired, by channel (`syntax`, `examples`, `runtime`, `types`).
    pub why: Vec<(&'static str, String)>,
    /// The sandbox limit that ended the run, if one did.
    pub limit: Option<&'static str>,
}

impl CodeChannels {
    /// What fired, in a line (empty when nothing did).
    pub fn detail(&self) -> String {
        self.why.iter().map(|(_, d)| d.as_str()).collect::<Vec<_>>().join("; ")
    }
}

#[derive(Deserialize)]
struct Report {
    syntax: Option<String>,
    load: Option<String>,
    examples: usize,
    wrong: Vec<(String, String, String)>,
    raised: Vec<(String, String)>,
    ran: Vec<(String, String)>,
    typed: usize,
    mistyped: Vec<(String, String, String)>,
}

/// The channels of `completion` (completing `prompt`, defining `entry_point`).
pub fn channels(py: &Python, prompt: &str, completion: &str, entry_point: &str, limits: &PyLimits) -> CodeChannels {
    let mark = super::mark(&[prompt, completion]);
    let job = json!({"mark": mark, "prompt": prompt, "completion": completion, "entry": entry_point});
    let o = py.run_code(&format!("{PROMPT}\n{DRIVER}"), job.to_string().as_bytes(), limits);
    let report = super::marked(&o.stdout, &mark).and_then(|j| serde_json::from_str::<Report>(j).ok());
    let Some(r) = report else {
        let ended = format!("the run ended before the checks reported: {}", o.summary());
        return CodeChannels {
            runtime: true,
            why: vec![("runtime", ended)],
            limit: o.limit(),
            ..CodeChannels::default()
        };
    };
    let mut why = Vec::new();
    if let Some(s) = &r.syntax {
        why.push(("syntax", format!("syntax: {s}")));
    }
    if let Some(l) = &r.load {
        why.push(("runtime", format!("raised on load: {l}")));
    }
    if let Some((src, want, got)) = r.wrong.first() {
        why.push(("examples", format!("example {src} gave {got:?}, the docstring shows {want:?}")));
    }
    if let Some((src, exc)) = r.raised.first() {
        why.push(("runtime", format!("example {src} raised {exc}")));
    }
    if let Some((src, ty, ann)) = r.mistyped.first() {
        why.push(("types", format!("example {src} returned a {ty}, the signature says {ann}")));
    }
    let ran = r.syntax.is_none() && r.load.is_none();
    CodeChannels {
        syntax: r.syntax.is_some(),
        examples: (r.examples > 0 && ran).then_some(!r.wrong.is_empty()),
        runtime: r.load.is_some() || !r.raised.is_empty(),
        types: (r.typed > 0).then_some(!r.mistyped.is_empty()),
        ran: r.ran,
        n_examples: r.examples,
        why,
        limit: None,
    }
}

const BEHAVIOUR: &str = include_str!("checks/behaviour.py");
const SELFTEST: &str = include_str!("checks/selftest.py");

/// What a candidate does on the calls of the prompt's docstring examples (their inputs only):
/// per call, `value <repr>` of a plain result, `unplain <type>`, or `raised <exception>`. None
/// when the prompt has no example call, or the run ended before reporting.
pub fn behaviour(
    py: &Python,
    prompt: &str,
    completion: &str,
    entry_point: &str,
    limits: &PyLimits,
) -> Option<Vec<String>> {
    let mark = super::mark(&["behaviour", prompt, completion]);
    let job = json!({"mark": mark, "prompt": prompt, "completion": completion, "entry": entry_point});
    let o = py.run_code(&format!("{PROMPT}\n{BEHAVIOUR}"), job.to_string().as_bytes(), limits);
    let line = super::marked(&o.stdout, &mark)?;
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    let results: Vec<String> = serde_json::from_value(v["results"].clone()).ok()?;
    (v["loaded"] == true && !results.is_empty()).then_some(results)
}

/// Whether two candidates behave alike: the same result (or the same exception) on every call of
/// the prompt's examples — self-consistency by behaviour, which two differently written programs
/// can share. None when either has no behaviour to compare (no example call, did not load).
pub fn agree(py: &Python, prompt: &str, a: &str, b: &str, entry_point: &str, limits: &PyLimits) -> Option<bool> {
    Some(behaviour(py, prompt, a, entry_point, limits)? == behaviour(py, prompt, b, entry_point, limits)?)
}

/// Whether `completion` passes tests its author wrote (`tests`: Python statements, asserts calling
/// the entry point at module level — the `selftest` verifier's run). The tests are compiled on
/// their own first: tests that do not parse (a last line cut off by the token budget is dropped
/// once) are no test, and None comes back, as it does when the run hits the wall-clock backstop
/// (an infrastructure failure, no verdict). Otherwise they run after the candidate in one sandbox
/// run: passed when the run reaches their end; the run's summary when not.
pub fn selftest(py: &Python, prompt: &str, completion: &str, tests: &str, limits: &PyLimits) -> Option<(bool, String)> {
    let mark = super::mark(&["selftest", prompt, completion, tests]);
    let job = json!({"mark": mark, "prompt": prompt, "completion": completion, "tests": tests});
    let o = py.run_code(SELFTEST, job.to_string().as_bytes(), limits);
    if o.limit() == Some("wall-clock") || o.stdout.lines().any(|l| l == format!("{mark} unparsable")) {
        return None;
    }
    let passed = o.success() && o.stdout.lines().any(|l| l == mark);
    Some((passed, if passed { String::new() } else { o.summary() }))
}
