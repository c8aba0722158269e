//! The bank of an agent run (`lucid audit RUN_DIR --arm ARM`): the episodes of one arm, r from
//! the self-grade, U from `evaluation`, each detector channel (and the detector as a whole) as a
//! verifier, n = how often the memory was retrieved — so the BIRD detector lands on the EIA axes
//! next to a user's own verifiers. The SQL is `pipelines/reports/bank.sql`.

use std::path::Path;

use arrow::array::{AsArray, RecordBatch};

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
    let rows = arrow::compute::filter_record_batch(all, &mask)?;
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
