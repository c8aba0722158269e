//! A toy domain added from outside lucid's source, as a third domain would be: this folder plus
//! one registration line (`lucid::domains::registry::register::<Arithmetic>()`). Its tasks are sums
//! asked in words, read from its own benchmark source (`source: sums`, a JSON Lines file of
//! `{id, question, answer, topic}`); its artifact is the executor's answer and its observation
//! the first integer in it (no database, no text answer); its answer-free channels are
//! `not_a_number` and `negative` (a sum of natural numbers cannot be negative).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use lucid::columns::{Column, Getter};
use lucid::domains::{BenchmarkConfig, DomainKind, Evaluate, FlagConfig, NoOptions, Source};
use lucid::pipeline::stage::{Inputs, StageContext};
use lucid::seam::records::Episode;
use lucid::seam::{Channels, Domain, Fired, Judge, Observation};

/// The arithmetic domain.
pub struct Arithmetic;

/// A sum as the agent sees it.
pub struct Sum {
    question_id: i64,
    question: String,
    topic: String,
}

/// What reading the number recorded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    /// The number, when the answer holds one.
    pub value: Option<i64>,
}

/// The first integer of `text`.
pub fn first_integer(text: &str) -> Option<i64> {
    let start = text.find(|c: char| c.is_ascii_digit() || c == '-')?;
    let rest = &text[start..];
    let end = rest.char_indices().skip(1).find(|(_, c)| !c.is_ascii_digit()).map_or(rest.len(), |(i, _)| i);
    rest[..end].parse().ok()
}

fn strings(b: &RecordBatch, name: &str) -> lucid::Result<StringArray> {
    let c = b.column_by_name(name).ok_or_else(|| lucid::Error::usage(format!("no column {name}")))?;
    Ok(c.as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| lucid::Error::usage(format!("{name}: not text")))?
        .clone())
}

fn ids(b: &RecordBatch) -> lucid::Result<Int64Array> {
    let c = b.column_by_name("question_id").ok_or_else(|| lucid::Error::usage("no column question_id"))?;
    Ok(c.as_any().downcast_ref::<Int64Array>().ok_or_else(|| lucid::Error::usage("question_id: not Int64"))?.clone())
}

impl Domain for Arithmetic {
    type Task = Sum;
    type Worker = ();
    type Obs = Reading;

    const NAME: &'static str = "arithmetic";
    const GROUP: &'static str = "topic";
    const GROUP_DOC: &'static str = "The kind of sum.";
    const ARTIFACT: &'static str = "number";
    const PROMPTS: &'static str = "tests/toy_domain/prompts";
    const ARTIFACT_DOC: &'static str = "The executor's answer, as written.";
    const CHANNELS: &'static [&'static str] = &["not_a_number", "negative"];
    const PLANNER_OPTIONAL: bool = true;

    fn tasks(&self, b: &RecordBatch, _: &Path) -> lucid::Result<Vec<Sum>> {
        let (id, q, topic) = (ids(b)?, strings(b, "question")?, strings(b, "topic")?);
        Ok((0..b.num_rows())
            .map(|i| Sum { question_id: id.value(i), question: q.value(i).into(), topic: topic.value(i).into() })
            .collect())
    }
    fn id(task: &Sum) -> i64 {
        task.question_id
    }
    fn question(task: &Sum) -> &str {
        &task.question
    }
    fn group(task: &Sum) -> &str {
        &task.topic
    }
    fn worker(&self) {}
    fn context(&self, _: &mut (), _: &Sum) -> lucid::Result<Vec<(&'static str, String)>> {
        Ok(vec![("topic", "arithmetic".into())])
    }
    fn extract(&self, text: &str) -> Result<String, lucid::error::Invalid> {
        let t = text.trim();
        if t.is_empty() { Err("empty answer".into()) } else { Ok(t.to_string()) }
    }
    fn unobserved(&self, _: &str) -> Reading {
        Reading::default()
    }
    fn observe(&self, _: &mut (), _: &Sum, answer: &str) -> lucid::Result<Observation<Reading>> {
        let value = first_integer(answer);
        let status = if value.is_some() { "number" } else { "text" };
        Ok(Observation { obs: Reading { value }, status: status.into(), result: answer.into() })
    }
    fn channels(&self, _: &Sum, _: Option<&str>, obs: &Reading) -> Channels {
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
    fn gold(&self, b: &RecordBatch, _: &Path) -> lucid::Result<HashMap<i64, i64>> {
        let (id, answer) = (ids(b)?, strings(b, "answer")?);
        Ok((0..b.num_rows()).map(|i| (id.value(i), answer.value(i).parse().unwrap_or(i64::MIN))).collect())
    }
    fn score(&self, _: &Sum, gold: &i64, answer: Option<&str>) -> lucid::Result<u8> {
        Ok(u8::from(answer.and_then(first_integer) == Some(*gold)))
    }
}

