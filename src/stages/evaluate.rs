//! `kind: evaluate` — execution accuracy per episode (`evaluation`: step, question_id, db_id,
//! difficulty, u, verdict, pred_status, gold_status, pred_rows) with BIRD's rule. One of the only
//! stages allowed to read `gold`. Predictions come from a `predictions` table (in the seed's order
//! when an `order` input is given) or from the agent's `episodes` (in step order), in resumable chunks; gold results come from the shared gold-result cache, so every arm
//! and seed executes each gold query once. No timings in the table: it is the same on every run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arrow::array::{Array, Int64Array, RecordBatch, StringArray, UInt64Array};
use serde::{Deserialize, Serialize};

use crate::columns::{ARM, Column, Getter, SEED, Table};
use crate::domain::factual::gold_judge::{GoldJudge, JudgeConfig};
use crate::domain::factual::{FactualConfig, FactualDomain};
use crate::domain::{Domain, Judge};
use crate::error::{Error, Result};
use crate::eval::query_run::Ran;
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
    /// Factual tasks: the domain options whose evidence corpus `gold_in_evidence` is measured
    /// with (default: the bundled corpus, as the loop's default); unused for text-to-SQL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factual: Option<FactualConfig>,
    /// Factual tasks: an LLM gold judge (SimpleQA's style) recorded beside the normalised match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeConfig>,
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
            (_, Some(o)) => super::permutation::read_order(o)?,
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
    /// Factual tasks: every episode's answer scored by the factual domain's judge.
    fn run_factual(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let config = self.factual.clone().unwrap_or_default();
        let domain = FactualDomain::load(config, |p| ctx.resolve(p), &ctx.cache_dir)?;
        let tasks = domain.tasks(inputs.get(ctx, "tasks")?, Path::new("tasks"))?;
        let gold = domain.gold(inputs.get(ctx, "gold")?, Path::new("gold"))?;
        let episodes = inputs.tables.get("episodes").ok_or_else(|| {
            Error::stage(&ctx.stage_id, "factual tasks are evaluated from the agent's `episodes` input")
        })?;
        let judge = self.judge.as_ref().map(|j| GoldJudge::new(j, |p| ctx.resolve(p), &ctx.cache_dir)).transpose()?;
        let batch = crate::domain::factual::evaluate::evaluate(
            &domain,
            judge.as_ref(),
            &tasks,
            &gold,
            episodes,
            Path::new("episodes"),
        )?;
        Ok(vec![("evaluation".into(), batch)])
    }

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

    /// A gold judge's prompt and model files; a factual evidence file.
    fn fingerprint(&self, ctx: &StageContext) -> Result<std::collections::BTreeMap<String, String>> {
        use crate::fingerprint::file_fingerprint;
        let mut fp = std::collections::BTreeMap::new();
        if let Some(j) = &self.judge {
            fp.insert("judge/prompt".into(), file_fingerprint(&ctx.resolve(&j.prompt))?);
            for f in j.model.resolved(|p| ctx.resolve(p)).files(&crate::model_files::models_dir(&ctx.cache_dir))? {
                let name = f.file_name().unwrap_or_default().to_string_lossy().into_owned();
                fp.insert(format!("judge/model/{name}"), file_fingerprint(&f)?);
            }
        }
        let corpus = self.factual.clone().unwrap_or_default().corpus_fingerprint(|p| ctx.resolve(p))?;
        fp.insert("evidence".into(), corpus);
        Ok(fp)
    }

    fn outputs(&self, _: &str) -> Vec<String> {
        vec!["evaluation".into()]
    }

    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serializes")
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        if crate::datasets::factual::tables::is_factual(inputs.get(ctx, "tasks")?) {
            return self.run_factual(ctx, inputs);
        }
        if self.judge.is_some() || self.factual.is_some() {
            return Err(Error::stage(&ctx.stage_id, "`judge` and `factual` apply to factual tasks only"));
        }
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
        Ok(vec![("evaluation".into(), arrow::compute::concat_batches(&schema, &parts)?)])
    }
}
