//! The bank of an agent run (`lucid audit RUN_DIR --arm ARM`): the episodes of one arm, r as
//! stored and whether the self-grade parsed (`graded`), U from `evaluation`, each answer-free
//! channel of the run's domain, by name (`v_<name>` = 1 - fired), and the detector as a whole as
//! verifiers, n = how often the memory was retrieved — so the detector lands on the EIA axes next
//! to a user's own verifiers. The SQL is `pipelines/reports/bank.sql`. The run's verifier stages'
//! tables (`v_<name>`: judge, resample, panel, evidence) join as verifiers `v_<name>` (null where
//! one left a memory unscored), the first with self-consistency values as `sc`, and their costs
//! as the cost table; the judge stages among them (not panels) are the ensembles' default members.

use std::path::Path;

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Float64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};

use super::AuditBank;
use super::read::{Columns, bank_from_batch, read_file};
use crate::error::{Error, Result};

/// The SQL that reads a run's banks (every arm).
pub const SQL: &str = include_str!("../../pipelines/reports/bank.sql");

/// Every arm's bank rows of the run tables `episodes` and `evaluation` in `tables`.
pub fn banks(tables: &[(String, RecordBatch)]) -> Result<RecordBatch> {
    crate::runs::sql_over(tables, SQL)
}

/// The rows of `arm` (default: lucid, else memento, else the first arm with memories) among the
/// rows `all` of [`SQL`], read from `path` (which errors name), with the channels as verifiers.
fn rows_of(path: &Path, all: &RecordBatch, arm: Option<&str>) -> Result<(String, RecordBatch)> {
    let arms = all.column_by_name("arm").ok_or_else(|| Error::input(path, "no arm column"))?;
    let arms = arrow::compute::cast(arms, &arrow::datatypes::DataType::Utf8)?;
    let arms = arms.as_string::<i32>();
    let mut names: Vec<String> = arms.iter().flatten().map(str::to_string).collect();
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
    Ok((chosen, rows))
}

/// `all` (rows of [`SQL`]) with each verifier table of `verifiers` (`v_<name>`: arm, seed, step,
/// v, sc, calls, ...) joined as a column `v_<name>` (the first with `sc` values also as `sc`).
pub fn join_verifiers(all: &RecordBatch, verifiers: &[(String, RecordBatch)]) -> Result<RecordBatch> {
    if verifiers.is_empty() {
        return Ok(all.clone());
    }
    let mut tables = vec![("bank".to_string(), all.clone())];
    tables.extend(verifiers.iter().cloned());
    let has_sc = |b: &RecordBatch| b.column_by_name("sc").is_some_and(|c| c.null_count() < c.len());
    let sc = verifiers.iter().position(|(_, b)| has_sc(b));
    let mut select = String::from("SELECT b.*");
    let mut joins = String::new();
    for (i, (name, _)) in verifiers.iter().enumerate() {
        select.push_str(&format!(", t{i}.v AS \"{name}\""));
        if sc == Some(i) {
            select.push_str(&format!(", t{i}.sc AS sc"));
        }
        joins.push_str(&format!(
            " LEFT JOIN \"{name}\" t{i} ON CAST(t{i}.arm AS VARCHAR) = CAST(b.arm AS VARCHAR) \
             AND CAST(t{i}.seed AS BIGINT) = b.seed AND CAST(t{i}.step AS BIGINT) = b.id"
        ));
    }
    crate::runs::sql_over(&tables, &format!("{select} FROM bank b{joins} ORDER BY b.arm, b.seed, b.id"))
}

/// What each verifier table of `verifiers` spent on the memories of `arm`.
pub fn costs(verifiers: &[(String, RecordBatch)], arm: &str) -> Result<Vec<super::CostRow>> {
    let mut out = Vec::new();
    for (name, b) in verifiers {
        let b = match b.column_by_name("arm") {
            Some(a) => {
                let a = arrow::compute::cast(a, &DataType::Utf8)?;
                let mask = arrow::compute::kernels::cmp::eq(&a, &arrow::array::StringArray::new_scalar(arm))?;
                arrow::compute::filter_record_batch(b, &mask)?
            }
            None => b.clone(),
        };
        let sum = |c: &str| -> u64 {
            b.column_by_name(c)
                .and_then(|a| arrow::compute::cast(a, &DataType::UInt64).ok())
                .map_or(0, |a| a.as_primitive::<arrow::datatypes::UInt64Type>().iter().flatten().sum())
        };
        let seconds = b
            .column_by_name("seconds")
            .and_then(|a| a.as_primitive_opt::<arrow::datatypes::Float64Type>().map(|a| a.iter().flatten().sum()))
            .unwrap_or(0.0);
        let v = b.column_by_name("v").map_or(0, |c| c.len() - c.null_count());
        out.push(super::CostRow {
            verifier: name.trim_start_matches("v_").to_string(),
            scored: v,
            skipped: b.num_rows() - v,
            calls: sum("calls"),
            failed_calls: sum("failed_calls"),
            tokens: sum("tokens"),
            seconds,
        });
    }
    Ok(out)
}

