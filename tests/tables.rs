//! The `tasks` and `gold` tables: their Parquet schemas are the ones documented in `schemas/`,
//! and `tasks` cannot carry a reference answer.

use crate::support::schemas::{actual, documented};
use crate::support::{lucid, stderr};

#[test]
fn load_writes_documented_tables_and_keeps_gold_out_of_tasks() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tables");
    let o = lucid(tmp.path()).args(["load", "--bundled", "--out"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(actual(&out.join("tasks.parquet")), documented("tasks"));
    assert_eq!(actual(&out.join("gold.parquet")), documented("gold"));

    let tasks = lucid::datasets::tables::read_tasks(&out.join("tasks.parquet")).unwrap();
    let bench =
        lucid::datasets::bundled::load(&lucid::datasets::bundled::default_dir(), &tmp.path().join("cache")).unwrap();
    assert_eq!(tasks.len(), bench.gold.len());
    // No gold query text appears anywhere in the tasks table file.
    let bytes = std::fs::read(out.join("tasks.parquet")).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    for g in &bench.gold {
        assert!(!text.contains(&g.gold_sql), "gold SQL of {} leaked into tasks", g.question_id);
    }
    assert!(tasks.iter().all(|t| t.db_path.is_file()));
}

/// `schemas/<table>.json` (the default domain's and the domain-free tables) and
/// `schemas/<folder>/<table>.json` (each other domain's own tables, as it lists them) are the tables' column definitions in the code (name, Arrow
/// type, nullability, deterministic or what it varies with, description), nothing else.
/// `LUCID_WRITE_SCHEMAS=1 cargo test schemas` rewrites the files from the definitions.
#[test]
fn schemas_are_the_column_definitions() {
    let mut defined = vec![
        ("", lucid::seam::tables::calls_table().doc_json()),
        ("", lucid::stages::retrieve::retrieval_table().doc_json()),
        ("", lucid::memory_loop::retrieval::draws_table().doc_json()),
        ("", lucid::stages::verifiers::verifier_table().doc_json()),
        ("", lucid::memory_loop::order::order_table().doc_json()),
        // An imported bank's own tables (its tasks and gold are the factual layout's).
        ("import", lucid::import::tables::episodes_table().doc_json()),
        ("import", lucid::import::tables::evaluation_table().doc_json()),
        // An imported eval log's (its verifiers are the verifier table).
        ("import", lucid::import::evallog::tables::samples_table().doc_json()),
        ("import", lucid::import::evallog::tables::scores_table().doc_json()),
        ("import", lucid::import::evallog::tables::eval_log_table().doc_json()),
    ];
    // Each shipped domain's own tables, as its folder lists them (`DomainKind::tables`).
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/domains");
    for e in lucid::domains::registry::all().into_iter().filter(|e| src.join(e.folder).is_dir()) {
        let (folder, tables) = e.schemas;
        defined.extend(tables().into_iter().map(|doc| (folder, doc)));
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    for (sub, doc) in defined {
        let path = root.join(sub).join(format!("{}.json", doc["table"].as_str().unwrap()));
        let mut names: Vec<&str> =
            doc["columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "{}: a column name twice", path.display());
        if std::env::var("LUCID_WRITE_SCHEMAS").is_ok_and(|v| v == "1") {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
        }
        let file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(file, doc, "{} differs from the column definitions", path.display());
    }
}
