//! One definition per table column: its name, how a row's value is read (which fixes its Arrow
//! type and nullability), whether it is deterministic or what it varies with, and its
//! documentation. A table's Arrow schema, its batch builder, its typed column reader and its
//! documentation in `schemas/<table>.json` all come from that one definition (a test compares
//! the file with it; `LUCID_WRITE_SCHEMAS=1 cargo test schemas` rewrites the file), so a column
//! can no longer be renamed, retyped or swapped with another in one place only.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Float32Array, Float64Array, Int64Array, RecordBatch, StringArray, UInt8Array,
    UInt32Array, UInt64Array,
};
use arrow::datatypes::{DataType, Field, Schema};
use serde_json::{Value as Json, json};

use crate::error::{Error, Result};

/// What the "deterministic" mark of every documented table means.
pub const DETERMINISTIC: &str = "Columns marked deterministic hold the same values after an uninterrupted run, a run killed and resumed any number of times (with chunk_size, concurrency, max_concurrency or the retry policy changed in between), a run whose model calls met transient faults that a retry recovered, and a run at any concurrency, given the same inputs and the same model answers. Others say what they vary with.";

/// How a column's value is read from a row of type `R`.
pub enum Getter<R> {
    /// UInt64, not null.
    U64(fn(&R) -> u64),
    /// UInt64, nullable.
    OptU64(fn(&R) -> Option<u64>),
    /// Int64, not null.
    I64(fn(&R) -> i64),
    /// UInt32, not null.
    U32(fn(&R) -> u32),
    /// UInt8, not null.
    U8(fn(&R) -> u8),
    /// UInt8, nullable.
    OptU8(fn(&R) -> Option<u8>),
    /// Float32, not null.
    F32(fn(&R) -> f32),
    /// Float64, not null.
    F64(fn(&R) -> f64),
    /// Float64, nullable.
    OptF64(fn(&R) -> Option<f64>),
    /// Boolean, not null.
    Bool(fn(&R) -> bool),
    /// Boolean, nullable.
    OptBool(fn(&R) -> Option<bool>),
    /// Utf8, not null.
    Str(fn(&R) -> &str),
    /// Utf8, nullable.
    OptStr(fn(&R) -> Option<&str>),
    /// Utf8, not null, computed per row.
    Text(fn(&R) -> String),
    /// Utf8, nullable, computed per row.
    OptText(fn(&R) -> Option<String>),
    /// Any other type (lists, structs): the type, and the whole column built from the rows.
    Nested {
        /// The Arrow type.
        ty: fn() -> DataType,
        /// Nullable.
        nullable: bool,
        /// The column of `rows`.
        build: fn(&[R]) -> Result<ArrayRef>,
    },
}

/// One column of a table whose rows are `R`.
pub struct Column<R> {
    /// Its name.
    pub name: &'static str,
    /// How a row's value is read.
    pub value: Getter<R>,
    /// What its values vary with across reruns of the same inputs (None: deterministic).
    pub varies_with: Option<&'static str>,
    /// What it holds.
    pub doc: &'static str,
}

impl<R> Column<R> {
    /// A deterministic column.
    pub fn new(name: &'static str, value: Getter<R>, doc: &'static str) -> Column<R> {
        Column { name, value, varies_with: None, doc }
    }

    /// A column whose values vary with `what` (wall-clock time, the cache's contents, ...).
    pub fn varying(name: &'static str, value: Getter<R>, what: &'static str, doc: &'static str) -> Column<R> {
        Column { name, value, varies_with: Some(what), doc }
    }

    /// Its Arrow type.
    pub fn data_type(&self) -> DataType {
        match &self.value {
            Getter::U64(_) | Getter::OptU64(_) => DataType::UInt64,
            Getter::I64(_) => DataType::Int64,
            Getter::U32(_) => DataType::UInt32,
            Getter::U8(_) | Getter::OptU8(_) => DataType::UInt8,
            Getter::F32(_) => DataType::Float32,
            Getter::F64(_) | Getter::OptF64(_) => DataType::Float64,
            Getter::Bool(_) | Getter::OptBool(_) => DataType::Boolean,
            Getter::Str(_) | Getter::OptStr(_) | Getter::Text(_) | Getter::OptText(_) => DataType::Utf8,
            Getter::Nested { ty, .. } => ty(),
        }
    }

    /// Whether it may hold nulls.
    pub fn nullable(&self) -> bool {
        match &self.value {
            Getter::OptU64(_)
            | Getter::OptU8(_)
            | Getter::OptF64(_)
            | Getter::OptBool(_)
            | Getter::OptStr(_)
            | Getter::OptText(_) => true,
            Getter::Nested { nullable, .. } => *nullable,
            _ => false,
        }
    }

    /// Its Arrow field.
    pub fn field(&self) -> Field {
        Field::new(self.name, self.data_type(), self.nullable())
    }

