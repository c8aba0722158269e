//! The evaluate stage in text-to-SQL: execution accuracy per episode (`evaluation`: step,
//! question_id, db_id, difficulty, u, verdict, pred_status, gold_status, pred_rows) with BIRD's
//! rule. Predictions come from a `predictions` table (in the seed's order when an `order` input is
//! given) or from the agent's `episodes` (in step order), in resumable chunks; gold results come
//! from the shared gold-result cache, so every arm and seed executes each gold query once. No
//! timings in the table: it is the same on every run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arrow::array::{Array, Int64Array, RecordBatch, StringArray, UInt64Array};

use crate::columns::{ARM, Column, Getter, SEED, Table};
use crate::domains::Evaluate;
use crate::error::{Error, Result};
use crate::eval::query_run::Ran;
use crate::eval::{EvalOptions, Pair};
use crate::pipeline::checkpoint::run_chunks;
use crate::pipeline::stage::{Inputs, StageContext};
use crate::table::column;

/// One `evaluation` row.
pub struct EvalRow {
    /// The episode's step.
    pub step: u64,
    /// The task.
    pub question_id: i64,
    /// Its database.
    pub db_id: String,
    /// Its difficulty.
    pub difficulty: String,
    /// EX.
    pub u: u8,
    /// Why.
    pub verdict: &'static str,
    /// How the predicted query ran.
    pub pred_status: &'static str,
    /// How the gold query ran.
    pub gold_status: &'static str,
    /// Rows the predicted query returned.
    pub pred_rows: Option<u64>,
}

/// The `evaluation` table: one definition per column (schema, batch, `schemas/evaluation.json`).
pub fn evaluation_table() -> Table<EvalRow> {
    type V = Getter<EvalRow>;
    Table {
        name: "evaluation",
        description: "Execution accuracy of every episode (or prediction) under BIRD's rule; the only agent-related table computed from gold.",
        written_by: "the evaluate stage",
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("step", V::U64(|r| r.step), "The episode's step."),
            Column::new("question_id", V::I64(|r| r.question_id), "The task."),
            Column::new("db_id", V::Str(|r| &r.db_id), "Its database."),
            Column::new(
                "difficulty",
                V::Str(|r| &r.difficulty),
                "simple / moderate / challenging (unknown for Spider layout).",
            ),
            Column::new("u", V::U8(|r| r.u), "EX: 1 when the query's result equals gold's as a set of rows, else 0."),
            Column::new(
                "verdict",
                V::Str(|r| r.verdict),
                "Why: match, mismatch, pred_error, pred_timeout, ... (see lucid eval).",
            ),
            Column::new("pred_status", V::Str(|r| r.pred_status), "How the predicted query ran."),
            Column::new("gold_status", V::Str(|r| r.gold_status), "How the gold query ran."),
            Column::new("pred_rows", V::OptU64(|r| r.pred_rows), "Rows the predicted query returned."),
        ],
    }
}

struct Episode {
    question_id: i64,
    db_id: String,
    difficulty: String,
    db_path: PathBuf,
    pred: Option<String>,
    gold: String,
}

fn episodes(ctx: &StageContext, inputs: &Inputs) -> Result<Vec<Episode>> {
    let p = |n: &str| PathBuf::from(n);
    let tasks = crate::datasets::tables::tasks_from_batch(inputs.get(ctx, "tasks")?, Path::new("tasks"))?;
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
            return Err(Error::stage(&ctx.stage_id, "needs exactly one of the inputs `predictions` and `episodes`"));
        }
    };
    let p_qid = column::<Int64Array>(preds, &p(source), "question_id")?;
    let p_sql = column::<StringArray>(preds, &p(source), "sql")?;
    let pred_of: HashMap<i64, Option<&str>> =
        (0..preds.num_rows()).map(|i| (p_qid.value(i), p_sql.is_valid(i).then(|| p_sql.value(i)))).collect();
    let order: Vec<i64> = match (source, inputs.tables.get("order")) {
        ("episodes", _) => {
            let step = column::<UInt64Array>(preds, &p(source), "step")?;
            let mut by_step: Vec<(u64, i64)> = (0..preds.num_rows()).map(|i| (step.value(i), p_qid.value(i))).collect();
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

/// The `evaluation` of the stage's inputs under BIRD's rule.
pub fn evaluate(e: &Evaluate<'_>, ctx: &StageContext, inputs: &Inputs) -> Result<RecordBatch> {
    if let Some(k) = e.options.keys().next() {
        return Err(Error::stage(&ctx.stage_id, format!("`{k}` is not an evaluate option of text-to-SQL tasks")));
    }
    let episodes = episodes(ctx, inputs)?;
    let timeout = Duration::try_from_secs_f64(e.timeout_secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| Error::stage(&ctx.stage_id, "timeout_secs must be positive"))?;
    let opts = EvalOptions {
        timeout,
        max_rows: e.max_rows,
        cache: e.gold_cache.then(|| ctx.cache_dir.join("gold-results.sqlite")),
        ..EvalOptions::default()
    };
    let parts = run_chunks(ctx, episodes.len(), e.chunk_size, |range, _| {
        let chunk = &episodes[range.clone()];
        let pairs: Vec<Pair<'_>> =
            chunk.iter().map(|e| Pair { pred: e.pred.as_deref(), gold: &e.gold, db: Path::new(&e.db_path) }).collect();
        let (results, _) = crate::eval::evaluate(&pairs, &opts)?;
        let rows: Vec<EvalRow> = range
            .zip(chunk)
            .zip(&results)
            .map(|((step, e), r)| EvalRow {
                step: step as u64,
                question_id: e.question_id,
                db_id: e.db_id.clone(),
                difficulty: e.difficulty.clone(),
                u: r.verdict.res(),
                verdict: r.verdict.as_str(),
                pred_status: Ran::status(r.pred.as_ref().map(|p| &p.ran)),
                gold_status: Ran::status(Some(&r.gold.ran)),
                pred_rows: match r.pred.as_ref().map(|p| &p.ran) {
                    Some(Ran::Rows { n_rows, .. }) => Some(*n_rows),
                    _ => None,
                },
            })
            .collect();
        evaluation_table().batch(&rows)
    })?;
    let schema = Arc::new(evaluation_table().schema());
    Ok(arrow::compute::concat_batches(&schema, &parts)?)
}
