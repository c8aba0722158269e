//! BFCL's prompting loop for a multi-turn task (`inference_multi_turn_prompting` in
//! `bfcl_eval/model_handler/base_handler.py`), as a [`Dialogue`] the episode drives. The first
//! request comes in the executor's prompt (memories, functions, the turn's request); each reply
//! is decoded as BFCL decodes it ([`super::render`]): no call, or a reply that does not decode,
//! ends the turn; otherwise its calls run in the sandbox against the environments (every earlier
//! step replayed from the task's starting state first: they are deterministic) and their results
//! go back as one user message, BFCL's `repr([{'role': 'tool', 'name': call, 'content':
//! result}, ...])`. A turn of more than `step_limit` executed steps stops the episode (BFCL's
//! `force_quit`, 20), as does a run that ends in a sandbox limit (the state after it cannot be
//! had; BFCL's executor, in one process, catches each call's exception and goes on); a failed
//! executor call ends the episode without an artifact. The turn that brings held-out functions
//! (`multi_turn_miss_func`) opens with BFCL's "I have updated some more functions you can choose
//! from. What about now?" after the documents' Python repr. The ground truth is never here.

use std::collections::BTreeMap;

use serde_json::Value;

use super::env::{Sources, run};
use super::render::execution_list;
use super::setting::{Setting, field};
use super::tables::DialogueTask;
use super::transcript::{NO_CALLS, STEP_LIMIT, Transcript, UNDECODABLE};
use crate::domains::tools::value::Py;
use crate::error::{Invalid, Result};
use crate::llm::Message;
use crate::python::{PyLimits, Python};
use crate::seam::dialogue::{Dialogue, Next};

/// What a dialogue runs against.
pub struct Bench<'a> {
    /// The sandbox's interpreter.
    pub py: &'a Python,
    /// BFCL's and mpmath's sources.
    pub sources: &'a Sources,
    /// Each run's limits.
    pub limits: &'a PyLimits,
    /// BFCL's step limit per turn.
    pub step_limit: usize,
}

/// One episode's conversation.
pub struct Conversation<'a> {
    bench: Bench<'a>,
    setting: Setting,
    turns: Vec<String>,
    holdout: BTreeMap<usize, Value>,
    messages: Vec<Message>,
    transcript: Transcript,
    /// Executed steps in the current turn.
    count: usize,
}

impl<'a> Conversation<'a> {
    /// The conversation of `task`: `system` and `first` (the executor's rendered prompt) open it.
    pub fn new(bench: Bench<'a>, task: &DialogueTask, system: &str, first: &str) -> Result<Conversation<'a>> {
        Ok(Conversation {
            bench,
            setting: Setting::of(task)?,
            turns: field(task, "turns", &task.turns)?,
            holdout: field(task, "holdout", &task.holdout)?,
            messages: vec![Message::system(system), Message::user(first)],
            transcript: Transcript { turns: vec![Vec::new()], ..Transcript::default() },
            count: 0,
        })
    }

    /// Stop the episode for `why` (the current turn ends with it).
    fn stop(&mut self, why: &str) -> Next {
        self.transcript.ends.push(why.to_string());
        self.transcript.stopped = Some(why.to_string());
        Next::Done(Ok(self.transcript.to_artifact()))
    }

    /// End the current turn for `why` and open the next, or finish.
    fn end_turn(&mut self, why: &str) -> Next {
        self.transcript.ends.push(why.to_string());
        let turn = self.transcript.turns.len();
        if turn >= self.turns.len() {
            return Next::Done(Ok(self.transcript.to_artifact()));
        }
        self.transcript.turns.push(Vec::new());
        self.count = 0;
        let request = match self.holdout.get(&turn) {
            Some(docs) => format!(
                "{}\nI have updated some more functions you can choose from. What about now?",
                Py::from_json(docs).repr()
            ),
            None => self.turns[turn].clone(),
        };
        self.messages.push(Message::user(request));
        Next::Ask(self.messages.clone())
    }

    /// Run `calls` after every earlier step: their results, or the limit that ended the run.
    fn execute(&self, calls: &[String]) -> std::result::Result<Vec<String>, Invalid> {
        let mut steps = self.transcript.steps();
        steps.push(calls.to_vec());
        let out = run(self.bench.py, self.bench.sources, &self.setting.job(&steps, false), self.bench.limits);
        match (out.steps.finished, out.steps.results.last()) {
            (true, Some(results)) if out.steps.results.len() == steps.len() => Ok(results.clone()),
            _ => Err(Invalid(match out.limit {
                Some(limit) => format!("limit: {limit}"),
                None => format!("the environments' run failed: {:.200}", out.ending),
            })),
        }
    }
}

/// BFCL's message of a step's results (`format_execution_results_prompting`).
fn results_message(calls: &[String], results: &[String]) -> String {
    let item = |(call, result): (&String, &String)| {
        Py::Dict(vec![
            (Py::Str("role".into()), Py::Str("tool".into())),
            (Py::Str("name".into()), Py::Str(call.clone())),
            (Py::Str("content".into()), Py::Str(result.clone())),
        ])
    };
    Py::List(calls.iter().zip(results).map(item).collect()).repr()
}

impl Dialogue for Conversation<'_> {
    fn start(&mut self) -> Result<Next> {
        Ok(Next::Ask(self.messages.clone()))
    }

    fn next(&mut self, reply: Option<&str>) -> Result<Next> {
        // A failed executor call ends the episode without an artifact, as a single call's does
        // (its row records the failure; BFCL's inference raises on one).
        let Some(reply) = reply else { return Ok(Next::Done(Err(Invalid::from("executor call failed")))) };
        self.messages.push(Message::assistant(reply));
        let calls = match execution_list(reply) {
            Ok(calls) if calls.is_empty() => return Ok(self.end_turn(NO_CALLS)),
            Ok(calls) => calls,
            Err(_) => return Ok(self.end_turn(UNDECODABLE)),
        };
        let results = self.execute(&calls);
        if let Some(turn) = self.transcript.turns.last_mut() {
            turn.push(calls.clone());
        }
        let results = match results {
            Ok(results) => results,
            Err(why) => return Ok(self.stop(&why.0)),
        };
        self.messages.push(Message::user(results_message(&calls, &results)));
        self.count += 1;
        if self.count > self.bench.step_limit {
            return Ok(self.stop(STEP_LIMIT));
        }
        Ok(Next::Ask(self.messages.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_go_back_as_bfcls_repr() {
        let m = results_message(&["cd(folder='a')".into()], &["{\"current_working_directory\": \"a\"}".into()]);
        assert_eq!(
            m,
            "[{'role': 'tool', 'name': \"cd(folder='a')\", 'content': '{\"current_working_directory\": \"a\"}'}]"
        );
    }
}
