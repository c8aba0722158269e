//! The integration tests: one binary, one module per feature.

mod common;
mod eval_cli;
mod eval_rule;
mod hostile_sql;
mod literal_grounding;
mod pipeline;
mod spiderman;
mod tables;
