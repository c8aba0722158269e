//! The flag stage in text-to-SQL: the answer-free detector run over recorded episodes, after the
//! fact (`flags`: step, question_id, flag_exec, flag_degenerate, flag_literal, literals,
//! flagged), from how each query executed in the loop (no query runs again). It reads the
//! question, the SQL and how it executed, never gold.

use std::collections::HashMap;
use std::path::Path;

use arrow::array::{Array, BooleanArray, Int64Array, RecordBatch, StringArray, UInt64Array};

use super::SqlDomain;
use super::detector::{DetectorConfig, Flags, Observed};
use crate::columns::{ARM, Column, Getter, SEED, Table};
use crate::error::{Error, Result};
use crate::pipeline::stage::{Inputs, StageContext};

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

/// The `flags` of the `episodes` input under `detector`.
pub fn flags(detector: &DetectorConfig, ctx: &StageContext, inputs: &Inputs) -> Result<RecordBatch> {
    let ep = Path::new("episodes");
    let tasks = crate::datasets::tables::tasks_from_batch(inputs.get(ctx, "tasks")?, Path::new("tasks"))?;
    let text: HashMap<i64, usize> = tasks.iter().enumerate().map(|(i, t)| (t.question_id, i)).collect();
    let e = inputs.get(ctx, "episodes")?;
    let t = crate::seam::tables::episodes_table::<SqlDomain>();
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
        let flags = detector.detect(&tasks[ti].question, &tasks[ti].evidence, &observed);
        let flagged = flags.flagged(&detector.channels);
        rows.push(FlagRow { step: step.value(i), question_id: qid.value(i), flags, flagged });
    }
    flags_table().batch(&rows)
}