impl DomainKind for Arithmetic {
    // Its tables would be documented under `schemas/arithmetic/` (a shipped domain's are checked
    // by `tables::schemas_are_the_column_definitions`).
    const SCHEMAS: &'static str = "arithmetic";

    fn tables() -> Vec<serde_json::Value> {
        vec![lucid::seam::tables::episodes_table::<Self>().doc_json()]
    }

    type Options = NoOptions;
    type FlagOptions = FlagConfig<NoOptions>;
    type SourceOptions = NoOptions;
    const DOC: &'static str = "sums asked in words (a test's toy domain)";
    const SOURCES: &'static [Source] = &[Source {
        name: "sums",
        doc: "a JSON Lines file (`path`) of {id, question, answer, topic}",
        options: &["path"],
        needs_path: true,
    }];
    const VARIABLES: &'static [&'static str] = &["topic"];

    fn configure(_: NoOptions, _: &StageContext) -> lucid::Result<Self> {
        Ok(Arithmetic)
    }

    /// Line i is question_id i; tasks say their domain, gold holds the sums.
    fn load(b: &BenchmarkConfig, _: &NoOptions, ctx: &StageContext) -> lucid::Result<(RecordBatch, RecordBatch)> {
        let path = b.source_path(ctx)?;
        let text =
            std::fs::read_to_string(&path).map_err(|source| lucid::Error::Read { path: path.clone(), source })?;
        let rows: Vec<serde_json::Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(b.limit.unwrap_or(usize::MAX))
            .map(|l| serde_json::from_str(l).map_err(|e| lucid::Error::input_from(&path, "", e)))
            .collect::<lucid::Result<_>>()?;
        let col = |k: &str| -> StringArray { rows.iter().map(|r| r[k].as_str().map(str::to_string)).collect() };
        let qid = Arc::new(Int64Array::from_iter_values(0..rows.len() as i64));
        let text_field = |n: &str| Field::new(n, DataType::Utf8, true);
        let tasks = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("question_id", DataType::Int64, false),
                text_field("domain"),
                text_field("question"),
                text_field("topic"),
            ])),
            vec![
                qid.clone(),
                Arc::new(StringArray::from(vec!["arithmetic"; rows.len()])),
                Arc::new(col("question")),
                Arc::new(col("topic")),
            ],
        )?;
        let gold = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("question_id", DataType::Int64, false), text_field("answer")])),
            vec![qid, Arc::new(col("answer"))],
        )?;
        Ok((tasks, gold))
    }

    fn source_fingerprint(
        b: &BenchmarkConfig,
        _: &NoOptions,
        ctx: &StageContext,
    ) -> lucid::Result<BTreeMap<String, String>> {
        let f = b.source_path(ctx)?;
        Ok(BTreeMap::from([("sums".to_string(), lucid::fingerprint::file_fingerprint(&f)?)]))
    }

    fn evaluate(e: &Evaluate<'_>, ctx: &StageContext, inputs: &Inputs) -> lucid::Result<RecordBatch> {
        lucid::domains::evaluation::generic::<Arithmetic>(e, ctx, inputs)
    }

    fn flags(o: &FlagConfig<NoOptions>, ctx: &StageContext, inputs: &Inputs) -> lucid::Result<RecordBatch> {
        lucid::domains::flags::generic::<Arithmetic>(o, ctx, inputs)
    }

    fn canonical(text: &str) -> String {
        first_integer(text).map(|v| v.to_string()).unwrap_or_default()
    }
}

/// 2 + 2 and 3 + 4 right, 5 + 5 negative, 1 + 1 in words.
pub fn scripted(prompt: &str) -> String {
    if prompt.contains("VERDICT") {
        return "VERDICT: CORRECT".into();
    }
    let q = prompt.rsplit("Question:").next().unwrap_or("");
    let a = if q.contains("2 + 2") {
        "4"
    } else if q.contains("3 + 4") {
        "7"
    } else if q.contains("5 + 5") {
        "-10"
    } else {
        "two"
    };
    a.into()
}

/// The four sums of [`scripted`], as the `sums` source reads them.
pub fn sums_jsonl() -> String {
    ["2 + 2", "3 + 4", "5 + 5", "1 + 1"]
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let sum: i64 = s.split(" + ").map(|x| x.parse::<i64>().unwrap()).sum();
            format!("{{\"id\": {i}, \"question\": \"What is {s}?\", \"answer\": \"{sum}\", \"topic\": \"sums\"}}\n")
        })
        .collect()
}
