//! The labelling sheet (`lucid audit BANK --sample N`) and the labels that come back
//! (`--labels FILE`). The sheet is a CSV of the sampled memories in a shuffled order —
//! `memory, question, answer, plan, replaces, u` — then one spare row per sampled memory (a seeded
//! draw from the same stratum, `replaces` naming the row it stands in for: a labeller who cannot
//! judge a memory leaves it blank and labels its spare), with `u` empty for a person to fill (1 right, 0 wrong;
//! also right/wrong, correct/incorrect, true/false, yes/no; empty: not labelled). A second
//! labeller may fill a column `u2` on some or all rows: their disagreement is the labelling error
//! the intervals carry ([`super::estimator`]). It shows what
//! the memory says and nothing of its label or the verifiers' flags, so the labeller is blind to
//! what is being audited. A memory is named `seed/step` in a run and by its `id` column (else its
//! 0-based row) in a bank file.

use std::collections::HashMap;
use std::path::Path;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::DataType;

use super::bank::AuditBank;
use super::estimator::Labels;
use super::read::Columns;
use crate::error::{Error, Result};

/// A bank with what a labeller needs: each memory's name and text.
pub struct Memories {
    /// r and the verifiers (U unknown).
    pub bank: AuditBank,
    /// Each memory's name in the sheet.
    pub ids: Vec<String>,
    /// Question, answer, plan per memory (empty where the bank has none).
    pub text: Vec<[String; 3]>,
}

/// Column `name` of `b` as text per row (None: no such column).
fn text_column(b: &RecordBatch, name: &str) -> Option<Vec<String>> {
    let c = arrow::compute::cast(b.column_by_name(name)?, &DataType::Utf8).ok()?;
    let c = c.as_string::<i32>();
    Some((0..c.len()).map(|i| if c.is_valid(i) { c.value(i).to_string() } else { String::new() }).collect())
}

/// The first of `names` that `b` has, as text per row.
fn first_text(b: &RecordBatch, names: &[&str]) -> Vec<String> {
    names.iter().find_map(|n| text_column(b, n)).unwrap_or_else(|| vec![String::new(); b.num_rows()])
}

/// The memories of the bank at `path` (a file, or a run folder's `arm`), U not read. A memory's
/// answer is the first of `artifacts` the bank has (the registered domains' artifact columns).
pub fn memories(path: &Path, cols: &Columns, arm: Option<&str>, artifacts: &[&str]) -> Result<Memories> {
    let cols = Columns { truth: false, ..cols.clone() };
    let (bank, rows) = super::run_bank::read_rows(path, &cols, arm)?;
    let n = rows.num_rows();
    if let Some(arm) = &bank.arm {
        let (seeds, steps) = (first_text(&rows, &["seed"]), first_text(&rows, &["id"]));
        let ids: Vec<String> = (0..n).map(|i| format!("{}/{}", seeds[i], steps[i])).collect();
        let text = run_text(path, arm, &rows, artifacts)?;
        return Ok(Memories { bank, ids, text });
    }
    let ids = text_column(&rows, "id").unwrap_or_else(|| (0..n).map(|i| i.to_string()).collect());
    let (q, a, p) = (
        first_text(&rows, &["question", "query"]),
        first_text(&rows, &[&["answer", "artifact"], artifacts].concat()),
        first_text(&rows, &["plan"]),
    );
    let text = (0..n).map(|i| [q[i].clone(), a[i].clone(), p[i].clone()]).collect();
    Ok(Memories { bank, ids, text })
}

/// Question (from `tasks`), answer (the first of `artifacts` the episodes have) and plan of each
/// bank row of `rows` (seed, id, question_id) of `arm` in the run at `dir`.
fn run_text(dir: &Path, arm: &str, rows: &RecordBatch, artifacts: &[&str]) -> Result<Vec<[String; 3]>> {
    let run = (dir.display().to_string(), dir.to_path_buf());
    let (episodes, tasks) = crate::session::block_on(async {
        let (ctx, names) = crate::runs::session_for(std::slice::from_ref(&run)).await?;
        let quoted = arm.replace('\'', "''");
        let episodes =
            crate::session::collect(&ctx, &format!("SELECT * FROM episodes WHERE CAST(arm AS VARCHAR) = '{quoted}'"))
                .await?;
        let tasks = if names.iter().any(|n| n == "tasks") {
            Some(crate::session::collect(&ctx, "SELECT * FROM tasks").await?)
        } else {
            None
        };
        Ok::<_, Error>((episodes, tasks))
    })
    .map_err(|e| Error::input_from(dir, "", e))?;
    let questions: HashMap<String, String> = tasks
        .as_ref()
        .map(|t| first_text(t, &["question_id"]).into_iter().zip(first_text(t, &["question"])).collect())
        .unwrap_or_default();
    let key = |b: &RecordBatch, step: &str| -> Vec<String> {
        let (s, t) = (first_text(b, &["seed"]), first_text(b, &[step]));
        s.into_iter().zip(t).map(|(s, t)| format!("{s}/{t}")).collect()
    };
    let (answer, plan) = (first_text(&episodes, artifacts), first_text(&episodes, &["plan"]));
    let by_key: HashMap<String, usize> = key(&episodes, "step").into_iter().enumerate().map(|(i, k)| (k, i)).collect();
    let qids = first_text(rows, &["question_id"]);
    Ok(key(rows, "id")
        .iter()
        .zip(qids)
        .map(|(k, qid)| {
            let e = by_key.get(k);
            [
                questions.get(&qid).cloned().unwrap_or_default(),
                e.map_or(String::new(), |&i| answer[i].clone()),
                e.map_or(String::new(), |&i| plan[i].clone()),
            ]
        })
        .collect())
}

