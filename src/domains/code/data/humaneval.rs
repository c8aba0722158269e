//! Problems in HumanEval's layout: one JSON object per line with `task_id`, `prompt` (the
//! signature and docstring the agent sees), `entry_point` (the function's name),
//! `canonical_solution` (a reference body) and `test` (a `check(candidate)` function of asserts:
//! gold). Read from `.jsonl` or `.jsonl.gz` (HumanEval itself, HumanEval+, MBPP converted, a
//! user's own tasks); a bad line is an error naming the file, the line and the field.

use std::io::Read;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};

/// One problem, gold included (`canonical_solution`, `test`): the loaders split it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Problem {
    /// The source's id (`HumanEval/0`).
    pub task_id: String,
    /// Signature and docstring.
    pub prompt: String,
    /// The function the tests call.
    pub entry_point: String,
    /// A reference body (completes `prompt`); may be empty in a user's file.
    #[serde(default)]
    pub canonical_solution: String,
    /// The hidden tests: defines `check(candidate)`.
    pub test: String,
}

/// The problems in `path`, in file order.
pub fn read(path: &Path) -> Result<Vec<Problem>> {
    let raw = std::fs::read(path).map_err(|source| Error::Read { path: path.into(), source })?;
    let text = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut s = String::new();
        flate2::read::GzDecoder::new(raw.as_slice())
            .read_to_string(&mut s)
            .map_err(|e| Error::input_from(path, "not a readable gzip file of UTF-8 text", e))?;
        s
    } else {
        String::from_utf8(raw).map_err(|e| Error::input_from(path, "not UTF-8", e))?
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let p: Problem = serde_json::from_str(line).map_err(|e| {
            Error::input(
                path,
                format!("line {}: {e} (fields: task_id, prompt, entry_point, canonical_solution, test)", i + 1),
            )
        })?;
        for (field, value) in
            [("task_id", &p.task_id), ("prompt", &p.prompt), ("entry_point", &p.entry_point), ("test", &p.test)]
        {
            if value.trim().is_empty() {
                return Err(Error::input(path, format!("line {}: `{field}` is empty", i + 1)));
            }
        }
        if !p.test.contains("def check(") {
            return Err(Error::input(path, format!("line {}: `test` defines no check(candidate)", i + 1)));
        }
        out.push(p);
    }
    if out.is_empty() {
        return Err(Error::input(path, "no problems"));
    }
    Ok(out)
}
