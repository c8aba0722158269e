//! Text-to-SQL as the pipeline knows it: its options, sources, BIRD's evaluation and the detector
//! after the fact.

use std::collections::BTreeMap;

use arrow::array::RecordBatch;

use super::detector::DetectorConfig;
use super::{SqlConfig, SqlDomain};
use crate::domains::{BenchmarkConfig, DomainKind, Evaluate, Source};
use crate::error::{Error, Invalid, Result};
use crate::pipeline::stage::{Inputs, StageContext};

impl DomainKind for SqlDomain {
    type Options = SqlConfig;
    type FlagOptions = DetectorConfig;
    type SourceOptions = super::sources::SqlSourceOptions;
    const DOC: &'static str = "text-to-SQL: the query run in a read-only sandbox, BIRD's execution accuracy";
    const SCHEMAS: &'static str = "";
    const SOURCES: &'static [Source] = super::sources::SOURCES;
    const VARIABLES: &'static [&'static str] = &["evidence", "schema"];
    const TOP_LEVEL_OPTIONS: &'static [&'static str] =
        &["schema_style", "schema_chars", "preview_rows", "timeout_secs", "max_rows", "detector"];

    fn check(o: &SqlConfig) -> std::result::Result<(), Invalid> {
        SqlDomain::new(o.clone(), None).map(|_| ())
    }

    fn configure(options: SqlConfig, ctx: &StageContext) -> Result<SqlDomain> {
        SqlDomain::new(options, Some(ctx.cache_dir.join("gold-results.sqlite")))
            .map_err(|e| Error::stage(&ctx.stage_id, e))
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

    fn evaluate(e: &Evaluate<'_>, ctx: &StageContext, inputs: &Inputs) -> Result<RecordBatch> {
        super::evaluate::evaluate(e, ctx, inputs)
    }

    fn flags(detector: &DetectorConfig, ctx: &StageContext, inputs: &Inputs) -> Result<RecordBatch> {
        super::flags::flags(detector, ctx, inputs)
    }

    fn tables() -> Vec<serde_json::Value> {
        vec![
            crate::seam::tables::episodes_table::<Self>().doc_json(),
            crate::datasets::tables::tasks_table().doc_json(),
            crate::datasets::tables::gold_table().doc_json(),
            super::evaluate::evaluation_table().doc_json(),
            super::flags::flags_table().doc_json(),
        ]
    }
}
