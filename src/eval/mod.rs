//! `lucid eval`: BIRD-exact execution accuracy (EX), and `--check-gold`, a sanity report on
//! reference queries. The only code besides post-hoc analysis that reads gold.

pub mod check_gold;
pub mod engine;
pub mod gold_cache;
pub mod inputs;
pub mod query_run;
pub mod report;

pub use engine::{EvalOptions, EvalStats, ExVerdict, Pair, PairResult, evaluate};
pub use inputs::EvalSet;
