//! The `episodes` table (one row per task of an arm and seed) and the `calls` table (one row per
//! model call, the input of the `replay` backend), each defined once, column by column
//! ([`episodes_table`], [`calls_table`]): schema, batch builder, reader and `schemas/`. The
//! runner prepends the `seed` and `arm` columns.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Float32Array, Int64Array, ListArray, StringArray, StructArray, UInt8Array, UInt64Array,
};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, Fields};

use crate::columns::{ARM, Column, Getter, SEED, Table};
use crate::error::Result;
use crate::seam::Domain;
use crate::seam::records::{CallRecord, Channels, Episode, Fired, Retrieved};

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
pub fn retrieved_type() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Struct(retrieved_fields()), false)))
}

/// A `retrieved` column of `rows` empty lists (memories nobody retrieved for: an imported bank).
pub fn no_retrieved(rows: usize) -> Result<ArrayRef> {
    let children: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from(Vec::<u64>::new())),
        Arc::new(Int64Array::from(Vec::<i64>::new())),
        Arc::new(Float32Array::from(Vec::<f32>::new())),
        Arc::new(UInt8Array::from(Vec::<u8>::new())),
        Arc::new(BooleanArray::from(Vec::<bool>::new())),
    ];
    list_of_structs(retrieved_fields(), retrieved_type(), children, std::iter::repeat_n(0, rows))
}

fn retrieved_array<O>(eps: &[Episode<O>]) -> Result<ArrayRef> {
    let all: Vec<&Retrieved> = eps.iter().flat_map(|e| &e.retrieved).collect();
    let children: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from_iter_values(all.iter().map(|r| r.step))),
        Arc::new(Int64Array::from_iter_values(all.iter().map(|r| r.question_id))),
        Arc::new(Float32Array::from_iter_values(all.iter().map(|r| r.similarity))),
        Arc::new(UInt8Array::from_iter_values(all.iter().map(|r| r.shown_label))),
        Arc::new(BooleanArray::from(all.iter().map(|r| r.same_db).collect::<Vec<_>>())),
    ];
    list_of_structs(retrieved_fields(), retrieved_type(), children, eps.iter().map(|e| e.retrieved.len()))
}

/// A list-of-structs column of type `ty` (a list of `fields`): the flattened `children`, cut into
/// rows of `lengths`.
fn list_of_structs(
    fields: Fields,
    ty: DataType,
    children: Vec<ArrayRef>,
    lengths: impl Iterator<Item = usize>,
) -> Result<ArrayRef> {
    let structs = StructArray::try_new(fields, children, None)?;
    let DataType::List(item) = ty else { unreachable!("a list type") };
    Ok(Arc::new(ListArray::try_new(item, OffsetBuffer::from_lengths(lengths), Arc::new(structs), None)?))
}

/// The fields of one channel in `episodes.channels`.
fn channel_fields() -> Fields {
    Fields::from(vec![
        Field::new("name", DataType::Utf8, false),
        Field::new("fired", DataType::Boolean, false),
        Field::new("detail", DataType::Utf8, true),
    ])
}

/// The type of `episodes.channels` (and of `flags.channels` in domains other than text-to-SQL).
pub fn channels_type() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Struct(channel_fields()), false)))
}

fn channels_array<O>(eps: &[Episode<O>]) -> Result<ArrayRef> {
    channel_lists(&eps.iter().map(|e| &e.channels).collect::<Vec<_>>())
}

/// A `channels` column: one list of channels per row.
pub fn channel_lists(rows: &[&Channels]) -> Result<ArrayRef> {
    let all: Vec<&Fired> = rows.iter().flat_map(|c| &c.0).collect();
    let children: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(all.iter().map(|c| c.name))),
        Arc::new(BooleanArray::from(all.iter().map(|c| c.fired).collect::<Vec<_>>())),
        Arc::new(all.iter().map(|c| c.detail.as_deref()).collect::<StringArray>()),
    ];
    list_of_structs(channel_fields(), channels_type(), children, rows.iter().map(|c| c.0.len()))
}

type C = Getter<CallRecord>;
type E<D> = Getter<Episode<<D as Domain>::Obs>>;

