//! The multi-turn source `bfcl_multi_turn`: BFCL's four multi-turn categories from its wheel
//! (`lucid models fetch tools`), with `categories` (which, in order), `per_topic` (the first N
//! tasks of each) and `limit`.

use std::collections::BTreeMap;

use arrow::array::RecordBatch;
use serde_json::{Value, json};

use super::data::{self, CATEGORIES, MultiTurnTask};
use super::tables::{self, DialogueTask};
use crate::domains::tools::data::{MULTI_TURN, PACKAGE, package_dir};
use crate::domains::tools::sources::ToolsSourceOptions;
use crate::domains::tools::tables::{ToolsGold, gold_table};
use crate::domains::{BenchmarkConfig, Source};
use crate::error::{Error, Result};
use crate::pipeline::stage::StageContext;

/// The sources.
pub const SOURCES: &[Source] = &[Source {
    name: "bfcl_multi_turn",
    doc: "BFCL v4's multi-turn categories (lucid models fetch tools): categories (default: all four, 800 tasks), per_category (or per_topic): the first N of each",
    options: &["categories", "per_category", "per_topic"],
    needs_path: false,
}];

/// What BFCL's `add_language_specific_hint_to_function_doc` appends to each function offered at
/// the start (after the held-out ones were taken out, so these keep their own descriptions).
const PYTHON_HINT: &str = " Note that the provided function is in Python 3 syntax.";

/// The documents offered at the start, each description with BFCL's Python hint.
fn hinted(functions: &[Value]) -> Vec<Value> {
    let mut out = functions.to_vec();
    for f in &mut out {
        if let Some(Value::String(d)) = f.get_mut("description") {
            d.push_str(PYTHON_HINT);
        }
    }
    out
}

/// A task of the source split into what the loop may hold and its ground truth.
pub fn split(question_id: i64, t: &MultiTurnTask) -> (DialogueTask, ToolsGold) {
    let turns: Vec<String> = t
        .turns
        .as_array()
        .into_iter()
        .flatten()
        .map(|turn| {
            let texts = turn.as_array().into_iter().flatten();
            let texts: Vec<&str> = texts.filter_map(|m| m.get("content").and_then(Value::as_str)).collect();
            texts.join("\n")
        })
        .collect();
    let holdout: BTreeMap<String, &Vec<Value>> = t.holdout.iter().map(|(k, v)| (k.to_string(), v)).collect();
    let task = DialogueTask {
        question_id,
        task_id: t.id.clone(),
        category: t.category.clone(),
        question: turns.first().cloned().unwrap_or_default(),
        turns: json!(turns).to_string(),
        functions: json!(hinted(&t.functions)).to_string(),
        holdout: json!(holdout).to_string(),
        involved_classes: json!(t.involved_classes).to_string(),
        initial_config: t.initial_config.to_string(),
    };
    let gold = ToolsGold { question_id, category: t.category.clone(), ground_truth: json!(t.ground_truth).to_string() };
    (task, gold)
}

/// The `tasks` and `gold` tables.
pub fn load(b: &BenchmarkConfig, o: &ToolsSourceOptions, ctx: &StageContext) -> Result<(RecordBatch, RecordBatch)> {
    let dir = package_dir(&ctx.cache_dir)?;
    let mut all = Vec::new();
    for category in categories(o)? {
        all.extend(data::read(&dir, &category)?.into_iter().take(o.per_category.unwrap_or(usize::MAX)));
    }
    let kept = all.iter().take(b.limit.unwrap_or(usize::MAX)).enumerate();
    let (tasks, gold): (Vec<DialogueTask>, Vec<ToolsGold>) = kept.map(|(i, t)| split(i as i64, t)).unzip();
    ctx.progress.set_total(tasks.len() as u64);
    ctx.progress.advance(tasks.len() as u64);
    Ok((tables::tasks_table().batch(&tasks)?, gold_table().batch(&gold)?))
}

/// The configured categories, each checked.
fn categories(o: &ToolsSourceOptions) -> Result<Vec<String>> {
    let chosen = o.chosen(CATEGORIES);
    if let Some(c) = chosen.iter().find(|c| !CATEGORIES.contains(&c.as_str())) {
        return Err(Error::usage(format!(
            "benchmark.categories: `{c}` is not a multi-turn category (one of {})",
            CATEGORIES.join(", ")
        )));
    }
    Ok(chosen)
}

/// What the tables' content owes to this reader besides the wheels: bumped when it writes them
/// otherwise, so a stored benchmark of an earlier reader is not taken for this one's.
const READER: &str = "2 (functions offered at the start carry BFCL's Python hint)";

/// The wheels by their pins (their files are the data and the environments), and the reader.
pub fn fingerprint(_: &BenchmarkConfig, _: &ToolsSourceOptions, _: &StageContext) -> Result<BTreeMap<String, String>> {
    Ok(BTreeMap::from([
        ("bfcl_multi_turn(reader)".to_string(), READER.to_string()),
        ("tools(pinned wheel)".to_string(), PACKAGE.pinned()),
        ("tools-multiturn(pinned wheel)".to_string(), MULTI_TURN.pinned()),
    ]))
}
