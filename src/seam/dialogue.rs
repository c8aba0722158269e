//! A dialogue: a domain whose executor works over several model calls, talking with an
//! environment between them (BFCL's multi-turn tasks: the model's calls run against stateful tools
//! and their results go back to it). The episode asks the dialogue what to send, sends it as one
//! recorded executor call, and hands back the reply, until the dialogue is done and gives the
//! artifact (or why there is none). The domain owns the conversation; the loop owns the model and
//! the call records, so every step is a `calls` row like any other model call.

use crate::error::{Invalid, Result};
use crate::llm::Message;

/// What a dialogue wants next.
#[derive(Debug)]
pub enum Next {
    /// Send these messages (the whole conversation so far) to the executor.
    Ask(Vec<Message>),
    /// Done: the artifact, or why there is none.
    Done(std::result::Result<String, Invalid>),
}

/// One episode's dialogue, driven by the loop.
pub trait Dialogue {
    /// The first step.
    fn start(&mut self) -> Result<Next>;
    /// The next step given the executor's `reply` to the last [`Next::Ask`] (None when that call
    /// failed after its retries). An error stops the stage (a broken input, not a model's
    /// failure).
    fn next(&mut self, reply: Option<&str>) -> Result<Next>;
}

/// The most executor calls one dialogue may ask for, a backstop behind the domain's own limits
/// (BFCL's multi-turn tasks: at most 8 turns of at most `step_limit` + 1 steps and one closing
/// reply each; `step_limit` is at most 100): a dialogue still asking after it gives no artifact.
pub const MAX_ASKS: usize = 1000;
