//! The evaluation of a domain that brings no evaluator of its own: every episode's artifact
//! scored against its gold by the domain's [`Judge::score`] (`evaluation`: step, question_id,
//! the task's group, difficulty (the group again, as the report reads it), u, verdict).

use std::collections::HashMap;
use std::path::Path;

use arrow::array::{Array, Int64Array, RecordBatch, StringArray, UInt64Array};

use super::{DomainKind, Evaluate};
use crate::columns::{ARM, Column, Getter, SEED, Table};
use crate::error::{Error, Result};
use crate::pipeline::stage::{Inputs, StageContext};

/// One `evaluation` row.
pub struct ScoredRow {
    /// The episode's step.
    pub step: u64,
    /// The task.
    pub question_id: i64,
    /// Its group.
    pub group: String,
    /// U.
    pub u: u8,
    /// match / mismatch / no_answer.
    pub verdict: &'static str,
}

/// The `evaluation` table of domain `D`.
pub fn table<D: DomainKind>() -> Table<ScoredRow> {
    type V = Getter<ScoredRow>;
    Table {
        name: "evaluation",
        description: "Every episode's artifact scored against gold by its domain's judge.",
        written_by: "the evaluate stage",
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("step", V::U64(|r| r.step), "The episode's step."),
            Column::new("question_id", V::I64(|r| r.question_id), "The task."),
            Column::new(D::GROUP, V::Str(|r| &r.group), D::GROUP_DOC),
            Column::new(
                "difficulty",
                V::Str(|r| &r.group),
                "The group again, so the report's per-difficulty rows (EX, coupling) are per group.",
            ),
            Column::new("u", V::U8(|r| r.u), "1 when the artifact answers the task as gold does, else 0."),
            Column::new("verdict", V::Str(|r| r.verdict), "match, mismatch or no_answer."),
        ],
    }
}

/// The `evaluation` of the `episodes` input against `gold`, by `D`'s judge with its default options.
pub fn generic<D: DomainKind>(e: &Evaluate<'_>, ctx: &StageContext, inputs: &Inputs) -> Result<RecordBatch> {
    if let Some(k) = e.options.keys().next() {
        return Err(Error::stage(&ctx.stage_id, format!("`{k}` is not an evaluate option of the {} domain", D::NAME)));
    }
    let domain = D::configure(D::Options::default(), ctx)?;
    let tasks = domain.tasks(inputs.get(ctx, "tasks")?, Path::new("tasks"))?;
    let gold = domain.gold(inputs.get(ctx, "gold")?, Path::new("gold"))?;
    let episodes = inputs.tables.get("episodes").ok_or_else(|| {
        Error::stage(&ctx.stage_id, format!("{} tasks are evaluated from the agent's `episodes` input", D::NAME))
    })?;
    let path = Path::new("episodes");
    let step = crate::table::column::<UInt64Array>(episodes, path, "step")?;
    let qid = crate::table::column::<Int64Array>(episodes, path, "question_id")?;
    let artifact = crate::table::column::<StringArray>(episodes, path, D::ARTIFACT)?;
    let task_of: HashMap<i64, &D::Task> = tasks.iter().map(|t| (D::id(t), t)).collect();
    let all: Vec<&str> =
        (0..episodes.num_rows()).filter(|i| artifact.is_valid(*i)).map(|i| artifact.value(i)).collect();
    domain.prepare(&all);
    let mut rows = Vec::with_capacity(episodes.num_rows());
    for i in 0..episodes.num_rows() {
        let q = qid.value(i);
        let missing = |what: &str| Error::input(path, format!("row {i}: question_id {q} has no {what}"));
        let task = task_of.get(&q).ok_or_else(|| missing("task"))?;
        let g = gold.get(&q).ok_or_else(|| missing("gold"))?;
        let a = artifact.is_valid(i).then(|| artifact.value(i));
        let u = domain.score(task, g, a)?;
        let verdict = match (a, u) {
            (None, _) => "no_answer",
            (_, 1) => "match",
            _ => "mismatch",
        };
        rows.push(ScoredRow { step: step.value(i), question_id: q, group: D::group(task).to_string(), u, verdict });
    }
    rows.sort_by_key(|r| r.step);
    table::<D>().batch(&rows)
}
