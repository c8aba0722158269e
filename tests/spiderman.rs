//! On the real 6,716-question SpiderMan-train benchmark (`../shared/data`, skipped when absent):
//! gold-as-predictions scores 100 %; mutated predictions agree question by question with BIRD's
//! rule executed literally by CPython's sqlite3; `--check-gold` agrees with the dataset's own
//! gold metadata.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::support::{lucid, spiderman, stderr, stdout};

#[derive(serde::Deserialize)]
struct Q {
    db_id: String,
    #[serde(rename = "SQL")]
    sql: String,
}

fn questions(dir: &Path) -> Vec<Q> {
    serde_json::from_str(&std::fs::read_to_string(dir.join("dev.json")).unwrap()).unwrap()
}

fn write_pred(path: &Path, preds: &[(Option<String>, &str)]) {
    let map: serde_json::Map<String, serde_json::Value> = preds
        .iter()
        .enumerate()
        .map(|(i, (p, db))| {
            let v = p.as_ref().map_or(serde_json::Value::Null, |s| format!("{s}\t----- bird -----\t{db}").into());
            (i.to_string(), v)
        })
        .collect();
    std::fs::write(path, serde_json::to_string(&map).unwrap()).unwrap();
}

fn res_lines(path: &Path) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["res"].as_u64().unwrap())
        .collect()
}

/// Every gold query, answered verbatim in a fence (and, having no blank line, unfenced), is
/// extracted exactly: every distinct final token of the benchmark's queries is covered.
#[test]
fn gold_queries_are_extracted_exactly() {
    let Some(dir) = spiderman() else { return };
    let qs = questions(&dir);
    let mut endings = BTreeSet::new();
    for q in &qs {
        let want = q.sql.trim().trim_end_matches(';').trim_end();
        let last = lucid::sql::lexer::tokenize(want).into_iter().rfind(|t| t.is_significant()).unwrap();
        endings.insert(format!("{:?}:{}", last.kind, last.text.chars().last().unwrap()));
        for answer in [format!("```sql\n{}\n```\nThis answers it.", q.sql), format!("{};\n\nThis answers it.", q.sql)] {
            assert_eq!(lucid::domains::sql::extract::extract_sql(&answer).as_deref(), Some(want), "{answer:?}");
        }
    }
    // Backtick-quoted names, string literals, numbers, parentheses and bare words all end queries.
    assert!(endings.iter().any(|e| e.starts_with("QuotedIdent:`")), "{endings:?}");
    assert!(endings.len() >= 5, "{endings:?}");
}

#[test]
fn gold_as_predictions_scores_100_percent() {
    let Some(dir) = spiderman() else { return };
    let qs = questions(&dir);
    let tmp = tempfile::tempdir().unwrap();
    let pred = tmp.path().join("pred.json");
    write_pred(&pred, &qs.iter().map(|q| (Some(q.sql.clone()), q.db_id.as_str())).collect::<Vec<_>>());
    let o = lucid(tmp.path()).args(["eval", "--pred"]).arg(&pred).arg("--bench").arg(&dir).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let last = out.lines().last().unwrap();
    assert_eq!(last.split_whitespace().collect::<Vec<_>>(), ["accuracy", "100.00", "100.00", "100.00", "100.00"]);
    assert!(out.contains("1628") && out.contains("2590") && out.contains("2498") && out.contains("6716"), "{out}");
}

/// A mutation of question `i`'s gold, cycling through the kinds BIRD's rule must get right.
fn mutate(i: usize, qs: &[Q]) -> Option<String> {
    let g = qs[i].sql.trim_end_matches(';');
    Some(match i / 4 % 10 {
        0 => g.to_string(),
        1 => format!("SELECT * FROM ({g}) ORDER BY 1 DESC"),
        2 => g.replacen("SELECT", "SELECT DISTINCT", 1),
        3 => format!("SELECT * FROM ({g}) UNION ALL SELECT * FROM ({g})"),
        4 => format!("SELECT * FROM ({g}) LIMIT 1"),
        5 => qs[(i + 1) % qs.len()].sql.clone(),
        6 => format!("SELEC{}", &g[6.min(g.len())..]),
        7 => format!("SELECT * FROM ({g}) WHERE 0"),
        8 => g.replacen("COUNT(*)", "COUNT(*) * 1.0", 1),
        _ => return None,
    })
}

