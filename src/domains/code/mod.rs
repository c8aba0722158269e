//! Code, the third domain: Python functions from their signature and docstring (HumanEval's
//! layout). The agent sees the prompt (signature and docstring); the artifact is the code the
//! executor wrote (a body completing the prompt, or whole definitions); observing it runs it in
//! the sandbox ([`crate::python`]) on the prompt's own docstring examples — never the hidden
//! tests. Channels (rules in [`crate::python::checks`] and docs/sandboxes.md): `syntax`, `examples`,
//! `runtime`, `types`. Gold scoring: the task's hidden `check(candidate)` through
//! [`crate::python::gold::check`], which a program cannot fool by exiting early, by an object
//! equal to anything, or by patching the test's names.

pub mod data;
pub mod evaluate;
pub mod extract;
mod kind;
pub mod sources;
pub mod tables;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::columns::{Column, Getter};
use crate::error::{Invalid, Result};
use crate::python::checks::CodeChannels;
use crate::python::{PyLimits, Python};
use crate::seam::records::Episode;
use crate::seam::{Channels, Domain, Fired, Judge, Observation};

pub use self::tables::{CodeGold, CodeTask};

/// The code domain's options (the memory loop's `domain: {kind: code, ...}`, the evaluate
/// stage's `code:`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeConfig {
    /// Channels whose firing flags an episode (default: all four).
    #[serde(default = "all_channels")]
    pub channels: Vec<String>,
    /// WebAssembly instructions one sandbox run may execute (the interpreter's start costs about
    /// 0.25 G): the limit that ends infinite loops, the same on any machine and under any load.
    #[serde(default = "default_fuel")]
    pub fuel: u64,
    /// Memory one sandbox run may use, MiB.
    #[serde(default = "default_memory")]
    pub memory_mib: usize,
}

fn all_channels() -> Vec<String> {
    CodeDomain::CHANNELS.iter().map(|c| c.to_string()).collect()
}
fn default_fuel() -> u64 {
    PyLimits::default().fuel
}
fn default_memory() -> usize {
    PyLimits::default().memory_bytes >> 20
}

impl Default for CodeConfig {
    fn default() -> Self {
        CodeConfig { channels: all_channels(), fuel: default_fuel(), memory_mib: default_memory() }
    }
}

impl CodeConfig {
    /// Its options checked: channel names, limits above the interpreter's start.
    pub fn check(&self) -> std::result::Result<(), Invalid> {
        crate::seam::check_channels::<CodeDomain>(&self.channels, "domain.channels")?;
        if self.fuel < 1_000_000_000 {
            return Err(Invalid::from(
                "domain.fuel must be at least 1000000000 (starting the interpreter takes 0.25 G)",
            ));
        }
        if self.memory_mib < 64 {
            return Err(Invalid::from("domain.memory_mib must be at least 64"));
        }
        Ok(())
    }

    /// The sandbox limits of one run.
    pub fn limits(&self) -> PyLimits {
        PyLimits { fuel: self.fuel, memory_bytes: self.memory_mib << 20, ..PyLimits::default() }
    }
}

/// The code domain, with its interpreter loaded.
pub struct CodeDomain {
    config: CodeConfig,
    py: Arc<Python>,
}

impl CodeDomain {
    /// The domain with `config`, the interpreter from the fetched packages under `cache_dir`.
    pub fn load(config: CodeConfig, cache_dir: &Path) -> Result<CodeDomain> {
        config.check().map_err(crate::error::Error::usage)?;
        let py = crate::python::package::interpreter(cache_dir)?;
        Ok(CodeDomain { config, py: Arc::new(py) })
    }

    /// The interpreter.
    pub fn python(&self) -> &Python {
        &self.py
    }

    /// One run's limits.
    pub fn limits(&self) -> PyLimits {
        self.config.limits()
    }
}

/// What running the code on the prompt's examples recorded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CodeObs {
    /// The channels' run.
    pub checks: CodeChannels,
    /// Whether the code was run (false: no code was produced).
    pub ran: bool,
}

type E = Getter<Episode<CodeObs>>;

/// The word the grader sees.
fn status(c: &CodeChannels) -> &'static str {
    if c.syntax {
        "syntax_error"
    } else if c.limit.is_some() {
        "limit"
    } else if c.runtime {
        "error"
    } else {
        "ok"
    }
}

/// What the grader sees: each example as it ran, or what stopped the code (capped).
fn preview(c: &CodeChannels) -> String {
    let ran: Vec<String> = c.ran.iter().take(8).map(|(src, got)| format!(">>> {src}\n{got}")).collect();
    let text = if c.syntax || ran.is_empty() {
        if c.why.is_empty() { "the code loads; the docstring shows no example to run".into() } else { c.detail() }
    } else {
        ran.join("\n")
    };
    text.chars().take(1200).collect()
}

impl Domain for CodeDomain {
    type Task = CodeTask;
    type Worker = ();
    type Obs = CodeObs;

