//! The `embeddings` table (schemas/embeddings.json): question_id, model, vector as
//! FixedSizeList<Float32>.

use std::sync::Arc;

use arrow::array::{Array, FixedSizeListArray, Float32Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

use crate::error::{Error, Result};

/// Schema for vectors of `dim`.
pub fn embeddings_schema(dim: usize) -> Schema {
    Schema::new(vec![
        Field::new("question_id", DataType::Int64, false),
        Field::new("model", DataType::Utf8, false),
        Field::new(
            "vector",
            DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, false)), dim as i32),
            false,
        ),
    ])
}

/// Build the table.
pub fn embeddings_batch(question_ids: &[i64], model: &str, vectors: &[Vec<f32>], dim: usize) -> Result<RecordBatch> {
    let values = Float32Array::from_iter_values(vectors.iter().flatten().copied());
    let item = Arc::new(Field::new("item", DataType::Float32, false));
    let list = FixedSizeListArray::try_new(item, dim as i32, Arc::new(values), None)?;
    Ok(RecordBatch::try_new(
        Arc::new(embeddings_schema(dim)),
        vec![
            Arc::new(Int64Array::from(question_ids.to_vec())),
            Arc::new(StringArray::from(vec![model; question_ids.len()])),
            Arc::new(list),
        ],
    )?)
}

/// Read vectors back: (question_ids, vectors, dim).
pub fn read_vectors(batch: &RecordBatch) -> Result<(Vec<i64>, Vec<f32>, usize)> {
    let p = std::path::Path::new("embeddings");
    let ids = crate::table::column::<Int64Array>(batch, p, "question_id")?;
    let list = crate::table::column::<FixedSizeListArray>(batch, p, "vector")?;
    let dim = list.value_length() as usize;
    let values = list
        .values()
        .as_any()
        .downcast_ref::<Float32Array>()
        .ok_or_else(|| Error::input(p, "vector items must be Float32"))?;
    Ok((ids.values().to_vec(), values.values()[..ids.len() * dim].to_vec(), dim))
}
