//! The `order` table: a seed's fixed task order, written by the permutation stage and read by
//! every stage that walks the tasks in it (the memory loop, retrieval).

use arrow::array::{Int64Array, RecordBatch};

use crate::columns::{Column, Getter, SEED, Table};
use crate::error::Result;

/// One `order` row.
pub struct Step {
    /// Position in the seed's order.
    pub step: u64,
    /// The task asked at that step.
    pub question_id: i64,
}

/// The `order` table: one definition per column (schema, batch, reader, `schemas/order.json`).
pub fn order_table() -> Table<Step> {
    type V = Getter<Step>;
    Table {
        name: "order",
        description: "A seed's fixed task order: the task asked at every step, shared by every arm of the seed (Fisher-Yates driven by SplitMix64 seeded with the seed).",
        written_by: "the permutation stage",
        matrix: &[SEED],
        columns: vec![
            Column::new("step", V::U64(|s| s.step), "Position in the seed's order (0-based), in row order."),
            Column::new("question_id", V::I64(|s| s.question_id), "The task asked at that step (tasks.question_id)."),
        ],
    }
}

/// The tasks of an `order` table, in step order (the one reader of the table).
pub fn read_order(batch: &RecordBatch) -> Result<Vec<i64>> {
    let path = std::path::Path::new("order");
    Ok(order_table().column::<Int64Array>(batch, path, "question_id")?.values().to_vec())
}
