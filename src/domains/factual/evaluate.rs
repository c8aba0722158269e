//! The factual `evaluation` table: every episode's answer scored against gold by normalised
//! match (docs/domains.md's rule), with whether the evidence corpus agrees with the gold on that
//! question (what caps how well the `unsupported` channel can track truth). Gold-reading code
//! only (the evaluate stage).

use std::collections::HashMap;
use std::path::Path;

use arrow::array::{Array, Int64Array, RecordBatch, StringArray, UInt64Array};

use super::FactualDomain;
use crate::columns::{ARM, Column, Getter, SEED, Table};
use crate::datasets::qa::{FactGold, FactTask};
use crate::error::{Error, Result};
use crate::seam::Judge;

/// One factual `evaluation` row.
pub struct FactEvalRow {
    /// The episode's step.
    pub step: u64,
    /// The task.
    pub question_id: i64,
    /// Its topic.
    pub topic: String,
    /// 1 when the answer matches the gold or an alias.
    pub u: u8,
    /// match / mismatch / no_answer.
    pub verdict: &'static str,
    /// Whether the gold answer (or an alias) is in the passages retrieved for the question.
    pub gold_in_evidence: Option<bool>,
    /// The gold judge's verdict, when the stage has one.
    pub judge: Option<&'static str>,
}

/// The factual `evaluation` table.
pub fn evaluation_table() -> Table<FactEvalRow> {
    type V = Getter<FactEvalRow>;
    Table {
        name: "evaluation",
        description: "Accuracy of every factual episode: its answer against the gold answer and aliases by normalised match; the only agent-related table computed from gold.",
        written_by: "the evaluate stage",
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("step", V::U64(|r| r.step), "The episode's step."),
            Column::new("question_id", V::I64(|r| r.question_id), "The task."),
            Column::new("topic", V::Str(|r| &r.topic), "Its topic."),
            Column::new(
                "difficulty",
                V::Str(|r| &r.topic),
                "The topic again, so the report's per-difficulty rows (EX, coupling) are per topic.",
            ),
            Column::new(
                "u",
                V::U8(|r| r.u),
                "1 when the answer matches the gold answer or an alias (normalised, whole words), else 0.",
            ),
            Column::new("verdict", V::Str(|r| r.verdict), "match / mismatch / no_answer (nothing was answered)."),
            Column::new(
                "gold_in_evidence",
                V::OptBool(|r| r.gold_in_evidence),
                "The gold answer or an alias occurs in the evidence passages retrieved for the question (the corpus agrees with the gold); null when the corpus does not speak to the topic.",
            ),
            Column::new(
                "judge",
                V::OptStr(|r| r.judge),
                "The LLM gold judge's verdict (evaluate's `judge:` option, SimpleQA's style): correct / incorrect / not_attempted / unparseable / failed; null without a judge.",
            ),
            Column::new(
                "judge_u",
                V::OptU8(|r| match r.judge {
                    Some("correct") => Some(1),
                    Some("failed") | None => None,
                    Some(_) => Some(0),
                }),
                "1 when the judge says correct, 0 for any other verdict it gave; null without a judge or when its call failed. u stays the normalised match.",
            ),
        ],
    }
}

/// The evaluation of the factual `episodes` (read from `path`) against `gold`.
pub fn evaluate(
    domain: &FactualDomain,
    judge: Option<&super::gold_judge::GoldJudge>,
    tasks: &[FactTask],
    gold: &HashMap<i64, FactGold>,
    episodes: &RecordBatch,
    path: &Path,
) -> Result<RecordBatch> {
    let t = crate::seam::tables::episodes_table::<FactualDomain>();
    let step = t.column::<UInt64Array>(episodes, path, "step")?;
    let qid = t.column::<Int64Array>(episodes, path, "question_id")?;
    let answer = t.column::<StringArray>(episodes, path, "answer")?;
    let evidence = t.column::<StringArray>(episodes, path, "evidence_ids")?;
    let task_of: HashMap<i64, &FactTask> = tasks.iter().map(|t| (t.question_id, t)).collect();
    let mut rows = Vec::with_capacity(episodes.num_rows());
    for i in 0..episodes.num_rows() {
        let q = qid.value(i);
        let missing = |what: &str| Error::input(path, format!("row {i}: question_id {q} has no {what}"));
        let task = task_of.get(&q).ok_or_else(|| missing("task"))?;
        let g = gold.get(&q).ok_or_else(|| missing("gold"))?;
        let a = answer.is_valid(i).then(|| answer.value(i));
        // gold_in_evidence must describe the corpus the loop's channel read.
        let hits = domain.passages(&task.question, &task.topic);
        if evidence.is_valid(i) && a.is_some() {
            let ids = serde_json::to_string(&hits.as_deref().map(|h| domain.ids(h)).unwrap_or_default()).expect("json");
            if ids != evidence.value(i) {
                return Err(Error::input(
                    path,
                    format!(
                        "row {i}: the loop retrieved {} for question_id {q}, this stage's evidence options retrieve {ids}: \
                         give the evaluate stage the loop's `factual:` options (evidence, top_k)",
                        evidence.value(i)
                    ),
                ));
            }
        }
        let u = domain.score(task, g, a)?;
        let verdict = match (a, u) {
            (None, _) => "no_answer",
            (_, 1) => "match",
            _ => "mismatch",
        };
        let gold_in_evidence =
            hits.map(|h| std::iter::once(&g.answer).chain(&g.aliases).any(|x| domain.supports(&task.question, &h, x)));
        let judge = judge.map(|j| j.grade(&task.question, g, a)).transpose()?;
        rows.push(FactEvalRow {
            step: step.value(i),
            question_id: q,
            topic: task.topic.clone(),
            u,
            verdict,
            gold_in_evidence,
            judge,
        });
    }
    rows.sort_by_key(|r| r.step);
    evaluation_table().batch(&rows)
}
