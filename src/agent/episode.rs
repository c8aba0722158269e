//! The `episodes` table (one row per task of an arm and seed: what the agent saw, wrote, how it
//! ran, graded and was labelled) and the `calls` table (one row per model call, the input of the
//! `replay` backend), each defined once, column by column ([`episodes_table`], [`calls_table`]):
//! schema, batch builder, reader and `schemas/`. The runner prepends the `seed` and `arm` columns.

use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, Float32Array, Int64Array, ListArray, StructArray, UInt8Array, UInt64Array};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, Fields};

use super::detector::Flags;
use crate::columns::{ARM, Column, SEED, Table, Value};
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

/// The type of `episodes.retrieved`.
fn retrieved_type() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Struct(retrieved_fields()), false)))
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
    let DataType::List(item) = retrieved_type() else { unreachable!("retrieved is a list") };
    let offsets = OffsetBuffer::from_lengths(eps.iter().map(|e| e.retrieved.len()));
    Ok(Arc::new(ListArray::try_new(item, offsets, Arc::new(structs), None)?))
}

type E = Value<Episode>;
type C = Value<CallRecord>;

/// The `episodes` table: one definition per column (schema, batch, reader, `schemas/episodes.json`).
pub fn episodes_table() -> Table<Episode> {
    Table {
        name: "episodes",
        description: "One row per arm x seed x step: what the agent was shown, what it wrote, how the SQL ran, how it graded itself, what the detector said and the label later tasks see. No reference answer anywhere.",
        written_by: "the memory_loop stage",
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("step", E::U64(|e| e.step), "Position in the seed's task order (0-based)."),
            Column::new("question_id", E::I64(|e| e.question_id), "The task (tasks.question_id)."),
            Column::new("db_id", E::Str(|e| &e.db_id), "Its database."),
            Column::new(
                "retrieved",
                E::Nested { ty: retrieved_type, nullable: false, build: retrieved_array },
                "Memories shown to the planner, most similar first: their step, task, cosine similarity, the stored label shown (1 trusted/correct, 0 untrusted/incorrect) and whether they share the database. Empty for no-memory.",
            ),
            Column::new("plan", E::OptStr(|e| e.plan.as_deref()), "Planner output (null: the call failed)."),
            Column::new(
                "sql",
                E::OptStr(|e| e.sql.as_deref()),
                "The query the executor wrote, exactly: from the first SELECT/WITH of the first fenced block holding one (else of the text) to the first ';' or closing fence outside quotes, strings and comments (unfenced: also a blank line); quoted identifiers (`x`, \"x\", [x]), literals and inner comments kept, trailing whitespace and comments dropped. Null when the answer holds no query or the executor call failed.",
            ),
            Column::new(
                "exec_status",
                E::Str(|e| &e.exec_status),
                "ok / error / timeout / nondeterministic (two identical runs differ); error when no query ran. Deterministic unless a query runs close to the timeout (timeout is wall-clock).",
            ),
            Column::new(
                "exec_error",
                E::OptStr(|e| e.exec_error.as_deref()),
                "SQLite's or the sandbox's message, or why nothing ran.",
            ),
            Column::new("n_rows", E::OptU64(|e| e.n_rows), "Rows returned."),
            Column::new("all_null", E::Bool(|e| e.all_null), "At least one row and every value NULL."),
            Column::new(
                "result_hash",
                E::OptStr(|e| e.result_hash.as_deref()),
                "xxh3-128 of the result as a set of rows (hex): equal hashes = equal results under BIRD's rule.",
            ),
            Column::new(
                "grade",
                E::Str(|e| &e.grade),
                "Self-grade, from the grader's answer: the last status line (a line that, without Markdown decoration, starts 'VERDICT:') decides by the first word of its value, any case: CORRECT -> correct, INCORRECT -> incorrect, whatever follows on the line ('VERDICT: CORRECT. The count matches', 'VERDICT: INCORRECT - wrong table'). Any other first word (NOT CORRECT, PARTIALLY CORRECT), a question mark or an alternative (CORRECT?, CORRECT/INCORRECT, CORRECT or INCORRECT), or no status line -> unparseable (r null, stored untrusted). failed: the grader call failed after its retries; skipped: no query ran, so nothing was graded.",
            ),
            Column::new(
                "r",
                E::OptU8(|e| e.r),
                "Self-grade r (1 correct, 0 incorrect, null unparseable/failed/skipped).",
            ),
            Column::new(
                "flag_exec",
                E::Bool(|e| e.flags.exec),
                "Detector, execution channel: error, timeout, nondeterministic, or no query.",
            ),
            Column::new(
                "flag_degenerate",
                E::Bool(|e| e.flags.degenerate),
                "Detector, degeneracy channel: no rows, or only NULLs.",
            ),
            Column::new(
                "flag_literal",
                E::Bool(|e| e.flags.literal),
                "Detector, literal-grounding channel: an entity-like filter literal absent from question and evidence.",
            ),
            Column::new(
                "literals",
                E::OptText(|e| e.flags.literals_json()),
                "The ungrounded literals, as a JSON list.",
            ),
            Column::new("flagged", E::Bool(|e| e.flagged), "Any of the arm's detector channels fired."),
            Column::new(
                "stored_q",
                E::U8(|e| e.stored_q),
                "The stored label Q later tasks see: memento r, LUCID 0 if flagged else r, oracle U (null r stored as 0).",
            ),
            Column::new("tokens_in", E::U32(|e| e.tokens_in), "Prompt tokens over the episode's calls."),
            Column::new("tokens_out", E::U32(|e| e.tokens_out), "Generated tokens over the episode's calls."),
            Column::varying(
                "latency_ms",
                E::F64(|e| e.latency_ms),
                "wall-clock time",
                "Model wall-clock time over the episode's calls (0 for cache hits).",
            ),
            Column::new("calls", E::U8(|e| e.calls), "Model calls made (planner, executor, grader)."),
            Column::varying(
                "cache_hits",
                E::U8(|e| e.cache_hits),
                "which of two identical requests in flight at once reaches the model first, and what the response cache held when the run started",
                "Calls answered by the response cache.",
            ),
            Column::new(
                "failed_calls",
                E::U8(|e| e.failed_calls),
                "Calls that failed after their retries (recorded, never dropped).",
            ),
        ],
    }
}

