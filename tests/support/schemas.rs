//! What `schemas/` documents of a table: its columns (name, Arrow type, nullability) and which of
//! them are deterministic; and the columns a Parquet file actually has.

use std::path::Path;

fn doc(table: &str) -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas").join(format!("{table}.json"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// (name, Arrow type, nullable) of every column `schemas/<table>.json` documents.
pub fn documented(table: &str) -> Vec<(String, String, bool)> {
    doc(table)["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (c["name"].as_str().unwrap().into(), c["type"].as_str().unwrap().into(), c["nullable"].as_bool().unwrap())
        })
        .collect()
}

/// (name, Arrow type, nullable) of every column of a Parquet file.
pub fn actual(path: &Path) -> Vec<(String, String, bool)> {
    let batch = lucid::table::read_parquet(path).unwrap();
    batch.schema().fields().iter().map(|f| (f.name().clone(), f.data_type().to_string(), f.is_nullable())).collect()
}

/// The columns of `table` that `schemas/` documents as deterministic.
pub fn deterministic(table: &str) -> Vec<String> {
    doc(table)["columns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["deterministic"].as_bool().unwrap())
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}
