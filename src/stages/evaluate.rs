//! `kind: evaluate` — execution accuracy per episode (`evaluation`: step, question_id, db_id,
//! difficulty, u, verdict, pred_status, gold_status, pred_rows) with BIRD's rule. One of the only
//! stages allowed to read `gold`. Predictions come from a `predictions` table (in the seed's order
//! when an `order` input is given) or from the agent's `episodes` (in step order), in resumable chunks; gold results come from the shared gold-result cache, so every arm
//! and seed executes each gold query once. No timings in the table: it is the same on every run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arrow::array::{Array, Int64Array, RecordBatch, StringArray, UInt8Array, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::eval::engine::Ran;
use crate::eval::{EvalOptions, Pair, evaluate};
use crate::pipeline::checkpoint::run_chunks;
use crate::pipeline::stage::{Inputs, Stage, StageContext};
use crate::table::column;

/// Config of the evaluate stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EvaluateStage {
    /// Pair timeout in seconds (BIRD: 30).
    #[serde(default = "default_timeout")]
    pub timeout_secs: f64,
    /// Episodes per durable chunk.
    #[serde(default = "default_chunk")]
    pub chunk_size: usize,
    /// Row cap per query.
    #[serde(default = "default_max_rows")]
    pub max_rows: u64,
    /// Use the shared gold-result cache.
    #[serde(default = "default_true")]
    pub gold_cache: bool,
}

fn default_timeout() -> f64 {
    30.0
}
fn default_chunk() -> usize {
    256
}
fn default_max_rows() -> u64 {
    10_000_000
}
fn default_true() -> bool {
    true
}

/// Schema of the `evaluation` table (before the runner's matrix columns).
pub fn evaluation_schema() -> Schema {
    Schema::new(vec![
        Field::new("step", DataType::UInt64, false),
        Field::new("question_id", DataType::Int64, false),
        Field::new("db_id", DataType::Utf8, false),
        Field::new("difficulty", DataType::Utf8, false),
        Field::new("u", DataType::UInt8, false),
        Field::new("verdict", DataType::Utf8, false),
        Field::new("pred_status", DataType::Utf8, false),
        Field::new("gold_status", DataType::Utf8, false),
        Field::new("pred_rows", DataType::UInt64, true),
    ])
}

struct Episode {
    question_id: i64,
    db_id: String,
    difficulty: String,
    db_path: PathBuf,
    pred: Option<String>,
    gold: String,
}

impl EvaluateStage {
    fn episodes(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<Episode>> {
        let p = |n: &str| PathBuf::from(n);
        let tasks = super::tasks(ctx, inputs)?;
        let gold = inputs.get(ctx, "gold")?;
        let g_qid = column::<Int64Array>(gold, &p("gold"), "question_id")?;
        let g_sql = column::<StringArray>(gold, &p("gold"), "gold_sql")?;
        let gold_of: HashMap<i64, &str> = (0..gold.num_rows()).map(|i| (g_qid.value(i), g_sql.value(i))).collect();
        let task_of: HashMap<i64, usize> = tasks.iter().enumerate().map(|(i, t)| (t.question_id, i)).collect();
        // Predictions: a `predictions` table (in the `order` input's order, else the tasks'), or
        // the agent's `episodes` (in step order).
        let (source, preds) = match (inputs.tables.get("episodes"), inputs.tables.get("predictions")) {
            (Some(e), None) => ("episodes", e),
            (None, Some(p)) => ("predictions", p),
            _ => {
                return Err(Error::stage(
                    &ctx.stage_id,
                    "needs exactly one of the inputs `predictions` and `episodes`",
                ));
            }
        };
        let p_qid = column::<Int64Array>(preds, &p(source), "question_id")?;
        let p_sql = column::<StringArray>(preds, &p(source), "sql")?;
        let pred_of: HashMap<i64, Option<&str>> =
            (0..preds.num_rows()).map(|i| (p_qid.value(i), p_sql.is_valid(i).then(|| p_sql.value(i)))).collect();
        let order: Vec<i64> = match (source, inputs.tables.get("order")) {
            ("episodes", _) => {
                let step = column::<UInt64Array>(preds, &p(source), "step")?;
                let mut by_step: Vec<(u64, i64)> =
                    (0..preds.num_rows()).map(|i| (step.value(i), p_qid.value(i))).collect();
                by_step.sort_unstable();
                by_step.into_iter().map(|(_, q)| q).collect()
            }
            (_, Some(o)) => column::<Int64Array>(o, &p("order"), "question_id")?.values().to_vec(),
            (_, None) => tasks.iter().map(|t| t.question_id).collect(),
        };
        order
            .into_iter()
            .map(|qid| {
                let missing = |what: &str| Error::stage(&ctx.stage_id, format!("question_id {qid} has no {what}"));
                let i = *task_of.get(&qid).ok_or_else(|| missing("task"))?;
                Ok(Episode {
                    question_id: qid,
                    db_id: tasks[i].db_id.clone(),
                    difficulty: tasks[i].difficulty.clone(),
                    db_path: tasks[i].db_path.clone(),
                    pred: pred_of.get(&qid).ok_or_else(|| missing("prediction"))?.map(str::to_string),
                    gold: gold_of.get(&qid).ok_or_else(|| missing("gold"))?.to_string(),
                })
            })
            .collect()
    }
}

impl EvaluateStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "evaluate";
}