/// The `calls` table: one definition per column (schema, batch, reader, `schemas/calls.json`).
pub fn calls_table() -> Table<CallRecord> {
    Table {
        name: "calls",
        description: "One row per model call of the memory loop; the input of the replay backend (key, backend, model, text, tokens_in, tokens_out). Prompts are not stored here: they are in the response cache under the key.",
        written_by: "the memory_loop stage",
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("step", C::U64(|c| c.step), "The episode's step."),
            Column::new("question_id", C::I64(|c| c.question_id), "The episode's task."),
            Column::new("role", C::Str(|c| c.role), "planner / executor / grader."),
            Column::new(
                "key",
                C::Str(|c| &c.key),
                "blake3 of (backend, model, endpoint when there is one, messages, decoding, sample index): the response cache's and replay's key.",
            ),
            Column::new("backend", C::Str(|c| &c.backend), "openai / anthropic / local / replay / scripted."),
            Column::new("model", C::Str(|c| &c.model), "Model name (local: file name @ content hash)."),
            Column::new(
                "endpoint",
                C::OptStr(|c| c.endpoint.as_deref()),
                "The server of an HTTP backend: its base URL normalised (scheme and host lower-case, default port and trailing / dropped); part of the request key, so two servers with one model name never share cached answers. Null for local, scripted and replayed-local models.",
            ),
            Column::new("text", C::OptStr(|c| c.text.as_deref()), "The answer (null: the call failed)."),
            Column::varying(
                "error",
                C::OptStr(|c| c.error.as_deref()),
                "the message of the last fault seen before giving up",
                "Why it failed after its retries (never contains a key).",
            ),
            Column::new("tokens_in", C::U32(|c| c.tokens_in), "Prompt tokens."),
            Column::new("tokens_out", C::U32(|c| c.tokens_out), "Generated tokens."),
            Column::varying(
                "latency_ms",
                C::F64(|c| c.latency_ms),
                "wall-clock time",
                "Wall-clock time including retries (0 for cache hits).",
            ),
            Column::varying(
                "attempts",
                C::U32(|c| c.attempts),
                "how many transient faults (429, 5xx, dropped connections) preceded the answer",
                "Attempts made (0 for cache hits).",
            ),
            Column::varying(
                "cache_hit",
                C::Bool(|c| c.cache_hit),
                "what the response cache held, and which identical request in flight went first",
                "Served by the response cache.",
            ),
        ],
    }
}
