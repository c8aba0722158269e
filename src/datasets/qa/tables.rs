//! The factual `tasks` and `gold` tables, defined column by column (`schemas/factual/`). `tasks`
//! has the columns every domain's tasks have (`question_id`, `question`) plus `task_id`, `domain`,
//! `topic` and `answer_type`; it never holds an answer. `gold` holds nothing else.

use std::path::Path;

use arrow::array::{Int64Array, RecordBatch, StringArray};

use super::{FactBench, FactGold, FactTask};
use crate::columns::{Column, Getter, Table};
use crate::error::{Error, Result};

/// The value of `tasks.domain` for factual tasks.
pub const DOMAIN: &str = "factual";

/// The factual `tasks` table.
pub fn tasks_table() -> Table<FactTask> {
    type T = Getter<FactTask>;
    Table {
        name: "tasks",
        description: "One row per factual question, as the agent may see it (closed book: no answer, no evidence).",
        written_by: WRITTEN_BY,
        matrix: &[],
        columns: vec![
            Column::new(
                "question_id",
                T::I64(|t| t.question_id),
                "0-based position in the source: the Int64 key every table joins on.",
            ),
            Column::new("task_id", T::Str(|t| &t.task_id), "The source's own id (SimpleQA: the row number)."),
            Column::new("domain", T::Str(|_| DOMAIN), "The task's domain: factual."),
            Column::new("question", T::Str(|t| &t.question), "The question."),
            Column::new("topic", T::Str(|t| &t.topic), "Its topic (capital, element_symbol, ...; general when none)."),
            Column::new(
                "answer_type",
                T::Str(|t| &t.answer_type),
                "The kind of answer asked for: name, number, year, code, symbol or text (what the format channel checks).",
            ),
        ],
    }
}

/// The factual `gold` table.
pub fn gold_table() -> Table<FactGold> {
    type G = Getter<FactGold>;
    Table {
        name: "gold",
        description: "The reference answer per factual question, with its aliases. Read only by evaluation and post-hoc analysis.",
        written_by: WRITTEN_BY,
        matrix: &[],
        columns: vec![
            Column::new("question_id", G::I64(|g| g.question_id), "The task (joins tasks.question_id)."),
            Column::new("answer", G::Str(|g| &g.answer), "The answer, as the source gives it."),
            Column::new(
                "aliases",
                G::Text(|g| serde_json::to_string(&g.aliases).expect("strings serialize")),
                "Other accepted answers, as a JSON list of strings.",
            ),
        ],
    }
}

const WRITTEN_BY: &str = "the benchmark stage (factual sources)";

/// The tasks of a factual `tasks` table read from `path`.
pub fn tasks_from_batch(b: &RecordBatch, path: &Path) -> Result<Vec<FactTask>> {
    crate::table::require_domain(b, path, DOMAIN)?;
    let t = tasks_table();
    let qid = t.column::<Int64Array>(b, path, "question_id")?;
    let s = |n| t.column::<StringArray>(b, path, n);
    let (id, q, topic, ty) = (s("task_id")?, s("question")?, s("topic")?, s("answer_type")?);
    Ok((0..b.num_rows())
        .map(|i| FactTask {
            question_id: qid.value(i),
            task_id: id.value(i).to_string(),
            question: q.value(i).to_string(),
            topic: topic.value(i).to_string(),
            answer_type: ty.value(i).to_string(),
        })
        .collect())
}

/// The gold of a factual `gold` table read from `path`.
pub fn gold_from_batch(b: &RecordBatch, path: &Path) -> Result<Vec<FactGold>> {
    let t = gold_table();
    let qid = t.column::<Int64Array>(b, path, "question_id")?;
    let (answer, aliases) = (t.column::<StringArray>(b, path, "answer")?, t.column::<StringArray>(b, path, "aliases")?);
    (0..b.num_rows())
        .map(|i| {
            let aliases: Vec<String> = serde_json::from_str(aliases.value(i))
                .map_err(|e| Error::input_from(path, format!("row {i}: aliases is not a JSON list of strings"), e))?;
            Ok(FactGold { question_id: qid.value(i), answer: answer.value(i).to_string(), aliases })
        })
        .collect()
}

/// The benchmark as its two tables.
pub fn batches(b: &FactBench) -> Result<(RecordBatch, RecordBatch)> {
    Ok((tasks_table().batch(&b.tasks)?, gold_table().batch(&b.gold)?))
}
