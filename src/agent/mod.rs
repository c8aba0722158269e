//! The Memento-style case-memory agent of any domain ([`crate::seam`]): prompts, the planner
//! -> executor -> observe -> self-grade -> channels -> label step of one episode, the arms'
//! labelling rules, the bank and the `episodes`/`calls` tables. The loop itself (bank, retrieval, checkpoints) is the
//! `memory_loop` stage. Nothing here reads a reference answer: the oracle arm's label arrives as
//! a function supplied by a stage that is allowed to read `gold`.

pub mod arms;
pub mod bank;
pub mod descriptors;
pub mod episode;
pub mod order;
pub mod parse;
pub mod program;
pub mod prompts;
pub mod proxy;
pub mod recorded;
pub mod retrieval;
pub mod sandbox;
pub mod tables;
pub mod watch;
