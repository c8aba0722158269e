//! The case bank of one arm and seed: unbounded, one entry per finished episode, by step. Retrieval
//! (precomputed by similarity alone) names earlier steps; the bank turns them into the memories
//! the planner is shown, with their stored labels. Episodes may finish in any order (the loop
//! runs an episode as soon as the ones it retrieves are stored); a resumed loop loads the
//! episodes already on disk.

use std::collections::HashMap;

use arrow::array::{Array, Int64Array, RecordBatch, StringArray, UInt8Array, UInt64Array};

use super::prompts::ShownMemory;
use crate::error::Result;
use crate::seam::Domain;
use crate::seam::records::{Episode, Retrieved};
use crate::seam::tables::episodes_table;

/// The bank.
#[derive(Debug, Default)]
pub struct Bank {
    entries: Vec<Option<BankEntry>>,
}

impl Bank {
    /// Episodes stored so far.
    pub fn len(&self) -> usize {
        self.entries.iter().filter(|e| e.is_some()).count()
    }

    /// Whether nothing is stored yet.
    pub fn is_empty(&self) -> bool {
        self.entries.iter().all(Option::is_none)
    }

    /// The stored label of step `step`, once it is stored.
    pub fn label(&self, step: usize) -> Option<u8> {
        self.entries.get(step).and_then(Option::as_ref).map(|e| e.stored_q)
    }

    /// Whether step `step` is stored.
    pub fn has(&self, step: usize) -> bool {
        self.entries.get(step).is_some_and(Option::is_some)
    }

    fn put(&mut self, step: usize, entry: BankEntry) {
        if self.entries.len() <= step {
            self.entries.resize(step + 1, None);
        }
        self.entries[step] = Some(entry);
    }

    /// Store a finished episode.
    pub fn push<O>(&mut self, e: &Episode<O>) {
        self.put(e.step as usize, BankEntry::of(e));
    }

    /// Store the episodes of an `episodes` part of domain `D` on disk.
    pub fn load<D: Domain>(&mut self, episodes: &RecordBatch) -> Result<()> {
        for (step, entry) in entries::<D>(episodes)? {
            self.put(step, entry);
        }
        Ok(())
    }

    /// What the planner of `task` is shown of the `neighbours` (earlier steps with their
    /// similarity, best first): each memory with its stored label now, and the record of it.
    pub fn shown<D: Domain>(
        &self,
        task: &D::Task,
        neighbours: &[(usize, f32)],
        tasks: &HashMap<i64, D::Task>,
    ) -> Vec<(Retrieved, ShownMemory)> {
        neighbours
            .iter()
            .map(|&(n, similarity)| {
                let m = self.entries[n].as_ref().expect("an episode is shown only once it is stored");
                let same_db = m.group == D::group(task);
                let shown = ShownMemory {
                    question: D::question(&tasks[&m.question_id]).to_string(),
                    plan: m.plan.clone(),
                    artifact_name: D::ARTIFACT,
                    artifact: m.artifact.clone(),
                    q: m.stored_q,
                    same_db,
                    similarity,
                };
                let rec = Retrieved {
                    step: n as u64,
                    question_id: m.question_id,
                    similarity,
                    shown_label: m.stored_q,
                    same_db,
                };
                (rec, shown)
            })
            .collect()
    }
}

/// A bank entry: what retrieval can show of an earlier episode.
#[derive(Clone, Debug, PartialEq)]
pub struct BankEntry {
    /// Its task.
    pub question_id: i64,
    /// Its group (SQL: database; factual: topic).
    pub group: String,
    /// Its plan ('' when the call failed).
    pub plan: String,
    /// Its artifact ('' when none).
    pub artifact: String,
    /// Its stored label.
    pub stored_q: u8,
}

impl BankEntry {
    /// The bank entry of a fresh episode.
    pub fn of<O>(e: &Episode<O>) -> BankEntry {
        BankEntry {
            question_id: e.question_id,
            group: e.group.clone(),
            plan: e.plan.clone().unwrap_or_default(),
            artifact: e.artifact.clone().unwrap_or_default(),
            stored_q: e.stored_q,
        }
    }
}

/// The bank entries stored in an `episodes` part, with their steps.
fn entries<D: Domain>(batch: &RecordBatch) -> Result<Vec<(usize, BankEntry)>> {
    let (p, t) = (std::path::Path::new("episodes"), episodes_table::<D>());
    let step = t.column::<UInt64Array>(batch, p, "step")?;
    let qid = t.column::<Int64Array>(batch, p, "question_id")?;
    let db = t.column::<StringArray>(batch, p, D::GROUP)?;
    let plan = t.column::<StringArray>(batch, p, "plan")?;
    let sql = t.column::<StringArray>(batch, p, D::ARTIFACT)?;
    let q = t.column::<UInt8Array>(batch, p, "stored_q")?;
    let text = |a: &StringArray, i: usize| if a.is_valid(i) { a.value(i).to_string() } else { String::new() };
    Ok((0..batch.num_rows())
        .map(|i| {
            let entry = BankEntry {
                question_id: qid.value(i),
                group: db.value(i).to_string(),
                plan: text(plan, i),
                artifact: text(sql, i),
                stored_q: q.value(i),
            };
            (step.value(i) as usize, entry)
        })
        .collect())
}
