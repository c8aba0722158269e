//! The tables an eval log adds to an import (`schemas/import/`): `samples` (each sample and
//! epoch with its status), `scores` (every score of every sample, as the log wrote it and as its tool reads it, with the model that graded it and
//! whether that model is the one under evaluation) and `eval_log` (one row: the tool, the format
//! version read, the model under evaluation, the mapping). The bank's own tables are the
//! import's ([`crate::import::tables`]); its verifiers are the verifier stages' table.

use crate::columns::{ARM, Column, Getter, SEED, Table};

const WRITTEN_BY: &str = "the import stage (lucid import of an eval log)";

/// One score of one sample.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoreRow {
    /// The memory (the sample and epoch).
    pub step: u64,
    /// The sample's id.
    pub sample_id: String,
    /// Its epoch.
    pub epoch: u32,
    /// The score's name.
    pub scorer: String,
    /// grader, truth or verifier.
    pub role: &'static str,
    /// The value as written (JSON).
    pub raw_value: String,
    /// The value as the tool reads it.
    pub value: Option<f64>,
    /// The answer it scored.
    pub answer: Option<String>,
    /// Its explanation.
    pub explanation: Option<String>,
    /// The model that graded it.
    pub grader_model: Option<String>,
    /// Whether that model is the model under evaluation.
    pub self_grade: bool,
}

/// One sample and epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleRow {
    /// The memory.
    pub step: u64,
    /// The sample's id.
    pub sample_id: String,
    /// Its epoch.
    pub epoch: u32,
    /// ok, or error: <message>.
    pub status: String,
    /// Its target.
    pub target: Option<String>,
    /// How many scores it has.
    pub scores: u32,
}

/// The log.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalLogRow {
    /// The preset.
    pub tool: String,
    /// The format version read.
    pub format: String,
    /// The file.
    pub file: String,
    /// The eval's status.
    pub status: String,
    /// The task.
    pub task: String,
    /// The model under evaluation.
    pub model: Option<String>,
    /// The score playing r.
    pub grader: String,
    /// The models that graded it.
    pub grader_models: String,
    /// Whether one of them is the model under evaluation.
    pub self_grade: bool,
    /// The score standing for U.
    pub truth: Option<String>,
    /// The candidate verifiers.
    pub verifiers: String,
    /// Samples (and epochs) read.
    pub samples: u64,
    /// Of them, samples that errored.
    pub errored: u64,
}

type S = Getter<ScoreRow>;

/// The `scores` table.
pub fn scores_table() -> Table<ScoreRow> {
    Table {
        name: "scores",
        description: "Every score of every sample of an imported eval log, as written and as its tool reads it.",
        written_by: WRITTEN_BY,
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("step", S::U64(|r| r.step), "The memory: the sample and epoch (episodes.step)."),
            Column::new("sample_id", S::Str(|r| &r.sample_id), "The sample's id in the log."),
            Column::new("epoch", S::U32(|r| r.epoch), "Its epoch (1-based)."),
            Column::new("scorer", S::Str(|r| &r.scorer), "The score's name."),
            Column::new("role", S::Str(|r| r.role), "grader (r), truth (U) or verifier (a table v_<name>)."),
            Column::new("raw_value", S::Str(|r| &r.raw_value), "The value as the log writes it (JSON)."),
            Column::new(
                "value",
                S::OptF64(|r| r.value),
                "The value as the tool reads it (Inspect: value_to_float); null when it cannot be read.",
            ),
            Column::new("answer", S::OptStr(|r| r.answer.as_deref()), "The answer the scorer scored."),
            Column::new("explanation", S::OptStr(|r| r.explanation.as_deref()), "The scorer's explanation."),
            Column::new(
                "grader_model",
                S::OptStr(|r| r.grader_model.as_deref()),
                "The model that graded it (a model-graded score), when the log says.",
            ),
            Column::new(
                "self_grade",
                S::Bool(|r| r.self_grade),
                "Whether the grading model is the model under evaluation.",
            ),
        ],
    }
}

type P = Getter<SampleRow>;

/// The `samples` table.
pub fn samples_table() -> Table<SampleRow> {
    Table {
        name: "samples",
        description: "Every sample and epoch of an imported eval log, with its status (an errored sample is here, ungraded).",
        written_by: WRITTEN_BY,
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("step", P::U64(|r| r.step), "The memory (episodes.step)."),
            Column::new("sample_id", P::Str(|r| &r.sample_id), "The sample's id in the log."),
            Column::new("epoch", P::U32(|r| r.epoch), "Its epoch (1-based)."),
            Column::new("status", P::Str(|r| &r.status), "ok, or error: <message> for a sample that failed."),
            Column::new("target", P::OptStr(|r| r.target.as_deref()), "Its target."),
            Column::new("scores", P::U32(|r| r.scores), "How many scores it has (0: it errored, or was never scored)."),
        ],
    }
}

type L = Getter<EvalLogRow>;

/// The `eval_log` table.
pub fn eval_log_table() -> Table<EvalLogRow> {
    Table {
        name: "eval_log",
        description: "The imported eval log: what wrote it, what was evaluated, and which score plays which part.",
        written_by: WRITTEN_BY,
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("tool", L::Str(|r| &r.tool), "The preset: inspect."),
            Column::new("format", L::Str(|r| &r.format), "The log format version read."),
            Column::new("file", L::Str(|r| &r.file), "The log file."),
            Column::new("status", L::Str(|r| &r.status), "The eval's status: success, error, cancelled or started."),
            Column::new("task", L::Str(|r| &r.task), "The task."),
            Column::new("model", L::OptStr(|r| r.model.as_deref()), "The model under evaluation."),
            Column::new("grader", L::Str(|r| &r.grader), "The score playing the self-grade r."),
            Column::new("grader_models", L::Str(|r| &r.grader_models), "The models that graded it, comma-separated."),
            Column::new(
                "self_grade",
                L::Bool(|r| r.self_grade),
                "Whether the grader is the model under evaluation (a self-grade).",
            ),
            Column::new("truth", L::OptStr(|r| r.truth.as_deref()), "The exact score standing for U."),
            Column::new("verifiers", L::Str(|r| &r.verifiers), "The candidate verifiers, comma-separated."),
            Column::new("samples", L::U64(|r| r.samples), "Samples (and epochs) read."),
            Column::new("errored", L::U64(|r| r.errored), "Of them, samples that errored."),
        ],
    }
}