    /// Its values for `rows`.
    pub fn array(&self, rows: &[R]) -> Result<ArrayRef> {
        Ok(match &self.value {
            Getter::U64(f) => Arc::new(UInt64Array::from_iter_values(rows.iter().map(f))),
            Getter::OptU64(f) => Arc::new(rows.iter().map(f).collect::<UInt64Array>()),
            Getter::I64(f) => Arc::new(Int64Array::from_iter_values(rows.iter().map(f))),
            Getter::U32(f) => Arc::new(UInt32Array::from_iter_values(rows.iter().map(f))),
            Getter::U8(f) => Arc::new(UInt8Array::from_iter_values(rows.iter().map(f))),
            Getter::OptU8(f) => Arc::new(rows.iter().map(f).collect::<UInt8Array>()),
            Getter::F32(f) => Arc::new(Float32Array::from_iter_values(rows.iter().map(f))),
            Getter::F64(f) => Arc::new(Float64Array::from_iter_values(rows.iter().map(f))),
            Getter::OptF64(f) => Arc::new(rows.iter().map(f).collect::<Float64Array>()),
            Getter::Bool(f) => Arc::new(BooleanArray::from(rows.iter().map(f).collect::<Vec<_>>())),
            Getter::OptBool(f) => Arc::new(rows.iter().map(f).collect::<BooleanArray>()),
            Getter::Str(f) => Arc::new(StringArray::from_iter_values(rows.iter().map(f))),
            Getter::OptStr(f) => Arc::new(rows.iter().map(f).collect::<StringArray>()),
            Getter::Text(f) => Arc::new(StringArray::from_iter_values(rows.iter().map(f))),
            Getter::OptText(f) => Arc::new(rows.iter().map(f).collect::<StringArray>()),
            Getter::Nested { build, .. } => build(rows)?,
        })
    }

    /// Its entry in `schemas/<table>.json`.
    fn doc_json(&self) -> Json {
        doc_entry(self.name, &self.data_type(), self.nullable(), self.doc, self.varies_with)
    }
}

fn doc_entry(name: &str, ty: &DataType, nullable: bool, doc: &str, varies_with: Option<&str>) -> Json {
    let mut e = json!({"name": name, "type": ty.to_string(), "nullable": nullable, "description": doc,
        "deterministic": varies_with.is_none()});
    if let Some(v) = varies_with {
        e["varies_with"] = json!(v);
    }
    e
}

/// A matrix column the runner prepends to every instance's rows (`seed`, `arm`).
pub struct MatrixColumn {
    /// Its name (the axis).
    pub name: &'static str,
    /// Its Arrow type.
    pub ty: fn() -> DataType,
    /// What it holds.
    pub doc: &'static str,
}

/// The `seed` matrix column.
pub const SEED: MatrixColumn =
    MatrixColumn { name: "seed", ty: || DataType::UInt64, doc: "The seed (matrix column added by the runner)." };

/// The `arm` matrix column.
pub const ARM: MatrixColumn = MatrixColumn {
    name: "arm",
    ty: || DataType::Utf8,
    doc: "The arm: no-memory, memento, lucid, oracle or a user-named arm (matrix column).",
};

/// The reports' row order of `arm` values (the SQL function `arm_order`): the standard arms
/// first (baseline, then the methods), any other arm at [`OTHER_ARM_ORDER`], the oracle ceiling
/// after it, then the pooled row (`all`, or the NULL arm of a grouping set).
pub const ARM_ORDER: &[(&str, i64)] = &[("no-memory", 0), ("memento", 1), ("lucid", 2), ("oracle", 4), ("all", 5)];

/// Where [`ARM_ORDER`] puts an arm it does not list.
pub const OTHER_ARM_ORDER: i64 = 3;

/// A table: its documentation and its columns, in order.
pub struct Table<R> {
    /// Its name (the run folder's table, `schemas/<name>.json`).
    pub name: &'static str,
    /// What a row is.
    pub description: &'static str,
    /// What writes it.
    pub written_by: &'static str,
    /// The matrix columns the runner prepends, documented with the table.
    pub matrix: &'static [MatrixColumn],
    /// Its own columns.
    pub columns: Vec<Column<R>>,
}

impl<R> Table<R> {
    /// The Arrow schema of its own columns (before the runner's matrix columns).
    pub fn schema(&self) -> Schema {
        Schema::new(self.columns.iter().map(Column::field).collect::<Vec<_>>())
    }

    /// The rows as a batch of its own columns.
    pub fn batch(&self, rows: &[R]) -> Result<RecordBatch> {
        let columns = self.columns.iter().map(|c| c.array(rows)).collect::<Result<Vec<_>>>()?;
        Ok(RecordBatch::try_new(Arc::new(self.schema()), columns)?)
    }

    /// The column `name` of `batch` (a table read from `path`) as its defined Arrow array type;
    /// an error naming the file and column when it is missing or of another type. Asking for a
    /// column the table does not define is a bug, reported as such.
    pub fn column<'a, T: Array + 'static>(&self, batch: &'a RecordBatch, path: &Path, name: &str) -> Result<&'a T> {
        let def = self
            .columns
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| Error::input(path, format!("table '{}' defines no column '{name}'", self.name)))?;
        if let Some(col) = batch.column_by_name(name)
            && col.data_type() != &def.data_type()
        {
            return Err(Error::input(
                path,
                format!(
                    "column '{name}' is {}, not {} as table '{}' defines it",
                    col.data_type(),
                    def.data_type(),
                    self.name
                ),
            ));
        }
        crate::table::column(batch, path, name)
    }

    /// Its documentation, as `schemas/<name>.json` holds it.
    pub fn doc_json(&self) -> Json {
        let matrix = self.matrix.iter().map(|m| doc_entry(m.name, &(m.ty)(), false, m.doc, None));
        let columns: Vec<Json> = matrix.chain(self.columns.iter().map(Column::doc_json)).collect();
        json!({"table": self.name, "description": self.description, "written_by": self.written_by,
            "columns": columns, "deterministic": DETERMINISTIC})
    }
}
