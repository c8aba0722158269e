//! The Memento-style case-memory agent: prompts, the planner -> executor -> execute -> self-grade
//! -> flag -> label step of one episode, the answer-free detector, the arms' labelling rules and
//! the `episodes`/`calls` tables. The loop itself (bank, retrieval, checkpoints) is the
//! `memory_loop` stage. Nothing here reads a reference answer: the oracle arm's label arrives as
//! a function supplied by a stage that is allowed to read `gold`.

pub mod arms;
pub mod bank;
pub mod detector;
pub mod episode;
pub mod parse;
pub mod prompts;
pub mod schema;
pub mod step;
