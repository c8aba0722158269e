//! The factual QA benchmark sources: the bundled offline set (built from pinned PyPI data
//! packages, `lucid models fetch facts`), a JSON Lines file and a SimpleQA-layout CSV file, with
//! `per_topic` (the first N questions of each topic).

use std::collections::BTreeMap;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use super::data;
use crate::domains::{BenchmarkConfig, Source};
use crate::error::Result;
use crate::fingerprint::file_fingerprint;
use crate::pipeline::stage::StageContext;

/// The sources.
pub const SOURCES: &[Source] = &[
    Source {
        name: "facts",
        doc: "the bundled offline set, from pinned PyPI data packages (lucid models fetch facts)",
        options: &["per_topic"],
        needs_path: false,
    },
    Source {
        name: "jsonl",
        doc: "a JSON Lines file (`path`) of {id, question, answer, aliases?, topic?, answer_type?}",
        options: &["path", "per_topic"],
        needs_path: true,
    },
    Source {
        name: "simpleqa",
        doc: "a SimpleQA-layout CSV file (`path`: metadata,problem,answer)",
        options: &["path", "per_topic"],
        needs_path: true,
    },
];

/// The factual sources' own options.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FactualSourceOptions {
    /// Keep only the first N questions of each topic.
    #[serde(default)]
    pub per_topic: Option<usize>,
}

/// The `tasks` and `gold` tables.
pub fn load(b: &BenchmarkConfig, o: &FactualSourceOptions, ctx: &StageContext) -> Result<(RecordBatch, RecordBatch)> {
    let mut bench = match b.source.as_str() {
        "jsonl" => data::jsonl::load(&b.source_path(ctx)?)?,
        "simpleqa" => data::simpleqa::load(&b.source_path(ctx)?)?,
        _ => data::bundled::build(&facts_dir(ctx))?,
    };
    if !bench.alias_only.is_empty() {
        let ids = &bench.alias_only;
        ctx.progress.warn(&format!(
            "{} answer(s) normalise to nothing (e.g. an emoji) and are scored through their aliases only: ids {}",
            ids.len(),
            ids.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        ));
        ctx.progress.note("answers_scored_by_aliases", ids.len().into());
    }
    if let Some(n) = o.per_topic {
        bench.per_topic(n);
    }
    if let Some(n) = b.limit {
        bench.truncate(n);
    }
    ctx.progress.set_total(bench.tasks.len() as u64);
    ctx.progress.advance(bench.tasks.len() as u64);
    crate::datasets::qa::tables::batches(&bench)
}

/// The source file by content; the bundled set by its pinned packages.
pub fn fingerprint(
    b: &BenchmarkConfig,
    _: &FactualSourceOptions,
    ctx: &StageContext,
) -> Result<BTreeMap<String, String>> {
    let mut fp = BTreeMap::new();
    if b.source == "facts" {
        fp.insert("facts(pinned wheels)".into(), data::wheels::pinned());
    } else {
        let f = ctx.resolve(b.path.as_deref().unwrap_or("."));
        fp.insert(f.to_string_lossy().into_owned(), file_fingerprint(&f)?);
    }
    Ok(fp)
}

/// Where the factual data packages are unpacked under the run's cache.
fn facts_dir(ctx: &StageContext) -> std::path::PathBuf {
    data::wheels::PACKAGE.dir(&crate::model_files::models_dir(&ctx.cache_dir))
}
