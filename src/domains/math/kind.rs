//! Math as the pipeline knows it: its options, sources, data package, evaluation (every answer
//! by value against the gold), the channels after the fact, what two answers agreeing means.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::RecordBatch;

use super::{MathConfig, MathDomain};
use crate::domains::{BenchmarkConfig, DomainKind, FlagConfig, Source, TestRunner};
use crate::error::{Error, Invalid, Result};
use crate::pipeline::stage::{Inputs, StageContext};

impl DomainKind for MathDomain {
    type Options = MathConfig;
    type FlagOptions = FlagConfig<MathConfig>;
    type SourceOptions = super::sources::MathSourceOptions;
    const DOC: &'static str = "school math with exact answers (mathematics-dataset): the answer read as a value";
    const SCHEMAS: &'static str = "math";
    const SOURCES: &'static [Source] = super::sources::SOURCES;
    const PACKAGES: &'static [crate::datasets::wheels::DataPackage] = &[super::data::PACKAGE];
    const VARIABLES: &'static [&'static str] = &["module"];

    fn check(o: &MathConfig) -> std::result::Result<(), Invalid> {
        MathDomain::new(o.clone()).map(|_| ())
    }

    fn configure(options: MathConfig, _: &StageContext) -> Result<MathDomain> {
        MathDomain::new(options).map_err(Error::usage)
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

    fn flags(options: &FlagConfig<MathConfig>, ctx: &StageContext, inputs: &Inputs) -> Result<RecordBatch> {
        crate::domains::flags::generic::<MathDomain>(options, ctx, inputs)
    }

    /// The answer's value written canonically (two samples agree when their values are equal).
    fn canonical(text: &str) -> String {
        super::extract(text)
            .and_then(|a| super::answer::parse(&a))
            .map(|v| super::answer::canonical(&v))
            .unwrap_or_default()
    }

    /// Cross-path ([`super::cross_path`]): the program a model wrote for the problem (`tests`),
    /// run in the sandbox, and the stored answer checked against what it prints.
    fn test_runner(ctx: &StageContext) -> Result<Option<TestRunner>> {
        let py = Arc::new(crate::python::package::interpreter(&ctx.cache_dir)?);
        let limits = super::cross_path::limits();
        Ok(Some(Box::new(move |_question, fields, answer, text| {
            let module = crate::domains::field(fields, "module");
            super::cross_path::check(&py, module, answer, text, &limits)
        })))
    }

    fn tables() -> Vec<serde_json::Value> {
        vec![
            crate::seam::tables::episodes_table::<Self>().doc_json(),
            super::tables::tasks_table().doc_json(),
            super::tables::gold_table().doc_json(),
            crate::domains::evaluation::table::<Self>().doc_json(),
            crate::domains::flags::table().doc_json(),
        ]
    }
}
