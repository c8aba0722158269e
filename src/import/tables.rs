//! The tables of an import, defined column by column (`schemas/import/`; the runner prepends
//! `seed` and `arm`: an import stage expands over one seed and the arm its memories are written
//! under): `episodes` (one row per
//! memory, in the columns lucid's own episodes share, so the bank SQL, the verifier stages and
//! the reports read it as they read a run) and `evaluation` (U of the memories whose truth is
//! known, and how it was decided). `tasks` and `gold` are the factual layout's.

use super::{ImportedMemory, Truth};
use crate::columns::{ARM, Column, Getter, SEED, Table};
use crate::seam::Channels;

const WRITTEN_BY: &str = "the import stage (lucid import)";

type M = Getter<ImportedMemory>;

/// The imported `episodes` table.
pub fn episodes_table() -> Table<ImportedMemory> {
    Table {
        name: "episodes",
        description: "One row per memory of an imported bank, in the columns an agent run's episodes share.",
        written_by: WRITTEN_BY,
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("step", M::U64(|r| r.step), "Position in the bank: the source's order, or its order field's."),
            Column::new("question_id", M::I64(|r| r.question_id), "The task (tasks.question_id)."),
            Column::new("source_id", M::Str(|r| &r.source_id), "The source's own id (or `line N`)."),
            Column::new(
                "source_line",
                M::U64(|r| r.line),
                "Where the memory is in the bank file (1-based line or row).",
            ),
            Column::new(
                "retrieved",
                M::Nested {
                    ty: crate::seam::tables::retrieved_type,
                    nullable: false,
                    build: |rows| crate::seam::tables::no_retrieved(rows.len()),
                },
                "Empty: an import records no retrievals.",
            ),
            Column::new(
                "plan",
                M::OptStr(|r| r.plan.as_deref()),
                "The memory's plan or trajectory, when the source has one.",
            ),
            Column::new(
                "answer",
                M::OptStr(|r| r.answer.as_deref()),
                "The memory's answer, when the source (or its results log) has one.",
            ),
            Column::new("evidence_ids", M::OptStr(|_| None), "Null: an import looked nothing up."),
            Column::new(
                "raw_label",
                M::OptStr(|r| r.raw_label.as_deref()),
                "The label as the source wrote it (null: the source has none).",
            ),
            Column::new(
                "r",
                M::OptU8(|r| r.graded.then_some(r.r)),
                "r: 1 trusted, 0 untrusted (the label mapped; 1 for every memory of an unlabelled bank; null for an eval-log sample its grader did not score).",
            ),
            Column::new(
                "grade",
                M::Text(|r| match (r.graded, r.r) {
                    (false, _) => "ungraded".into(),
                    (true, 1) => "correct".into(),
                    (true, _) => "incorrect".into(),
                }),
                "correct / incorrect, from r (ungraded: no label).",
            ),
            Column::new(
                "channels",
                M::Nested {
                    ty: crate::seam::tables::channels_type,
                    nullable: false,
                    build: |rows| {
                        let none = Channels::default();
                        crate::seam::tables::channel_lists(&rows.iter().map(|_| &none).collect::<Vec<_>>())
                    },
                },
                "Empty: an import ran no answer-free channel.",
            ),
            Column::new("flagged", M::Bool(|_| false), "False: nothing flagged it."),
            Column::new("stored_q", M::U8(|r| r.r), "The stored label: r."),
            Column::new(
                "label_source",
                M::Str(|r| r.label_source.name()),
                "Where the label came from: self-graded, judge-with-gold, judge, environment-reward or unlabelled.",
            ),
        ],
    }
}

type T = Getter<Truth>;

/// The imported `evaluation` table.
pub fn evaluation_table() -> Table<Truth> {
    Table {
        name: "evaluation",
        description: "U of every imported memory whose truth is known, and how it was decided.",
        written_by: WRITTEN_BY,
        matrix: &[SEED, ARM],
        columns: vec![
            Column::new("step", T::U64(|r| r.step), "The memory's step."),
            Column::new("question_id", T::I64(|r| r.question_id), "Its task."),
            Column::new(
                "difficulty",
                T::Str(|_| "general"),
                "general: the report's per-difficulty rows have one group.",
            ),
            Column::new("u", T::U8(|r| r.u), "U: 1 when the memory's answer is right."),
            Column::new("verdict", T::Str(|r| r.verdict), "match, mismatch, no_answer, source verdict or truth file."),
            Column::new("u_source", T::Str(|r| r.u_source), "How U was decided."),
        ],
    }
}
