//! `kind: evaluate` — every episode (or prediction) scored against gold by its domain (the
//! `tasks` input's: text-to-SQL under BIRD's execution-accuracy rule, factual QA by the
//! normalised match and an optional LLM gold judge, any registered domain by its judge). One of
//! the only stages allowed to read `gold`.

use std::collections::BTreeMap;

use arrow::array::RecordBatch;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::domains::Evaluate;
use crate::domains::registry as domains;
use crate::error::{Error, Result};
use crate::pipeline::stage::{Inputs, Misplanned, Planned, Stage, StageContext};

/// Config of the evaluate stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
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
    /// A domain's own options, by key (`lucid domains` lists them; factual QA: `factual`, the
    /// loop's domain options whose evidence `gold_in_evidence` is measured with, and `judge`, an
    /// LLM gold judge in SimpleQA's style).
    #[serde(flatten)]
    pub options: Map<String, Value>,
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

impl EvaluateStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "evaluate";

    fn settings(&self) -> Evaluate<'_> {
        Evaluate {
            timeout_secs: self.timeout_secs,
            chunk_size: self.chunk_size,
            max_rows: self.max_rows,
            gold_cache: self.gold_cache,
            options: &self.options,
        }
    }
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

    /// Every key is the common settings' or some domain's.
    fn check(&self, _: &Planned<'_>) -> std::result::Result<(), Misplanned> {
        let all = domains::all();
        match self.options.keys().find(|k| !all.iter().any(|e| e.evaluate_options.contains(&k.as_str()))) {
            Some(k) => Err(Misplanned::new(
                k.as_str(),
                format!(
                    "unknown field `{k}`: the evaluate stage takes timeout_secs, chunk_size, max_rows, gold_cache \
                     and its domains' options ({})",
                    all.iter()
                        .flat_map(|e| e.evaluate_options.iter().map(move |o| format!("{o}: {}", e.name)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
            None => {
                for (k, v) in &self.options {
                    for e in all.iter().filter(|e| e.evaluate_options.contains(&k.as_str())) {
                        (e.evaluate_option)(k, v)
                            .map_err(|x| Misplanned::new(k.as_str(), format!("`{k}`: {}", x.0)))?;
                    }
                }
                Ok(())
            }
        }
    }

    /// Every registered domain's (the domain of the tasks is known when they arrive).
    fn fingerprint(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        let mut fp = BTreeMap::new();
        for e in domains::all() {
            fp.extend((e.evaluate_fingerprint)(&self.options, ctx)?);
        }
        Ok(fp)
    }

    fn outputs(&self, _: &str) -> Vec<String> {
        vec!["evaluation".into()]
    }

    /// The settings, then each domain option with its defaults filled in.
    fn config_json(&self) -> Value {
        let mut json = serde_json::to_value(self).expect("config serializes");
        let Value::Object(m) = &mut json else { return json };
        for e in domains::all() {
            for key in e.evaluate_options {
                if let Some(given) = m.shift_remove(*key) {
                    let full = (e.evaluate_option)(key, &given).unwrap_or(given);
                    m.insert(key.to_string(), full);
                }
            }
        }
        json
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let entry = domains::of_tasks(inputs.get(ctx, "tasks")?).map_err(|e| Error::stage(&ctx.stage_id, e))?;
        if let Some(k) = self.options.keys().find(|k| !entry.evaluate_options.contains(&k.as_str())) {
            return Err(Error::stage(
                &ctx.stage_id,
                format!("`{k}` is not an evaluate option of {} tasks", entry.name),
            ));
        }
        Ok(vec![("evaluation".into(), (entry.evaluate)(&self.settings(), ctx, inputs)?)])
    }
}
