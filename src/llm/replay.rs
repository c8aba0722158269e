//! Replay: answers from a recorded `calls` table (columns `key`, `backend`, `model`, `endpoint`, `text`,
//! `tokens_in`, `tokens_out`; failed calls have a null `text`), for exact reruns without a model.
//! A request that was never recorded is a recorded failure, not a guess.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use arrow::array::{Array, StringArray, UInt32Array};

use super::cache::request_key;
use super::{CallFailure, ChatModel, ChatRequest, Completion, ModelIdentity};
use crate::error::{Error, Result};
use crate::table::column;

/// Recorded answers by request key.
pub struct Replay {
    identity: ModelIdentity,
    answers: HashMap<String, (String, u32, u32)>,
}

/// The Parquet files of a calls table: the file itself, or a folder's `*.parquet` in name order.
pub fn calls_files(path: &Path) -> Result<Vec<std::path::PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut v: Vec<_> = std::fs::read_dir(path)
        .map_err(|source| Error::Read { path: path.into(), source })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    v.sort();
    Ok(v)
}

impl Replay {
    /// Load a calls table (a Parquet file or a folder of them).
    pub fn load(path: &Path) -> Result<Replay> {
        let files = calls_files(path)?;
        let mut answers = HashMap::new();
        let mut identity = None;
        for f in files {
            let b = text_columns(crate::table::read_parquet(&f)?)?;
            let (key, text) = (column::<StringArray>(&b, &f, "key")?, column::<StringArray>(&b, &f, "text")?);
            let (backend, model) = (column::<StringArray>(&b, &f, "backend")?, column::<StringArray>(&b, &f, "model")?);
            let (tin, tout) =
                (column::<UInt32Array>(&b, &f, "tokens_in")?, column::<UInt32Array>(&b, &f, "tokens_out")?);
            // Tables recorded before the column existed have no endpoint.
            let endpoint = if b.schema().column_with_name("endpoint").is_some() {
                Some(column::<StringArray>(&b, &f, "endpoint")?)
            } else {
                None
            };
            for i in 0..b.num_rows() {
                // An agent program's own row (`backend: program`) is not a model's answer.
                if backend.value(i) == "program" {
                    continue;
                }
                let id = ModelIdentity {
                    backend: backend.value(i).into(),
                    model: model.value(i).into(),
                    endpoint: endpoint.filter(|e| e.is_valid(i)).map(|e| e.value(i).to_string()),
                };
                match &identity {
                    None => identity = Some(id),
                    Some(seen) if *seen != id => {
                        return Err(Error::input(&f, format!("row {i}: calls of two models ({seen:?} and {id:?})")));
                    }
                    _ => {}
                }
                if text.is_valid(i) {
                    answers.insert(key.value(i).to_string(), (text.value(i).to_string(), tin.value(i), tout.value(i)));
                }
            }
        }
        let identity = identity.ok_or_else(|| Error::input(path, "no recorded calls"))?;
        Ok(Replay { identity, answers })
    }
}

/// `b` with its string views as plain strings (a table written by `lucid query ... COPY` has
/// views; the recorded tables have strings).
fn text_columns(b: arrow::array::RecordBatch) -> Result<arrow::array::RecordBatch> {
    use arrow::datatypes::{DataType, Field, Schema};
    let fields: Vec<Field> = b
        .schema()
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Utf8View | DataType::LargeUtf8 => Field::new(f.name(), DataType::Utf8, f.is_nullable()),
            _ => f.as_ref().clone(),
        })
        .collect();
    let columns = b
        .columns()
        .iter()
        .zip(&fields)
        .map(|(c, f)| arrow::compute::cast(c, f.data_type()))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(arrow::array::RecordBatch::try_new(std::sync::Arc::new(Schema::new(fields)), columns)?)
}

impl ChatModel for Replay {
    /// The recorded model's identity, so request keys match the recording.
    fn identity(&self) -> ModelIdentity {
        self.identity.clone()
    }

    /// A recorded forced-choice answer replays like any other.
    fn supports_choices(&self) -> bool {
        true
    }

    fn chat(&self, req: &ChatRequest) -> Result<Completion, CallFailure> {
        let key = request_key(&self.identity, req);
        let (text, tokens_in, tokens_out) = self.answers.get(&key).cloned().ok_or_else(|| CallFailure {
            message: format!("replay: request not in the recorded calls ({key})"),
            attempts: 1,
        })?;
        Ok(Completion { text, tokens_in, tokens_out, latency: Duration::ZERO, attempts: 1, cache_hit: false })
    }
}
