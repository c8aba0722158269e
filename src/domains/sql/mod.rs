//! Text-to-SQL (BIRD, Spider, the bundled benchmark): the task's context is its question, BIRD's
//! evidence and the database schema; the artifact is the executor's query, observed by running it
//! in the read-only sandbox (twice); its channels are the answer-free detector's (execution,
//! degeneracy, literal grounding); gold scoring is BIRD's execution accuracy.

pub mod detector;
pub mod evaluate;
pub mod extract;
pub mod flags;
mod kind;
pub mod schema;
pub mod sources;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use arrow::array::{Int64Array, RecordBatch, StringArray};
use serde::{Deserialize, Serialize};

use self::detector::{DetectorConfig, Observed};
use self::schema::{SchemaStyle, Schemas};
use crate::columns::{Column, Getter};
use crate::datasets::Task;
use crate::error::{Error, Invalid, Result};
use crate::seam::records::Episode;
use crate::seam::{Channels, Domain, Judge, Observation};
use crate::sql::connections::Connections;
use crate::sql::outcome::Outcome;
use crate::sql::sandbox::{Limits, OpenOptions};

/// The text-to-SQL domain's options (the memory loop's `domain:` block; for compatibility also
/// accepted at the top level of a memory_loop config, as before domains existed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SqlConfig {
    /// How the schema is shown: create (CREATE TABLE statements) | compact (`table(col TYPE, ..)`).
    #[serde(default)]
    pub schema_style: SchemaStyle,
    /// Schema shown to the model, in characters (0: all).
    #[serde(default = "default_schema_chars")]
    pub schema_chars: usize,
    /// Result rows shown to the self-grader.
    #[serde(default = "default_preview")]
    pub preview_rows: usize,
    /// Query timeout, seconds.
    #[serde(default = "default_timeout")]
    pub timeout_secs: f64,
    /// Row cap per query.
    #[serde(default = "default_max_rows")]
    pub max_rows: u64,
    /// The answer-free detector.
    #[serde(default)]
    pub detector: DetectorConfig,
}

fn default_schema_chars() -> usize {
    6000
}
fn default_preview() -> usize {
    5
}
fn default_timeout() -> f64 {
    30.0
}
fn default_max_rows() -> u64 {
    1_000_000
}

impl Default for SqlConfig {
    fn default() -> Self {
        SqlConfig {
            schema_style: SchemaStyle::default(),
            schema_chars: default_schema_chars(),
            preview_rows: default_preview(),
            timeout_secs: default_timeout(),
            max_rows: default_max_rows(),
            detector: DetectorConfig::default(),
        }
    }
}

/// The text-to-SQL domain, configured.
pub struct SqlDomain {
    config: SqlConfig,
    limits: Limits,
    /// The shared gold-result cache (oracle scoring).
    gold_cache: Option<PathBuf>,
}

impl SqlDomain {
    /// The domain with `config`; `gold_cache` is where gold results are remembered.
    pub fn new(config: SqlConfig, gold_cache: Option<PathBuf>) -> std::result::Result<SqlDomain, Invalid> {
        let timeout = Duration::try_from_secs_f64(config.timeout_secs)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or("timeout_secs must be positive")?;
        let limits = Limits { timeout, max_rows: config.max_rows, run_twice: true, ..Limits::default() };
        Ok(SqlDomain { config, limits, gold_cache })
    }
}

/// A worker's open databases and schemas.
pub struct SqlWorker {
    conns: Connections,
    schemas: Schemas,
}

/// What running an episode's query recorded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SqlObs {
    /// ok / error / timeout / nondeterministic.
    pub exec_status: String,
    /// Error message of a failed execution (or why nothing ran).
    pub exec_error: Option<String>,
    /// Rows returned.
    pub n_rows: Option<u64>,
    /// Every returned value NULL.
    pub all_null: bool,
    /// Hash of the result as a set of rows (hex).
    pub result_hash: Option<String>,
}

type E = Getter<Episode<SqlObs>>;

impl Domain for SqlDomain {
    type Task = Task;
    type Worker = SqlWorker;
    type Obs = SqlObs;

