//! The stage kinds, one file each. A stage maps input tables to output tables and never decides
//! about caching, matrix columns or where files go: the pipeline runner does.

pub mod audit;
pub mod benchmark;
pub mod embed;
pub mod evaluate;
pub mod evidence;
pub mod flag;
pub mod import;
pub mod judge;
pub mod panel;
pub mod permutation;
pub mod predictions;
pub mod registry;
pub mod report;
pub mod resample;
pub mod retrieve;
pub mod selftest;
pub mod verifiers;

use crate::datasets::Task;
use crate::error::Result;
use crate::pipeline::stage::{Inputs, StageContext};

/// The `tasks` input of a stage, typed (the one reader of the table, `bench::tables`).
pub fn tasks(ctx: &StageContext, inputs: &Inputs) -> Result<Vec<Task>> {
    crate::datasets::tables::tasks_from_batch(inputs.get(ctx, "tasks")?, std::path::Path::new("tasks"))
}

/// The `question_id` and `question` of every task of the `tasks` input, in any domain (what the
/// embed and permutation stages read).
pub fn questions(ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(i64, String)>> {
    use arrow::array::{Int64Array, StringArray};
    let (b, path) = (inputs.get(ctx, "tasks")?, std::path::Path::new("tasks"));
    let qid = crate::table::column::<Int64Array>(b, path, "question_id")?;
    let q = crate::table::column::<StringArray>(b, path, "question")?;
    Ok((0..b.num_rows()).map(|i| (qid.value(i), q.value(i).to_string())).collect())
}
