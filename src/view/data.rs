//! What the viewer shows, as JSON, from SQL over the loaded runs: every episode's row for the
//! table (small: its question, artifact, grades, channels fired, memories shown and how often its
//! own memory was shown later, votes), the episodes in full ([`Catalog::bodies`]: task, gold,
//! memories with their own episodes, model calls, evaluation, verifier rows — one code path for
//! one episode served and for every episode exported), the paired comparison of every two (run,
//! arm) cells (`pipelines/reports/compare_runs.sql`), a search of the model's text, and a
//! read-only SQL box.
//!
//! Two sessions: one where every table of every run is stacked with a `run` column (what the
//! page reads, whatever the number of runs), and one that is `lucid query`'s (what the SQL box
//! runs on, so a query pasted from the page reruns unchanged with `lucid query`).

use std::collections::HashMap;
use std::path::PathBuf;

use datafusion::prelude::SessionContext;
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::report::rows_json as rows;
use crate::session::block_on;

mod bodies;
mod later;
pub use later::{HARM_SQL, NO_MEMORY};
mod prompts;

/// The paired comparison of every two (run, arm) cells, the report file a user reruns.
pub const COMPARE_SQL: &str = include_str!("../../pipelines/reports/compare_runs.sql");

/// One loaded run.
#[derive(Clone, Debug)]
pub struct RunInfo {
    /// Its name (the `run` column).
    pub name: String,
    /// Its folder or store URL.
    pub path: PathBuf,
    /// Its domain's artifact column (`sql`, `answer`, ...).
    pub artifact: String,
}

/// The loaded runs and what the page reads of them.
pub struct Catalog {
    ctx: SessionContext,
    sql_ctx: SessionContext,
    tables: Vec<String>,
    episode_columns: Vec<String>,
    /// The runs, in the order given.
    pub runs: Vec<RunInfo>,
    /// Every episode's table row.
    pub rows: Vec<Value>,
    /// The verifier tables (`v_*`), each a column of votes in the rows.
    pub verifiers: Vec<String>,
    /// The rows of [`COMPARE_SQL`].
    pub compare: Vec<Value>,
    by_key: HashMap<String, usize>,
    /// The columns of `calls` (empty without the table).
    call_columns: Vec<String>,
    /// Each call's prompt, from this machine's response cache.
    prompts: prompts::CachedPrompts,
    /// Over several runs, each run's own columns of a stacked table, by (run, table): what an
    /// episode's body keeps (another domain's columns are null in the stack).
    own_columns: HashMap<(String, String), Vec<String>>,
}

/// An episode's key in the page: `run|seed|arm|step`.
pub fn key(run: &str, seed: u64, arm: &str, step: u64) -> String {
    format!("{run}|{seed}|{arm}|{step}")
}

/// `s` as a SQL string literal.
fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