    const NAME: &'static str = "sql";
    const GROUP: &'static str = "db_id";
    const GROUP_DOC: &'static str = "Its database.";
    const ARTIFACT: &'static str = "sql";
    const PROMPTS: &'static str = "pipelines/prompts";
    const ARTIFACT_DOC: &'static str = "The query the executor wrote, exactly: from the first SELECT/WITH of the first fenced block holding one (else of the text) to the first ';' or closing fence outside quotes, strings and comments (unfenced: also a blank line); quoted identifiers (`x`, \"x\", [x]), literals and inner comments kept, trailing whitespace and comments dropped. Null when the answer holds no query or the executor call failed.";
    const CHANNELS: &'static [&'static str] = &["execution", "degeneracy", "literal"];

    fn tasks(&self, batch: &RecordBatch, path: &Path) -> Result<Vec<Task>> {
        crate::datasets::tables::tasks_from_batch(batch, path)
    }
    fn id(task: &Task) -> i64 {
        task.question_id
    }
    fn question(task: &Task) -> &str {
        &task.question
    }
    fn group(task: &Task) -> &str {
        &task.db_id
    }
    fn worker(&self) -> SqlWorker {
        SqlWorker { conns: Connections::new(OpenOptions::default()), schemas: Schemas::default() }
    }

    fn context(&self, w: &mut SqlWorker, task: &Task) -> Result<Vec<(&'static str, String)>> {
        let schema = w.schemas.get(&task.db_path, self.config.schema_style, self.config.schema_chars)?;
        Ok(vec![("evidence", task.evidence.clone()), ("schema", schema.to_string())])
    }

    fn extract(&self, text: &str) -> std::result::Result<String, Invalid> {
        extract::extract_sql(text).ok_or_else(|| "no SQL query in the executor's answer".into())
    }

    fn unobserved(&self, why: &str) -> SqlObs {
        SqlObs { exec_status: "error".into(), exec_error: Some(why.into()), ..SqlObs::default() }
    }

    fn observe(&self, w: &mut SqlWorker, task: &Task, sql: &str) -> Result<Observation<SqlObs>> {
        let exec = w.conns.get(&task.db_path)?.execute(sql, &self.limits);
        let preview_rows = self.config.preview_rows;
        let result = match &exec.outcome {
            Outcome::Ok(rows) => rows.preview(preview_rows),
            Outcome::Nondeterministic(rows) => {
                format!("{}\n(two identical runs returned different results)", rows.preview(preview_rows))
            }
            Outcome::Error(e) => e.clone(),
            Outcome::Timeout => format!("interrupted after {:?}", self.limits.timeout),
        };
        let status = exec.outcome.status().as_str().to_string();
        let mut obs = SqlObs {
            exec_status: status.clone(),
            exec_error: exec.outcome.error().map(str::to_string),
            ..SqlObs::default()
        };
        if obs.exec_status == "timeout" {
            obs.exec_error = Some(result.clone());
        }
        if let Some(rows) = exec.outcome.rows() {
            obs.n_rows = Some(rows.n_rows);
            obs.all_null = rows.all_null;
            obs.result_hash = Some(format!("{:032x}", rows.set_hash));
        }
        Ok(Observation { obs, status, result })
    }

    fn channels(&self, task: &Task, sql: Option<&str>, obs: &SqlObs) -> Channels {
        let observed = Observed { sql, status: &obs.exec_status, n_rows: obs.n_rows, all_null: obs.all_null };
        self.config.detector.detect(&task.question, &task.evidence, &observed).channels()
    }

    fn flag_channels(&self) -> Vec<String> {
        self.config.detector.channels.iter().map(|c| c.name().to_string()).collect()
    }

    fn observation_columns() -> Vec<Column<Episode<SqlObs>>> {
        vec![
            Column::new(
                "exec_status",
                E::Str(|e| &e.obs.exec_status),
                "ok / error / timeout / nondeterministic (two identical runs differ); error when no query ran. Deterministic unless a query runs close to the timeout (timeout is wall-clock).",
            ),
            Column::new(
                "exec_error",
                E::OptStr(|e| e.obs.exec_error.as_deref()),
                "SQLite's or the sandbox's message, or why nothing ran.",
            ),
            Column::new("n_rows", E::OptU64(|e| e.obs.n_rows), "Rows returned."),
            Column::new("all_null", E::Bool(|e| e.obs.all_null), "At least one row and every value NULL."),
            Column::new(
                "result_hash",
                E::OptStr(|e| e.obs.result_hash.as_deref()),
                "xxh3-128 of the result as a set of rows (hex): equal hashes = equal results under BIRD's rule.",
            ),
        ]
    }

    fn channel_columns() -> Vec<Column<Episode<SqlObs>>> {
        vec![
            Column::new(
                "flag_exec",
                E::Bool(|e| e.channels.fired("execution")),
                "Detector, execution channel (= channels 'execution'): error, timeout, nondeterministic, or no query.",
            ),
            Column::new(
                "flag_degenerate",
                E::Bool(|e| e.channels.fired("degeneracy")),
                "Detector, degeneracy channel (= channels 'degeneracy'): no rows, or only NULLs.",
            ),
            Column::new(
                "flag_literal",
                E::Bool(|e| e.channels.fired("literal")),
                "Detector, literal-grounding channel (= channels 'literal'): an entity-like filter literal absent from question and evidence.",
            ),
            Column::new(
                "literals",
                E::OptStr(|e| e.channels.detail("literal")),
                "The ungrounded literals, as a JSON list.",
            ),
        ]
    }
}

impl Judge for SqlDomain {
    type Gold = String;

    fn gold(&self, g: &RecordBatch, path: &Path) -> Result<HashMap<i64, String>> {
        let t = crate::datasets::tables::gold_table();
        let (q, sql) = (t.column::<Int64Array>(g, path, "question_id")?, t.column::<StringArray>(g, path, "gold_sql")?);
        Ok((0..g.num_rows()).map(|i| (q.value(i), sql.value(i).to_string())).collect())
    }

    fn score(&self, task: &Task, gold: &String, sql: Option<&str>) -> Result<u8> {
        let opts = crate::eval::EvalOptions {
            timeout: self.limits.timeout,
            jobs: 1,
            cache: self.gold_cache.clone(),
            ..Default::default()
        };
        let pair = crate::eval::Pair { pred: sql, gold, db: &task.db_path };
        let (r, _) = crate::eval::evaluate(&[pair], &opts)?;
        r.first().map(|r| r.verdict.res()).ok_or_else(|| Error::query("evaluation returned no verdict"))
    }
}
