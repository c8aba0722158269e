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
