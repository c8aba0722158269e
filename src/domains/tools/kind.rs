//! Tool use as the pipeline knows it: its options, source, data package, evaluation (BFCL's
//! checker), the channels after the fact, what two replies agreeing means.

use std::collections::BTreeMap;

use arrow::array::RecordBatch;

use super::{ToolsConfig, ToolsDomain};
use crate::domains::{BenchmarkConfig, DomainKind, FlagConfig, Source};
use crate::error::{Error, Invalid, Result};
use crate::pipeline::stage::{Inputs, StageContext};

impl DomainKind for ToolsDomain {
    type Options = ToolsConfig;
    type FlagOptions = FlagConfig<ToolsConfig>;
    type SourceOptions = super::sources::ToolsSourceOptions;
    const DOC: &'static str =
        "function calling (BFCL v4, single-turn Python): the calls read as BFCL reads them, checked by its AST rules";
    const SCHEMAS: &'static str = "tools";
    const SOURCES: &'static [Source] = super::sources::SOURCES;
    const PACKAGES: &'static [crate::datasets::wheels::DataPackage] = &[super::data::PACKAGE, super::data::MULTI_TURN];
    const VARIABLES: &'static [&'static str] = &["functions"];

    fn check(o: &ToolsConfig) -> std::result::Result<(), Invalid> {
        ToolsDomain::new(o.clone()).map(|_| ())
    }

    fn configure(options: ToolsConfig, ctx: &StageContext) -> Result<ToolsDomain> {
        Ok(ToolsDomain::new(options).map_err(Error::usage)?.scoring_with(&ctx.cache_dir))
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

    fn flags(options: &FlagConfig<ToolsConfig>, ctx: &StageContext, inputs: &Inputs) -> Result<RecordBatch> {
        crate::domains::flags::generic::<ToolsDomain>(options, ctx, inputs)
    }

    /// The calls written canonically (two samples agree when they make the same calls).
    fn canonical(text: &str) -> String {
        super::calls::decode(text).map(|c| super::calls::canonical(&c)).unwrap_or_default()
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
