//! The audit from a few hand labels (`lucid audit BANK --sample N`, then `--labels FILE`) on
//! banks with planted answers: the sheet is stratified, seeded and blind (no label, no verifier
//! flag in it); a census of labels reproduces every quantity of the bank exactly with no sampling
//! error; a sample recovers the planted leniency and sensitivity and catches inverted labels;
//! bad labels files are refused naming the row and the memory; the intervals cover on repeated
//! samples (a 100-sample version of `just audit-coverage`); an imported bank's sheet shows its
//! questions and answers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, RecordBatch};
use serde_json::Value;

use crate::support::{lucid, stderr, stdout};
use lucid::audit::synth::{Planted, generate};

/// The planted bank `spec` written as a CSV without `u`, and its truth by memory id.
fn unlabelled_bank(dir: &Path, spec: &Planted) -> (PathBuf, HashMap<String, f64>) {
    let batch = generate(spec);
    let keep: Vec<usize> = (0..batch.num_columns()).filter(|&i| batch.schema().field(i).name() != "u").collect();
    let schema = Arc::new(batch.schema().project(&keep).unwrap());
    let cols = keep.iter().map(|&i| batch.column(i).clone()).collect();
    let p = dir.join("bank.csv");
    arrow::csv::Writer::new(std::fs::File::create(&p).unwrap())
        .write(&RecordBatch::try_new(schema, cols).unwrap())
        .unwrap();
    let ids = arrow::compute::cast(batch.column_by_name("id").unwrap(), &arrow::datatypes::DataType::Utf8).unwrap();
    let ids = ids.as_any().downcast_ref::<arrow::array::StringArray>().unwrap();
    let u = batch.column_by_name("u").unwrap().as_any().downcast_ref::<arrow::array::Float64Array>().unwrap();
    (p, (0..ids.len()).map(|i| (ids.value(i).to_string(), u.value(i))).collect())
}