/// A CSV field, quoted when it has to be.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

/// The sheet of the memories `picked` of `m`, as CSV, then the `spares` (a spare memory and the
/// picked one it replaces, named in the `replaces` column).
pub fn sheet(m: &Memories, picked: &[usize], spares: &[(usize, usize)]) -> String {
    let mut out = String::from("memory,question,answer,plan,replaces,u\n");
    let rows = picked.iter().map(|&i| (i, None)).chain(spares.iter().map(|&(i, of)| (i, Some(of))));
    for (i, replaces) in rows {
        let [q, a, p] = &m.text[i];
        let replaces = replaces.map_or(String::new(), |of| field(&m.ids[of]));
        out.push_str(&format!("{},{},{},{},{replaces},\n", field(&m.ids[i]), field(q), field(a), field(p)));
    }
    out
}

/// A hand label: 1 right, 0 wrong, None not labelled; an error for anything else.
fn label(cell: &str) -> std::result::Result<Option<f64>, ()> {
    match cell.trim().to_ascii_lowercase().as_str() {
        "" => Ok(None),
        "1" | "1.0" | "right" | "correct" | "true" | "yes" => Ok(Some(1.0)),
        "0" | "0.0" | "wrong" | "incorrect" | "false" | "no" => Ok(Some(0.0)),
        _ => Err(()),
    }
}

/// The labels in the CSV at `path` (columns `memory` and `u`, and `u2` where a second labeller
/// labelled some of the same memories; others ignored) for the memories of `m`: the rows of the
/// file (blank labels included) and the labels. Errors name the file, the data row (1-based),
/// the column and the memory. Spare rows (`replaces` filled) are labelled memories like any
/// other, but not rows of the N the sample was drawn for.
pub fn labels(path: &Path, m: &Memories) -> Result<(usize, Labels)> {
    let batch = super::read::read_csv(path, false)?;
    let need = |c: &str| {
        text_column(&batch, c)
            .ok_or_else(|| Error::input(path, format!("no column '{c}' (a labels file has columns memory and u)")))
    };
    let (ids, cells) = (need("memory")?, need("u")?);
    let seconds = text_column(&batch, "u2");
    // Spare rows do not count in N (the design is recomputed from the sheet's main rows).
    let spares = text_column(&batch, "replaces");
    let spare_rows = spares.as_ref().map_or(0, |r| r.iter().filter(|x| !x.trim().is_empty()).count());
    let index: HashMap<&str, usize> = m.ids.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
    let (mut out, mut seen) = (Labels::default(), HashMap::new());
    for (row, (id, cell)) in ids.iter().zip(&cells).enumerate() {
        let at = |what: String| Error::input(path, format!("data row {} (memory '{id}'): {what}", row + 1));
        let &i = index.get(id.as_str()).ok_or_else(|| at("no such memory in the bank".into()))?;
        if let Some(first) = seen.insert(i, row + 1) {
            return Err(at(format!("labelled twice (also data row {first})")));
        }
        let read = |column: &str, cell: &str| {
            label(cell)
                .map_err(|()| at(format!("{column} is '{cell}': write 1 (right) or 0 (wrong), or leave it empty")))
        };
        let first = read("u", cell)?;
        let second = match &seconds {
            Some(c) => read("u2", &c[row])?,
            None => None,
        };
        match (first, second) {
            (Some(x), second) => {
                out.picked.push(i);
                out.u.push(x);
                out.second.push(second);
            }
            // Only the second labeller labelled it: their label is the memory's.
            (None, Some(y)) => {
                out.picked.push(i);
                out.u.push(y);
                out.second.push(None);
            }
            (None, None) => {
                out.blanks += usize::from(spares.as_ref().is_none_or(|s| s[row].trim().is_empty()));
                out.unlabelled.push(i);
            }
        }
    }
    if out.picked.is_empty() {
        return Err(Error::input(path, "no memory is labelled: fill the u column with 1 (right) or 0 (wrong)"));
    }
    Ok((ids.len() - spare_rows, out))
}
