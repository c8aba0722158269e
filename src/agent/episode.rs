//! The `episodes` table (one row per task of an arm and seed: what the agent saw, wrote, how it
//! ran, graded and was labelled) and the `calls` table (one row per model call, the input of the
//! `replay` backend). The runner prepends the `seed` and `arm` columns. `schemas/` documents both.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Float32Array, Float64Array, Int64Array, ListArray, RecordBatch, StringArray, StructArray,
    UInt8Array, UInt32Array, UInt64Array,
};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, Fields, Schema};

use super::detector::Flags;
use crate::error::Result;

/// A retrieved memory as recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct Retrieved {
    /// The memory's step.
    pub step: u64,
    /// Its question.
    pub question_id: i64,
    /// Cosine similarity.
    pub similarity: f32,
    /// The label the planner was shown (stored Q at retrieval time).
    pub shown_label: u8,
    /// Same database as the current task.
    pub same_db: bool,
}

/// One episode.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Episode {
    /// Position in the seed's order.
    pub step: u64,
    /// The task.
    pub question_id: i64,
    /// Its database.
    pub db_id: String,
    /// Memories shown to the planner.
    pub retrieved: Vec<Retrieved>,
    /// Planner output (None: the call failed).
    pub plan: Option<String>,
    /// Executor's SQL (None: failed call or no query in the answer).
    pub sql: Option<String>,
    /// ok / error / timeout / nondeterministic.
    pub exec_status: String,
    /// Error message of a failed execution (or why nothing ran).
    pub exec_error: Option<String>,
    /// Rows returned.
    pub n_rows: Option<u64>,
    /// Every returned value NULL.
    pub all_null: bool,
    /// Hash of the result as a set of rows (hex).
    pub result_hash: Option<String>,
    /// correct / incorrect / unparseable / failed (grader call failed) / skipped (nothing ran).
    pub grade: String,
    /// Self-grade r.
    pub r: Option<u8>,
    /// Detector channels.
    pub flags: Flags,
    /// Flagged by the arm's channels.
    pub flagged: bool,
    /// The label later tasks see.
    pub stored_q: u8,
    /// Prompt tokens over the episode's calls.
    pub tokens_in: u32,
    /// Generated tokens.
    pub tokens_out: u32,
    /// Model wall-clock time, milliseconds.
    pub latency_ms: f64,
    /// Calls made.
    pub calls: u8,
    /// Calls answered by the response cache.
    pub cache_hits: u8,
    /// Calls that failed after their retries.
    pub failed_calls: u8,
}

/// One model call.
#[derive(Clone, Debug, PartialEq)]
pub struct CallRecord {
    /// Step of the episode.
    pub step: u64,
    /// Its task.
    pub question_id: i64,
    /// planner / executor / grader.
    pub role: &'static str,
    /// Request key (the response cache's and replay's).
    pub key: String,
    /// Backend.
    pub backend: String,
    /// Model.
    pub model: String,
    /// The server of an HTTP backend (normalised base URL).
    pub endpoint: Option<String>,
    /// Answer (None: failed).
    pub text: Option<String>,
    /// Failure message.
    pub error: Option<String>,
    /// Prompt tokens.
    pub tokens_in: u32,
    /// Generated tokens.
    pub tokens_out: u32,
    /// Milliseconds.
    pub latency_ms: f64,
    /// Attempts.
    pub attempts: u32,
    /// Served from the response cache.
    pub cache_hit: bool,
}

/// The fields of one retrieved memory in `episodes.retrieved`.
pub fn retrieved_fields() -> Fields {
    Fields::from(vec![
        Field::new("step", DataType::UInt64, false),
        Field::new("question_id", DataType::Int64, false),
        Field::new("similarity", DataType::Float32, false),
        Field::new("shown_label", DataType::UInt8, false),
        Field::new("same_db", DataType::Boolean, false),
    ])
}

/// Schema of `episodes` (before the runner's matrix columns).
pub fn episodes_schema() -> Schema {
    let item = Arc::new(Field::new("item", DataType::Struct(retrieved_fields()), false));
    let f = |n: &str, t: DataType, null: bool| Field::new(n, t, null);
    Schema::new(vec![
        f("step", DataType::UInt64, false),
        f("question_id", DataType::Int64, false),
        f("db_id", DataType::Utf8, false),
        f("retrieved", DataType::List(item), false),
        f("plan", DataType::Utf8, true),
        f("sql", DataType::Utf8, true),
        f("exec_status", DataType::Utf8, false),
        f("exec_error", DataType::Utf8, true),
        f("n_rows", DataType::UInt64, true),
        f("all_null", DataType::Boolean, false),
        f("result_hash", DataType::Utf8, true),
        f("grade", DataType::Utf8, false),
        f("r", DataType::UInt8, true),
        f("flag_exec", DataType::Boolean, false),
        f("flag_degenerate", DataType::Boolean, false),
        f("flag_literal", DataType::Boolean, false),
        f("literals", DataType::Utf8, true),
        f("flagged", DataType::Boolean, false),
        f("stored_q", DataType::UInt8, false),
        f("tokens_in", DataType::UInt32, false),
        f("tokens_out", DataType::UInt32, false),
        f("latency_ms", DataType::Float64, false),
        f("calls", DataType::UInt8, false),
        f("cache_hits", DataType::UInt8, false),
        f("failed_calls", DataType::UInt8, false),
    ])
}

