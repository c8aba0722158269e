//! Multi-turn tool use as the pipeline knows it: its options, source, data packages, evaluation
//! (BFCL's verdict in the sandbox), the channels after the fact, what two transcripts agreeing
//! means.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::RecordBatch;

use super::env::Sources;
use super::{MultiTurnConfig, MultiTurnDomain};
use crate::domains::tools::data::{MULTI_TURN, PACKAGE, mpmath_dir, package_dir};
use crate::domains::{Agreement, BenchmarkConfig, DomainKind, FlagConfig, Source};
use crate::error::{Error, Invalid, Result};
use crate::pipeline::stage::{Inputs, StageContext};

impl DomainKind for MultiTurnDomain {
    type Options = MultiTurnConfig;
    type FlagOptions = FlagConfig<MultiTurnConfig>;
    type SourceOptions = crate::domains::tools::sources::ToolsSourceOptions;
    const DOC: &'static str = "multi-turn function calling (BFCL v4's multi-turn categories): the model's calls run against BFCL's stateful environments in the Python sandbox, judged by BFCL's own checker";
    const SCHEMAS: &'static str = "tools_multiturn";
    const FOLDER: &'static str = "tools";
    const SOURCES: &'static [Source] = super::sources::SOURCES;
    const PACKAGES: &'static [crate::datasets::wheels::DataPackage] = &[PACKAGE, MULTI_TURN];
    const VARIABLES: &'static [&'static str] = &["functions"];

    fn check(o: &MultiTurnConfig) -> std::result::Result<(), Invalid> {
        super::check(o)
    }

    fn configure(options: MultiTurnConfig, ctx: &StageContext) -> Result<MultiTurnDomain> {
        let py = Arc::new(crate::python::package::interpreter(&ctx.cache_dir)?);
        let sources = Arc::new(Sources::read(&package_dir(&ctx.cache_dir)?, &mpmath_dir(&ctx.cache_dir)?)?);
        MultiTurnDomain::new(options, py, sources).map_err(Error::usage)
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

    fn flags(options: &FlagConfig<MultiTurnConfig>, ctx: &StageContext, inputs: &Inputs) -> Result<RecordBatch> {
        crate::domains::flags::generic::<MultiTurnDomain>(options, ctx, inputs)
    }

    /// No claim: self-consistency re-asks the executor's first prompt once, which gives one reply,
    /// not a dialogue, so it has nothing to compare with a transcript (the domain's own "idempotent
    /// on repeat" is the `repeat` channel, each step run again in the environment).
    fn agreement(_ctx: &StageContext) -> Result<Agreement> {
        Ok(Box::new(|_, _, _| None))
    }

    fn tables() -> Vec<serde_json::Value> {
        vec![
            crate::seam::tables::episodes_table::<Self>().doc_json(),
            super::tables::tasks_table().doc_json(),
            crate::domains::tools::tables::gold_table().doc_json(),
            crate::domains::evaluation::table::<Self>().doc_json(),
            crate::domains::flags::table().doc_json(),
        ]
    }
}
