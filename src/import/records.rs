//! A bank file as records: JSON Lines (one object a line), a JSON list, a JSON object holding
//! the list (`{"results": [...]}`, mem0's answer; `{"memories": [...]}`), CSV or Parquet. Every
//! record keeps where it is (its 1-based line or row), for errors and counts. JSON text is UTF-8,
//! a leading byte-order mark skipped.

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};

/// One record of a source file and where it is.
#[derive(Clone, Debug)]
pub struct Record {
    /// 1-based line (JSON Lines) or row (other layouts).
    pub line: usize,
    /// The record.
    pub value: Value,
}

/// The records of `path`, by its extension.
pub fn read(path: &Path) -> Result<Vec<Record>> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "jsonl" | "ndjson" => jsonl(path),
        "json" => json(path),
        "csv" | "parquet" => tabular(path, &ext),
        other => {
            Err(Error::input(path, format!("unknown bank layout '.{other}': use .jsonl, .json, .csv or .parquet")))
        }
    }
}

/// The UTF-8 byte-order mark some editors write at the start of a file.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// The text of `path`, without a leading byte-order mark; a byte that is not UTF-8 is an error
/// naming its line.
fn text(path: &Path) -> Result<String> {
    let mut bytes = std::fs::read(path).map_err(|source| Error::Read { path: path.into(), source })?;
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    String::from_utf8(bytes).map_err(|e| {
        let (bytes, at) = (e.as_bytes(), e.utf8_error().valid_up_to());
        let line = bytes[..at].iter().filter(|b| **b == b'\n').count() + 1;
        Error::input(path, format!("line {line}: byte 0x{:02x} is not UTF-8 (save the file as UTF-8)", bytes[at]))
    })
}

fn jsonl(path: &Path) -> Result<Vec<Record>> {
    let text = text(path)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let value: Value =
            serde_json::from_str(line).map_err(|e| Error::input_from(path, format!("line {}", i + 1), e))?;
        if !value.is_object() {
            return Err(Error::input(path, format!("line {}: not a JSON object", i + 1)));
        }
        out.push(Record { line: i + 1, value });
    }
    Ok(out)
}

fn json(path: &Path) -> Result<Vec<Record>> {
    let value: Value = serde_json::from_str(&text(path)?).map_err(|e| Error::input_from(path, "", e))?;
    let list = match value {
        Value::Array(items) => items,
        Value::Object(mut m) => {
            let key = ["results", "memories", "items", "passages", "data"]
                .into_iter()
                .find(|k| m.get(*k).is_some_and(Value::is_array));
            match key.and_then(|k| m.remove(k)) {
                Some(Value::Array(items)) => items,
                _ => {
                    return Err(Error::input(
                        path,
                        "a JSON object without a list of records (results, memories, items, passages or data)",
                    ));
                }
            }
        }
        _ => return Err(Error::input(path, "neither a JSON list nor an object holding one")),
    };
    list.into_iter()
        .enumerate()
        .map(|(i, value)| {
            if value.is_object() {
                Ok(Record { line: i + 1, value })
            } else {
                Err(Error::input(path, format!("record {}: not a JSON object", i + 1)))
            }
        })
        .collect()
}

/// CSV and Parquet through the SQL engine, each row as a JSON object.
fn tabular(path: &Path, ext: &str) -> Result<Vec<Record>> {
    let loc = path.display().to_string();
    let batch = crate::session::block_on(async {
        let ctx = crate::session::new();
        let registered = if ext == "csv" {
            ctx.register_csv("bank", &loc, Default::default()).await
        } else {
            ctx.register_parquet("bank", &loc, Default::default()).await
        };
        registered.map_err(|e| Error::input_from(path, "", e))?;
        crate::session::collect(&ctx, "SELECT * FROM bank").await
    })?;
    if batch.num_rows() == 0 {
        return Ok(Vec::new());
    }
    let mut w = arrow::json::ArrayWriter::new(Vec::new());
    w.write(&batch)?;
    w.finish()?;
    let out: Vec<Value> = serde_json::from_slice(&w.into_inner()).map_err(|e| Error::input_from(path, "", e))?;
    Ok(out.into_iter().enumerate().map(|(i, value)| Record { line: i + 1, value }).collect())
}

/// The value at the dotted `path` of `v` (`value.content.observation`; a list index is a number,
/// -1 the last item); `a|b` is the first of the paths `a` and `b` that holds a value.
pub fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('|').find_map(|p| {
        p.split('.')
            .try_fold(v, |v, key| match v {
                Value::Object(m) => m.get(key),
                Value::Array(a) => match key.parse::<i64>().ok()? {
                    i if i < 0 => a.len().checked_sub(i.unsigned_abs() as usize).and_then(|j| a.get(j)),
                    i => a.get(i as usize),
                },
                _ => None,
            })
            .filter(|x| !x.is_null())
    })
}

/// A value as text: a string as it is, a list of strings joined by new lines, anything else as JSON;
/// None for null, absent or an empty string.
pub fn as_text(v: Option<&Value>) -> Option<String> {
    let s = match v? {
        Value::Null => return None,
        Value::String(s) => s.clone(),
        Value::Array(items) if items.iter().all(Value::is_string) => {
            items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n")
        }
        other => other.to_string(),
    };
    (!s.trim().is_empty()).then_some(s)
}
