//! The multi-turn categories as BFCL's wheel carries them: `BFCL_v4_multi_turn_<name>.json`
//! (`{id, question, initial_config, involved_classes, ...}`, the user's messages per turn) and its
//! possible answers (`{id, ground_truth}`: the calls per turn, as Python call strings).

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::domains::tools::data::category_files;
use crate::domains::tools::sources::{lines, missing};
use crate::error::{Error, Result};

/// The multi-turn categories, in BFCL's order.
pub const CATEGORIES: &[&str] =
    &["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"];

/// One multi-turn task with its ground truth.
#[derive(Clone, Debug, PartialEq)]
pub struct MultiTurnTask {
    /// BFCL's id (`multi_turn_base_0`).
    pub id: String,
    /// Its category.
    pub category: String,
    /// The user's messages per turn (BFCL's `question`).
    pub turns: Value,
    /// The environments' starting state by class (`{"GorillaFileSystem": {...}}`).
    pub initial_config: Value,
    /// The environment classes the task uses, in BFCL's order.
    pub involved_classes: Vec<String>,
    /// The ground-truth calls per turn.
    pub ground_truth: Vec<Vec<String>>,
}

impl MultiTurnTask {
    /// Whether BFCL loads the environments with their long context (its `long_context` category).
    pub fn long_context(&self) -> bool {
        self.category.contains("long_context")
    }
}

/// A category's tasks with their ground truth, in the file's order (an error names the file and
/// line).
pub fn read(dir: &Path, category: &str) -> Result<Vec<MultiTurnTask>> {
    let (tasks_file, answers_file) = category_files(dir, category);
    let mut truth: HashMap<String, Vec<Vec<String>>> = HashMap::new();
    for (n, line) in lines(&answers_file)? {
        let id = line.get("id").and_then(Value::as_str).ok_or_else(|| missing(&answers_file, n, "id"))?;
        let gt = line.get("ground_truth").ok_or_else(|| missing(&answers_file, n, "ground_truth"))?;
        let gt = serde_json::from_value(gt.clone())
            .map_err(|e| Error::input(&answers_file, format!("line {n}: ground_truth: {e}")))?;
        truth.insert(id.to_string(), gt);
    }
    let mut out = Vec::new();
    for (n, line) in lines(&tasks_file)? {
        let field = |name: &str| line.get(name).ok_or_else(|| missing(&tasks_file, n, name));
        let id = field("id")?.as_str().ok_or_else(|| missing(&tasks_file, n, "id"))?.to_string();
        let involved_classes = serde_json::from_value(field("involved_classes")?.clone())
            .map_err(|e| Error::input(&tasks_file, format!("line {n}: involved_classes: {e}")))?;
        let ground_truth =
            truth.remove(&id).ok_or_else(|| Error::input(&answers_file, format!("no ground truth for task `{id}`")))?;
        out.push(MultiTurnTask {
            category: category.to_string(),
            turns: field("question")?.clone(),
            initial_config: field("initial_config")?.clone(),
            involved_classes,
            ground_truth,
            id,
        });
    }
    Ok(out)
}
