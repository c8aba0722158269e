//! lucid: run, cache, rerun and audit experiments on self-improving LLM memory agents.
//!
//! The library behind the `lucid` binary: benchmark loaders, sandboxed SQL, BIRD-exact
//! execution accuracy, and the tables every later stage reads and writes.

pub mod bench;
pub mod cache_dir;
pub mod cli;
pub mod error;
pub mod eval;
pub mod par;
mod run;
pub mod sql;
pub mod table;

pub use error::{Error, Result};
pub use run::run;
