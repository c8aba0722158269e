//! The multi-turn categories as BFCL's wheel carries them: `BFCL_v4_multi_turn_<name>.json`
//! (`{id, question, initial_config, involved_classes, ...}`, the user's messages per turn) and its
//! possible answers (`{id, ground_truth}`: the calls per turn, as Python call strings).

use std::collections::{BTreeMap, HashMap};
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
    /// The function documents the model is given at the start: the involved classes' documents
    /// in BFCL's order, without the held-out ones.
    pub functions: Vec<Value>,
    /// The documents held out until a turn (`multi_turn_miss_func`): turn index -> documents.
    pub holdout: Holdout,
    /// The ground-truth calls per turn.
    pub ground_truth: Vec<Vec<String>>,
}

impl MultiTurnTask {
    /// Whether BFCL loads the environments with their long context (its `long_context` category).
    pub fn long_context(&self) -> bool {
        long_context(&self.category)
    }
}

/// Whether BFCL loads a task of `category` with its environments' long context.
pub fn long_context(category: &str) -> bool {
    category.contains("long_context")
}

/// The file of each class's function documents (BFCL's `MULTI_TURN_FUNC_DOC_FILE_MAPPING`, the
/// classes the multi-turn categories use).
const DOC_FILES: &[(&str, &str)] = &[
    ("GorillaFileSystem", "gorilla_file_system.json"),
    ("MathAPI", "math_api.json"),
    ("MessageAPI", "message_api.json"),
    ("TwitterAPI", "posting_api.json"),
    ("TicketAPI", "ticket_api.json"),
    ("TradingBot", "trading_bot.json"),
    ("TravelAPI", "travel_booking.json"),
    ("VehicleControlAPI", "vehicle_control.json"),
];

/// Documents held out until a turn: turn index -> documents.
pub type Holdout = BTreeMap<usize, Vec<Value>>;

/// A class's function documents, from the wheel's `multi_turn_func_doc/`.
fn class_docs(dir: &Path, class: &str) -> Result<Vec<Value>> {
    let file = DOC_FILES
        .iter()
        .find(|(c, _)| *c == class)
        .map(|(_, f)| *f)
        .ok_or_else(|| Error::input(dir, format!("`{class}` is not one of the multi-turn classes lucid serves")))?;
    let path = dir.join("bfcl_eval").join("data").join("multi_turn_func_doc").join(file);
    Ok(lines(&path)?.into_iter().map(|(_, v)| v).collect())
}

/// The documents of `classes` in order, with the held-out names of `missed` (`{"3": ["sort"]}`)
/// moved to their turn, as BFCL's `populate_test_cases_with_predefined_functions` does.
fn functions(dir: &Path, classes: &[String], missed: Option<&Value>) -> Result<(Vec<Value>, Holdout)> {
    let mut functions = Vec::new();
    for class in classes {
        functions.extend(class_docs(dir, class)?);
    }
    let mut holdout = BTreeMap::new();
    for (turn, names) in missed.and_then(Value::as_object).into_iter().flatten() {
        let turn: usize = turn.parse().map_err(|_| Error::input(dir, format!("missed_function: turn `{turn}`")))?;
        let mut held = Vec::new();
        for name in names.as_array().into_iter().flatten().filter_map(Value::as_str) {
            if let Some(i) = functions.iter().position(|f| f.get("name").and_then(Value::as_str) == Some(name)) {
                held.push(functions.remove(i));
            }
        }
        holdout.insert(turn, held);
    }
    Ok((functions, holdout))
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
        let involved_classes: Vec<String> = serde_json::from_value(field("involved_classes")?.clone())
            .map_err(|e| Error::input(&tasks_file, format!("line {n}: involved_classes: {e}")))?;
        let (functions, holdout) = functions(dir, &involved_classes, line.get("missed_function"))
            .map_err(|e| Error::input(&tasks_file, format!("line {n}: {e}")))?;
        let ground_truth =
            truth.remove(&id).ok_or_else(|| Error::input(&answers_file, format!("no ground truth for task `{id}`")))?;
        out.push(MultiTurnTask {
            category: category.to_string(),
            turns: field("question")?.clone(),
            initial_config: field("initial_config")?.clone(),
            involved_classes,
            functions,
            holdout,
            ground_truth,
            id,
        });
    }
    Ok(out)
}