/// The `episodes` table of domain `D`: one definition per column (schema, batch, reader,
/// `schemas/episodes.json` for text-to-SQL): the common columns, with the domain's group and
/// artifact columns, its observation columns after the artifact and its channel columns after
/// `channels`.
pub fn episodes_table<D: Domain>() -> Table<Episode<D::Obs>> {
    let mut columns = vec![
        Column::new("step", E::<D>::U64(|e| e.step), "Position in the seed's task order (0-based)."),
        Column::new("question_id", E::<D>::I64(|e| e.question_id), "The task (tasks.question_id)."),
        Column::new(D::GROUP, E::<D>::Str(|e| &e.group), D::GROUP_DOC),
        Column::new(
            "retrieved",
            E::<D>::Nested { ty: retrieved_type, nullable: false, build: retrieved_array },
            "Memories shown to the planner, most similar first: their step, task, cosine similarity, the stored label shown (1 trusted/correct, 0 untrusted/incorrect) and whether they share the task's group (same_db: the database for text-to-SQL, the topic for factual QA). Empty for no-memory.",
        ),
        Column::new(
            "plan",
            E::<D>::OptStr(|e| e.plan.as_deref()),
            "Planner output (null: the call failed, or the prompts have no planner).",
        ),
        Column::new(D::ARTIFACT, E::<D>::OptStr(|e| e.artifact.as_deref()), D::ARTIFACT_DOC),
    ];
    columns.extend(D::observation_columns());
    columns.extend([
        Column::new(
            "grade",
            E::<D>::Str(|e| &e.grade),
            "Self-grade, from the grader's answer: the last status line (a line that, without Markdown decoration, starts 'VERDICT:') decides by the first word of its value, any case: CORRECT -> correct, INCORRECT -> incorrect, whatever follows on the line ('VERDICT: CORRECT. The count matches', 'VERDICT: INCORRECT - wrong table'). Any other first word (NOT CORRECT, PARTIALLY CORRECT), a question mark or an alternative (CORRECT?, CORRECT/INCORRECT, CORRECT or INCORRECT), or no status line -> unparseable (r null, stored untrusted). failed: the grader call failed after its retries; skipped: nothing was produced, so nothing was graded.",
        ),
        Column::new("r", E::<D>::OptU8(|e| e.r), "Self-grade r (1 correct, 0 incorrect, null unparseable/failed/skipped)."),
        Column::new(
            "channels",
            E::<D>::Nested { ty: channels_type, nullable: false, build: channels_array },
            "Every answer-free channel of the domain, in its order: name, whether it fired (says the episode is likely wrong) and what made it fire when the channel says (null otherwise). Computed from the question, the artifact and its observation, never from a reference.",
        ),
    ]);
    columns.extend(D::channel_columns());
    columns.extend([
        Column::new("flagged", E::<D>::Bool(|e| e.flagged), "Any of the arm's detector channels fired."),
        Column::new(
            "stored_q",
            E::<D>::U8(|e| e.stored_q),
            "The stored label Q later tasks see: memento r, LUCID 0 if flagged else r, oracle U (null r stored as 0).",
        ),
        Column::new("tokens_in", E::<D>::U32(|e| e.tokens_in), "Prompt tokens over the episode's calls."),
        Column::new("tokens_out", E::<D>::U32(|e| e.tokens_out), "Generated tokens over the episode's calls."),
        Column::varying(
            "latency_ms",
            E::<D>::F64(|e| e.latency_ms),
            "wall-clock time",
            "Model wall-clock time over the episode's calls (0 for cache hits).",
        ),
        Column::new("calls", E::<D>::U32(|e| e.calls), "Model calls made (planner when the prompts have one, executor, grader)."),
        Column::varying(
            "cache_hits",
            E::<D>::U32(|e| e.cache_hits),
            "which of two identical requests in flight at once reaches the model first, and what the response cache held when the run started",
            "Calls answered by the response cache.",
        ),
        Column::new(
            "failed_calls",
            E::<D>::U32(|e| e.failed_calls),
            "Calls that failed after their retries (recorded, never dropped).",
        ),
    ]);
    Table {
        name: "episodes",
        description: "One row per arm x seed x step: what the agent was shown, what it wrote, how its artifact was observed, how it graded itself, what the answer-free channels said and the label later tasks see. No reference answer anywhere.",
        written_by: "the memory_loop stage",
        matrix: &[SEED, ARM],
        columns,
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
