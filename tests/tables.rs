//! The `tasks` and `gold` tables: their Parquet schemas are the ones documented in `schemas/`,
//! and `tasks` cannot carry a reference answer.

use std::path::Path;

use crate::common::{lucid, stderr};

pub fn documented(table: &str) -> Vec<(String, String, bool)> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas").join(format!("{table}.json"));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    doc["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (c["name"].as_str().unwrap().into(), c["type"].as_str().unwrap().into(), c["nullable"].as_bool().unwrap())
        })
        .collect()
}

pub fn actual(path: &Path) -> Vec<(String, String, bool)> {
    let batch = lucid::table::read_parquet(path).unwrap();
    batch.schema().fields().iter().map(|f| (f.name().clone(), f.data_type().to_string(), f.is_nullable())).collect()
}

#[test]
fn load_writes_documented_tables_and_keeps_gold_out_of_tasks() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tables");
    let o = lucid(tmp.path()).args(["load", "--bundled", "--out"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(actual(&out.join("tasks.parquet")), documented("tasks"));
    assert_eq!(actual(&out.join("gold.parquet")), documented("gold"));

    let tasks = lucid::bench::tables::read_tasks(&out.join("tasks.parquet")).unwrap();
    let bench = lucid::bench::bundled::load(&lucid::bench::bundled::default_dir(), &tmp.path().join("cache")).unwrap();
    assert_eq!(tasks.len(), bench.gold.len());
    // No gold query text appears anywhere in the tasks table file.
    let bytes = std::fs::read(out.join("tasks.parquet")).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    for g in &bench.gold {
        assert!(!text.contains(&g.gold_sql), "gold SQL of {} leaked into tasks", g.question_id);
    }
    assert!(tasks.iter().all(|t| t.db_path.is_file()));
}
