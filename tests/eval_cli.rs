//! `lucid eval` end to end: the bundled sample, BIRD's file formats, and clear errors on bad input.

use std::path::Path;

use crate::support::{DbRoot, PEOPLE, lucid, stderr, stdout};

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn bundled_sample_predictions_score_as_pythons_rule_says() {
    let cache = tempfile::tempdir().unwrap();
    // A folder that does not exist yet, as in the README command (runs/demo-eval.jsonl).
    let out = cache.path().join("runs/pq.jsonl");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mini");
    let o = lucid(cache.path())
        .args(["eval", "--bundled", "--pred"])
        .arg(data.join("sample_predictions.json"))
        .arg("--per-question")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // Computed once with CPython's sqlite3 and `set(pred) == set(gold)` (see data/mini/README.md).
    let expected: Vec<u8> =
        serde_json::from_str(&std::fs::read_to_string(data.join("sample_predictions.expected.json")).unwrap()).unwrap();
    let got: Vec<u8> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["idx"], i, "per-question lines are in input order");
            v["res"].as_u64().unwrap() as u8
        })
        .collect();
    assert_eq!(got, expected);
    let table = stdout(&o);
    let total = expected.iter().map(|&x| x as f64).sum::<f64>() / expected.len() as f64 * 100.0;
    assert!(table.contains("======================================    ACCURACY    ====="), "{table}");
    assert!(table.contains(&format!("{total:.2}")), "{table}");
    assert!(table.lines().next().unwrap().contains("simple"));
}

#[test]
fn bird_files_and_non_string_predictions() {
    let root = DbRoot::new();
    root.add("people", PEOPLE);
    let d = root.path();
    let gold =
        write(d, "dev_gold.sql", "SELECT name FROM t\tpeople\nSELECT count(*) FROM t\tpeople\nSELECT 1\tpeople\n");
    let diff = write(
        d,
        "dev.json",
        r#"[{"difficulty": "simple"}, {"difficulty": "moderate"}, {"difficulty": "challenging"}]"#,
    );
    let pred = write(
        d,
        "predict_dev.json",
        "{\"0\": \"SELECT name FROM t ORDER BY 1\\t----- bird -----\\tpeople\", \"1\": \"SELECT 4.0\\t----- bird -----\\tpeople\", \"2\": null}",
    );
    let pq = d.join("pq.jsonl");
    let o = lucid(d)
        .args(["eval", "--pred"])
        .arg(&pred)
        .arg("--gold")
        .arg(&gold)
        .arg("--db-root")
        .arg(d)
        .arg("--diff-json")
        .arg(&diff)
        .arg("--per-question")
        .arg(&pq)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&pq).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let res: Vec<u64> = lines.iter().map(|l| l["res"].as_u64().unwrap()).collect();
    assert_eq!(res, vec![1, 1, 0]);
    assert_eq!(lines[2]["pred_status"], "not_string");
    let accuracy = stdout(&o).lines().last().unwrap().split_whitespace().map(str::to_string).collect::<Vec<_>>();
    assert_eq!(accuracy, vec!["accuracy", "100.00", "100.00", "0.00", "66.67"]);
}

/// Run `lucid eval` expecting failure; returns stderr.
fn fails(dir: &Path, args: &[&str]) -> String {
    let o = lucid(dir).current_dir(dir).arg("eval").args(args).output().unwrap();
    assert!(!o.status.success(), "expected failure for {args:?}");
    stderr(&o)
}

