//! The JSON Lines layout: one object per line, `{id, question, answer, aliases?, topic?,
//! answer_type?}` (`id` a string or a number). Blank lines are skipped; unknown keys are errors.

use std::path::Path;

use serde::Deserialize;

use crate::datasets::qa::{FactBench, SourceRow};
use crate::error::{Error, Result};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    id: serde_json::Value,
    question: String,
    answer: String,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    topic: Option<String>,
    #[serde(default)]
    answer_type: Option<String>,
}

/// Load a JSON Lines file.
pub fn load(path: &Path) -> Result<FactBench> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.into(), source })?;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let l: Line = serde_json::from_str(line).map_err(|e| Error::input_from(path, format!("row {}", i + 1), e))?;
        let id = match l.id {
            serde_json::Value::String(s) => s,
            serde_json::Value::Number(n) => n.to_string(),
            other => return Err(Error::input(path, format!("row {}: id {other} is not a string or number", i + 1))),
        };
        rows.push(SourceRow {
            line: i + 1,
            id,
            question: l.question,
            answer: l.answer,
            aliases: l.aliases,
            topic: l.topic,
            answer_type: l.answer_type,
        });
    }
    FactBench::from_rows(path, rows)
}
