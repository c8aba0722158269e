//! Episodes in full, assembled from one query per table — episodes, tasks, gold, evaluation,
//! calls, each verifier table, draws — grouped here by episode: every episode at once for the
//! export, or one episode for the server (the same queries, each with that episode's WHERE), so
//! what is served and what is exported come from one code path.
//!
//! Rows are grouped in the order the table is read: the viewer's session reads each file whole, in
//! order, in one partition ([`Catalog::open`]), so an episode's calls keep the order they were
//! written in, in both paths (an ORDER BY on the episode would not: its sort is not stable).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::{Catalog, key, lit, row_key};
use crate::error::{Error, Result};
use crate::report::rows_json as rows;
use crate::session::block_on;

/// The columns of `calls` a body shows, when the table has them. `prompt`: what a call sent, where
/// a run keeps it; today's `calls` table does not, and [`super::prompts`] reads it from the
/// response cache under `key`.
const CALL_COLUMNS: [&str; 12] = [
    "role",
    "backend",
    "model",
    "key",
    "prompt",
    "text",
    "error",
    "tokens_in",
    "tokens_out",
    "latency_ms",
    "attempts",
    "cache_hit",
];

/// The columns that name an episode in every per-episode table.
const EPISODE_KEY: [&str; 4] = ["run", "seed", "arm", "step"];

/// The tables whose columns differ by domain: over several runs a body keeps a run's own.
const BY_DOMAIN: [&str; 4] = ["episodes", "tasks", "gold", "evaluation"];

/// Which rows the body queries read: every episode's (both conditions empty), or one's.
struct Scope {
    /// The condition on tables keyed by episode (`run`, `seed`, `arm`, `step`).
    episode: String,
    /// The condition on tables keyed by task (`run`, `question_id`).
    task: String,
}

impl Scope {
    /// Every episode.
    fn all() -> Scope {
        Scope { episode: String::new(), task: String::new() }
    }

    /// The episode of table row `row`.
    fn of(row: &Value) -> Scope {
        let run = lit(row["run"].as_str().unwrap_or_default());
        let (seed, step) = (row["seed"].as_u64().unwrap_or_default(), row["step"].as_u64().unwrap_or_default());
        let arm = lit(row["arm"].as_str().unwrap_or_default());
        Scope {
            episode: format!("run = {run} AND seed = {seed} AND arm = {arm} AND step = {step}"),
            task: format!("run = {run} AND question_id = {}", row["question_id"]),
        }
    }
}

/// ` WHERE a AND b` of the non-empty `conditions`, or nothing.
fn where_all(conditions: &[&str]) -> String {
    let c: Vec<&str> = conditions.iter().copied().filter(|c| !c.is_empty()).collect();
    if c.is_empty() { String::new() } else { format!(" WHERE {}", c.join(" AND ")) }
}

/// The key of a row of a table keyed by task: `run|question_id`.
fn task_key(r: &Value) -> String {
    format!("{}|{}", r["run"].as_str().unwrap_or_default(), r["question_id"])
}

/// The first of `key`'s rows, taken out of `groups`.
fn take_first(groups: &mut HashMap<String, Vec<Value>>, key: &str) -> Option<Value> {
    groups.remove(key).and_then(|rows| rows.into_iter().next())
}

