//! What the viewer shows, as JSON, from SQL over the loaded runs: every episode's row for the
//! table (small: its question, artifact, grades, channels fired, memories shown, votes), one
//! episode in full (task, memories with their own episodes, model calls, evaluation, verifier
//! rows), the paired comparison of every two (run, arm) cells (`pipelines/reports/compare_runs.sql`),
//! a search of the model's text, and a read-only SQL box.
//!
//! Two sessions: one where every table of every run is stacked with a `run` column (what the
//! page reads, whatever the number of runs), and one that is `lucid query`'s (what the SQL box
//! runs on, so a query pasted from the page reruns unchanged with `lucid query`).

use std::collections::HashMap;
use std::path::PathBuf;

use datafusion::execution::context::SQLOptions;
use datafusion::prelude::SessionContext;
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::report::rows_json as rows;
use crate::session::block_on;

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
            for needed in ["episodes", "tasks"] {
                if !tables.iter().any(|t| t == needed) {
                    return Err(Error::usage(format!("the runs have no `{needed}` table: nothing to view")));
                }
            }
            let (sql_ctx, _) = crate::runs::session_for(runs).await?;
            let mut infos = Vec::new();
            for (name, path) in runs {
                let one =
                    crate::session::collect(&ctx, &format!("SELECT * FROM tasks WHERE run = {} LIMIT 1", lit(name)))
                        .await?;
                let artifact =
                    crate::stages::domains::of_tasks(&one).map_or_else(|_| "sql".into(), |e| e.artifact.into());
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
            };
            catalog.episode_columns = catalog.columns("episodes").await?;
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

    /// Every episode's table row, in run, arm, seed, step order.
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
        let sql = format!("{select} {from} ORDER BY e.run, e.arm, e.seed, e.step");
        let mut out = rows(&crate::session::collect(&self.ctx, &sql).await?)?;
        for r in &mut out {
            // The channels that fired, by name; the memories shown as [step, label shown].
            let fired: Vec<Value> = r["channels"]
                .as_array()
                .map(|cs| cs.iter().filter(|c| c["fired"] == true).map(|c| c["name"].clone()).collect())
                .unwrap_or_default();
            let shown: Vec<Value> = r["retrieved"]
                .as_array()
                .map(|ms| ms.iter().map(|m| json!([m["step"], m["shown_label"]])).collect())
                .unwrap_or_default();
            r["channels"] = Value::Array(fired);
            r["retrieved"] = Value::Array(shown);
        }
        Ok(out)
    }

    /// The table row of episode `key`.
    pub fn row(&self, key: &str) -> Option<&Value> {
        self.by_key.get(key).map(|&i| &self.rows[i])
    }

    /// Episode `key` in full.
    pub fn episode(&self, wanted: &str) -> Result<Value> {
        let row = self.row(wanted).ok_or_else(|| Error::usage(format!("no episode {wanted}")))?;
        let (run, seed, arm, step) = (
            row["run"].as_str().unwrap_or_default(),
            row["seed"].as_u64().unwrap_or_default(),
            row["arm"].as_str().unwrap_or_default(),
            row["step"].as_u64().unwrap_or_default(),
        );
        let at = format!("run = {} AND seed = {seed} AND arm = {} AND step = {step}", lit(run), lit(arm));
        block_on(async {
            let one = |sql: String| async move { rows(&crate::session::collect(&self.ctx, &sql).await?) };
            let episode = one(format!("SELECT * FROM episodes WHERE {at}")).await?.into_iter().next();
            let task =
                one(format!("SELECT * FROM tasks WHERE run = {} AND question_id = {}", lit(run), row["question_id"]))
                    .await?
                    .into_iter()
                    .next();
            let evaluation = if self.has("evaluation") {
                one(format!("SELECT * FROM evaluation WHERE {at}")).await?.into_iter().next()
            } else {
                None
            };
            let calls = if self.has("calls") {
                one(format!(
                    "SELECT role, backend, model, key, text, error, tokens_in, tokens_out, latency_ms, attempts, cache_hit \
                     FROM calls WHERE {at}"
                ))
                .await?
            } else {
                Vec::new()
            };
            let mut votes = serde_json::Map::new();
            for v in &self.verifiers {
                if let Some(r) = one(format!("SELECT * FROM \"{v}\" WHERE {at}")).await?.into_iter().next() {
                    votes.insert(v.clone(), r);
                }
            }
            // Score-ranked policies: each shown memory's probability of being drawn first.
            let draws = if self.has("draws") {
                one(format!("SELECT candidate_step, policy, p_first FROM draws WHERE {at} AND drawn")).await?
            } else {
                Vec::new()
            };
            let retrieved = episode.as_ref().and_then(|e| e["retrieved"].as_array().cloned()).unwrap_or_default();
            let memories: Vec<Value> = retrieved
                .iter()
                .map(|m| {
                    let own = key(run, seed, arm, m["step"].as_u64().unwrap_or_default());
                    let mut m = m.clone();
                    if let Some(d) = draws.iter().find(|d| d["candidate_step"] == m["step"]) {
                        m["policy"] = d["policy"].clone();
                        m["p_first"] = d["p_first"].clone();
                    }
                    if let Some(r) = self.row(&own) {
                        m["key"] = own.into();
                        for k in ["question", "artifact", "grade", "r", "u", "stored_q"] {
                            m[k] = r[k].clone();
                        }
                    }
                    m
                })
                .collect();
            Ok(json!({"row": row, "episode": episode, "task": task, "evaluation": evaluation,
                      "calls": calls, "votes": votes, "memories": memories}))
        })
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

    /// A read-only query (no DDL, no DML, no statements such as `COPY` or `SET`) over the runs,
    /// as `lucid query` names their tables: its columns and rows.
    pub fn query(&self, sql: &str) -> Result<Value> {
        let options = SQLOptions::new().with_allow_ddl(false).with_allow_dml(false).with_allow_statements(false);
        block_on(async {
            let df = self.sql_ctx.sql_with_options(sql, options).await.map_err(|e| Error::query_from("query", e))?;
            let schema = std::sync::Arc::new(df.schema().as_arrow().clone());
            let columns: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
            let batches = df.limit(0, Some(5000)).map_err(|e| Error::query_from("query", e))?;
            let batches = batches.collect().await.map_err(|e| Error::query_from("query", e))?;
            let batch = arrow::compute::concat_batches(&schema, &batches)?;
            Ok(json!({"columns": columns, "rows": rows(&batch)?, "limit": 5000}))
        })
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