#[test]
fn bad_input_errors_name_the_file_and_the_entry() {
    let root = DbRoot::new();
    root.add("people", PEOPLE);
    let d = root.path();
    write(d, "gold.sql", "SELECT 1\tpeople\nSELECT 2\tpeople\n");
    write(d, "gold_bad_db.sql", "SELECT 1\tpeople\nSELECT 2\tnowhere\n");
    write(d, "pred2.json", r#"{"0": "SELECT 1", "1": "SELECT 2"}"#);
    write(d, "pred1.json", r#"{"0": "SELECT 1"}"#);
    write(d, "broken.json", "{\"0\": \"SELECT 1\",\n \"1\": }");
    write(d, "gold_no_tab.sql", "SELECT 1\tpeople\nSELECT 2\n");
    let db = d.to_str().unwrap();

    let e = fails(d, &["--pred", "pred2.json", "--gold", "gold_bad_db.sql", "--db-root", db]);
    assert!(e.contains("gold_bad_db.sql") && e.contains("line 2") && e.contains("'nowhere'"), "{e}");

    let e = fails(d, &["--pred", "pred1.json", "--gold", "gold.sql", "--db-root", db]);
    assert!(e.contains("pred1.json") && e.contains("1 predictions") && e.contains("2 gold"), "{e}");

    let e = fails(d, &["--pred", "broken.json", "--gold", "gold.sql", "--db-root", db]);
    assert!(e.contains("broken.json") && e.contains("line 2"), "{e}");

    let e = fails(d, &["--pred", "pred2.json", "--gold", "gold_no_tab.sql", "--db-root", db]);
    assert!(e.contains("gold_no_tab.sql") && e.contains("line 2"), "{e}");

    let e = fails(d, &["--pred", "missing.json", "--gold", "gold.sql", "--db-root", db]);
    assert!(e.contains("missing.json"), "{e}");

    let e = fails(d, &["--pred", "pred2.json", "--gold", "gold.sql", "--db-root", "no_such_root"]);
    assert!(e.contains("no_such_root"), "{e}");

    // A prediction naming a database that does not exist (BIRD runs the pair on the prediction's).
    write(
        d,
        "pred_bad_db.json",
        "{\"0\": \"SELECT 1\\t----- bird -----\\tpeople\", \"1\": \"SELECT 2\\t----- bird -----\\tatlantis\"}",
    );
    let e = fails(d, &["--pred", "pred_bad_db.json", "--gold", "gold.sql", "--db-root", db]);
    assert!(e.contains("pred_bad_db.json") && e.contains("entry 1") && e.contains("'atlantis'"), "{e}");

    // A database folder without its file.
    std::fs::create_dir_all(d.join("ghost")).unwrap();
    write(d, "gold_ghost.sql", "SELECT 1\tghost\n");
    let e = fails(d, &["--pred", "pred1.json", "--gold", "gold_ghost.sql", "--db-root", db]);
    assert!(e.contains("gold_ghost.sql") && e.contains("line 1") && e.contains("ghost.sqlite"), "{e}");
}

#[test]
fn check_gold_reports_each_kind_of_untrustworthy_gold() {
    let root = DbRoot::new();
    root.add(
        "people",
        &format!("{PEOPLE} CREATE TABLE c(name TEXT COLLATE NOCASE); INSERT INTO c VALUES ('Paris'), ('Rome');"),
    );
    let d = root.path();
    let gold = write(
        d,
        "gold.sql",
        &[
            "SELECT name FROM t ORDER BY id",                 // fine
            "SELECT nope FROM t",                             // error
            "SELECT name FROM t WHERE id > 99",               // empty
            "SELECT score FROM t WHERE id = 4",               // all_null
            "SELECT name FROM t ORDER BY score DESC LIMIT 1", // order_dependent (tie at 2.5)
            "SELECT name FROM c WHERE name = 'paris'",        // case_dependent
            "SELECT name FROM t ORDER BY random() LIMIT 1",   // nondeterministic (usually)
        ]
        .map(|s| format!("{s}\tpeople\n"))
        .concat(),
    );
    let out = d.join("findings.jsonl");
    let o = lucid(d)
        .args(["eval", "--check-gold", "--gold"])
        .arg(&gold)
        .arg("--db-root")
        .arg(d)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let found: Vec<(u64, String)> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["idx"].as_u64().unwrap(), v["finding"].as_str().unwrap().to_string())
        })
        .collect();
    for (idx, kind) in [(1, "error"), (2, "empty"), (3, "all_null"), (4, "order_dependent"), (5, "case_dependent")] {
        assert!(found.contains(&(idx, kind.to_string())), "missing {kind} at {idx}: {found:?}");
    }
    assert!(!found.iter().any(|(i, _)| *i == 0), "a sound gold query was flagged: {found:?}");
}
