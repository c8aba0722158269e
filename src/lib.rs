//! lucid: run, cache, rerun and audit experiments on self-improving LLM memory agents.
//!
//! The library behind the `lucid` binary: benchmark loaders, sandboxed SQL, BIRD-exact
//! execution accuracy, and the tables every later stage reads and writes.

pub mod agent;
pub mod bench;
pub mod cache_dir;
pub mod cli;
mod commands;
pub mod embed;
pub mod error;
pub mod eval;
pub mod fingerprint;
pub mod llm;
pub mod models;
pub mod models_bench;
pub mod par;
pub mod pipeline;
pub mod query;
mod run;
pub mod sql;
pub mod stages;
pub mod table;

pub use error::{Error, Result};
pub use run::run;