#[test]
fn mutated_predictions_agree_with_pythons_rule_question_by_question() {
    let Some(dir) = spiderman() else { return };
    if !crate::support::probes::require(crate::support::probes::Probe::Python) {
        return;
    }
    let qs = questions(&dir);
    // Every 4th question keeps the run short; mutations cycle over the subset.
    let idx: Vec<usize> = (0..qs.len()).step_by(4).collect();
    let tmp = tempfile::tempdir().unwrap();
    let (pred, gold) = (tmp.path().join("pred.json"), tmp.path().join("gold.sql"));
    write_pred(&pred, &idx.iter().map(|&i| (mutate(i, &qs), qs[i].db_id.as_str())).collect::<Vec<_>>());
    let gold_text: String =
        idx.iter().map(|&i| format!("{}\t{}\n", qs[i].sql.replace('\n', " "), qs[i].db_id)).collect();
    std::fs::write(&gold, gold_text).unwrap();
    let db_root = dir.join("dev_databases");

    let ours = tmp.path().join("ours.jsonl");
    let o = lucid(tmp.path())
        .args(["eval", "--pred"])
        .arg(&pred)
        .arg("--gold")
        .arg(&gold)
        .arg("--db-root")
        .arg(&db_root)
        .arg("--per-question")
        .arg(&ours)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let theirs = tmp.path().join("python.jsonl");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bench/bird_rule.py");
    let p = Command::new("python3")
        .arg(script)
        .arg("--pred")
        .arg(&pred)
        .arg("--gold")
        .arg(&gold)
        .arg("--db-root")
        .arg(&db_root)
        .arg("--out")
        .arg(&theirs)
        .output()
        .unwrap();
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    let (a, b) = (res_lines(&ours), res_lines(&theirs));
    assert_eq!(a.len(), idx.len());
    let disagree: Vec<_> = (0..a.len()).filter(|&k| a[k] != b[k]).map(|k| (idx[k], a[k], b[k])).collect();
    assert!(disagree.is_empty(), "(question, lucid, python) disagreements: {disagree:?}");
    // The mutations exercise both outcomes.
    let ones = a.iter().filter(|&&x| x == 1).count();
    assert!(ones > a.len() / 3 && ones < a.len() * 9 / 10, "{ones} of {}", a.len());
}

#[derive(serde::Deserialize)]
struct Meta {
    question_id: i64,
    empty: bool,
    all_null: bool,
    case_dependent: bool,
}

#[test]
fn check_gold_agrees_with_the_datasets_metadata() {
    let Some(dir) = spiderman() else { return };
    let meta: Vec<Meta> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("dev_gold_meta.json")).unwrap()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("findings.jsonl");
    let o =
        lucid(tmp.path()).args(["eval", "--check-gold", "--bench"]).arg(&dir).arg("--out").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mut found: std::collections::HashMap<String, BTreeSet<i64>> = Default::default();
    for l in std::fs::read_to_string(&out).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        found.entry(v["finding"].as_str().unwrap().into()).or_default().insert(v["question_id"].as_i64().unwrap());
    }
    let want = |f: fn(&Meta) -> bool| meta.iter().filter(|m| f(m)).map(|m| m.question_id).collect::<BTreeSet<_>>();
    let get = |k: &str| found.get(k).cloned().unwrap_or_default();
    assert_eq!(get("empty"), want(|m| m.empty));
    assert_eq!(get("all_null"), want(|m| m.all_null));
    // Every `=`-comparison case dependence the dataset records is found; lucid also finds the
    // LIKE-pattern ones (LIKE '%court%' matching 'Court'), which the metadata does not count.
    assert!(get("case_dependent").is_superset(&want(|m| m.case_dependent)));
    assert!(get("error").is_empty() && get("timeout").is_empty(), "{found:?}");
}