impl Stage for EvaluateStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn version(&self) -> u32 {
        2
    }

    fn required_inputs(&self) -> &'static [&'static str] {
        &["tasks", "gold"]
    }

    fn optional_inputs(&self) -> &'static [&'static str] {
        &["predictions", "episodes", "order"]
    }

    fn reads_gold(&self) -> bool {
        true
    }

    fn outputs(&self, _: &str) -> Vec<String> {
        vec!["evaluation".into()]
    }

    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serializes")
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let episodes = self.episodes(ctx, inputs)?;
        let timeout = Duration::try_from_secs_f64(self.timeout_secs)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| Error::stage(&ctx.stage_id, "timeout_secs must be positive"))?;
        let opts = EvalOptions {
            timeout,
            max_rows: self.max_rows,
            cache: self.gold_cache.then(|| ctx.cache_dir.join("gold-results.sqlite")),
            ..EvalOptions::default()
        };
        let parts = run_chunks(ctx, episodes.len(), self.chunk_size, |range, _| {
            let chunk = &episodes[range.clone()];
            let pairs: Vec<Pair<'_>> = chunk
                .iter()
                .map(|e| Pair { pred: e.pred.as_deref(), gold: &e.gold, db: Path::new(&e.db_path) })
                .collect();
            let (results, _) = evaluate(&pairs, &opts)?;
            let rows = |f: &dyn Fn(&Episode) -> String| StringArray::from_iter_values(chunk.iter().map(f));
            Ok(RecordBatch::try_new(
                Arc::new(evaluation_schema()),
                vec![
                    Arc::new(UInt64Array::from_iter_values(range.map(|s| s as u64))),
                    Arc::new(Int64Array::from_iter_values(chunk.iter().map(|e| e.question_id))),
                    Arc::new(rows(&|e| e.db_id.clone())),
                    Arc::new(rows(&|e| e.difficulty.clone())),
                    Arc::new(UInt8Array::from_iter_values(results.iter().map(|r| r.verdict.res()))),
                    Arc::new(StringArray::from_iter_values(results.iter().map(|r| r.verdict.as_str()))),
                    Arc::new(StringArray::from_iter_values(
                        results.iter().map(|r| Ran::status(r.pred.as_ref().map(|p| &p.ran))),
                    )),
                    Arc::new(StringArray::from_iter_values(results.iter().map(|r| Ran::status(Some(&r.gold.ran))))),
                    Arc::new(UInt64Array::from(
                        results
                            .iter()
                            .map(|r| match r.pred.as_ref().map(|p| &p.ran) {
                                Some(Ran::Rows { n_rows, .. }) => Some(*n_rows),
                                _ => None,
                            })
                            .collect::<Vec<_>>(),
                    )),
                ],
            )?)
        })?;
        let schema = Arc::new(evaluation_schema());
        Ok(vec![("evaluation".into(), arrow::compute::concat_batches(&schema, &parts)?)])
    }
}
