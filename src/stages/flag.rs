//! `kind: flag` — the answer-free detector run over recorded episodes, after the fact (`flags`:
//! step, question_id, flag_exec, flag_degenerate, flag_literal, literals, flagged). The memory
//! loop runs the same detector live (LUCID's demotion needs it at write time); this stage lets a
//! user try other channels or thresholds on a finished run without a single model call, e.g. to
//! measure each channel's precision. It reads the question, the SQL and how it executed, never gold.

use std::collections::HashMap;
use std::path::Path;

use arrow::array::{Array, BooleanArray, Int64Array, RecordBatch, StringArray, UInt64Array};
use serde::{Deserialize, Serialize};

use crate::columns::{ARM, Column, Getter, SEED, Table};
use crate::domain::sql::SqlDomain;
use crate::domain::sql::detector::{DetectorConfig, Flags, Observed};
use crate::error::{Error, Result};
use crate::pipeline::stage::{Inputs, Stage, StageContext};

/// Config of the flag stage: the detector's.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(transparent)]
pub struct FlagStage(pub DetectorConfig);

/// One `flags` row.
pub struct FlagRow {
    /// The episode's step.
    pub step: u64,
    /// The task.
    pub question_id: i64,
    /// The channels.
    pub flags: Flags,
    /// Any of the stage's channels fired.
    pub flagged: bool,
}

/// The `flags` table: one definition per column (schema, batch, `schemas/flags.json`).
pub fn flags_table() -> Table<FlagRow> {
    type V = Getter<FlagRow>;
    Table {
        name: "flags",
        description: "The answer-free detector run over recorded episodes after the fact, with the flag stage's channels and thresholds.",
        written_by: "the flag stage",
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("step", V::U64(|r| r.step), "The episode's step."),
            Column::new("question_id", V::I64(|r| r.question_id), "The task."),
            Column::new("flag_exec", V::Bool(|r| r.flags.exec), "Execution channel."),
            Column::new("flag_degenerate", V::Bool(|r| r.flags.degenerate), "Degeneracy channel."),
            Column::new("flag_literal", V::Bool(|r| r.flags.literal), "Literal-grounding channel."),
            Column::new("literals", V::OptText(|r| r.flags.literals_json()), "Ungrounded literals (JSON list)."),
            Column::new("flagged", V::Bool(|r| r.flagged), "Any of the stage's channels fired."),
        ],
    }
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
        let t = crate::agent::tables::episodes_table::<SqlDomain>();
        let (step, qid, sql) = (
            t.column::<UInt64Array>(e, ep, "step")?,
            t.column::<Int64Array>(e, ep, "question_id")?,
            t.column::<StringArray>(e, ep, "sql")?,
        );
        let (status, n_rows, all_null) = (
            t.column::<StringArray>(e, ep, "exec_status")?,
            t.column::<UInt64Array>(e, ep, "n_rows")?,
            t.column::<BooleanArray>(e, ep, "all_null")?,
        );
        let mut rows = Vec::with_capacity(e.num_rows());
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
            let flags = self.0.detect(&tasks[ti].question, &tasks[ti].evidence, &observed);
            let flagged = flags.flagged(&self.0.channels);
            rows.push(FlagRow { step: step.value(i), question_id: qid.value(i), flags, flagged });
        }
        let batch = flags_table().batch(&rows)?;
        Ok(vec![("flags".into(), batch)])
    }
}
