//! `kind: flag` — the answer-free detector run over recorded episodes, after the fact (`flags`:
//! step, question_id, flag_exec, flag_degenerate, flag_literal, literals, flagged). The memory
//! loop runs the same detector live (LUCID's demotion needs it at write time); this stage lets a
//! user try other channels or thresholds on a finished run without a single model call, e.g. to
//! measure each channel's precision. It reads the question, the SQL and how it executed, never gold.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema};
use serde::{Deserialize, Serialize};

use crate::agent::detector::{DetectorConfig, Observed};
use crate::error::{Error, Result};
use crate::pipeline::stage::{Inputs, Stage, StageContext};
use crate::table::column;

/// Config of the flag stage: the detector's.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(transparent)]
pub struct FlagStage(pub DetectorConfig);

/// Schema of `flags`.
pub fn flags_schema() -> Schema {
    Schema::new(vec![
        Field::new("step", DataType::UInt64, false),
        Field::new("question_id", DataType::Int64, false),
        Field::new("flag_exec", DataType::Boolean, false),
        Field::new("flag_degenerate", DataType::Boolean, false),
        Field::new("flag_literal", DataType::Boolean, false),
        Field::new("literals", DataType::Utf8, true),
        Field::new("flagged", DataType::Boolean, false),
    ])
}

impl FlagStage {
    /// The YAML `kind:` of this stage.
    pub const KIND: &'static str = "flag";
}

impl Stage for FlagStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn version(&self) -> u32 {
        1
    }

    /// The detector after the fact: it may flag the oracle arm's (gold-informed) episodes.
    fn post_hoc(&self) -> bool {
        true
    }

    fn required_inputs(&self) -> &'static [&'static str] {
        &["tasks", "episodes"]
    }

    fn outputs(&self, _: &str) -> Vec<String> {
        vec!["flags".into()]
    }

    fn config_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serializes")
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let ep = Path::new("episodes");
        let tasks = super::tasks(ctx, inputs)?;
        let text: HashMap<i64, usize> = tasks.iter().enumerate().map(|(i, t)| (t.question_id, i)).collect();
        let e = inputs.get(ctx, "episodes")?;
        let (step, qid, sql) = (
            column::<UInt64Array>(e, ep, "step")?,
            column::<Int64Array>(e, ep, "question_id")?,
            column::<StringArray>(e, ep, "sql")?,
        );
        let (status, n_rows, all_null) = (
            column::<StringArray>(e, ep, "exec_status")?,
            column::<UInt64Array>(e, ep, "n_rows")?,
            column::<BooleanArray>(e, ep, "all_null")?,
        );
        let mut flags = Vec::with_capacity(e.num_rows());
        for i in 0..e.num_rows() {
            let &ti = text
                .get(&qid.value(i))
                .ok_or_else(|| Error::input(ep, format!("row {i}: question_id {} is not a task", qid.value(i))))?;
            let observed = Observed {
                sql: sql.is_valid(i).then(|| sql.value(i)),
                status: status.value(i),
                n_rows: n_rows.is_valid(i).then(|| n_rows.value(i)),
                all_null: all_null.value(i),
            };
            flags.push(self.0.detect(&tasks[ti].question, &tasks[ti].evidence, &observed));
        }
        let bools = |f: &dyn Fn(&crate::agent::detector::Flags) -> bool| -> ArrayRef {
            Arc::new(BooleanArray::from(flags.iter().map(f).collect::<Vec<_>>()))
        };
        let batch = RecordBatch::try_new(
            Arc::new(flags_schema()),
            vec![
                Arc::new(step.clone()),
                Arc::new(qid.clone()),
                bools(&|f| f.exec),
                bools(&|f| f.degenerate),
                bools(&|f| f.literal),
                Arc::new(flags.iter().map(|f| f.literals_json()).collect::<StringArray>()),
                bools(&|f| f.flagged(&self.0.channels)),
            ],
        )?;
        Ok(vec![("flags".into(), batch)])
    }
}
