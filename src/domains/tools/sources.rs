//! The tool-use source: BFCL's single-turn Python categories from its wheel (`lucid models fetch
//! tools`), with `categories` (which, in order), `per_topic` (the first N tasks of each) and
//! `limit`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::data;
use super::tables::{self, ToolsGold, ToolsTask};
use crate::domains::{BenchmarkConfig, Source};
use crate::error::{Error, Invalid, Result};
use crate::pipeline::stage::StageContext;

/// The sources.
pub const SOURCES: &[Source] = &[Source {
    name: "bfcl",
    doc: "BFCL v4's single-turn Python categories (lucid models fetch tools): categories (default: all ten, 3,475 tasks), per_category (or per_topic): the first N of each",
    options: &["categories", "per_category", "per_topic"],
    needs_path: false,
}];

/// The single-turn Python categories, in BFCL's order: the default of `categories`.
pub const CATEGORIES: &[&str] = &[
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
];

/// Whether in `category` no call is right (BFCL's irrelevance rule applies).
pub fn irrelevance(category: &str) -> bool {
    category.contains("irrelevance")
}

/// The tool-use sources' own options (single-turn and multi-turn alike).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsSourceOptions {
    /// The categories to read, in this order (default: the source's own list). Left out of the
    /// serialized form when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<String>>,
    /// Keep only the first N tasks of each category (written `per_category`, or `per_topic` as
    /// pipelines written before it were).
    #[serde(default, rename = "per_topic", alias = "per_category")]
    pub per_category: Option<usize>,
}

impl ToolsSourceOptions {
    /// The categories chosen, or `all` (the source's own list).
    pub fn chosen(&self, all: &[&str]) -> Vec<String> {
        self.categories.clone().unwrap_or_else(|| all.iter().map(|c| c.to_string()).collect())
    }
}

/// The `tasks` and `gold` tables.
pub fn load(b: &BenchmarkConfig, o: &ToolsSourceOptions, ctx: &StageContext) -> Result<(RecordBatch, RecordBatch)> {
    let dir = data::package_dir(&ctx.cache_dir)?;
    let (mut tasks, mut gold) = (Vec::new(), Vec::new());
    for category in categories(o)? {
        let (t, g) = read(&dir, &category)?;
        let keep = o.per_category.unwrap_or(usize::MAX);
        tasks.extend(t.into_iter().take(keep));
        gold.extend(g.into_iter().take(keep));
    }
    let kept = tasks.into_iter().zip(gold).take(b.limit.unwrap_or(usize::MAX)).enumerate();
    let (tasks, gold): (Vec<ToolsTask>, Vec<ToolsGold>) = kept
        .map(|(i, (t, g))| (ToolsTask { question_id: i as i64, ..t }, ToolsGold { question_id: i as i64, ..g }))
        .unzip();
    ctx.progress.set_total(tasks.len() as u64);
    ctx.progress.advance(tasks.len() as u64);
    Ok((tables::tasks_table().batch(&tasks)?, tables::gold_table().batch(&gold)?))
}

/// The configured categories, each checked.
fn categories(o: &ToolsSourceOptions) -> Result<Vec<String>> {
    let chosen = o.chosen(CATEGORIES);
    for c in &chosen {
        if !CATEGORIES.contains(&c.as_str()) {
            return Err(Error::usage(format!(
                "benchmark.categories: `{c}` is not a category lucid reads (one of {}; BFCL's multi-turn categories are the `bfcl_multi_turn` source's; Java and JavaScript are not read)",
                CATEGORIES.join(", ")
            )));
        }
    }
    Ok(chosen)
}

/// One category's tasks and gold, in the file's order (an error names the file and line).
pub fn read(dir: &Path, category: &str) -> Result<(Vec<ToolsTask>, Vec<ToolsGold>)> {
    let (tasks_file, answers_file) = data::category_files(dir, category);
    let mut truth: HashMap<String, Value> = HashMap::new();
    if !irrelevance(category) {
        for (n, line) in lines(&answers_file)? {
            let id = line.get("id").and_then(Value::as_str).ok_or_else(|| missing(&answers_file, n, "id"))?;
            let gt = line.get("ground_truth").ok_or_else(|| missing(&answers_file, n, "ground_truth"))?;
            truth.insert(id.to_string(), gt.clone());
        }
    }
    let (mut tasks, mut gold) = (Vec::new(), Vec::new());
    for (n, line) in lines(&tasks_file)? {
        let id = line.get("id").and_then(Value::as_str).ok_or_else(|| missing(&tasks_file, n, "id"))?;
        let functions = line.get("function").ok_or_else(|| missing(&tasks_file, n, "function"))?;
        let question = line.get("question").ok_or_else(|| missing(&tasks_file, n, "question"))?;
        let ground_truth = match truth.remove(id) {
            Some(gt) => gt.to_string(),
            None if irrelevance(category) => "[]".to_string(),
            None => return Err(Error::input(&answers_file, format!("no ground truth for task `{id}`"))),
        };
        tasks.push(ToolsTask {
            question_id: tasks.len() as i64,
            task_id: id.to_string(),
            category: category.to_string(),
            question: render(question).map_err(|e| Error::input(&tasks_file, format!("line {n}: question: {e}")))?,
            functions: functions.to_string(),
            documents: std::sync::Arc::new(functions.clone()),
        });
        gold.push(ToolsGold { question_id: gold.len() as i64, category: category.to_string(), ground_truth });
    }
    Ok((tasks, gold))
}

/// The JSON lines of `file`, numbered from 1.
pub(crate) fn lines(file: &Path) -> Result<Vec<(usize, Value)>> {
    let text = std::fs::read_to_string(file).map_err(|source| Error::Read { path: file.into(), source })?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let v = serde_json::from_str(line).map_err(|e| Error::input(file, format!("line {}: {e}", n + 1)))?;
        out.push((n + 1, v));
    }
    Ok(out)
}

pub(crate) fn missing(file: &Path, line: usize, field: &str) -> Error {
    Error::input(file, format!("line {line}: no `{field}`"))
}

/// A single-turn question (`[[{role, content}, ...]]`) as one text: a system message as
/// `System: ...` above the user's.
fn render(question: &Value) -> std::result::Result<String, Invalid> {
    let turns = question.as_array().ok_or("not a list of turns")?;
    let mut parts = Vec::new();
    for message in turns.iter().flat_map(|t| t.as_array().into_iter().flatten()) {
        let role = message.get("role").and_then(Value::as_str).ok_or("a message without a role")?;
        let content = message.get("content").and_then(Value::as_str).ok_or("a message without content")?;
        let mut letters = role.chars();
        let role: String = letters.next().map(|f| f.to_uppercase().chain(letters).collect()).unwrap_or_default();
        parts.push(if role == "User" { content.to_string() } else { format!("{role}: {content}") });
    }
    Ok(parts.join("\n"))
}

/// The wheel by its pin (its files are the data).
pub fn fingerprint(_: &BenchmarkConfig, _: &ToolsSourceOptions, _: &StageContext) -> Result<BTreeMap<String, String>> {
    Ok(BTreeMap::from([("tools(pinned wheel)".to_string(), data::PACKAGE.pinned())]))
}
