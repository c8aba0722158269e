//! The math benchmark sources: the generated set (`lucid models fetch math`) and a JSON Lines
//! file in its layout, with `per_topic` (the first N problems of each module) and `limit`.

use std::collections::{BTreeMap, HashMap};

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};

use super::data;
use super::tables::{self, MathGold, MathTask};
use crate::domains::{BenchmarkConfig, Source};
use crate::error::Result;
use crate::fingerprint::file_fingerprint;
use crate::pipeline::stage::StageContext;

/// The sources.
pub const SOURCES: &[Source] = &[
    Source {
        name: "math",
        doc: "3,150 problems generated from pinned mathematics-dataset 1.0.1 and seed 0 (lucid models fetch math); per_topic: per module",
        options: &["per_topic"],
        needs_path: false,
    },
    Source {
        name: "math-jsonl",
        doc: "a JSON Lines file (`path`) of {id, module, difficulty?, question, answer}",
        options: &["path", "per_topic"],
        needs_path: true,
    },
];

/// The math sources' own options.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MathSourceOptions {
    /// Keep only the first N problems of each module (written `per_topic`, as in every domain
    /// with topics).
    #[serde(default, rename = "per_topic")]
    pub per_module: Option<usize>,
}

/// The `tasks` and `gold` tables.
pub fn load(b: &BenchmarkConfig, o: &MathSourceOptions, ctx: &StageContext) -> Result<(RecordBatch, RecordBatch)> {
    let file = if b.source == "math-jsonl" { b.source_path(ctx)? } else { data::problems(&ctx.cache_dir)? };
    let (tasks, gold) = tables::read(&file)?;
    let (tasks, gold) = keep(tasks, gold, o.per_module, b.limit);
    ctx.progress.set_total(tasks.len() as u64);
    ctx.progress.advance(tasks.len() as u64);
    Ok((tables::tasks_table().batch(&tasks)?, tables::gold_table().batch(&gold)?))
}

/// The first `per_module` problems of each module, then the first `limit`, renumbered from 0.
pub fn keep(
    tasks: Vec<MathTask>,
    gold: Vec<MathGold>,
    per_module: Option<usize>,
    limit: Option<usize>,
) -> (Vec<MathTask>, Vec<MathGold>) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let kept = tasks.into_iter().zip(gold).filter(|(t, _)| {
        let n = seen.entry(t.module.clone()).or_insert(0);
        *n += 1;
        per_module.is_none_or(|k| *n <= k)
    });
    kept.take(limit.unwrap_or(usize::MAX))
        .enumerate()
        .map(|(i, (t, g))| {
            (MathTask { question_id: i as i64, ..t }, MathGold { question_id: i as i64, answer: g.answer })
        })
        .unzip()
}

/// The source file by content; the generated set by its pinned wheels and committed hash.
pub fn fingerprint(b: &BenchmarkConfig, _: &MathSourceOptions, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
    let mut fp = BTreeMap::new();
    if b.source == "math-jsonl" {
        let f = b.source_path(ctx)?;
        fp.insert(f.to_string_lossy().into_owned(), file_fingerprint(&f)?);
    } else {
        fp.insert("math(pinned wheels)".into(), data::PACKAGE.pinned());
        fp.insert("math(problems sha256)".into(), data::PROBLEMS_SHA256.into());
    }
    Ok(fp)
}
