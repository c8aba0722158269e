//! The code `evaluation` table: every episode's code scored by the task's hidden tests in the
//! sandbox ([`crate::python::gold::check`]: pass/fail = U, the same on any machine and load),
//! with why it failed and which limit stopped it. Gold-reading code only (the evaluate stage).

use std::collections::HashMap;
use std::path::Path;

use arrow::array::{Array, Int64Array, RecordBatch, StringArray, UInt64Array};

use super::{CodeDomain, CodeGold, CodeTask};
use crate::columns::{ARM, Column, Getter, SEED, Table};
use crate::error::{Error, Result};

/// One code `evaluation` row.
pub struct CodeEvalRow {
    /// The episode's step.
    pub step: u64,
    /// The task.
    pub question_id: i64,
    /// Its suite.
    pub suite: String,
    /// 1 when the hidden tests pass, 0 when they fail; None when unscored.
    pub u: Option<u8>,
    /// pass / fail / no_code / unscored.
    pub verdict: &'static str,
    /// Why not (the assert that failed, or what the code tried); null when passed.
    pub why: Option<String>,
    /// The sandbox limit that stopped a run.
    pub limit: Option<&'static str>,
    /// Fuel of the record and replay runs.
    pub fuel: u64,
    /// Calls of the function the tests made.
    pub calls: u64,
}

/// The code `evaluation` table.
pub fn evaluation_table() -> Table<CodeEvalRow> {
    type V = Getter<CodeEvalRow>;
    Table {
        name: "evaluation",
        description: "Accuracy of every code episode: its code against the task's hidden tests in the sandbox (pass@1, deterministic); the only agent-related table computed from gold.",
        written_by: "the evaluate stage",
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("step", V::U64(|r| r.step), "The episode's step."),
            Column::new("question_id", V::I64(|r| r.question_id), "The task."),
            Column::new("suite", V::Str(|r| &r.suite), "Its suite."),
            Column::new(
                "difficulty",
                V::Str(|r| &r.suite),
                "The suite again, so the report's per-difficulty rows (EX, coupling) are per suite.",
            ),
            Column::new(
                "u",
                V::OptU8(|r| r.u),
                "1 when the hidden tests pass on the code (docs/sandboxes.md, the gold check: the tests' asserts replayed on the code's recorded calls), else 0; null when unscored (the machine failed the check: the wall-clock backstop in every try; averages leave it out).",
            ),
            Column::new(
                "verdict",
                V::Str(|r| r.verdict),
                "pass / fail / no_code (nothing was written) / unscored (an infrastructure failure, not a verdict on the code).",
            ),
            Column::new(
                "why",
                V::OptStr(|r| r.why.as_deref()),
                "Why the check failed: the assert that failed, the exception, or what the code tried (an exit, an object that is not a plain value); null when it passed.",
            ),
            Column::new(
                "limit",
                V::OptStr(|r| r.limit),
                "The sandbox limit that stopped a run (fuel, memory, stack, wall-clock); null when none did. A wall-clock stop is an infrastructure failure: the check is retried, then left unscored, never failed.",
            ),
            Column::new(
                "fuel",
                V::U64(|r| r.fuel),
                "WebAssembly instructions the check's runs used (listing the calls, the candidate's, the replay; deterministic).",
            ),
            Column::new("calls", V::U64(|r| r.calls), "Calls of the function the tests made."),
        ],
    }
}

/// The evaluation of the code `episodes` (read from `path`) against `gold`, `jobs` at once.
pub fn evaluate(
    domain: &CodeDomain,
    tasks: &[CodeTask],
    gold: &HashMap<i64, CodeGold>,
    episodes: &RecordBatch,
    path: &Path,
    jobs: usize,
) -> Result<RecordBatch> {
    let t = crate::seam::tables::episodes_table::<CodeDomain>();
    let step = t.column::<UInt64Array>(episodes, path, "step")?;
    let qid = t.column::<Int64Array>(episodes, path, "question_id")?;
    let code = t.column::<StringArray>(episodes, path, "code")?;
    let task_of: HashMap<i64, &CodeTask> = tasks.iter().map(|t| (t.question_id, t)).collect();
    let mut work = Vec::with_capacity(episodes.num_rows());
    for i in 0..episodes.num_rows() {
        let q = qid.value(i);
        let missing = |what: &str| Error::input(path, format!("row {i}: question_id {q} has no {what}"));
        let task = *task_of.get(&q).ok_or_else(|| missing("task"))?;
        let g = gold.get(&q).ok_or_else(|| missing("gold"))?;
        work.push((step.value(i), task, g, code.is_valid(i).then(|| code.value(i))));
    }
    let mut rows = crate::par::par_map_with(
        &work,
        jobs,
        || (),
        |_, (step, task, g, code)| {
            let base = CodeEvalRow {
                step: *step,
                question_id: task.question_id,
                suite: task.suite.clone(),
                u: Some(0),
                verdict: "no_code",
                why: None,
                limit: None,
                fuel: 0,
                calls: 0,
            };
            let Some(code) = code else { return base };
            let v = domain.verdict(task, g, code);
            CodeEvalRow {
                u: (!v.unscored).then_some(v.passed.into()),
                verdict: match (v.unscored, v.passed) {
                    (true, _) => "unscored",
                    (false, true) => "pass",
                    (false, false) => "fail",
                },
                why: (!v.passed).then_some(v.why),
                limit: v.limit,
                fuel: v.fuel,
                calls: v.calls as u64,
                ..base
            }
        },
    );
    rows.sort_by_key(|r| r.step);
    evaluation_table().batch(&rows)
}
