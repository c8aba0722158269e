//! The stage kinds, one file each. A stage maps input tables to output tables and never decides
//! about caching, matrix columns or where files go: the pipeline runner does.

pub mod audit;
pub mod benchmark;
pub mod embed;
pub mod evaluate;
pub mod flag;
pub mod memory_loop;
pub mod permutation;
pub mod predictions;
pub mod registry;
pub mod report;
pub mod retrieve;

use crate::bench::Task;
use crate::error::Result;
use crate::pipeline::stage::{Inputs, StageContext};

/// The `tasks` input of a stage, typed (the one reader of the table, `bench::tables`).
pub fn tasks(ctx: &StageContext, inputs: &Inputs) -> Result<Vec<Task>> {
    crate::bench::tables::tasks_from_batch(inputs.get(ctx, "tasks")?, std::path::Path::new("tasks"))
}
