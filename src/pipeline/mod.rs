//! Declarative pipelines: YAML spec, matrix expansion (seeds x arms), the stage DAG, a
//! content-addressed stage store, resumable checkpoints, the runner and its manifest.

pub mod cache_key;
pub mod checkpoint;
mod job;
pub mod manifest;
pub mod models;
pub mod options;
pub mod overrides;
pub mod plan;
pub mod progress;
pub mod registry;
pub mod runner;
pub mod schedule;
pub mod shared;
pub mod spec;
pub mod stage;
pub mod store;

pub use options::RunOptions;
pub use runner::{RunSummary, run, run_text};