/// `lucid audit BANK --sample n --rng-seed seed`: the sheet.
fn sheet(dir: &Path, bank: &Path, n: usize, seed: u64) -> String {
    let o = lucid(dir)
        .args(["audit", bank.to_str().unwrap(), "--sample", &n.to_string(), "--rng-seed", &seed.to_string()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// The CSV records of `text` (a quoted field may span lines), without their line ends.
fn records(text: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in text.chars() {
        match c {
            '"' => quoted = !quoted,
            '\n' if !quoted => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out
}

/// The memory of each main row of a sheet (not the spares, whose `replaces` is filled).
fn main_rows(sheet: &str) -> Vec<String> {
    records(sheet)
        .iter()
        .skip(1)
        .filter(|r| r.split(',').nth(4).is_some_and(str::is_empty))
        .map(|r| r.split(',').next().unwrap().to_string())
        .collect()
}

/// The sheet with its (last, empty) u column filled by `label(memory)`.
fn fill(sheet: &str, label: impl Fn(&str) -> String) -> String {
    let recs = records(sheet);
    let mut out = format!("{}\n", recs[0]);
    for r in &recs[1..] {
        assert!(r.ends_with(','), "u is empty in the sheet: {r}");
        out.push_str(&format!("{r}{}\n", label(r.split(',').next().unwrap())));
    }
    out
}

/// `lucid audit BANK --labels FILE --format json`: the hand-label audit.
fn hand(dir: &Path, bank: &Path, labels: &str) -> Value {
    let file = dir.join("labels.csv");
    std::fs::write(&file, labels).unwrap();
    let o = lucid(dir)
        .args(["audit", bank.to_str().unwrap(), "--labels", file.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str::<Value>(&stdout(&o)).unwrap()["hand_labels"].clone()
}

fn estimate<'a>(a: &'a Value, quantity: &str, verifier: Option<&str>) -> &'a Value {
    a["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["quantity"] == quantity && r["verifier"].as_str() == verifier)
        .unwrap_or_else(|| panic!("no {quantity} {verifier:?} in {a}"))
}

#[test]
fn a_census_of_hand_labels_reproduces_the_bank_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Planted { memories: 300, seeds: 1, ..Planted::default() };
    let (bank, truth) = unlabelled_bank(dir.path(), &spec);
    let s = sheet(dir.path(), &bank, 300, 0);
    assert_eq!(records(&s).len(), 301, "every memory once");
    let a = hand(dir.path(), &bank, &fill(&s, |id| truth[id].to_string()));
    // The same quantities over the whole bank with its planted truth.
    let full = generate(&spec);
    let b = lucid::audit::run_bank::read_bank(&write(dir.path(), &full), &Default::default(), None).unwrap();
    for q in lucid::audit::hand::quantities(&b) {
        let exact = q.exact(&b.u).unwrap();
        let row = estimate(&a, q.name(), q.verifier.as_deref());
        let (e, lo, hi) = (row["estimate"].as_f64().unwrap(), row["lo"].as_f64().unwrap(), row["hi"].as_f64().unwrap());
        assert!((e - exact).abs() < 1e-9, "{} {:?}: {e} vs {exact}", q.name(), q.verifier);
        assert!((hi - lo).abs() < 1e-9, "a census has no sampling error: {row}");
    }
    assert_eq!(a["labelled"], 300);
}

fn write(dir: &Path, batch: &RecordBatch) -> PathBuf {
    let p = dir.join("full.csv");
    arrow::csv::Writer::new(std::fs::File::create(&p).unwrap()).write(batch).unwrap();
    p
}

#[test]
fn a_stratified_sample_recovers_the_planted_labels_blind_and_seeded() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Planted { memories: 2000, seeds: 1, leniency: 0.8, sensitivity: 0.95, ..Planted::default() };
    let (bank, truth) = unlabelled_bank(dir.path(), &spec);
    let s = sheet(dir.path(), &bank, 120, 7);
    // Blind: what the memory says, nothing of its label or the verifiers' flags.
    assert_eq!(s.lines().next().unwrap(), "memory,question,answer,plan,replaces,u");
    let ids = main_rows(&s);
    assert_eq!(ids.len(), 120);
    // Then one spare per sampled memory, from its stratum, not itself sampled.
    let recs = records(&s);
    // (a stratum sampled in full, or nearly, has fewer spares than samples)
    assert!((1 + 120 + 100..=1 + 240).contains(&recs.len()), "{}", recs.len());
    let m = lucid::audit::sheet::memories(&bank, &Default::default(), None, &[]).unwrap();
    let strata = lucid::audit::design::strata(&m.bank, 120);
    let of = |id: &str| strata.of[m.ids.iter().position(|x| x == id).unwrap()];
    for r in &recs[121..] {
        let f: Vec<&str> = r.split(',').collect();
        assert!(!ids.iter().any(|x| x == f[0]) && ids.iter().any(|x| x == f[4]) && of(f[0]) == of(f[4]), "{r}");
    }
    assert_eq!(ids.iter().collect::<std::collections::HashSet<_>>().len(), 120, "no memory twice");
    assert_eq!(s, sheet(dir.path(), &bank, 120, 7), "seeded");
    assert_ne!(s, sheet(dir.path(), &bank, 120, 8));
    let a = hand(dir.path(), &bank, &fill(&s, |id| truth[id].to_string()));
    // Every stratum (label x flag pattern) has labels; untrusted memories (about 20 %) are
    // oversampled, and the weights undo it.
    for st in a["strata"].as_array().unwrap() {
        assert!(st["labelled"].as_u64().unwrap() >= 2.min(st["memories"].as_u64().unwrap()), "{st}");
    }
    let wrong = truth.values().filter(|&&u| u == 0.0).count() as f64;
    let full = generate(&spec);
    let b = lucid::audit::run_bank::read_bank(&write(dir.path(), &full), &Default::default(), None).unwrap();
    let lenient = (0..b.r.len()).filter(|&i| b.u[i] == 0.0 && b.r[i] >= 0.5).count() as f64;
    let row = estimate(&a, "leniency", None);
    let (lo, hi) = (row["lo"].as_f64().unwrap(), row["hi"].as_f64().unwrap());
    assert!(lo <= lenient / wrong && lenient / wrong <= hi, "planted leniency {} in {row}", lenient / wrong);
    assert_eq!(a["sanity"], "labels carry signal");
    let eia: Vec<(String, bool)> = a["eia"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["verifier"].as_str().unwrap().to_string(), e["pass"].as_bool().unwrap()))
        .collect();
    assert_eq!(eia, [("truthful".into(), true), ("echo".into(), false), ("noise".into(), false)]);
    // Labels the wrong way round (the ReasoningBank fault) are caught from the same sample.
    let inverted = hand(dir.path(), &bank, &fill(&s, |id| (1.0 - truth[id]).to_string()));
    assert_eq!(inverted["sanity"], "labels look inverted");
}

#[test]
fn a_bad_labels_file_is_refused_naming_the_row_and_the_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (bank, _) = unlabelled_bank(dir.path(), &Planted { memories: 200, seeds: 1, ..Planted::default() });
    let refuse = |labels: &str| -> String {
        let file = dir.path().join("bad.csv");
        std::fs::write(&file, labels).unwrap();
        let o = lucid(dir.path())
            .args(["audit", bank.to_str().unwrap(), "--labels", file.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(!o.status.success(), "{labels}");
        stderr(&o)
    };
    let e = refuse("memory,u\n3,1\n999999,0\n");
    assert!(e.contains("bad.csv") && e.contains("data row 2") && e.contains("'999999'"), "{e}");
    let e = refuse("memory,u\n3,maybe\n");
    assert!(e.contains("data row 1") && e.contains("'maybe'"), "{e}");
    let e = refuse("memory,u\n3,1\n4,0\n3,0\n");
    assert!(e.contains("data row 3") && e.contains("labelled twice") && e.contains("data row 1"), "{e}");
    let e = refuse("memory,u\n3,\n");
    assert!(e.contains("no memory is labelled"), "{e}");
    let e = refuse("id,label\n3,1\n");
    assert!(e.contains("no column 'memory'"), "{e}");
    let e = refuse("memory,u,u2\n3,1,1\n4,0,perhaps\n");
    assert!(e.contains("data row 2") && e.contains("u2 is 'perhaps'"), "{e}");
}

#[test]
fn the_intervals_cover_the_planted_values_on_repeated_samples() {
    // A slice of `just audit-coverage` (tests/bench/results/hand_labels.md): the cells where the
    // jackknife's intervals collapsed — a low-accuracy bank whose verifiers rarely err, the demo's
    // shape (one stratum holds every right memory), blanks, N = 20 — 120 samples each with 1,000
    // draws. Seeded, so it cannot flake; the assertion is on the average over some 60 rows x 120
    // samples, far from its bound, and on no interval of width 0.
    let pick = [
        "accuracy 0.1, verifiers err 3 %",
        "demo's shape (132 memories, 11 verifiers)",
        "10 % of rows left blank",
        "N = 20",
    ];
    let cells: Vec<_> =
        lucid::audit::coverage::grid().into_iter().filter(|c| pick.contains(&c.name.as_str())).collect();
    assert_eq!(cells.len(), pick.len());
    let rows = lucid::audit::coverage::coverage(&cells, 120, 1);
    let mean = rows.iter().map(|r| r.coverage).sum::<f64>() / rows.len() as f64;
    assert!(mean >= 0.95, "mean coverage {mean} over {} rows", rows.len());
    for r in &rows {
        assert_eq!(
            r.zero_width, 0,
            "{} {} {:?}: an interval of width 0 without a census",
            r.cell, r.quantity, r.verifier
        );
        assert!(r.coverage >= 0.85, "{} {} {:?}: {}", r.cell, r.quantity, r.verifier, r.coverage);
    }
}

#[test]
fn a_blank_label_widens_the_intervals_and_names_its_stratum() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Planted { memories: 400, seeds: 1, base_rate: 0.3, ..Planted::default() };
    let (bank, truth) = unlabelled_bank(dir.path(), &spec);
    let s = sheet(dir.path(), &bank, 40, 3);
    // The sheet's memories by stratum (the design `--labels` recomputes from the bank and N).
    let m = lucid::audit::sheet::memories(&bank, &Default::default(), None, &[]).unwrap();
    let strata = lucid::audit::design::strata(&m.bank, 40);
    let main = main_rows(&s);
    let ids: Vec<&str> = main.iter().map(String::as_str).collect();
    let spare: Vec<String> =
        records(&s).iter().skip(1 + ids.len()).map(|r| r.split(',').next().unwrap().to_string()).collect();
    let of = |id: &str| strata.of[m.ids.iter().position(|x| x == id).unwrap()];
    // A stratum sampled in part with at least two labels: blank all its labels but one (and no
    // spare labelled in their place).
    let h = (0..strata.sizes.len())
        .find(|&h| {
            let n = ids.iter().filter(|&&id| of(id) == h).count();
            n >= 2 && n < strata.sizes[h]
        })
        .unwrap();
    let blank: Vec<&str> = ids.iter().copied().filter(|&id| of(id) == h).skip(1).collect();
    let is_spare = |id: &str| spare.iter().any(|x| x == id);
    let full =
        hand(dir.path(), &bank, &fill(&s, |id| if is_spare(id) { String::new() } else { truth[id].to_string() }));
    let a = hand(
        dir.path(),
        &bank,
        &fill(&s, |id| if blank.contains(&id) || is_spare(id) { String::new() } else { truth[id].to_string() }),
    );
    assert_eq!(
        (a["blanks"].as_u64(), full["blanks"].as_u64()),
        (Some(blank.len() as u64), Some(0)),
        "spares are not blanks"
    );
    let st = a["strata"].as_array().unwrap().iter().find(|st| st["stratum"] == strata.names[h].as_str()).unwrap();
    assert_eq!((st["labelled"].as_u64(), st["thin"].as_bool()), (Some(1), Some(true)), "{st}");
    // Fewer labels never narrow: every interval about as wide or wider (Monte Carlo noise aside).
    let width = |a: &Value, q: &Value| {
        let r = estimate(a, q["quantity"].as_str().unwrap(), q["verifier"].as_str());
        r["hi"].as_f64().unwrap() - r["lo"].as_f64().unwrap()
    };
    for q in full["rows"].as_array().unwrap() {
        assert!(
            width(&a, q) > 0.97 * width(&full, q),
            "{q} narrowed: {}",
            estimate(&a, q["quantity"].as_str().unwrap(), q["verifier"].as_str())
        );
    }
    let o = lucid(dir.path())
        .args(["audit", bank.to_str().unwrap(), "--labels", dir.path().join("labels.csv").to_str().unwrap()])
        .output()
        .unwrap();
    let md = stdout(&o);
    assert!(md.contains("fewer than two labels") && md.contains(&strata.names[h]), "{md}");
    // Labelling the blanks' spares instead gives the stratum its labels back.
    let replaced: Vec<String> = records(&s)
        .iter()
        .filter(|r| r.split(',').nth(4).is_some_and(|x| blank.contains(&x)))
        .map(|r| r.split(',').next().unwrap().to_string())
        .collect();
    let b = hand(
        dir.path(),
        &bank,
        &fill(&s, |id| {
            if blank.contains(&id) || (is_spare(id) && !replaced.iter().any(|x| x == id)) {
                String::new()
            } else {
                truth[id].to_string()
            }
        }),
    );
    let st = b["strata"].as_array().unwrap().iter().find(|st| st["stratum"] == strata.names[h].as_str()).unwrap();
    assert_eq!((st["labelled"].as_u64(), st["thin"].as_bool()), (Some(1 + blank.len() as u64), Some(false)), "{st}");
}

#[test]
fn the_hand_label_estimates_agree_with_numpy() {
    // Three banks: labels of the planted truth; a low-accuracy bank where some stratum's labels
    // all agree (the floor carries it); blanks that thin a stratum, and a second labeller who
    // disagrees on some rows (the labelling error carried into the intervals).
    if !crate::support::probes::require(crate::support::probes::Probe::Numpy) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/hand_labels.py");
    let cases = [
        (Planted { memories: 300, seeds: 1, seed: 21, ..Planted::default() }, 60, false),
        (Planted { memories: 400, seeds: 1, base_rate: 0.1, seed: 22, ..Planted::default() }, 50, false),
        (Planted { memories: 400, seeds: 1, base_rate: 0.4, verifiers: 5, seed: 23, ..Planted::default() }, 50, true),
    ];
    for (case, (spec, n, messy)) in cases.into_iter().enumerate() {
        let d = dir.path().join(format!("case{case}"));
        std::fs::create_dir_all(&d).unwrap();
        let (bank, truth) = unlabelled_bank(&d, &spec);
        let main = main_rows(&sheet(&d, &bank, n, case as u64));
        let mut labels = String::from(if messy { "memory,u,u2\n" } else { "memory,u\n" });
        for (row, id) in main.iter().enumerate() {
            let id = id.as_str();
            let u = truth[id];
            if !messy {
                labels.push_str(&format!("{id},{u}\n"));
            } else if row % 7 == 3 {
                labels.push_str(&format!("{id},,\n"));
            } else {
                let second = if row % 2 == 0 {
                    String::new()
                } else if row % 9 == 1 {
                    (1.0 - u).to_string()
                } else {
                    u.to_string()
                };
                labels.push_str(&format!("{id},{u},{second}\n"));
            }
        }
        let file = d.join("labels.csv");
        std::fs::write(&file, &labels).unwrap();
        let out = d.join("out.json");
        let o = lucid(&d)
            .args(["audit", bank.to_str().unwrap(), "--labels", file.to_str().unwrap(), "--format", "json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::write(&out, stdout(&o)).unwrap();
        let a: Value = serde_json::from_str(&stdout(&o)).unwrap();
        if case == 1 {
            // Some stratum sampled in part has labels that all agree.
            let m = lucid::audit::sheet::memories(&bank, &Default::default(), None, &[]).unwrap();
            let s = lucid::audit::design::strata(&m.bank, n);
            let ids: Vec<&str> = main.iter().map(String::as_str).collect();
            let unanimous = (0..s.sizes.len()).any(|h| {
                let us: Vec<f64> = ids
                    .iter()
                    .filter(|&&id| s.of[m.ids.iter().position(|x| x == id).unwrap()] == h)
                    .map(|id| truth[*id])
                    .collect();
                us.len() >= 2 && us.len() < s.sizes[h] && us.iter().all(|&u| u == us[0])
            });
            assert!(unanimous, "case 1 has a unanimous stratum");
        }
        if messy {
            assert!(
                a["hand_labels"]["blanks"].as_u64().unwrap() > 0
                    && a["hand_labels"]["disagreements"].as_u64().unwrap() > 0,
                "{a}"
            );
        }
        let o = std::process::Command::new("python3").arg(&script).arg(&bank).arg(&file).arg(&out).output().unwrap();
        assert!(o.status.success(), "case {case}: {}{}", stdout(&o), stderr(&o));
    }
}

#[test]
fn an_imported_banks_sheet_shows_its_questions_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bank = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import/reasoningbank/memories_reasoningbank/shopping.jsonl");
    let o = lucid(&d.join("cache"))
        .current_dir(d)
        .args(["import", "--preset", "reasoningbank", "--name", "rb", bank.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let run = d.join("runs/rb");
    let s = sheet(d, &run, 8, 0);
    // 8 trajectories: memory seed/step, the question from tasks, the answer from the episode.
    let recs = records(&s);
    assert_eq!(recs.len(), 9, "{s}");
    let first = recs.iter().find(|l| l.starts_with("0/0,")).unwrap_or_else(|| panic!("{s}"));
    assert!(first.contains("3/2/22"), "the answer of step 0: {first}");
    let a = hand(d, &run, &fill(&s, |id| if id.ends_with("/0") { "1".into() } else { "wrong".into() }));
    assert_eq!(a["labelled"], 8);
    assert_eq!(a["label_source"], "judge");
}

#[test]
fn a_spreadsheets_csv_with_multiline_quoted_text_reads_as_written() {
    // CRLF rows, quoted fields holding commas, quotes and line ends (what Excel and Python's csv
    // module write): the bank audits, its sheet keeps the text, and the filled sheet reads back.
    let dir = tempfile::tempdir().unwrap();
    let mut bank = String::from("id,question,answer,r,v_judge\r\n");
    for i in 0..40 {
        let (r, v) = (i % 3 != 0, i % 4 != 0);
        bank.push_str(&format!(
            "m{i},\"Which, of \"\"these\"\"?\nline two {i}\",a{i},{},{}\r\n",
            u8::from(r),
            u8::from(v)
        ));
    }
    let path = dir.path().join("bank.csv");
    std::fs::write(&path, bank).unwrap();
    let s = sheet(dir.path(), &path, 40, 0);
    let recs = records(&s);
    assert_eq!(recs.len(), 41);
    assert!(recs.iter().any(|r| r.starts_with("m7,\"Which, of \"\"these\"\"?\nline two 7\",a7,")), "{s}");
    let filled = fill(&s, |id| if id.ends_with('1') { "0".into() } else { "1".into() }).replace('\n', "\r\n");
    let a = hand(dir.path(), &path, &filled);
    assert_eq!(a["labelled"], 40);
}

#[test]
fn a_sheet_of_a_bank_without_answers_says_so() {
    // Memento's case bank keeps no answers: they are in its results log, here not imported.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let memento = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/memento");
    let (bank, log) = (memento.join("memory/memory.jsonl"), memento.join("result/result_parametric.jsonl"));
    let import = |name: &str, extra: &[&str]| {
        let o = lucid(&d.join("cache"))
            .current_dir(d)
            .args(["import", "--preset", "memento", "--name", name])
            .args(extra)
            .arg(&bank)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    };
    let sample = |run: &str| {
        let o = lucid(&d.join("cache")).current_dir(d).args(["audit", run, "--sample", "6"]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    import("m", &[]);
    let err = sample("runs/m");
    assert!(err.contains("warning: runs/m holds no answers") && err.contains("lucid import --log"), "{err}");
    // With its results log the bank has answers: no warning.
    import("ml", &["--log", log.to_str().unwrap()]);
    assert!(!sample("runs/ml").contains("holds no answers"));
}

/// `lucid audit BANK --labels LABELS [extra...] --format json`: the hand-label audit (or plan).
fn hand_with(dir: &Path, bank: &Path, labels: &str, extra: &[&str]) -> Value {
    let file = dir.join("labels.csv");
    std::fs::write(&file, labels).unwrap();
    let o = lucid(dir)
        .args(["audit", bank.to_str().unwrap(), "--labels", file.to_str().unwrap(), "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str::<Value>(&stdout(&o)).unwrap()
}

/// A seeded coin per memory id: whether a labeller who errs `rate` gets it wrong.
fn errs(id: &str, rate: f64, salt: u64) -> bool {
    let h = id.bytes().fold(salt ^ 0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let mut rng = lucid::rng::SplitMix64(h);
    rng.uniform() < rate
}

#[test]
fn a_labeller_who_states_an_error_rate_gets_it_corrected_and_carried() {
    // Issue #71: a labeller who errs 10 % biases Corr(V, U) of the truthful verifier towards 0;
    // stated, the labels are read through the rate, the bias goes and the interval widens.
    let dir = tempfile::tempdir().unwrap();
    let spec = Planted { memories: 1500, seeds: 1, base_rate: 0.4, ..Planted::default() };
    let (bank, truth) = unlabelled_bank(dir.path(), &spec);
    let s = sheet(dir.path(), &bank, 300, 5);
    let labels = fill(&s, |id| {
        if main_rows(&s).iter().any(|x| x == id) {
            let u = truth[id];
            (if errs(id, 0.1, 1) { 1.0 - u } else { u }).to_string()
        } else {
            String::new()
        }
    });
    let plain = hand_with(dir.path(), &bank, &labels, &[])["hand_labels"].clone();
    let stated = hand_with(dir.path(), &bank, &labels, &["--labeller-error", "0.1"])["hand_labels"].clone();
    let full = generate(&spec);
    let b = lucid::audit::run_bank::read_bank(&write(dir.path(), &full), &Default::default(), None).unwrap();
    let q = lucid::audit::hand::quantities(&b);
    let q = q.iter().find(|q| q.name() == "corr_v_u" && q.verifier.as_deref() == Some("truthful")).unwrap();
    let planted = q.exact(&b.u).unwrap();
    let get = |a: &Value, k: &str| estimate(a, "corr_v_u", Some("truthful"))[k].as_f64().unwrap();
    assert!(
        (get(&stated, "estimate") - planted).abs() < (get(&plain, "estimate") - planted).abs(),
        "the stated rate moves the estimate back: planted {planted}, {} vs {}",
        get(&stated, "estimate"),
        get(&plain, "estimate")
    );
    assert!(get(&stated, "lo") <= planted && planted <= get(&stated, "hi"), "{planted} in {stated}");
    assert!(get(&stated, "hi") - get(&stated, "lo") > get(&plain, "hi") - get(&plain, "lo"));
    assert_eq!(stated["label_error"]["source"], "stated");
    assert_eq!(stated["label_error"]["first"]["wrong_as_right"], 0.1);
    assert_eq!(plain["label_error"]["source"], "none");
    // A rate at which a label says nothing is refused, naming the flag.
    let o = lucid(dir.path())
        .args(["audit", bank.to_str().unwrap(), "--labels", dir.path().join("labels.csv").to_str().unwrap()])
        .args(["--labeller-error", "0.5"])
        .output()
        .unwrap();
    assert!(!o.status.success() && stderr(&o).contains("--labeller-error"), "{}", stderr(&o));
}

#[test]
fn a_census_by_a_labeller_who_errs_is_not_certain() {
    // A bank labelled in full by someone who says they err 5 % still has label noise: no
    // interval of width 0 (docs: only a census by a labeller taken as the truth has them).
    let dir = tempfile::tempdir().unwrap();
    let spec = Planted { memories: 200, seeds: 1, ..Planted::default() };
    let (bank, truth) = unlabelled_bank(dir.path(), &spec);
    let s = sheet(dir.path(), &bank, 200, 0);
    let a = hand_with(dir.path(), &bank, &fill(&s, |id| truth[id].to_string()), &["--labeller-error", "0.05"]);
    for r in a["hand_labels"]["rows"].as_array().unwrap() {
        let w = r["hi"].as_f64().unwrap() - r["lo"].as_f64().unwrap();
        assert!(w > 0.0, "{r}");
    }
}

#[test]
fn two_labellers_agreement_is_counted_with_kappa_and_too_good_agreement_warns() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Planted { memories: 800, seeds: 1, base_rate: 0.5, ..Planted::default() };
    let (bank, truth) = unlabelled_bank(dir.path(), &spec);
    let s = sheet(dir.path(), &bank, 100, 2);
    let main = main_rows(&s);
    // A second labeller on every main row, agreeing but on the memories a 10 % coin picks.
    let with_u2 = |flip: bool| {
        let recs = records(&s);
        let mut out = format!("{},u2\n", recs[0]);
        for r in &recs[1..] {
            let id = r.split(',').next().unwrap();
            if !main.iter().any(|x| x == id) {
                out.push_str(&format!("{r},\n"));
                continue;
            }
            let u = truth[id];
            let v = if flip && errs(id, 0.1, 9) { 1.0 - u } else { u };
            out.push_str(&format!("{r}{u},{v}\n"));
        }
        out
    };
    let a = hand_with(dir.path(), &bank, &with_u2(true), &[])["hand_labels"].clone();
    let g = &a["agreement"];
    let n = |k: &str| g[k].as_u64().unwrap();
    let (agree, disagree) =
        (n("both_right") + n("both_wrong"), n("first_right_second_wrong") + n("first_wrong_second_right"));
    assert_eq!(agree + disagree, 100);
    assert!((3..=20).contains(&disagree), "{g}");
    let p1 = (n("both_right") + n("first_right_second_wrong")) as f64 / 100.0;
    let p2 = (n("both_right") + n("first_wrong_second_right")) as f64 / 100.0;
    let pe = p1 * p2 + (1.0 - p1) * (1.0 - p2);
    let kappa = (agree as f64 / 100.0 - pe) / (1.0 - pe);
    assert!((g["kappa"].as_f64().unwrap() - kappa).abs() < 1e-12, "{g}");
    assert_eq!(a["label_error"]["source"], "estimated");
    // Two who agree on every memory while stating they err 10 % each: errors so rare together
    // are shared, not independent — said so.
    let b = hand_with(dir.path(), &bank, &with_u2(false), &["--labeller-error", "0.1"])["hand_labels"].clone();
    let w: Vec<&str> = b["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
    assert!(w.iter().any(|w| w.contains("agree too well")), "{w:?}");
    assert!(!a["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("agree too well")));
    // And the Markdown reports the counts.
    let o = lucid(dir.path())
        .args(["audit", bank.to_str().unwrap(), "--labels", dir.path().join("labels.csv").to_str().unwrap()])
        .args(["--labeller-error", "0.1"])
        .output()
        .unwrap();
    assert!(stdout(&o).contains("Cohen's kappa") && stderr(&o).contains("agree too well"), "{}", stdout(&o));
}

#[test]
fn labels_too_few_to_settle_anything_say_so() {
    // One good verifier and 12 labels: its pass cannot be settled, and the output says so first.
    let dir = tempfile::tempdir().unwrap();
    let spec = Planted { memories: 600, seeds: 1, base_rate: 0.4, verifiers: 1, ..Planted::default() };
    let (bank, truth) = unlabelled_bank(dir.path(), &spec);
    let s = sheet(dir.path(), &bank, 12, 1);
    let a = hand_with(dir.path(), &bank, &fill(&s, |id| truth[id].to_string()), &[])["hand_labels"].clone();
    assert!(a["eia"].as_array().unwrap().iter().all(|e| e["settled"] == false), "{}", a["eia"]);
    let w = a["warnings"].to_string();
    assert!(w.contains("too few to settle any verdict") && w.contains("--plan"), "{w}");
}

#[test]
fn following_the_plan_settles_the_open_verdicts() {
    // Issue #71: `--plan` names how many more labels settle each open verdict and which memories;
    // labelling those (with the truth) and reading the labels again settles them.
    let dir = tempfile::tempdir().unwrap();
    let spec = Planted { memories: 3000, seeds: 1, base_rate: 0.5, flips: 0.05, ..Planted::default() };
    let (bank, truth) = unlabelled_bank(dir.path(), &spec);
    let s = sheet(dir.path(), &bank, 40, 4);
    let first = fill(&s, |id| truth[id].to_string());
    let before = hand_with(dir.path(), &bank, &first, &[])["hand_labels"].clone();
    let open: Vec<String> = before["eia"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["settled"] == false)
        .map(|e| e["verifier"].as_str().unwrap().to_string())
        .collect();
    assert!(!open.is_empty(), "40 labels leave a verdict open: {}", before["eia"]);
    let plan = hand_with(dir.path(), &bank, &first, &["--plan"])["plan"].clone();
    for v in &open {
        let row = plan["verdicts"].as_array().unwrap().iter().find(|r| r["verifier"] == v.as_str()).unwrap();
        assert!(
            row["more"].as_u64().is_some_and(|k| k > 0) && !row["by_stratum"].as_array().unwrap().is_empty(),
            "{row}"
        );
    }
    let next: Vec<String> =
        plan["next"].as_array().unwrap().iter().map(|r| r["memory"].as_str().unwrap().to_string()).collect();
    let most = plan["verdicts"].as_array().unwrap().iter().filter_map(|r| r["more"].as_u64()).max().unwrap();
    assert!(next.len() as u64 >= most, "the next memories cover the largest need");
    assert!(next.iter().all(|id| !records(&s).iter().any(|r| r.starts_with(&format!("{id},")))), "new memories only");
    // The sheet with the planned memories added as rows, labelled.
    let mut more = first.clone();
    for id in &next {
        more.push_str(&format!("{id},,,,,{}\n", truth[id]));
    }
    let after = hand_with(dir.path(), &bank, &more, &[])["hand_labels"].clone();
    for v in &open {
        let e = after["eia"].as_array().unwrap().iter().find(|e| e["verifier"] == v.as_str()).unwrap();
        assert_eq!(e["settled"], true, "{v} after {} more labels: {after}", next.len());
    }
}

#[test]
fn with_a_stated_labeller_error_the_intervals_cover() {
    // A slice of `just audit-coverage`: a single labeller who errs 10 % and says so, N = 100, and
    // one whose 5 % is estimated from a fifth labelled twice; 100 samples each, seeded.
    let pick = [
        "labeller errs 10 % and says so, N = 100",
        "labeller errs 5 %, rate estimated from a fifth labelled twice, N = 100",
    ];
    let cells: Vec<_> =
        lucid::audit::coverage::grid().into_iter().filter(|c| pick.contains(&c.name.as_str())).collect();
    assert_eq!(cells.len(), pick.len());
    let rows = lucid::audit::coverage::coverage(&cells, 100, 1);
    let mean = rows.iter().map(|r| r.coverage).sum::<f64>() / rows.len() as f64;
    assert!(mean >= 0.94, "mean coverage {mean} over {} rows", rows.len());
    for r in &rows {
        assert!(r.coverage >= 0.85, "{} {} {:?}: {}", r.cell, r.quantity, r.verifier, r.coverage);
        if let Some(c) = r.ppi_coverage {
            assert!(c >= 0.85 && r.ppi_ratio.is_some_and(|w| w <= 1.0 + 1e-9), "{r:?}");
        }
    }
}

#[test]
fn the_ppi_estimate_agrees_with_ppi_python() {
    // Issue #71: on a bank of one stratum (every memory trusted, the one verifier's score in
    // [0.5, 1], never a flag) the stratified sample is a simple random one and ppi-python's
    // PPI++ mean applies: the same point estimate at lucid's lambda, a close interval, both
    // narrower than the labels alone (tests/golden/ppi_check.py).
    if !crate::support::probes::require(crate::support::probes::Probe::PpiPython) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = lucid::rng::SplitMix64(71);
    let (mut csv, mut truth) = (String::from("id,r,v_s\n"), HashMap::new());
    for i in 0..3000 {
        let s = rng.uniform();
        let u = f64::from(u8::from(rng.uniform() < 0.1 + 0.8 * s));
        csv.push_str(&format!("{i},1,{}\n", 0.5 + 0.5 * s));
        truth.insert(i.to_string(), u);
    }
    let bank = dir.path().join("bank.csv");
    std::fs::write(&bank, csv).unwrap();
    let main = main_rows(&sheet(dir.path(), &bank, 150, 3));
    let labels: String = std::iter::once("memory,u\n".to_string())
        .chain(main.iter().map(|id| format!("{id},{}\n", truth[id])))
        .collect();
    let out = hand_with(dir.path(), &bank, &labels, &[]);
    let json = dir.path().join("out.json");
    std::fs::write(&json, out.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/ppi_check.py");
    let o = std::process::Command::new("python3")
        .arg(&script)
        .args([&bank, &dir.path().join("labels.csv"), &json])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
}