/// One arm's bank rows of a run, before they become an [`AuditBank`].
pub struct RunBank {
    /// The arm.
    pub arm: String,
    /// Its rows of [`SQL`], channels as `v_<name>` and verifier tables joined as `v_<name>`.
    pub rows: RecordBatch,
    /// The verifier stages that are judges (not panels): the ensembles' default members.
    pub judges: Vec<String>,
    /// What each verifier stage spent on the arm.
    pub cost: Vec<super::CostRow>,
    /// Where the arm's labels came from, when its episodes say (an imported bank's `label_source`).
    pub label_source: Option<String>,
}

/// A panel's table (`detail` is `{"votes": ...}`): already an ensemble of judges.
/// One rule for the command and the audit stage, whatever string type the table was read back as
/// (Parquet read by DataFusion gives string views).
fn is_panel(table: &RecordBatch) -> bool {
    let Some(detail) = table.column_by_name("detail") else { return false };
    let Ok(detail) = arrow::compute::cast(detail, &arrow::datatypes::DataType::Utf8) else { return false };
    detail.as_string::<i32>().iter().flatten().next().is_some_and(|d| d.starts_with("{\"votes\""))
}

/// The bank of `arm` among `all` (rows of [`SQL`]) with the verifier tables `verifiers` joined
/// and their costs on that arm (`path` names the source in errors).
pub fn from_tables(
    path: &Path,
    all: &RecordBatch,
    verifiers: &[(String, RecordBatch)],
    arm: Option<&str>,
) -> Result<RunBank> {
    let (arm, rows) = rows_of(path, &join_verifiers(all, verifiers)?, arm)?;
    let judges =
        verifiers.iter().filter(|(_, t)| !is_panel(t)).map(|(n, _)| n.trim_start_matches("v_").to_string()).collect();
    Ok(RunBank { cost: costs(verifiers, &arm)?, arm, rows, judges, label_source: None })
}

/// The [`AuditBank`] of `run` (read from `path`, which errors name).
pub fn into_bank(path: &Path, run: RunBank, cols: &Columns) -> Result<AuditBank> {
    let bank = bank_from_batch(path, &run.rows, cols, Some(run.judges))?;
    Ok(AuditBank { arm: Some(run.arm), cost: run.cost, label_source: run.label_source, ..bank })
}

/// Read a bank file (`.parquet`, `.csv`, `.jsonl`/`.json`), or the bank of an agent run folder
/// (local or in a shared store) for `arm`.
pub fn read_bank(path: &Path, cols: &Columns, arm: Option<&str>) -> Result<AuditBank> {
    Ok(read_rows(path, cols, arm)?.0)
}

/// [`read_bank`] and the rows it was read from (a run's: its arm's rows of [`SQL`] with the
/// verifiers joined; a file's: the file). Without `cols.truth`, a run without `evaluation` reads
/// with U unknown (NaN).
pub fn read_rows(path: &Path, cols: &Columns, arm: Option<&str>) -> Result<(AuditBank, RecordBatch)> {
    let remote_run = path.to_str().and_then(crate::remote::listing::split_run_url).is_some();
    if path.is_dir() || remote_run {
        let run = read_with(path, arm, cols.truth)?;
        let rows = run.rows.clone();
        return Ok((into_bank(path, run, cols)?, rows));
    }
    let batch = read_file(path)?;
    Ok((bank_from_batch(path, &batch, cols, None)?, batch))
}

/// Each arm's label source (episodes with a `label_source` column: an imported bank).
const LABEL_SOURCES: &str =
    "SELECT CAST(arm AS VARCHAR) AS arm, min(label_source) AS label_source FROM episodes GROUP BY arm";

