//! Parquet table files: atomic writes (temp file + rename, so nothing half-written is ever read)
//! and whole-file reads. Snappy compression, which polars, pyarrow and DuckDB all read.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, RecordBatch};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::error::{Error, Result};

/// Write `batch` to `path` atomically.
pub fn write_parquet(path: &Path, batch: &RecordBatch) -> Result<()> {
    let pq = |source| Error::Parquet { path: path.into(), source };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| Error::Write { path: dir.into(), source })?;
    }
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let file = File::create(&tmp).map_err(|source| Error::Write { path: tmp.clone(), source })?;
    let props = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(props)).map_err(pq)?;
    writer.write(batch).map_err(pq)?;
    writer.close().map_err(pq)?;
    std::fs::rename(&tmp, path).map_err(|source| Error::Write { path: path.into(), source })
}

/// Read a whole Parquet file into one batch.
pub fn read_parquet(path: &Path) -> Result<RecordBatch> {
    let pq = |source| Error::Parquet { path: path.into(), source };
    let file = File::open(path).map_err(|source| Error::Read { path: path.into(), source })?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(pq)?;
    let schema = Arc::clone(builder.schema());
    let batches = builder.build().map_err(pq)?.collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(arrow::compute::concat_batches(&schema, &batches)?)
}

/// A column of `batch` by name and type, or an error naming the table and column.
pub fn column<'a, T: Array + 'static>(batch: &'a RecordBatch, path: &Path, name: &str) -> Result<&'a T> {
    batch
        .column_by_name(name)
        .ok_or_else(|| Error::input(path, format!("missing column '{name}'")))?
        .as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| Error::input(path, format!("column '{name}' has the wrong type")))
}

/// The `domain` column's value in a `tasks` table (None: no such column, or no rows). Any string
/// layout is read (a SQL session's tables hold views of strings).
pub fn domain_of(batch: &RecordBatch) -> Option<String> {
    let d = arrow::compute::cast(batch.column_by_name("domain")?, &arrow::datatypes::DataType::Utf8).ok()?;
    let d = d.as_any().downcast_ref::<arrow::array::StringArray>()?;
    (d.len() > 0 && d.is_valid(0)).then(|| d.value(0).to_string())
}

/// An error naming `path` unless `batch` is a `tasks` table of `domain` (its `domain` column says so).
pub fn require_domain(batch: &RecordBatch, path: &Path, domain: &str) -> Result<()> {
    if domain_of(batch).as_deref() == Some(domain) {
        return Ok(());
    }
    Err(Error::input(
        path,
        format!("not a {domain} tasks table (no domain column saying '{domain}'): use a {domain} benchmark source"),
    ))
}
