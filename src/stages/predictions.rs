//! `kind: predictions` — imports a predictions file (BIRD's JSON, a JSON list, or Parquet with
//! `sql` and optionally `question_id`) as the `predictions` table (question_id, sql), aligned with
//! the tasks: by `question_id` when the file has it, else by position. `{seed}` and `{arm}` in the
//! path are filled in per instance.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::eval::inputs::read_predictions;
use crate::fingerprint::file_fingerprint;
use crate::pipeline::stage::{Inputs, Stage, StageContext};

/// Config of the predictions stage.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PredictionsStage {
    /// The file (relative to where `lucid run` runs; `{seed}`/`{arm}` are substituted).
    pub path: String,
}

/// Schema of the `predictions` table.
pub fn predictions_schema() -> Schema {
    Schema::new(vec![Field::new("question_id", DataType::Int64, false), Field::new("sql", DataType::Utf8, true)])
}

impl PredictionsStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "predictions";
}

impl Stage for PredictionsStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn version(&self) -> u32 {
        1
    }

    fn required_inputs(&self) -> &'static [&'static str] {
        &["tasks"]
    }

    fn outputs(&self, _: &str) -> Vec<String> {
        vec!["predictions".into()]
    }

    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serializes")
    }

    fn fingerprint(&self, ctx: &StageContext) -> Result<std::collections::BTreeMap<String, String>> {
        let p = ctx.resolve(&self.path);
        Ok([(p.to_string_lossy().into_owned(), file_fingerprint(&p)?)].into())
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        if self.path.is_empty() {
            return Err(Error::stage(&ctx.stage_id, "a predictions stage needs config.path"));
        }
        let path = ctx.resolve(&self.path);
        let preds = read_predictions(&path)?;
        let tasks = super::tasks(ctx, inputs)?;
        let by_id: HashMap<i64, usize> =
            preds.iter().enumerate().filter_map(|(i, p)| Some((p.question_id?, i))).collect();
        let mut sql = Vec::with_capacity(tasks.len());
        for (row, qid) in tasks.iter().map(|t| &t.question_id).enumerate() {
            let i = if by_id.is_empty() { Some(row) } else { by_id.get(qid).copied() };
            let p = i.and_then(|i| preds.get(i)).ok_or_else(|| {
                Error::input(
                    &path,
                    format!("no prediction for question_id {qid} (task {row}); the file has {}", preds.len()),
                )
            })?;
            sql.push(p.sql.clone());
        }
        let batch = RecordBatch::try_new(
            Arc::new(predictions_schema()),
            vec![
                Arc::new(Int64Array::from_iter_values(tasks.iter().map(|t| t.question_id))),
                Arc::new(StringArray::from(sql)),
            ],
        )?;
        Ok(vec![("predictions".into(), batch)])
    }
}
