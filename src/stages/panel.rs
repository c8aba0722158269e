//! `kind: panel` — a panel of named verifiers (`v_<id>`), usually judges: its inputs are their
//! tables (`v_<name>` for each name in `judges`), bound to the same seed and arm. Per memory,
//! each judge's vote (V >= 0.5: yes) or its absence is kept in `detail`, and the panel's V is:
//! - `mean`: the mean of the judges' V; unscored when a vote is missing;
//! - `majority`: 1 when more judges vote yes than no, 0 when more vote no; unscored on a tie or
//!   when a vote is missing;
//! - `strict`: 1 when more than half of all the named judges vote yes, 0 when more than half vote
//!   no; otherwise (a tie, or missing votes leaving neither side over half) unscored.
//!
//! Never decided by list order. Its cost is the sum of its judges' (their calls were made once,
//! by their own stages: the audit's cost table counts them there, not again here).

use std::collections::{BTreeMap, HashMap};

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type, UInt64Type};
use serde::{Deserialize, Serialize};

pub use crate::audit::votes::{Rule, combine};

use super::verifiers::{self, Scored};
use crate::error::{Error, Result};
use crate::pipeline::stage::{Inputs, Stage, StageContext};

/// Config of a panel stage.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PanelStage {
    /// The judges' stage ids (their tables `v_<id>` are this stage's inputs).
    pub judges: Vec<String>,
    /// mean, majority or strict.
    pub rule: Rule,
}

impl PanelStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "panel";
}

impl Stage for PanelStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }
    fn version(&self) -> u32 {
        1
    }
    fn required_inputs(&self) -> &'static [&'static str] {
        &[]
    }
    fn accepts_any_inputs(&self) -> bool {
        true
    }
    fn outputs(&self, stage_id: &str) -> Vec<String> {
        vec![verifiers::table_name(stage_id)]
    }
    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serializes")
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        if self.judges.is_empty() {
            return Err(Error::stage(&ctx.stage_id, "a panel needs at least one judge"));
        }
        // Per judge: step -> (question_id, V).
        let mut by_judge: Vec<HashMap<u64, (i64, Option<f64>)>> = Vec::new();
        for j in &self.judges {
            let name = verifiers::table_name(j);
            let t = inputs.tables.get(&name).ok_or_else(|| {
                Error::stage(&ctx.stage_id, format!("judge '{j}' needs its table '{name}' in the inputs"))
            })?;
            let bad = || Error::stage(&ctx.stage_id, format!("'{name}' is not a verifier table"));
            let step = t.column_by_name("step").and_then(|c| c.as_primitive_opt::<UInt64Type>()).ok_or_else(bad)?;
            let q = t.column_by_name("question_id").ok_or_else(bad)?;
            let q = arrow::compute::cast(q, &DataType::Int64)?;
            let q = q.as_primitive::<arrow::datatypes::Int64Type>();
            let v = t.column_by_name("v").and_then(|c| c.as_primitive_opt::<Float64Type>()).ok_or_else(bad)?;
            by_judge.push(
                (0..t.num_rows()).map(|i| (step.value(i), (q.value(i), v.is_valid(i).then(|| v.value(i))))).collect(),
            );
        }
        let mut steps: Vec<(u64, i64)> = by_judge.iter().flat_map(|m| m.iter().map(|(s, (q, _))| (*s, *q))).collect();
        steps.sort_unstable();
        steps.dedup();
        let rows: Vec<Scored> = steps
            .into_iter()
            .map(|(step, question_id)| {
                let votes: Vec<Option<f64>> = by_judge.iter().map(|m| m.get(&step).and_then(|x| x.1)).collect();
                let detail: BTreeMap<&str, Option<f64>> =
                    self.judges.iter().map(String::as_str).zip(votes.iter().copied()).collect();
                Scored {
                    step,
                    question_id,
                    v: combine(self.rule, &votes),
                    detail: serde_json::json!({"votes": detail}).to_string(),
                    ..Scored::default()
                }
            })
            .collect();
        verifiers::output(ctx, &rows)
    }
}