/// Where the labels of `arm` came from, when the `episodes` of `tables` say (an imported bank).
pub fn label_source(tables: &[(String, RecordBatch)], arm: &str) -> Option<String> {
    let has = tables.iter().any(|(n, b)| n == "episodes" && b.column_by_name("label_source").is_some());
    has.then(|| crate::runs::sql_over(tables, LABEL_SOURCES).ok()).flatten().and_then(|b| label_source_of(&b, arm))
}

/// The label source of `arm` among the rows of [`LABEL_SOURCES`].
fn label_source_of(b: &RecordBatch, arm: &str) -> Option<String> {
    let text = |c: &str| arrow::compute::cast(b.column_by_name(c)?, &DataType::Utf8).ok();
    let (arms, sources) = (text("arm")?, text("label_source")?);
    let (arms, sources) = (arms.as_string::<i32>(), sources.as_string::<i32>());
    (0..b.num_rows())
        .find(|&i| arms.value(i) == arm && arrow::array::Array::is_valid(sources, i))
        .map(|i| sources.value(i).to_string())
}

/// The bank rows of `arm` in the run folder `dir` (or a run in a shared store, `s3://…/runs/NAME`).
pub fn read(dir: &Path, arm: Option<&str>) -> Result<RunBank> {
    read_with(dir, arm, true)
}

/// U where a run without truth has none: null for every episode.
const NO_TRUTH: &str = "CREATE VIEW evaluation AS SELECT arm, seed, step, CAST(NULL AS DOUBLE) AS u FROM episodes";

/// [`read`]; without `truth`, every episode reads with U null (the sheet of a run whose gold
/// scored none or some of its memories holds them all).
fn read_with(dir: &Path, arm: Option<&str>, truth: bool) -> Result<RunBank> {
    let remote = dir.to_str().and_then(crate::remote::listing::split_run_url).is_some();
    let needed: &[&str] = if truth { &["episodes", "evaluation"] } else { &["episodes"] };
    for &name in needed {
        if !remote && !dir.join(name).exists() {
            return Err(Error::input(dir, format!("not a run folder with a bank: no '{name}' table")));
        }
    }
    let run = (dir.display().to_string(), dir.to_path_buf());
    let (all, verifiers, sources) = crate::session::block_on(async {
        let (ctx, names) = crate::runs::session_for(std::slice::from_ref(&run)).await?;
        if !truth {
            if names.iter().any(|n| n == "evaluation") {
                ctx.deregister_table("evaluation").map_err(|e| Error::query_from("", e))?;
            }
            crate::session::collect(&ctx, NO_TRUTH).await?;
        }
        let mut verifiers = Vec::new();
        for n in names.iter().filter(|n| n.starts_with("v_")) {
            verifiers.push((n.clone(), crate::session::collect(&ctx, &format!("SELECT * FROM \"{n}\"")).await?));
        }
        // Only an imported bank's episodes say where their labels came from.
        let sources = crate::session::collect(&ctx, LABEL_SOURCES).await.ok();
        Ok::<_, Error>((crate::session::collect(&ctx, SQL).await?, verifiers, sources))
    })
    .map_err(|e| Error::input_from(dir, "", e))?;
    let mut bank = from_tables(dir, &all, &verifiers, arm)?;
    bank.label_source = sources.and_then(|b| label_source_of(&b, &bank.arm));
    Ok(bank)
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
    // A bank whose episodes ran no channel (an imported one) has no detector to audit either.
    if let (true, Ok(d)) = (order.is_empty(), batch.schema().index_of("v_detector")) {
        fields.remove(d);
        columns.remove(d);
    }
    let at = batch.schema().index_of("channels").map_err(|_| bad())?;
    let at = if order.is_empty() && batch.schema().index_of("v_detector").is_ok_and(|d| d < at) { at - 1 } else { at };
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, RecordBatch, StringArray, StringViewArray};

    #[test]
    fn a_panel_is_a_panel_whatever_its_string_type() {
        let votes = r#"{"votes": {"a": 1}}"#;
        let plain: ArrayRef = Arc::new(StringArray::from(vec![votes]));
        let view: ArrayRef = Arc::new(StringViewArray::from(vec![votes]));
        let judge: ArrayRef = Arc::new(StringViewArray::from(vec!["VERDICT: CORRECT"]));
        let t = |c: ArrayRef| RecordBatch::try_from_iter([("detail", c)]).unwrap();
        assert!(super::is_panel(&t(plain)));
        assert!(super::is_panel(&t(view)), "read back from Parquet as a string view");
        assert!(!super::is_panel(&t(judge)));
    }
}