impl Catalog {
    /// The bodies of every episode (`only` None: one query per table, whatever the number of
    /// episodes) or of episode `only` (the same queries restricted to it), by key. A body holds
    /// `row` (the table row), `episode`, `task`, `gold` (the reference, after the fact; null
    /// without a `gold` table), `evaluation`, `calls`, `votes` (by verifier table) and `memories`
    /// (each memory shown, with its own episode's question, answer and grades, its key, and
    /// under a score-ranked policy its draw). Over runs of different domains each of `episode`,
    /// `task`, `gold` and `evaluation` keeps only its run's own columns.
    pub fn bodies(&self, only: Option<&str>) -> Result<HashMap<String, Value>> {
        let (wanted, scope) = match only {
            Some(k) => {
                let row = self.row(k).ok_or_else(|| Error::usage(format!("no episode {k}")))?;
                (vec![row], Scope::of(row))
            }
            None => (self.rows.iter().collect::<Vec<&Value>>(), Scope::all()),
        };
        let at = where_all(&[scope.episode.as_str()]);
        block_on(async {
            let mut episodes = self.grouped(&format!("SELECT * FROM episodes{at}"), row_key).await?;
            let tasks =
                self.grouped(&format!("SELECT * FROM tasks{}", where_all(&[scope.task.as_str()])), task_key).await?;
            let gold = if self.has("gold") {
                self.grouped(&format!("SELECT * FROM gold{}", where_all(&[scope.task.as_str()])), task_key).await?
            } else {
                HashMap::new()
            };
            let mut evaluation = if self.has("evaluation") {
                self.grouped(&format!("SELECT * FROM evaluation{at}"), row_key).await?
            } else {
                HashMap::new()
            };
            let mut calls = if self.has("calls") {
                let cols: Vec<String> = EPISODE_KEY
                    .iter()
                    .chain(CALL_COLUMNS.iter().filter(|c| self.call_columns.iter().any(|x| x.as_str() == **c)))
                    .map(|c| format!("\"{c}\""))
                    .collect();
                self.grouped(&format!("SELECT {} FROM calls{at}", cols.join(", ")), row_key).await?
            } else {
                HashMap::new()
            };
            let mut votes = Vec::new();
            for v in &self.verifiers {
                votes.push((v, self.grouped(&format!("SELECT * FROM \"{v}\"{at}"), row_key).await?));
            }
            // Score-ranked policies: each shown memory's probability of being drawn first.
            let mut draws = if self.has("draws") {
                let sql = format!(
                    "SELECT run, seed, arm, step, candidate_step, policy, p_first FROM draws{}",
                    where_all(&[scope.episode.as_str(), "drawn"])
                );
                self.grouped(&sql, row_key).await?
            } else {
                HashMap::new()
            };
            let mut out = HashMap::with_capacity(wanted.len());
            for row in wanted {
                let k = row_key(row);
                let run = row["run"].as_str().unwrap_or_default();
                let episode = take_first(&mut episodes, &k).map(|e| self.own(run, "episodes", e));
                let task = tasks.get(&task_key(row)).and_then(|t| t.first()).map(|t| self.own(run, "tasks", t.clone()));
                let reference =
                    gold.get(&task_key(row)).and_then(|g| g.first()).map(|g| self.own(run, "gold", g.clone()));
                let evaluated = take_first(&mut evaluation, &k).map(|e| self.own(run, "evaluation", e));
                let its_calls: Vec<Value> = calls
                    .remove(&k)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|mut c| {
                        if let Some(m) = c.as_object_mut() {
                            m.retain(|name, _| !EPISODE_KEY.contains(&name.as_str()));
                        }
                        self.prompts.fill(&mut c);
                        c
                    })
                    .collect();
                let mut by_verifier = Map::new();
                for (v, groups) in &mut votes {
                    if let Some(r) = take_first(groups, &k) {
                        by_verifier.insert(v.to_string(), r);
                    }
                }
                let memories = self.memories(row, episode.as_ref(), &draws.remove(&k).unwrap_or_default());
                let body = json!({"row": row, "episode": episode, "task": task, "gold": reference,
                                  "evaluation": evaluated, "calls": its_calls, "votes": by_verifier,
                                  "memories": memories});
                out.insert(k, body);
            }
            Ok(out)
        })
    }

    /// The rows of `sql`, grouped by `group` of each row, each group in the order read.
    async fn grouped(&self, sql: &str, group: fn(&Value) -> String) -> Result<HashMap<String, Vec<Value>>> {
        let mut out: HashMap<String, Vec<Value>> = HashMap::new();
        for r in rows(&crate::session::collect(&self.ctx, sql).await?)? {
            out.entry(group(&r)).or_default().push(r);
        }
        Ok(out)
    }

    /// The memories episode `row` was shown (its `episode` row's `retrieved`), each with its own
    /// episode's key and row fields and, from `drawn` (its `draws` rows), the policy and the
    /// probability of being drawn first.
    fn memories(&self, row: &Value, episode: Option<&Value>, drawn: &[Value]) -> Vec<Value> {
        let run = row["run"].as_str().unwrap_or_default();
        let (seed, arm) = (row["seed"].as_u64().unwrap_or_default(), row["arm"].as_str().unwrap_or_default());
        let retrieved = episode.and_then(|e| e["retrieved"].as_array()).cloned().unwrap_or_default();
        retrieved
            .into_iter()
            .map(|mut m| {
                let own = key(run, seed, arm, m["step"].as_u64().unwrap_or_default());
                if let Some(d) = drawn.iter().find(|d| d["candidate_step"] == m["step"]) {
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
            .collect()
    }

    /// `value` (a row of `table`) with only run `run`'s own columns of it, over runs of several
    /// domains; unchanged over one run, or when the run's columns are not known.
    fn own(&self, run: &str, table: &str, value: Value) -> Value {
        match (value, self.own_columns.get(&(run.to_string(), table.to_string()))) {
            (Value::Object(mut m), Some(cols)) => {
                m.retain(|name, _| name == "run" || cols.iter().any(|c| c == name));
                Value::Object(m)
            }
            (value, _) => value,
        }
    }

    /// Over several runs, each run's own columns of the tables whose columns differ by domain,
    /// read from the run's own registration (`__run<i>_<table>`, as
    /// [`crate::session::register_stacked`] registers it); empty over one run. A table a run
    /// lacks is left out (its rows, if any, are kept whole).
    pub(super) async fn read_own_columns(&self) -> HashMap<(String, String), Vec<String>> {
        let mut out = HashMap::new();
        if self.runs.len() < 2 {
            return out;
        }
        for (i, run) in self.runs.iter().enumerate() {
            for table in BY_DOMAIN {
                if let Ok(df) = self.ctx.table(format!("__run{i}_{table}").as_str()).await {
                    let cols: Vec<String> = df.schema().fields().iter().map(|f| f.name().clone()).collect();
                    out.insert((run.name.clone(), table.to_string()), cols);
                }
            }
        }
        out
    }
}
