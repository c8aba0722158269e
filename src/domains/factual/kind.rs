//! Factual QA as the pipeline knows it: its options, sources, evaluation (with the optional LLM
//! gold judge), the channels after the fact, what two answers agreeing means.

use std::collections::BTreeMap;
use std::path::Path;

use arrow::array::RecordBatch;

use super::gold_judge::{GoldJudge, JudgeConfig};
use super::{FactualConfig, FactualDomain};
use crate::domains::{BenchmarkConfig, DomainKind, Evaluate, Evidence, FlagConfig, Source};
use crate::error::{Error, Invalid, Result};
use crate::pipeline::stage::{Inputs, StageContext};
use crate::seam::{Domain, Judge};

/// The evaluate stage's `factual:` (the loop's domain options, for `gold_in_evidence`) and
/// `judge:` (an LLM gold judge), typed.
fn evaluate_options(e: &serde_json::Map<String, serde_json::Value>) -> Result<(FactualConfig, Option<JudgeConfig>)> {
    let typed = |k: &str, e: serde_json::Error| Error::usage(format!("evaluate `{k}`: {e}"));
    let factual = match e.get("factual") {
        Some(v) => serde_json::from_value(v.clone()).map_err(|x| typed("factual", x))?,
        None => FactualConfig::default(),
    };
    let judge = e.get("judge").map(|v| serde_json::from_value(v.clone()).map_err(|x| typed("judge", x))).transpose()?;
    Ok((factual, judge))
}

impl DomainKind for FactualDomain {
    type Options = FactualConfig;
    type FlagOptions = FlagConfig<FactualConfig>;
    type SourceOptions = super::sources::FactualSourceOptions;
    const DOC: &'static str = "factual QA, closed book: the answer looked up in an evidence corpus";
    const SCHEMAS: &'static str = "factual";
    const SOURCES: &'static [Source] = super::sources::SOURCES;
    const PACKAGES: &'static [crate::datasets::wheels::DataPackage] = &[super::data::wheels::PACKAGE];
    const VARIABLES: &'static [&'static str] = &["topic", "answer_type"];
    const EVALUATE_OPTIONS: &'static [&'static str] = &["factual", "judge"];
    const EVIDENCE: bool = true;

    fn check(o: &FactualConfig) -> std::result::Result<(), Invalid> {
        o.check()
    }

    fn configure(options: FactualConfig, ctx: &StageContext) -> Result<FactualDomain> {
        FactualDomain::load(options, |p| ctx.resolve(p), &ctx.cache_dir)
    }

    fn fingerprint(o: &FactualConfig, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        Ok(BTreeMap::from([("evidence".to_string(), o.corpus_fingerprint(|p| ctx.resolve(p))?)]))
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

    /// A gold judge's prompt and model files; the evidence corpus.
    fn evaluate_fingerprint(
        options: &serde_json::Map<String, serde_json::Value>,
        ctx: &StageContext,
    ) -> Result<BTreeMap<String, String>> {
        use crate::fingerprint::file_fingerprint;
        let (factual, judge) = evaluate_options(options)?;
        let mut fp = BTreeMap::new();
        if let Some(j) = &judge {
            fp.insert("judge/prompt".into(), file_fingerprint(&ctx.resolve(&j.prompt))?);
            for f in j.model.resolved(|p| ctx.resolve(p)).files(&crate::model_files::models_dir(&ctx.cache_dir))? {
                let name = f.file_name().unwrap_or_default().to_string_lossy().into_owned();
                fp.insert(format!("judge/model/{name}"), file_fingerprint(&f)?);
            }
        }
        fp.insert("evidence".into(), factual.corpus_fingerprint(|p| ctx.resolve(p))?);
        Ok(fp)
    }

    fn evaluate_option(key: &str, given: &serde_json::Value) -> std::result::Result<serde_json::Value, Invalid> {
        let full = |r: std::result::Result<serde_json::Value, serde_json::Error>| r.map_err(|e| Invalid(e.to_string()));
        match key {
            "factual" => full(serde_json::from_value::<FactualConfig>(given.clone()).and_then(serde_json::to_value)),
            "judge" => full(serde_json::from_value::<JudgeConfig>(given.clone()).and_then(serde_json::to_value)),
            _ => Err(Invalid(format!("`{key}` is not an evaluate option of factual tasks"))),
        }
    }

    /// Every episode's answer scored by the normalised match (and the gold judge, when given).
    fn evaluate(e: &Evaluate<'_>, ctx: &StageContext, inputs: &Inputs) -> Result<RecordBatch> {
        let (factual, judge) = evaluate_options(e.options)?;
        let domain = FactualDomain::load(factual, |p| ctx.resolve(p), &ctx.cache_dir)?;
        let tasks = domain.tasks(inputs.get(ctx, "tasks")?, Path::new("tasks"))?;
        let gold = domain.gold(inputs.get(ctx, "gold")?, Path::new("gold"))?;
        let episodes = inputs.tables.get("episodes").ok_or_else(|| {
            Error::stage(&ctx.stage_id, "factual tasks are evaluated from the agent's `episodes` input")
        })?;
        let judge = judge.as_ref().map(|j| GoldJudge::new(j, |p| ctx.resolve(p), &ctx.cache_dir)).transpose()?;
        super::evaluate::evaluate(&domain, judge.as_ref(), &tasks, &gold, episodes, Path::new("episodes"))
    }

    fn flags(options: &FlagConfig<FactualConfig>, ctx: &StageContext, inputs: &Inputs) -> Result<RecordBatch> {
        crate::domains::flags::generic::<FactualDomain>(options, ctx, inputs)
    }

    /// The answer line, normalised (lower case, no punctuation or articles).
    fn canonical(text: &str) -> String {
        super::channels::answer_line(text).map(|a| crate::datasets::qa::normalize::normalize(&a)).unwrap_or_default()
    }

    fn evidence(options: FactualConfig, ctx: &StageContext) -> Result<Option<Box<dyn Evidence>>> {
        Ok(Some(Box::new(FactualDomain::load(options, |p| ctx.resolve(p), &ctx.cache_dir)?)))
    }

    fn tables() -> Vec<serde_json::Value> {
        vec![
            crate::seam::tables::episodes_table::<Self>().doc_json(),
            crate::datasets::qa::tables::tasks_table().doc_json(),
            crate::datasets::qa::tables::gold_table().doc_json(),
            super::evaluate::evaluation_table().doc_json(),
            crate::domains::flags::table().doc_json(),
        ]
    }
}

/// The corpus by the task's topic (its `topic` column).
impl Evidence for FactualDomain {
    fn passages(&self, question: &str, fields: &[(String, String)]) -> Option<Vec<usize>> {
        let topic = crate::domains::field(fields, "topic");
        FactualDomain::passages(self, question, topic)
    }
    fn ids(&self, hits: &[usize]) -> Vec<String> {
        FactualDomain::ids(self, hits)
    }
    fn texts(&self, hits: &[usize]) -> Vec<String> {
        FactualDomain::texts(self, hits)
    }
    fn supports(&self, question: &str, hits: &[usize], answer: &str) -> bool {
        FactualDomain::supports(self, question, hits, answer)
    }
}