/// Schema of `calls`.
pub fn calls_schema() -> Schema {
    let f = |n: &str, t: DataType, null: bool| Field::new(n, t, null);
    Schema::new(vec![
        f("step", DataType::UInt64, false),
        f("question_id", DataType::Int64, false),
        f("role", DataType::Utf8, false),
        f("key", DataType::Utf8, false),
        f("backend", DataType::Utf8, false),
        f("model", DataType::Utf8, false),
        f("endpoint", DataType::Utf8, true),
        f("text", DataType::Utf8, true),
        f("error", DataType::Utf8, true),
        f("tokens_in", DataType::UInt32, false),
        f("tokens_out", DataType::UInt32, false),
        f("latency_ms", DataType::Float64, false),
        f("attempts", DataType::UInt32, false),
        f("cache_hit", DataType::Boolean, false),
    ])
}

fn strings<T>(v: &[T], f: impl Fn(&T) -> Option<&str>) -> ArrayRef {
    Arc::new(v.iter().map(f).collect::<StringArray>())
}

fn retrieved_array(eps: &[Episode]) -> Result<ArrayRef> {
    let all: Vec<&Retrieved> = eps.iter().flat_map(|e| &e.retrieved).collect();
    let children: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from_iter_values(all.iter().map(|r| r.step))),
        Arc::new(Int64Array::from_iter_values(all.iter().map(|r| r.question_id))),
        Arc::new(Float32Array::from_iter_values(all.iter().map(|r| r.similarity))),
        Arc::new(UInt8Array::from_iter_values(all.iter().map(|r| r.shown_label))),
        Arc::new(BooleanArray::from(all.iter().map(|r| r.same_db).collect::<Vec<_>>())),
    ];
    let structs = StructArray::try_new(retrieved_fields(), children, None)?;
    let item = Arc::new(Field::new("item", DataType::Struct(retrieved_fields()), false));
    let offsets = OffsetBuffer::from_lengths(eps.iter().map(|e| e.retrieved.len()));
    Ok(Arc::new(ListArray::try_new(item, offsets, Arc::new(structs), None)?))
}

/// The `episodes` rows of `eps`.
pub fn episodes_batch(eps: &[Episode]) -> Result<RecordBatch> {
    let bools = |f: &dyn Fn(&Episode) -> bool| -> ArrayRef {
        Arc::new(BooleanArray::from(eps.iter().map(f).collect::<Vec<_>>()))
    };
    let u8s = |f: &dyn Fn(&Episode) -> u8| -> ArrayRef { Arc::new(UInt8Array::from_iter_values(eps.iter().map(f))) };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from_iter_values(eps.iter().map(|e| e.step))),
        Arc::new(Int64Array::from_iter_values(eps.iter().map(|e| e.question_id))),
        strings(eps, |e| Some(&e.db_id)),
        retrieved_array(eps)?,
        strings(eps, |e| e.plan.as_deref()),
        strings(eps, |e| e.sql.as_deref()),
        strings(eps, |e| Some(&e.exec_status)),
        strings(eps, |e| e.exec_error.as_deref()),
        Arc::new(eps.iter().map(|e| e.n_rows).collect::<UInt64Array>()),
        bools(&|e| e.all_null),
        strings(eps, |e| e.result_hash.as_deref()),
        strings(eps, |e| Some(&e.grade)),
        Arc::new(eps.iter().map(|e| e.r).collect::<UInt8Array>()),
        bools(&|e| e.flags.exec),
        bools(&|e| e.flags.degenerate),
        bools(&|e| e.flags.literal),
        Arc::new(eps.iter().map(|e| e.flags.literals_json()).collect::<StringArray>()),
        bools(&|e| e.flagged),
        u8s(&|e| e.stored_q),
        Arc::new(UInt32Array::from_iter_values(eps.iter().map(|e| e.tokens_in))),
        Arc::new(UInt32Array::from_iter_values(eps.iter().map(|e| e.tokens_out))),
        Arc::new(Float64Array::from_iter_values(eps.iter().map(|e| e.latency_ms))),
        u8s(&|e| e.calls),
        u8s(&|e| e.cache_hits),
        u8s(&|e| e.failed_calls),
    ];
    Ok(RecordBatch::try_new(Arc::new(episodes_schema()), columns)?)
}

/// The `calls` rows of `calls`.
pub fn calls_batch(calls: &[CallRecord]) -> Result<RecordBatch> {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from_iter_values(calls.iter().map(|c| c.step))),
        Arc::new(Int64Array::from_iter_values(calls.iter().map(|c| c.question_id))),
        strings(calls, |c| Some(c.role)),
        strings(calls, |c| Some(&c.key)),
        strings(calls, |c| Some(&c.backend)),
        strings(calls, |c| Some(&c.model)),
        strings(calls, |c| c.endpoint.as_deref()),
        strings(calls, |c| c.text.as_deref()),
        strings(calls, |c| c.error.as_deref()),
        Arc::new(UInt32Array::from_iter_values(calls.iter().map(|c| c.tokens_in))),
        Arc::new(UInt32Array::from_iter_values(calls.iter().map(|c| c.tokens_out))),
        Arc::new(Float64Array::from_iter_values(calls.iter().map(|c| c.latency_ms))),
        Arc::new(UInt32Array::from_iter_values(calls.iter().map(|c| c.attempts))),
        Arc::new(BooleanArray::from(calls.iter().map(|c| c.cache_hit).collect::<Vec<_>>())),
    ];
    Ok(RecordBatch::try_new(Arc::new(calls_schema()), columns)?)
}
