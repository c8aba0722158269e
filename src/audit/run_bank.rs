//! The bank of an agent run (`lucid audit RUN_DIR --arm ARM`): the episodes of one arm, r from
//! the self-grade, U from `evaluation`, each answer-free channel of the run's domain, by name
//! (`v_<name>` = 1 - fired), and the detector as a whole as verifiers, n = how often the memory
//! was retrieved — so the detector lands on the EIA axes next to a user's own verifiers. The SQL
//! is `pipelines/reports/bank.sql`.

use std::path::Path;

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Float64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};

use super::{Bank, Columns, bank_from_batch};
use crate::error::{Error, Result};

/// The SQL that reads a run's banks (every arm).
pub const SQL: &str = include_str!("../../pipelines/reports/bank.sql");

/// Every arm's bank rows of the run tables `episodes` and `evaluation` in `tables`.
pub fn banks(tables: &[(String, RecordBatch)]) -> Result<RecordBatch> {
    crate::query::sql_over(tables, SQL)
}

/// The bank of `arm` (default: lucid, else memento, else the first arm with memories) among the
/// rows `all` of [`SQL`], read from `path` (which errors name).
pub fn bank_of(path: &Path, all: &RecordBatch, arm: Option<&str>, cols: &Columns) -> Result<Bank> {
    let arms = all.column_by_name("arm").ok_or_else(|| Error::input(path, "no arm column"))?;
    let arms = arrow::compute::cast(arms, &arrow::datatypes::DataType::Utf8)?;
    let arms = arms.as_string::<i32>();
    let mut names: Vec<String> = arms.iter().flatten().map(str::to_string).collect();
    names.dedup();
    names.sort();
    names.dedup();
    let chosen = match arm {
        Some(a) => names
            .iter()
            .find(|n| *n == a)
            .cloned()
            .ok_or_else(|| Error::input(path, format!("no arm '{a}' in this run (arms: {})", names.join(", "))))?,
        None => ["lucid", "memento"]
            .iter()
            .map(|s| s.to_string())
            .find(|a| names.contains(a))
            .or_else(|| names.iter().find(|n| *n != "no-memory").cloned())
            .ok_or_else(|| Error::input(path, "the run has no arm with memories"))?,
    };
    let mask = arrow::compute::kernels::cmp::eq(arms, &arrow::array::StringArray::new_scalar(chosen.as_str()))?;
    let rows = channel_verifiers(path, &arrow::compute::filter_record_batch(all, &mask)?)?;
    Ok(Bank { arm: Some(chosen), ..bank_from_batch(path, &rows, cols)? })
}

/// The bank of `arm` in the run folder `dir`.
pub fn read(dir: &Path, arm: Option<&str>, cols: &Columns) -> Result<Bank> {
    for name in ["episodes", "evaluation"] {
        if !dir.join(name).exists() {
            return Err(Error::input(dir, format!("not a run folder with a bank: no '{name}' table")));
        }
    }
    let run = (dir.display().to_string(), dir.to_path_buf());
    let all = crate::query::block_on(async {
        let (ctx, _) = crate::query::session_for(std::slice::from_ref(&run)).await?;
        crate::query::collect(&ctx, SQL).await
    })
    .map_err(|e| Error::input(dir, e.to_string()))?;
    bank_of(dir, &all, arm, cols)
}

/// `batch` with its `channels` column (list<struct{name, fired, ...}>) replaced, in place, by
/// one verifier column per channel name, in first-seen order: `v_<name>` = 0 where it fired, 1
/// where it did not.
fn channel_verifiers(path: &Path, batch: &RecordBatch) -> Result<RecordBatch> {
    let Some(at) = batch.schema().index_of("channels").ok() else { return Ok(batch.clone()) };
    let bad = || Error::input(path, "column 'channels' is not a list of {name, fired} structs");
    let list = batch.column(at).as_list_opt::<i32>().ok_or_else(bad)?;
    let items = list.values().as_struct_opt().ok_or_else(bad)?;
    let names = items.column_by_name("name").and_then(|c| c.as_string_opt::<i32>()).ok_or_else(bad)?;
    let fired = items.column_by_name("fired").and_then(|c| c.as_boolean_opt()).ok_or_else(bad)?;
    let mut order: Vec<String> = Vec::new();
    for n in names.iter().flatten() {
        if !order.iter().any(|o| o == n) {
            order.push(n.to_string());
        }
    }
    let offsets = list.value_offsets();
    let mut fields: Vec<Field> = batch.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    fields.remove(at);
    columns.remove(at);
    for (j, name) in order.iter().enumerate() {
        let v: Float64Array = (0..batch.num_rows())
            .map(|row| {
                let range = offsets[row] as usize..offsets[row + 1] as usize;
                let hit = range.into_iter().find(|&i| names.value(i) == name.as_str());
                hit.map(|i| if fired.value(i) { 0.0 } else { 1.0 })
            })
            .collect();
        fields.insert(at + j, Field::new(format!("v_{name}"), DataType::Float64, true));
        columns.insert(at + j, Arc::new(v));
    }
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)?)
}
