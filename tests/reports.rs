//! The paper's report SQL (`pipelines/reports/paper/*.sql`) against an independent computation:
//! `tests/golden/reports.py` plants episodes and evaluations with known leniency, sensitivity,
//! detector rates and a two-channel coupling, and computes every report table with numpy; each
//! SQL file, run by `lucid query`, must agree row by row. Also the k-sweep on a hand-built run and
//! `lucid query --format json`'s nulls.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::support::{lucid, stderr, stdout};

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
    // EX points are rounded to 2 decimals, proportions and fits to 4.
    let tol = |col: &str| if ["ex", "lo", "hi", "diff"].contains(&col) { 0.0051 } else { 0.000051 };
    compare_to(table, got, want, keys, skip, tol);
}

/// [`compare`] with each column's tolerance given.
fn compare_to(
    table: &str,
    got: &[Row],
    want: &[serde_json::Value],
    keys: &[&str],
    skip: &[&str],
    tol: impl Fn(&str) -> f64,
) {
    assert_eq!(got.len(), want.len(), "{table}: rows");
    for w in want {
        let w = w.as_object().unwrap();
        let g = find(got, w, keys);
        for (col, v) in w {
            if keys.contains(&col.as_str()) || skip.contains(&col.as_str()) {
                continue;
            }
            let tol = tol(col);
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
    if !crate::support::probes::require(crate::support::probes::Probe::Numpy) {
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
    // Theorem 2 fed with the measured kappa, e0, l and s of the shown label Q (numpy solves the
    // quadratic itself).
    compare("attractor", &q("attractor.sql"), &expected["attractor"], &["arm", "seed"], &[]);
    // The headline rounds EX to 0.1 point and the rest to 3 decimals.
    let headline = q("headline.sql");
    let tol = |c: &str| if c.starts_with("ex") { 0.051 } else { 0.00051 };
    compare_to("headline", &headline, &expected["headline"], &["arm"], &["kappa_lo", "kappa_hi"], tol);

    // Intervals pooled over seeds resample questions: they agree with numpy's own cluster
    // bootstrap (4,000 resamples of its own generator) within 0.3 of its bootstrap sd (the Monte
    // Carlo error of a 2.5 % quantile of 2,000 resamples is about 0.06 sd).
    let coupling = q("coupling.sql");
    let near = |table: &str, got: &Row, want: &serde_json::Value, col: &str, sd: &str| {
        let (g, w, sd) = (got[col].as_f64().unwrap(), want[col].as_f64().unwrap(), want[sd].as_f64().unwrap());
        assert!((g - w).abs() <= 0.3 * sd + 5e-5, "{table} {want}: {col} = {g}, numpy {w} (bootstrap sd {sd})");
    };
    for w in &expected["coupling_cluster"] {
        let g = find(&coupling, w.as_object().unwrap(), &["arm", "seed", "difficulty"]);
        for (col, sd) in [("kappa_lo", "kappa_sd"), ("kappa_hi", "kappa_sd"), ("e0_lo", "e0_sd"), ("e0_hi", "e0_sd")] {
            near("coupling", g, w, col, sd);
        }
    }
    for w in &expected["headline_cluster"] {
        let g = find(&headline, w.as_object().unwrap(), &["arm"]);
        // Rounded to 3 decimals by the SQL.
        for col in ["kappa_lo", "kappa_hi"] {
            let (a, b, sd) = (g[col].as_f64().unwrap(), w[col].as_f64().unwrap(), w["kappa_sd"].as_f64().unwrap());
            assert!((a - b).abs() <= 0.3 * sd + 5e-4, "headline {w}: {col} = {a}, numpy {b}");
        }
    }

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

/// Regression (pooled EX intervals treated the same question under two seeds as two independent
/// trials, so the no-memory arm's interval shrank by about sqrt(2) for nothing): the planted
/// no-memory arm answers every question the same under both seeds, so its pooled interval is
/// exactly one seed's Wilson interval; the memory arms, whose seeds answer independently given
/// the retrieval, stay close to the independent-trials width.
#[test]
fn pooled_intervals_count_a_question_asked_under_two_seeds_once() {
    if !crate::support::probes::require(crate::support::probes::Probe::Numpy) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/reports.py");
    let o = Command::new("python3").arg(&script).arg(dir.path()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (cache, run) = (dir.path().join("cache"), dir.path().join("run"));
    let ex = query(&cache, &run, "ex.sql");
    let row = |arm: &str, seed: Option<u64>| {
        ex.iter()
            .find(|r| r["arm"] == arm && r["difficulty"] == "all" && r["seed"].as_u64() == seed)
            .unwrap_or_else(|| panic!("no {arm} {seed:?} row in {ex:?}"))
    };
    let f = |r: &Row, c: &str| r[c].as_f64().unwrap();
    let (pooled, one) = (row("no-memory", None), row("no-memory", Some(0)));
    assert_eq!((f(pooled, "ex"), f(pooled, "lo"), f(pooled, "hi")), (f(one, "ex"), f(one, "lo"), f(one, "hi")));
    // Independent trials would have given a width sqrt(2) smaller.
    let n = f(one, "n");
    let naive = {
        let (p, z) = (f(one, "ex") / 100.0, 1.959964);
        2.0 * z * (p * (1.0 - p) / (2.0 * n) + z * z / (16.0 * n * n)).sqrt() / (1.0 + z * z / (2.0 * n))
    };
    let width = (f(pooled, "hi") - f(pooled, "lo")) / 100.0;
    assert!((width / naive - 2f64.sqrt()).abs() < 0.01, "width {width} vs independent trials {naive}");
    for arm in ["memento", "lucid"] {
        let (p, s0) = (row(arm, None), row(arm, Some(0)));
        let ratio = (f(p, "hi") - f(p, "lo")) / (f(s0, "hi") - f(s0, "lo"));
        assert!((ratio - 0.5f64.sqrt()).abs() < 0.06, "{arm}: pooled / one-seed width {ratio}");
    }
}

/// `lucid query --format json` writes every column of every row, a null as null (a JSON reader
/// expects a row's keys to be the query's columns).
#[test]
fn query_json_writes_nulls_as_null() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let table = run.join("t");
    std::fs::create_dir_all(&table).unwrap();
    let batch = arrow::array::RecordBatch::try_from_iter([
        ("a", std::sync::Arc::new(arrow::array::Int64Array::from(vec![Some(1), None])) as arrow::array::ArrayRef),
        ("b", std::sync::Arc::new(arrow::array::StringArray::from(vec![None, Some("x")])) as arrow::array::ArrayRef),
    ])
    .unwrap();
    lucid::table::write_parquet(&table.join("part.parquet"), &batch).unwrap();
    let o = lucid(&dir.path().join("cache"))
        .arg("query")
        .arg(&run)
        .arg("SELECT a, b, CAST(NULL AS DOUBLE) AS c FROM t ORDER BY a NULLS LAST")
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // source: the two rows written above, by hand.
    assert_eq!(stdout(&o), "{\"a\":1,\"b\":null,\"c\":null}\n{\"a\":null,\"b\":\"x\",\"c\":null}\n");
}

/// `(columns of each table)` as `schemas/report.json` documents them.
fn documented_report() -> BTreeMap<String, Vec<String>> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/report.json");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    doc["tables"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(t, v)| {
            let cols = v["columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_string());
            (t.clone(), cols.collect())
        })
        .collect()
}

/// A scripted study (every arm, two seeds, embeddings) run with `report: true`.
fn study_with_report() -> (tempfile::TempDir, crate::support::fake_server::FakeServer) {
    use crate::support::fake_server::{FakeServer, Reply};
    let server = FakeServer::start(vec![], Reply::Scripted(crate::support::study::scripted));
    let dir = crate::support::study::project(&server.url);
    let yaml = std::fs::read_to_string(dir.path().join("study.yaml")).unwrap();
    std::fs::write(dir.path().join("study.yaml"), yaml.replace("max_parallel: 1\n", "max_parallel: 1\nreport: true\n"))
        .unwrap();
    let o = lucid(&dir.path().join("cache"))
        .current_dir(dir.path())
        .args(["run", "study.yaml", "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("report: ") && stdout(&o).contains("report.html"), "{}", stdout(&o));
    (dir, server)
}

#[test]
fn a_study_ends_with_every_documented_report_table_and_its_plots() {
    let (dir, _server) = study_with_report();
    let out = dir.path().join("runs/study/report");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let tables = json["tables"].as_object().unwrap();
    let documented = documented_report();
    assert_eq!(tables.keys().cloned().collect::<Vec<_>>().len(), documented.len());
    for (name, cols) in &documented {
        let rows = tables[name].as_array().unwrap_or_else(|| panic!("{name} missing"));
        assert!(!rows.is_empty(), "{name} has no rows");
        for r in rows {
            let keys: Vec<String> = r.as_object().unwrap().keys().cloned().collect();
            assert_eq!(&keys, cols, "{name}: columns as schemas/report.json says");
        }
    }
    let ks: Vec<u64> = tables["k_sweep"].as_array().unwrap().iter().map(|r| r["k"].as_u64().unwrap()).collect();
    assert!([1, 2, 4, 8].iter().all(|k| ks.contains(k)), "{ks:?}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for name in documented.keys() {
        assert!(md.contains(&format!("## {name}\n")), "report.md lacks {name}");
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 4, "EX, coupling (one run), trajectory, k-sweep");
    for fetch in ["src=\"http", "href=\"http", "url(http", "<script", "<link", "@import"] {
        assert!(!html.contains(fetch), "self-contained: no {fetch}");
    }
    // Two runs side by side: every row says which run it belongs to.
    let both = dir.path().join("both");
    let run = dir.path().join("runs/study");
    let o =
        lucid(&dir.path().join("cache")).arg("report").arg(&run).arg(&run).arg("--out").arg(&both).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let two: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(both.join("report.json")).unwrap()).unwrap();
    assert_eq!(two["tables"]["ex"].as_array().unwrap().len(), 2 * tables["ex"].as_array().unwrap().len());
}

#[test]
fn theory_attractor_prints_the_papers_closed_form() {
    let tmp = tempfile::tempdir().unwrap();
    let o = lucid(tmp.path())
        .args(["theory", "attractor", "--kappa", "0.38", "--leniency", "0.76", "--sensitivity", "0.90", "--e0", "0.32"])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let f = |k: &str| v[k].as_f64().unwrap();
    assert_eq!(
        format!("{:.3} {:.3} {:.2} {:.3}", f("p_star"), f("p0"), f("ratio"), f("slope")),
        "0.448 0.284 1.58 0.376"
    );
    assert_eq!(v["stable"], true);
    let o = lucid(tmp.path())
        .args(["theory", "attractor", "--kappa", "0.38", "--leniency", "1.2", "--sensitivity", "0.9", "--e0", "0.3"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("leniency"), "{}", stderr(&o));
}

/// The RGB pixels of a PNG (8-bit RGB or RGBA, non-interlaced, as Chromium writes them).
fn png_pixels(bytes: &[u8]) -> (usize, usize, Vec<[u8; 3]>) {
    use std::io::Read;
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let (mut pos, mut idat, mut w, mut h, mut channels) = (8, Vec::new(), 0, 0, 0);
    while pos + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize;
        let kind = &bytes[pos + 4..pos + 8];
        let data = &bytes[pos + 8..pos + 8 + len];
        match kind {
            b"IHDR" => {
                w = u32::from_be_bytes(data[0..4].try_into().unwrap()) as usize;
                h = u32::from_be_bytes(data[4..8].try_into().unwrap()) as usize;
                assert_eq!((data[8], data[12]), (8, 0), "8-bit, not interlaced");
                channels = match data[9] {
                    2 => 3,
                    6 => 4,
                    t => panic!("colour type {t}"),
                };
            }
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        pos += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..]).read_to_end(&mut raw).unwrap();
    let stride = w * channels;
    let mut prev = vec![0u8; stride];
    let mut pixels = Vec::with_capacity(w * h);
    for y in 0..h {
        let line = &raw[y * (stride + 1)..(y + 1) * (stride + 1)];
        let mut cur = line[1..].to_vec();
        for i in 0..stride {
            let a = if i >= channels { cur[i - channels] } else { 0 } as i16;
            let (b, c) = (prev[i] as i16, if i >= channels { prev[i - channels] } else { 0 } as i16);
            let pred = match line[0] {
                0 => 0,
                1 => a,
                2 => b,
                3 => (a + b) / 2,
                4 => {
                    let p = a + b - c;
                    let (pa, pb, pc) = ((p - a).abs(), (p - b).abs(), (p - c).abs());
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => panic!("filter {f}"),
            };
            cur[i] = cur[i].wrapping_add(pred as u8);
        }
        pixels.extend(cur.chunks(channels).map(|p| [p[0], p[1], p[2]]));
        prev = cur;
    }
    (w, h, pixels)
}

#[test]
fn the_html_report_renders_its_plots_in_chromium() {
    if !crate::support::probes::require(crate::support::probes::Probe::Chromium) {
        return;
    }
    let (dir, _server) = study_with_report();
    let html = dir.path().join("runs/study/report/report.html");
    let png = dir.path().join("shot.png");
    let o = Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .arg(format!("--user-data-dir={}", dir.path().join("chromium").display()))
        .args(["--window-size=1280,1100", "--hide-scrollbars"])
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    assert!(o.status.success() && png.is_file(), "{}", String::from_utf8_lossy(&o.stderr));
    let (w, h, pixels) = png_pixels(&std::fs::read(&png).unwrap());
    assert_eq!((w, h), (1280, 1100));
    // The series colours of the plots (bars, points, lines) cover real area.
    let near = |p: &[u8; 3], c: [u8; 3]| p.iter().zip(c).all(|(&a, b)| (i16::from(a) - i16::from(b)).abs() <= 12);
    let palette = [
        ("blue", [0x00, 0x72, 0xB2]),
        ("vermillion", [0xD5, 0x5E, 0x00]),
        ("green", [0x00, 0x9E, 0x73]),
        ("pink", [0xCC, 0x79, 0xA7]),
    ];
    let counts: Vec<(&str, usize)> =
        palette.iter().map(|(n, rgb)| (*n, pixels.iter().filter(|p| near(p, *rgb)).count())).collect();
    assert!(counts.iter().all(|(_, n)| *n > 150), "every series colour is drawn: {counts:?}");
    assert!(counts.iter().map(|c| c.1).sum::<usize>() > 1500, "{counts:?}");
    let blank = pixels.iter().filter(|p| p.iter().all(|&v| v > 245)).count();
    assert!(blank < pixels.len() * 95 / 100, "the page is almost blank");
}

/// Regression (the k-sweep dropped an arm x seed silently when a question had no embedding, and
/// did not say how many recomputed sets match the stored ones): on a hand-built run, the arm whose
/// question lacks a vector still has its rows, with the count and no fits, and the other says
/// how many of its stored retrieved sets the recomputation reproduces.
#[test]
fn k_sweep_reports_missing_embeddings_and_matching_stored_sets() {
    // Unit vectors at these angles (degrees): similarity is the cosine of the difference.
    let angles = [(10i64, 0.0f32), (11, 10.0), (12, 50.0), (13, 100.0), (14, 20.0)];
    let vectors: Vec<Vec<f32>> = angles.iter().map(|a| vec![a.1.to_radians().cos(), a.1.to_radians().sin()]).collect();
    let ids: Vec<i64> = angles.iter().map(|a| a.0).collect();
    let emb = lucid::embed::table::embeddings_batch(&ids, "hand", &vectors, 2).unwrap();
    let ctx = lucid::session::new();
    lucid::session::register_batches(&ctx, &[("embeddings".into(), emb)]).unwrap();
    let retrieved = "arrow_cast(retrieved, 'List(Struct(\"step\": UInt64, \"shown_label\": UInt8))')";
    let sql = [
        format!(
            "CREATE TABLE episodes AS SELECT arm, CAST(seed AS BIGINT UNSIGNED) AS seed, \
             CAST(step AS BIGINT UNSIGNED) AS step, CAST(question_id AS BIGINT) AS question_id, \
             CAST(stored_q AS TINYINT UNSIGNED) AS stored_q, {retrieved} AS retrieved FROM (VALUES \
             ('memento', 0, 0, 10, 1, []), \
             ('memento', 0, 1, 11, 1, [named_struct('step', 0, 'shown_label', 1)]), \
             ('memento', 0, 2, 12, 0, [named_struct('step', 1, 'shown_label', 1), named_struct('step', 0, 'shown_label', 1)]), \
             ('memento', 0, 3, 13, 1, [named_struct('step', 2, 'shown_label', 0), named_struct('step', 1, 'shown_label', 1)]), \
             ('memento', 0, 4, 14, 1, [named_struct('step', 1, 'shown_label', 1), named_struct('step', 2, 'shown_label', 0)]), \
             ('lucid', 0, 0, 10, 1, []), \
             ('lucid', 0, 1, 99, 0, [named_struct('step', 0, 'shown_label', 1)]), \
             ('lucid', 0, 2, 11, 1, [named_struct('step', 0, 'shown_label', 1), named_struct('step', 1, 'shown_label', 0)]), \
             ('no-memory', 0, 0, 99, 0, [])) AS t(arm, seed, step, question_id, stored_q, retrieved)"
        ),
        "CREATE TABLE evaluation AS SELECT arm, CAST(seed AS BIGINT UNSIGNED) AS seed, \
         CAST(step AS BIGINT UNSIGNED) AS step, CAST(u AS TINYINT UNSIGNED) AS u FROM (VALUES \
         ('memento', 0, 0, 0), ('memento', 0, 1, 1), ('memento', 0, 2, 0), ('memento', 0, 3, 0), ('memento', 0, 4, 1), \
         ('lucid', 0, 0, 1), ('lucid', 0, 1, 0), ('lucid', 0, 2, 1), ('no-memory', 0, 0, 0)) AS t(arm, seed, step, u)"
            .to_string(),
    ];
    for s in &sql {
        lucid::session::block_on(lucid::session::collect(&ctx, s)).unwrap();
    }
    let batch = lucid::session::block_on(lucid::report::ksweep::k_sweep(&ctx)).unwrap();
    let got = lucid::report::rows_json(&batch).unwrap();
    // source: by hand from the angles above. memento's top sets by angle difference: step 1 {0};
    // step 2 (50°) {1, 0}; step 3 (100°) {2, 1, 0}; step 4 (20°) {1, 0, 2, 3}. Stored at k = 2
    // (run_k): steps 1-3 as recomputed, step 4 {1, 2} where the top two are {1, 0}: 3 of 4 match.
    // Trusted and wrong (c_bad counts them): steps 0 and 3; err of steps 1-4: 0, 1, 1, 0.
    //   k = 1: c_bad 1, 0, 0, 0 -> mean 0.25, OLS slope -2/3, intercept 2/3
    //   k = 2: 1, 1/2, 0, 1/2 -> mean 0.5, slope -1, intercept 1
    //   k = 4 and 8 (at most 4 earlier): 1, 1/2, 1/3, 1/2 -> mean 7/12 = 0.5833, Sxy = -1/3,
    //     Sxx = 1/4, slope -4/3, intercept 1/2 + (4/3)(7/12) = 1.2778
    // lucid: question 99 has no vector: 1 missing, rows without fits, run_k 2 (its step 2), no
    // comparison. no-memory is not swept.
    let row = |arm: &str,
               k: u64,
               n: u64,
               c: Option<f64>,
               kappa: Option<f64>,
               e0: Option<f64>,
               missing: u64,
               cmp: Option<(u64, u64)>| {
        serde_json::json!({"arm": arm, "seed": 0, "k": k, "n": n, "mean_corruption": c, "kappa": kappa, "e0": e0,
            "missing_embeddings": missing, "run_k": 2, "stored_sets": cmp.map(|c| c.0), "matching_sets": cmp.map(|c| c.1)})
    };
    let m = Some((4, 3));
    let want = vec![
        row("lucid", 1, 0, None, None, None, 1, None),
        row("lucid", 2, 0, None, None, None, 1, None),
        row("lucid", 4, 0, None, None, None, 1, None),
        row("lucid", 8, 0, None, None, None, 1, None),
        row("memento", 1, 4, Some(0.25), Some(-0.6667), Some(0.6667), 0, m),
        row("memento", 2, 4, Some(0.5), Some(-1.0), Some(1.0), 0, m),
        row("memento", 4, 4, Some(0.5833), Some(-1.3333), Some(1.2778), 0, m),
        row("memento", 8, 4, Some(0.5833), Some(-1.3333), Some(1.2778), 0, m),
    ];
    assert_eq!(got, want);
}
