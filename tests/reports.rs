//! The paper's report SQL (`pipelines/reports/paper/*.sql`) against an independent computation:
//! `tests/golden/reports.py` plants episodes and evaluations with known leniency, sensitivity,
//! detector rates and a two-channel coupling, and computes every report table with numpy; each
//! SQL file, run by `lucid query`, must agree row by row.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::common::{lucid, stderr, stdout};

type Row = serde_json::Map<String, serde_json::Value>;

fn query(cache: &Path, run: &Path, file: &str) -> Vec<Row> {
    let sql = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/reports/paper").join(file);
    let o = lucid(cache).arg("query").arg(run).arg(&sql).args(["--format", "json"]).output().unwrap();
    assert!(o.status.success(), "{file}: {}", stderr(&o));
    stdout(&o).lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The row of `rows` whose `keys` columns equal `want`'s (a missing column reads as null).
fn find<'a>(rows: &'a [Row], want: &Row, keys: &[&str]) -> &'a Row {
    let null = serde_json::Value::Null;
    let same = |r: &Row| {
        keys.iter().all(|k| {
            let (a, b) = (r.get(*k).unwrap_or(&null), want.get(*k).unwrap_or(&null));
            a == b || a.as_f64().zip(b.as_f64()).is_some_and(|(x, y)| x == y)
        })
    };
    rows.iter()
        .find(|r| same(r))
        .unwrap_or_else(|| panic!("no row {:?} in {rows:?}", keys.iter().map(|k| want.get(*k)).collect::<Vec<_>>()))
}

/// Every numeric column of `want` (but `skip`) equals the SQL's, to its rounding.
fn compare(table: &str, got: &[Row], want: &[serde_json::Value], keys: &[&str], skip: &[&str]) {
    assert_eq!(got.len(), want.len(), "{table}: rows");
    for w in want {
        let w = w.as_object().unwrap();
        let g = find(got, w, keys);
        for (col, v) in w {
            if keys.contains(&col.as_str()) || skip.contains(&col.as_str()) {
                continue;
            }
            // EX points are rounded to 2 decimals, proportions and fits to 4.
            let tol = if ["ex", "lo", "hi", "diff"].contains(&col.as_str()) { 0.0051 } else { 0.000051 };
            match (g.get(col).and_then(|x| x.as_f64()), v.as_f64()) {
                (Some(a), Some(b)) => assert!((a - b).abs() <= tol, "{table} {w:?}: {col} = {a}, numpy {b}"),
                (None, None) => {}
                (a, b) => panic!("{table} {w:?}: {col} = {a:?}, numpy {b:?}"),
            }
        }
    }
}

#[test]
fn report_sql_matches_numpy_on_planted_data() {
    if !crate::probes::require(crate::probes::Probe::Numpy) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/reports.py");
    let o = Command::new("python3").arg(&script).arg(dir.path()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let expected: BTreeMap<String, Vec<serde_json::Value>> =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("expected.json")).unwrap()).unwrap();
    let (cache, run) = (dir.path().join("cache"), dir.path().join("run"));
    let q = |f: &str| query(&cache, &run, f);

    compare("ex", &q("ex.sql"), &expected["ex"], &["arm", "seed", "difficulty"], &[]);
    compare("grader", &q("grader.sql"), &expected["grader"], &["arm", "seed"], &[]);
    compare("coupling", &q("coupling.sql"), &expected["coupling"], &["arm", "seed", "difficulty"], &[]);
    compare("trajectory", &q("trajectory.sql"), &expected["trajectory"], &["arm", "seed", "bank"], &[]);
    compare("detector", &q("detector.sql"), &expected["detector"], &["arm", "channel"], &[]);
    compare("echo_gap", &q("echo_gap.sql"), &expected["echo_gap"], &["arm", "seed"], &[]);

    // Paired differences: the mean agrees; the bootstrap interval holds it and is as wide as the
    // normal approximation's (its Monte Carlo cannot equal numpy's draws).
    let paired = q("paired_difference.sql");
    compare("paired_difference", &paired, &expected["paired_difference"], &["seed", "a", "b"], &["se"]);
    for w in &expected["paired_difference"] {
        let g = find(&paired, w.as_object().unwrap(), &["seed", "a", "b"]);
        let f = |r: &Row, c: &str| r[c].as_f64().unwrap();
        let (lo, hi, diff, se) = (f(g, "lo"), f(g, "hi"), f(g, "diff"), w["se"].as_f64().unwrap());
        assert!(lo < diff && diff < hi, "{g:?}");
        assert!(((hi - lo) / (2.0 * 1.96 * se) - 1.0).abs() < 0.15, "width {} vs normal {}", hi - lo, 3.92 * se);
        let p = f(g, "p_gt_0");
        assert!((0.0..=1.0).contains(&p) && (p > 0.5) == (diff > 0.0), "{g:?}");
    }

    // The planted two-channel coupling (e0 0.30, kappa 0.40, gamma 0.15): the two-channel fit
    // recovers it within sampling error; the paper's single slope also absorbs the help of
    // trusted-correct memories and comes out larger.
    for arm in ["memento", "lucid"] {
        let rows = q("coupling.sql");
        let pooled = rows
            .iter()
            .find(|r| r["arm"] == arm && r.get("seed").is_none_or(|s| s.is_null()) && r["difficulty"] == "all")
            .unwrap_or_else(|| panic!("no pooled row for {arm}"));
        let f = |c: &str| pooled[c].as_f64().unwrap();
        assert!((f("kappa_two") - 0.40).abs() < 0.1, "{arm}: kappa_two {}", f("kappa_two"));
        assert!((f("gamma_two") - 0.15).abs() < 0.1, "{arm}: gamma_two {}", f("gamma_two"));
        assert!((f("e0_two") - 0.30).abs() < 0.06, "{arm}: e0_two {}", f("e0_two"));
        assert!(f("kappa") > f("kappa_two"), "{arm}: single slope {} vs two-channel {}", f("kappa"), f("kappa_two"));
        assert!(f("kappa_lo") < f("kappa") && f("kappa") < f("kappa_hi"), "{pooled:?}");
    }
    // The planted grader and detector rates are recovered.
    let grader = q("grader.sql");
    let all = grader.iter().find(|r| r["arm"] == "all").unwrap();
    assert!((all["leniency"].as_f64().unwrap() - 0.76).abs() < 0.03, "{all:?}");
    assert!((all["sensitivity"].as_f64().unwrap() - 0.90).abs() < 0.02, "{all:?}");
}
