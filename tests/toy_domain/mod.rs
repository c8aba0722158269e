//! A toy domain added from outside lucid's source, as a third domain would be: this folder plus
//! one registration line (`register_domain::<Arithmetic>("arithmetic")`). Its tasks are sums
//! asked in words (read from a JSON Lines benchmark); its artifact is the first integer of the
//! executor's answer (no database, no text answer); its answer-free channels are
//! `not_a_number` and `negative` (a sum of natural numbers cannot be negative). The test runs it
//! through the memory loop in-process.

use std::collections::HashMap;
use std::path::Path;

use arrow::array::RecordBatch;
use lucid::agent::records::Episode;
use lucid::columns::{Column, Getter};
use lucid::datasets::factual::FactTask;
use lucid::domain::{Channels, Domain, Fired, Judge, Observation};
use lucid::pipeline::stage::StageContext;
use lucid::stages::memory_loop::Configured;

/// The arithmetic domain.
pub struct Arithmetic;

/// What reading the number recorded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    /// The number, when the answer holds one.
    pub value: Option<i64>,
}

fn first_integer(text: &str) -> Option<i64> {
    let start = text.find(|c: char| c.is_ascii_digit() || c == '-')?;
    let rest = &text[start..];
    let end = rest.char_indices().skip(1).find(|(_, c)| !c.is_ascii_digit()).map_or(rest.len(), |(i, _)| i);
    rest[..end].parse().ok()
}

impl Domain for Arithmetic {
    type Task = FactTask;
    type Worker = ();
    type Obs = Reading;

    const NAME: &'static str = "arithmetic";
    const GROUP: &'static str = "topic";
    const GROUP_DOC: &'static str = "The kind of sum.";
    const ARTIFACT: &'static str = "number";
    const ARTIFACT_DOC: &'static str = "The executor's answer, as written.";
    const CHANNELS: &'static [&'static str] = &["not_a_number", "negative"];
    const PLANNER_OPTIONAL: bool = true;

    fn tasks(&self, batch: &RecordBatch, path: &Path) -> lucid::Result<Vec<FactTask>> {
        lucid::datasets::factual::tables::tasks_from_batch(batch, path)
    }
    fn id(task: &FactTask) -> i64 {
        task.question_id
    }
    fn question(task: &FactTask) -> &str {
        &task.question
    }
    fn group(task: &FactTask) -> &str {
        &task.topic
    }
    fn worker(&self) {}
    fn context(&self, _: &mut (), _: &FactTask) -> lucid::Result<Vec<(&'static str, String)>> {
        Ok(vec![("topic", "arithmetic".into()), ("answer_type", "number".into())])
    }
    fn extract(&self, text: &str) -> Result<String, lucid::error::Invalid> {
        let t = text.trim();
        if t.is_empty() { Err("empty answer".into()) } else { Ok(t.to_string()) }
    }
    fn unobserved(&self, _: &str) -> Reading {
        Reading::default()
    }
    fn observe(&self, _: &mut (), _: &FactTask, answer: &str) -> lucid::Result<Observation<Reading>> {
        let value = first_integer(answer);
        let status = if value.is_some() { "number" } else { "text" };
        Ok(Observation { obs: Reading { value }, status: status.into(), result: answer.into() })
    }
    fn channels(&self, _: &FactTask, _: Option<&str>, obs: &Reading) -> Channels {
        Channels(vec![
            Fired { name: "not_a_number", fired: obs.value.is_none(), detail: None },
            Fired { name: "negative", fired: obs.value.is_some_and(|v| v < 0), detail: None },
        ])
    }
    fn flag_channels(&self) -> Vec<String> {
        Self::CHANNELS.iter().map(|c| c.to_string()).collect()
    }
    fn observation_columns() -> Vec<Column<Episode<Reading>>> {
        vec![Column::new("value", Getter::OptText(|e| e.obs.value.map(|v| v.to_string())), "The number read.")]
    }
}

impl Judge for Arithmetic {
    type Gold = i64;
    fn gold(&self, batch: &RecordBatch, path: &Path) -> lucid::Result<HashMap<i64, i64>> {
        let gold = lucid::datasets::factual::tables::gold_from_batch(batch, path)?;
        Ok(gold.into_iter().map(|g| (g.question_id, g.answer.parse().unwrap_or(i64::MIN))).collect())
    }
    fn score(&self, _: &FactTask, gold: &i64, answer: Option<&str>) -> lucid::Result<u8> {
        Ok(u8::from(answer.and_then(first_integer) == Some(*gold)))
    }
}

impl Configured for Arithmetic {
    fn configure(options: &serde_json::Value, _: &StageContext) -> lucid::Result<Self> {
        match options.as_object() {
            Some(o) if o.is_empty() => Ok(Arithmetic),
            _ => Err(lucid::Error::usage(format!("the arithmetic domain takes no options, got {options}"))),
        }
    }
}