impl Catalog {
    /// Load `runs` (names and folders or store URLs, as `lucid query` reads them).
    pub fn open(runs: &[(String, PathBuf)]) -> Result<Catalog> {
        block_on(async {
            let ctx = crate::session::new();
            let tables = crate::session::register_stacked(&ctx, runs).await?;
            // Each file read whole, in order, by one partition: an episode's rows (its calls) keep
            // the order they were written in, whether every episode's are read or one's.
            for set in [
                "SET datafusion.optimizer.repartition_file_scans = false",
                "SET datafusion.optimizer.enable_round_robin_repartition = false",
            ] {
                ctx.sql(set).await.map_err(|e| Error::query_from("the viewer's session", e))?;
            }
            for needed in ["episodes", "tasks"] {
                if !tables.iter().any(|t| t == needed) {
                    return Err(Error::usage(format!("the runs have no `{needed}` table: nothing to view")));
                }
            }
            let (sql_ctx, _) = crate::runs::session_for(runs).await?;
            super::sql_box::prepare(&sql_ctx);
            let mut infos = Vec::new();
            for (name, path) in runs {
                let one =
                    crate::session::collect(&ctx, &format!("SELECT * FROM tasks WHERE run = {} LIMIT 1", lit(name)))
                        .await?;
                // A run whose tasks name no registered domain shows the default domain's column.
                let artifact = crate::domains::registry::of_tasks(&one)
                    .or_else(|_| crate::domains::registry::kind(crate::domains::registry::DEFAULT))
                    .map_or_else(|_| String::new(), |e| e.artifact.into());
                infos.push(RunInfo { name: name.clone(), path: path.clone(), artifact });
            }
            let verifiers: Vec<String> = tables.iter().filter(|t| t.starts_with("v_")).cloned().collect();
            let mut catalog = Catalog {
                ctx,
                sql_ctx,
                tables,
                episode_columns: Vec::new(),
                runs: infos,
                rows: Vec::new(),
                verifiers,
                compare: Vec::new(),
                by_key: HashMap::new(),
                call_columns: Vec::new(),
                prompts: prompts::CachedPrompts::open(&crate::pipeline::models::responses_path(
                    &crate::cache_dir::cache_dir(),
                )),
                own_columns: HashMap::new(),
            };
            catalog.episode_columns = catalog.columns("episodes").await?;
            if catalog.has("calls") {
                catalog.call_columns = catalog.columns("calls").await?;
            }
            catalog.own_columns = catalog.read_own_columns().await;
            catalog.rows = catalog.list().await?;
            catalog.by_key = catalog.rows.iter().enumerate().map(|(i, r)| (row_key(r), i)).collect();
            if catalog.has("evaluation") {
                catalog.compare = rows(&crate::session::collect(&catalog.ctx, COMPARE_SQL).await?)?;
            }
            Ok(catalog)
        })
    }

    fn has(&self, table: &str) -> bool {
        self.tables.iter().any(|t| t == table)
    }

    async fn columns(&self, table: &str) -> Result<Vec<String>> {
        let df = self.ctx.table(table).await.map_err(|e| Error::query_from(table, e))?;
        Ok(df.schema().fields().iter().map(|f| f.name().clone()).collect())
    }

    /// Every episode's table row, in run, arm, seed, step order: the memories it was shown as
    /// `[step, label shown, similarity]`, and its own memory's `shown_later` and `later_right`.
    async fn list(&self) -> Result<Vec<Value>> {
        let cols = &self.episode_columns;
        let present = |c: &str| cols.iter().any(|x| x == c);
        let mut artifacts: Vec<String> = self.runs.iter().map(|r| r.artifact.clone()).collect();
        artifacts.dedup();
        let artifact: Vec<String> = artifacts.iter().filter(|a| present(a)).map(|a| format!("e.\"{a}\"")).collect();
        let artifact = match artifact.len() {
            0 => "CAST(NULL AS VARCHAR)".to_string(),
            1 => artifact[0].clone(),
            _ => format!("COALESCE({})", artifact.join(", ")),
        };
        let opt = |c: &str, ty: &str| if present(c) { format!("e.{c}") } else { format!("CAST(NULL AS {ty})") };
        let mut select = format!(
            "SELECT e.run, e.seed, e.arm, e.step, e.question_id, t.question, {artifact} AS artifact, {} AS grade, \
             {} AS r, {} AS stored_q, {} AS flagged, {} AS channels, {} AS retrieved",
            opt("grade", "VARCHAR"),
            opt("r", "TINYINT UNSIGNED"),
            opt("stored_q", "TINYINT UNSIGNED"),
            opt("flagged", "BOOLEAN"),
            if present("channels") { "e.channels" } else { "NULL" },
            if present("retrieved") { "e.retrieved" } else { "NULL" },
        );
        let mut from =
            "FROM episodes e LEFT JOIN tasks t ON t.run = e.run AND t.question_id = e.question_id".to_string();
        let on = |a: &str| format!("{a}.run = e.run AND {a}.seed = e.seed AND {a}.arm = e.arm AND {a}.step = e.step");
        if self.has("evaluation") {
            select.push_str(", ev.u");
            from.push_str(&format!(" LEFT JOIN evaluation ev ON {}", on("ev")));
        } else {
            select.push_str(", CAST(NULL AS TINYINT UNSIGNED) AS u");
        }
        for (i, v) in self.verifiers.iter().enumerate() {
            select.push_str(&format!(", x{i}.v AS \"{v}\""));
            from.push_str(&format!(" LEFT JOIN \"{v}\" x{i} ON {}", on(&format!("x{i}"))));
        }
        // Sorted here, not by the query: over two runs with verifier tables, DataFusion 55 plans
        // the ORDER BY as a merge of inputs it takes for sorted and its plan check refuses it.
        let mut out = rows(&crate::session::collect(&self.ctx, &format!("{select} {from}")).await?)?;
        let key = |r: &Value| {
            let text = |k: &str| r[k].as_str().unwrap_or("").to_string();
            (text("run"), text("arm"), r["seed"].as_u64(), r["step"].as_u64())
        };
        out.sort_by_key(key);
        for r in &mut out {
            // The channels that fired, by name; the memories shown as [step, label shown].
            let fired: Vec<Value> = r["channels"]
                .as_array()
                .map(|cs| cs.iter().filter(|c| c["fired"] == true).map(|c| c["name"].clone()).collect())
                .unwrap_or_default();
            let shown: Vec<Value> = r["retrieved"]
                .as_array()
                .map(|ms| ms.iter().map(|m| json!([m["step"], m["shown_label"], m["similarity"]])).collect())
                .unwrap_or_default();
            r["channels"] = Value::Array(fired);
            r["retrieved"] = Value::Array(shown);
        }
        later::count(&mut out);
        Ok(out)
    }