    const NAME: &'static str = "code";
    const GROUP: &'static str = "suite";
    const GROUP_DOC: &'static str = "The task's suite: its task_id before the first '/' (HumanEval), else 'tasks'.";
    const ARTIFACT: &'static str = "code";
    const PROMPTS: &'static str = "pipelines/prompts-code";
    const ARTIFACT_DOC: &'static str = "The code the executor wrote (docs/domains.md's rule): the first fenced block of its text, else the whole text; whole definitions start with a newline, a body is indented to complete the prompt. The program run is the prompt followed by this. Null when the text holds no code or the executor call failed.";
    const CHANNELS: &'static [&'static str] = &["syntax", "examples", "runtime", "types"];
    const PLANNER_OPTIONAL: bool = true;

    fn tasks(&self, batch: &RecordBatch, path: &Path) -> Result<Vec<CodeTask>> {
        tables::tasks_from_batch(batch, path)
    }
    fn id(task: &CodeTask) -> i64 {
        task.question_id
    }
    fn question(task: &CodeTask) -> &str {
        &task.question
    }
    fn group(task: &CodeTask) -> &str {
        &task.suite
    }
    fn worker(&self) {}

    fn context(&self, _: &mut (), task: &CodeTask) -> Result<Vec<(&'static str, String)>> {
        Ok(vec![("entry_point", task.entry_point.clone())])
    }

    fn extract(&self, text: &str) -> std::result::Result<String, Invalid> {
        extract::code(text).ok_or_else(|| "no code in the executor's text".into())
    }

    fn unobserved(&self, _why: &str) -> CodeObs {
        CodeObs::default()
    }

    fn observe(&self, _: &mut (), task: &CodeTask, code: &str) -> Result<Observation<CodeObs>> {
        let checks = crate::python::checks::channels(&self.py, &task.question, code, &task.entry_point, &self.limits());
        let (status, result) = (status(&checks).to_string(), preview(&checks));
        Ok(Observation { obs: CodeObs { checks, ran: true }, status, result })
    }

    fn channels(&self, _task: &CodeTask, code: Option<&str>, obs: &CodeObs) -> Channels {
        let c = &obs.checks;
        // No code: the syntax channel fires (nothing that compiles was written).
        let none = code.is_none() || !obs.ran;
        let detail = |fired: bool, name: &str| {
            let said: Vec<&str> = c.why.iter().filter(|(n, _)| *n == name).map(|(_, d)| d.as_str()).collect();
            (fired && !said.is_empty()).then(|| said.join("; "))
        };
        let syntax = none || c.syntax;
        let examples = !none && c.examples == Some(true);
        let runtime = !none && c.runtime;
        let types = !none && c.types == Some(true);
        Channels(vec![
            Fired {
                name: "syntax",
                fired: syntax,
                detail: if none { Some("no code".into()) } else { detail(syntax, "syntax") },
            },
            Fired { name: "examples", fired: examples, detail: detail(examples, "examples") },
            Fired { name: "runtime", fired: runtime, detail: detail(runtime, "runtime") },
            Fired { name: "types", fired: types, detail: detail(types, "types") },
        ])
    }

    fn flag_channels(&self) -> Vec<String> {
        self.config.channels.clone()
    }

    fn observation_columns() -> Vec<Column<Episode<CodeObs>>> {
        vec![
            Column::new(
                "examples_run",
                E::U64(|e| e.obs.checks.n_examples as u64),
                "The docstring's `>>>` examples found in the prompt (0: the examples channel is silent).",
            ),
            Column::new(
                "examples_pass",
                E::OptBool(|e| e.obs.checks.examples.map(|w| !w)),
                "Every docstring example printed what the docstring shows; null when there is none or the code did not load.",
            ),
            Column::new(
                "limit",
                E::OptStr(|e| e.obs.checks.limit),
                "The sandbox limit that ended the channels' run (fuel, memory, stack, output, wall-clock); null when none did.",
            ),
            Column::new(
                "check_detail",
                E::OptText(|e| (!e.obs.checks.why.is_empty()).then(|| e.obs.checks.detail())),
                "What the channels' run found, in a line; null when nothing fired.",
            ),
        ]
    }
    /// `examples` and `types` only where the docstring shows `>>>` examples (and, for `types`,
    /// the signature annotates a return type).
    fn speaks(&self, task: &CodeTask) -> Vec<(&'static str, bool)> {
        let examples = task.question.contains(">>>");
        let annotated = task.question.lines().any(|l| l.trim_start().starts_with("def ") && l.contains("->"));
        vec![("syntax", true), ("examples", examples), ("runtime", true), ("types", examples && annotated)]
    }
}

impl Judge for CodeDomain {
    type Gold = CodeGold;

    fn gold(&self, batch: &RecordBatch, path: &Path) -> Result<HashMap<i64, CodeGold>> {
        Ok(tables::gold_from_batch(batch, path)?.into_iter().map(|g| (g.question_id, g)).collect())
    }

    fn score(&self, task: &CodeTask, gold: &CodeGold, code: Option<&str>) -> Result<u8> {
        Ok(code.is_some_and(|c| self.verdict(task, gold, c).passed).into())
    }
}

impl CodeDomain {
    /// The gold check's verdict on `code` (gold-reading code only: the evaluate stage, the oracle).
    pub fn verdict(&self, task: &CodeTask, gold: &CodeGold, code: &str) -> crate::python::gold::GoldVerdict {
        crate::python::gold::check(&self.py, &task.question, code, &gold.test, &task.entry_point, &self.limits())
    }
}