    /// The table row of episode `key`.
    pub fn row(&self, key: &str) -> Option<&Value> {
        self.by_key.get(key).map(|&i| &self.rows[i])
    }

    /// Episode `wanted` in full: its body as [`Catalog::bodies`] assembles every episode's.
    pub fn episode(&self, wanted: &str) -> Result<Value> {
        self.bodies(Some(wanted))?.remove(wanted).ok_or_else(|| Error::usage(format!("no episode {wanted}")))
    }

    /// The episodes whose model calls or plan hold `text` (case-insensitive), by key.
    pub fn search(&self, text: &str) -> Result<Vec<String>> {
        let needle = lit(&text.to_lowercase());
        let mut parts = Vec::new();
        if self.has("calls") {
            parts.push(format!("SELECT run, seed, arm, step FROM calls WHERE strpos(lower(text), {needle}) > 0"));
        }
        if self.episode_columns.iter().any(|c| c == "plan") {
            parts.push(format!("SELECT run, seed, arm, step FROM episodes WHERE strpos(lower(plan), {needle}) > 0"));
        }
        if parts.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!("SELECT DISTINCT run, seed, arm, step FROM ({})", parts.join(" UNION ALL "));
        let found = block_on(crate::session::collect(&self.ctx, &sql))?;
        Ok(rows(&found)?.iter().map(row_key).collect())
    }

    /// The SQL box: a read-only query (no DDL, no DML, no statements such as `COPY` or `SET`) over
    /// the runs, as `lucid query` names their tables: its columns and first rows, run on a thread
    /// of its own with a time limit and stopped when `gone` says its page went away
    /// ([`super::sql_box`]).
    pub fn query(&self, sql: &str, gone: &dyn Fn() -> bool) -> std::result::Result<Value, super::sql_box::Unanswered> {
        super::sql_box::run(&self.sql_ctx, sql, gone)
    }
}

/// The key of a row holding `run`, `seed`, `arm` and `step`.
pub fn row_key(r: &Value) -> String {
    key(
        r["run"].as_str().unwrap_or_default(),
        r["seed"].as_u64().unwrap_or_default(),
        r["arm"].as_str().unwrap_or_default(),
        r["step"].as_u64().unwrap_or_default(),
    )
}
