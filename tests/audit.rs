//! `lucid audit` on synthetic banks with known properties (`lucid::audit::synth`): the planted
//! leniency is recovered within its interval; a decorrelated truthful verifier passes EIA and its
//! demotion pays; an echoing and a noise verifier fail for the reasons the table gives; ensembles
//! and the gold-fit bound are marked; label-blind calibration pays exactly nothing; the controls
//! behave as the paper's; every statistic agrees with numpy (tests/golden/audit.py). Also: the
//! Markdown/JSON/HTML outputs, an agent run's own bank (CLI and pipeline stage), bad banks.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{lucid, stderr, stdout};
use lucid::audit::synth::{Planted, generate};

fn write_bank(dir: &Path, spec: &Planted) -> PathBuf {
    let p = dir.join("bank.csv");
    let f = std::fs::File::create(&p).unwrap();
    arrow::csv::Writer::new(f).write(&generate(spec)).unwrap();
    p
}

fn audit_json(dir: &Path, bank: &Path, extra: &[&str]) -> Value {
    let o = lucid(dir).arg("audit").arg(bank).args(["--format", "json"]).args(extra).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(stdout(&o).trim()).unwrap()
}

fn row<'a>(v: &'a Value, table: &str, key: &str, name: &str) -> &'a Value {
    let rows = v["tables"][table].as_array().unwrap_or_else(|| panic!("no table {table}"));
    rows.iter().find(|e| e[key] == name).unwrap_or_else(|| panic!("no {name} in {table}"))
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

#[test]
fn audit_recovers_the_planted_verifiers() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Planted { memories: 3000, verifiers: 4, ..Planted::default() };
    let bank = write_bank(dir.path(), &spec);
    let v = audit_json(dir.path(), &bank, &["--bootstrap", "300"]);
    assert_eq!(v["memories"], 3000);
    // The planted leniency and sensitivity lie in their Wilson intervals.
    let g = &v["tables"]["grader"][0];
    assert!(f(g, "leniency_lo") < spec.leniency && spec.leniency < f(g, "leniency_hi"), "{g}");
    assert!(f(g, "sensitivity_lo") < spec.sensitivity && spec.sensitivity < f(g, "sensitivity_hi"), "{g}");
    // EIA.
    let eia = |name: &str| row(&v, "eia", "verifier", name).clone();
    let (t, e, n) = (eia("truthful"), eia("echo"), eia("noise"));
    assert_eq!((t["pass"].as_bool(), e["pass"].as_bool(), n["pass"].as_bool()), (Some(true), Some(false), Some(false)));
    assert!(f(&t, "corr_nu_b").abs() < 0.3 && f(&t, "corr_v_u") > 0.7, "{t}");
    assert!(f(&e, "corr_nu_b") > 0.8 && e["failure"].as_str().unwrap().contains("echoes"), "{e}");
    assert!(f(&n, "corr_v_u").abs() < 0.1 && n["failure"].as_str().unwrap().contains("barely tracks U"), "{n}");
    for (name, kind) in [("judge4", "verifier"), ("ensemble-mean", "ensemble"), ("ensemble-majority", "ensemble")] {
        assert_eq!(eia(name)["kind"], kind);
    }
    assert_eq!(eia("gold-fit")["kind"], "gold-fit (reads U)");
    // The echo's errors correlate with the judge's, which copies the self-grade half the time.
    let ej =
        v["tables"]["error_correlations"].as_array().unwrap().iter().find(|p| p["a"] == "echo" && p["b"] == "judge4");
    assert!(f(ej.unwrap(), "corr_errors") > 0.4, "{ej:?}");
    // Payoff.
    let pay = |name: &str| row(&v, "payoff", "verifier", name).clone();
    let (pt, pe, po, pc) = (pay("truthful"), pay("echo"), pay("oracle"), pay("calibration"));
    assert!(f(&pt, "delta") > 0.2 && f(&pt, "p_gt_0") > 0.99, "{pt}");
    assert!(f(&pt, "lo") < f(&pt, "delta") && f(&pt, "delta") < f(&pt, "hi"), "{pt}");
    assert!(f(&pe, "delta") < 0.0, "demoting by an echo hurts: {pe}");
    assert!(f(&po, "delta") >= f(&pt, "delta"), "the oracle is the ceiling");
    assert_eq!(po["demoted_correct"], 0);
    assert!(f(&pc, "delta").abs() < 1e-12, "label-blind calibration pays nothing: {pc}");
    assert!(f(&pt, "demoted_reuse") > 0.0, "the reuse column is read: {pt}");
    // Proposition 2: the closed form predicts exactly the variance the best pull removes.
    for p in v["tables"]["proposition2"].as_array().unwrap() {
        assert!((f(p, "removed_predicted") - f(p, "removed_measured")).abs() < 1e-9, "{p}");
    }
    // Filtering controls at the truthful verifier's budget.
    let c = |name: &str| row(&v, "controls", "control", name).clone();
    let k = f(&pt, "demoted");
    let sel = c(&format!("truthful (selected verifier), K = {k}"));
    assert_eq!(f(&sel, "delta"), f(&pt, "delta"));
    let conf = c("confidence threshold on r");
    assert_eq!((f(&conf, "demoted"), f(&conf, "delta")), (0.0, 0.0), "a binary r separates nothing (Lemma 1)");
    let sc = c("self-consistency prune");
    assert_eq!(f(&sc, "demoted"), k, "{sc}");
    assert!(f(&sc, "delta") < 0.0, "agreement that follows the self-grade demotes right memories: {sc}");
    let rnd = c("random prune at 100 % of K (mean of 200 seeded draws)");
    assert!(f(&rnd, "delta") < f(&pt, "delta") / 2.0 && f(&rnd, "demoted_correct") > f(&pt, "demoted_correct"));
    let sweep: Vec<f64> =
        [25, 50, 75, 100].iter().map(|s| f(&c(&format!("truthful at {s} % of K")), "delta")).collect();
    assert!(sweep.windows(2).all(|w| w[0] < w[1]) && sweep[3] == f(&pt, "delta"), "{sweep:?}");
    // Lemma 1: every label-blind map leaves Spearman, AUC and the top-10 gold rate exactly equal.
    let cal = v["tables"]["calibration"].as_array().unwrap();
    let identity = &cal[0];
    for c in cal.iter().filter(|c| c["reads_u"] == false) {
        for k in ["spearman", "auc", "top10"] {
            assert_eq!(c[k], identity[k], "{} changes {k}", c["map"]);
        }
    }
    let iso = cal.iter().find(|c| c["map"] == "isotonic (gold-fit)").unwrap();
    assert_eq!((&iso["spearman"], &iso["auc"]), (&identity["spearman"], &identity["auc"]), "two levels: no split");
    // Leave-one-seed-out: the truthful verifier is selected on every pair of seeds and pays on the third.
    let folds = v["tables"]["leave_one_seed_out"].as_array().unwrap();
    assert_eq!(folds.len(), 4, "three folds and their means");
    for fold in &folds[..3] {
        assert_eq!(fold["selected"], "truthful", "{fold}");
        assert!(f(fold, "held_out_delta") > 0.3 && f(fold, "pass_minus_fail") > 0.3, "{fold}");
        assert_eq!((fold["held_out_rank"].as_u64(), fold["passing"].as_u64()), (Some(1), Some(1)), "{fold}");
    }
    assert_eq!(folds[3]["fold"], "mean over 3 folds");
    // The planted Echo Gap: E[b | U=0] = l, Cov(b, n | U=0) = echo_reuse l (1 - l), within sampling error.
    let gap = &v["tables"]["echo_gap"][0];
    assert!(gap["gap"] == true && (f(gap, "mean_b") - spec.leniency).abs() < 0.05, "{gap}");
    let planted = spec.echo_reuse * spec.leniency * (1.0 - spec.leniency);
    assert!((f(gap, "cov_b_n") - planted).abs() < 0.15, "{gap} vs planted {planted}");
    // The same audit twice is the same audit (seeded), whatever the bootstrap's thread count.
    assert_eq!(v, audit_json(dir.path(), &bank, &["--bootstrap", "300"]));
}

#[test]
fn continuous_scores_rank_only_by_what_separates() {
    // Scores spread within their side of 0.5: a confidence threshold now demotes the least
    // confident trusted memories, and the label-blind maps still leave every rank statistic as is.
    let dir = tempfile::tempdir().unwrap();
    let bank = write_bank(dir.path(), &Planted { memories: 2000, continuous: true, ..Planted::default() });
    let v = audit_json(dir.path(), &bank, &["--bootstrap", "200"]);
    let conf = row(&v, "controls", "control", "confidence threshold on r");
    let t = row(&v, "payoff", "verifier", "truthful");
    assert_eq!(f(conf, "demoted"), f(t, "demoted"), "distinct scores: exactly K demoted");
    let cal = v["tables"]["calibration"].as_array().unwrap();
    for c in cal.iter().filter(|c| c["reads_u"] == false) {
        assert_eq!(c["auc"], cal[0]["auc"], "{}", c["map"]);
    }
}

#[test]
fn audit_agrees_with_numpy() {
    if !crate::support::probes::require(crate::support::probes::Probe::Numpy) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The third case names the ensemble's judges (issue 33, item 9).
    for (i, spec, judges) in [
        (0, Planted { memories: 1200, verifiers: 5, ..Planted::default() }, None),
        (1, Planted { memories: 900, verifiers: 3, continuous: true, seed: 3, ..Planted::default() }, None),
        (2, Planted { memories: 900, verifiers: 5, seed: 5, ..Planted::default() }, Some("truthful,judge4,judge5")),
    ] {
        let bank = write_bank(dir.path(), &spec);
        let out = dir.path().join(format!("out{i}"));
        let ensemble: Vec<&str> = judges.map(|j| vec!["--ensemble", j]).unwrap_or_default();
        let o = lucid(dir.path()).arg("audit").arg(&bank).args(&ensemble).arg("--out").arg(&out).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/audit.py");
        let o = std::process::Command::new("python3")
            .arg(&script)
            .arg(&bank)
            .arg(out.join("audit.json"))
            .args(judges)
            .output()
            .unwrap();
        assert!(o.status.success(), "case {i}: {}{}", stdout(&o), stderr(&o));
    }
}

#[test]
fn audit_writes_markdown_json_and_html() {
    let dir = tempfile::tempdir().unwrap();
    let bank = write_bank(dir.path(), &Planted { memories: 600, ..Planted::default() });
    let out = dir.path().join("audit");
    let o = lucid(dir.path()).arg("audit").arg(&bank).args(["--bootstrap", "100", "--out"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    for want in [
        "## Table 2: the Error-Independence Assumption",
        "| truthful | verifier |",
        "PASS",
        "echoes the grader",
        "Table 6",
    ] {
        assert!(md.contains(want), "markdown lacks {want}:\n{md}");
    }
    assert!(stderr(&o).contains("audit.html"), "the page's path is printed");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(out.join("audit.json")).unwrap()).unwrap();
    for e in json["tables"]["eia"].as_array().unwrap() {
        for k in ["verifier", "corr_nu_b", "corr_v_u", "pass"] {
            assert!(e.get(k).is_some(), "eia rows carry {k}: {e}");
        }
    }
    // Every table and column is the one schemas/audit.json documents, in order.
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/audit.json")).unwrap(),
    )
    .unwrap();
    let documented: Vec<&String> = doc["tables"].as_object().unwrap().keys().collect();
    let written: Vec<&String> = json["tables"].as_object().unwrap().keys().collect();
    assert_eq!(documented, written);
    for (name, spec) in doc["tables"].as_object().unwrap() {
        let cols: Vec<&str> = spec["columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
        for row in json["tables"][name].as_array().unwrap() {
            let keys: Vec<&str> = row.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys, cols, "{name}: columns as schemas/audit.json says");
        }
    }
    let html = std::fs::read_to_string(out.join("audit.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("admissible box") && html.contains("truthful (PASS)"), "{html}");
    // Each point on the EIA plot carries its verifier's name; the error correlations are a matrix.
    assert!(html.contains("<text class=\"point-label\"") && html.contains(">truthful</text>"), "{html}");
    assert!(html.contains("Corr(nu_a, nu_b)"), "error correlations as a matrix");
    assert_eq!(std::fs::read_to_string(out.join("audit.md")).unwrap(), md);
}

#[test]
fn audit_reads_an_agent_runs_own_bank_from_the_cli_and_as_a_stage() {
    let server = crate::support::fake_server::FakeServer::start(
        vec![],
        crate::support::fake_server::Reply::func(crate::support::study::scripted),
    );
    let dir = crate::support::study::project(&server.url);
    let yaml = dir.path().join("study.yaml");
    let mut text = std::fs::read_to_string(&yaml).unwrap();
    text.push_str("  - id: audit\n    kind: audit\n    inputs: [episodes, evaluation]\n    config: {arm: memento, bootstrap: 200}\n");
    std::fs::write(&yaml, text).unwrap();
    let cache = dir.path().join("cache");
    let o = lucid(&cache).current_dir(dir.path()).args(["run", "study.yaml", "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let run = dir.path().join("runs/study");
    let v = audit_json(&cache, &run, &["--arm", "memento", "--bootstrap", "200"]);
    let episodes =
        crate::support::study::query(&cache, dir.path(), "SELECT count(*) AS n FROM episodes WHERE arm = 'memento'");
    assert_eq!(v["memories"], episodes[0]["n"]);
    for channel in ["execution", "degeneracy", "literal", "detector"] {
        assert_eq!(row(&v, "eia", "verifier", channel)["kind"], "verifier");
    }
    // The detector's channels and the detector are verifiers, not judges: no ensemble of them.
    assert_eq!(v["ensemble"], serde_json::json!([]));
    assert!(v["tables"]["eia"].as_array().unwrap().iter().all(|r| r["kind"] != "ensemble"));
    // `lucid audit RUN` and grader.sql give the same leniency (over graded episodes) for the arm,
    // and the same intervals, clustered on the question over both seeds (to grader.sql's 4 digits).
    let grader_sql = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/reports/paper/grader.sql");
    let sql_rows = crate::support::study::query(&cache, dir.path(), grader_sql.to_str().unwrap());
    let pooled = sql_rows.iter().find(|r| r["arm"] == "memento" && r["seed"].is_null()).expect("memento pooled row");
    let graded = &v["tables"]["grader"][0];
    for k in ["leniency", "leniency_lo", "leniency_hi", "sensitivity", "sensitivity_lo", "sensitivity_hi"] {
        let same = match (graded[k].as_f64(), pooled[k].as_f64()) {
            (Some(a), Some(b)) => (a - b).abs() < 5e-5,
            (a, b) => a == b,
        };
        assert!(same, "{k}: audit {graded} vs grader.sql {pooled}");
    }
    assert!(graded["leniency"].is_number(), "the scripted run has wrong memento episodes");
    // The bank is what the SQL says: r as stored, U, channels by name (the audit's V = 1 - fired),
    // n = times shown later.
    let sql = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/reports/bank.sql");
    let bank = crate::support::study::query(&cache, dir.path(), sql.to_str().unwrap());
    let episodes = crate::support::study::query(
        &cache,
        dir.path(),
        "SELECT e.seed, e.step, e.r, e.flagged, e.flag_degenerate, e.retrieved, v.u FROM episodes e \
         JOIN evaluation v USING (arm, seed, step) WHERE e.arm = 'memento'",
    );
    let memento: Vec<&Value> = bank.iter().filter(|b| b["arm"] == "memento").collect();
    assert_eq!(memento.len(), episodes.len());
    for e in &episodes {
        let b = memento.iter().find(|b| b["seed"] == e["seed"] && b["id"] == e["step"]).unwrap();
        let shown = episodes
            .iter()
            .filter(|o| o["seed"] == e["seed"])
            .flat_map(|o| o["retrieved"].as_array().unwrap())
            .filter(|m| m["step"] == e["step"])
            .count();
        assert_eq!(f(b, "n"), shown as f64, "{b}");
        assert_eq!(f(b, "r"), e["r"].as_f64().unwrap_or(0.0), "{b}");
        assert_eq!(f(b, "u"), f(e, "u"), "{b}");
        assert_eq!(f(b, "v_detector"), if e["flagged"] == true { 0.0 } else { 1.0 }, "{b}");
        let degeneracy = b["channels"].as_array().unwrap().iter().find(|c| c["name"] == "degeneracy").unwrap();
        assert_eq!(degeneracy["fired"], e["flag_degenerate"], "{b}");
    }
    assert!(memento.iter().any(|b| f(b, "n") > 0.0), "later episodes were shown earlier ones");
    // The stage wrote the same tables into the run.
    let stage =
        crate::support::study::query(&cache, dir.path(), "SELECT verifier, corr_v_u FROM audit_eia ORDER BY verifier");
    for s in &stage {
        let cli = row(&v, "eia", "verifier", s["verifier"].as_str().unwrap());
        assert_eq!(s["corr_v_u"], cli["corr_v_u"], "{s}");
    }
    assert!(!stage.is_empty());
    // An arm the run lacks is named with the arms it has.
    let o = lucid(&cache).arg("audit").arg(&run).args(["--arm", "nope"]).output().unwrap();
    assert!(!o.status.success() && stderr(&o).contains("no arm 'nope'") && stderr(&o).contains("memento"));
}

#[test]
fn bad_banks_name_the_file_and_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("nor.csv", "u,v_a\n1,1\n", "no column 'r'"),
        ("text.csv", "r,u,v_a\n1,1,yes\n", "row 0: column 'v_a' has no number"),
        ("empty.csv", "r,u,v_a\n", "empty"),
        ("noverifier.csv", "r,u\n1,1\n", "no verifier"),
        ("notbinary.csv", "r,u,v_a\n1,1,1\n1,0.5,1\n", "row 1: column 'u' is 0.5, not 0 or 1"),
        ("bank.txt", "r,u\n", ".parquet, .csv or .jsonl"),
    ];
    for (file, text, want) in cases {
        let p = dir.path().join(file);
        std::fs::write(&p, text).unwrap();
        let o = lucid(dir.path()).arg("audit").arg(&p).output().unwrap();
        assert!(!o.status.success(), "{file}");
        assert!(stderr(&o).contains(want) && stderr(&o).contains(file), "{file}: {}", stderr(&o));
    }
}

/// A verifier that left memories unscored (empty cells) is audited over the memories it scored,
/// with the count it skipped; a self-consistency column with gaps is read, not refused.
#[test]
fn unscored_memories_are_skipped_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("r,u,v_truthful,v_partial,sc\n");
    for i in 0..40 {
        let u = i % 2;
        let r = u8::from(u == 1 || i % 4 == 0);
        let partial = if i % 5 == 0 { String::new() } else { u.to_string() };
        let sc = if i % 7 == 0 { String::new() } else { format!("0.{}", i % 10) };
        csv.push_str(&format!("{r},{u},{u},{partial},{sc}\n"));
    }
    let path = dir.path().join("gaps.csv");
    std::fs::write(&path, csv).unwrap();
    let o = lucid(&dir.path().join("cache"))
        .args(["audit", path.to_str().unwrap(), "--format", "json", "--bootstrap", "100"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let row =
        |name: &str| v["tables"]["eia"].as_array().unwrap().iter().find(|r| r["verifier"] == name).unwrap().clone();
    assert_eq!((row("partial")["scored"].as_u64(), row("partial")["skipped"].as_u64()), (Some(32), Some(8)));
    assert_eq!((row("truthful")["scored"].as_u64(), row("truthful")["skipped"].as_u64()), (Some(40), Some(0)));
    assert!(v["tables"]["payoff"].as_array().unwrap().iter().any(|r| r["verifier"] == "partial"));
}

fn audit_csv(dir: &Path, name: &str, csv: &str, extra: &[&str]) -> Value {
    let path = dir.join(name);
    std::fs::write(&path, csv).unwrap();
    audit_json(dir, &path, &[&["--bootstrap", "100"], extra].concat())
}

/// Issue 33, item 1: a verifier that left one memory unscored is still audited over the whole
/// bank. On the shipped synthetic bank, blanking a `v_truthful` cell that does not flag leaves
/// K = 495, the selection and leave-one-seed-out as they were; blanking one that flags a trusted
/// memory gives K = 494 with the same selections; the tables say "1 unscored".
#[test]
fn one_unscored_cell_keeps_the_verifier_in_every_table() {
    let dir = tempfile::tempdir().unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/banks/synthetic.csv");
    let text = std::fs::read_to_string(&shipped).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (ri, vi) = (at("r"), at("v_truthful"));
    let find = |flag: bool| {
        (1..lines.len())
            .find(|&l| {
                let c: Vec<&str> = lines[l].split(',').collect();
                c[ri].parse::<f64>().unwrap() >= 0.5 && (c[vi].parse::<f64>().unwrap() < 0.5) == flag
            })
            .unwrap()
    };
    let (keeps, flags) = (find(false), find(true));
    let blank = |lines: &mut Vec<String>, l: usize| {
        let mut c: Vec<String> = lines[l].split(',').map(str::to_string).collect();
        c[vi] = String::new();
        lines[l] = c.join(",");
    };
    let mut base = None;
    for (name, line, k) in [("keeps.csv", keeps, 495), ("flags.csv", flags, 494)] {
        let mut edited = lines.clone();
        blank(&mut edited, line);
        let v = audit_csv(dir.path(), name, &(edited.join("\n") + "\n"), &[]);
        let t = row(&v, "eia", "verifier", "truthful");
        assert_eq!(
            (t["scored"].as_u64(), t["skipped"].as_u64(), &t["pass"]),
            (Some(1499), Some(1), &Value::Bool(true))
        );
        let p = row(&v, "payoff", "verifier", "truthful");
        assert_eq!((f(p, "demoted"), f(p, "unscored")), (k as f64, 1.0), "{p}");
        let before: Vec<&Value> = v["tables"]["payoff"].as_array().unwrap().iter().map(|r| &r["before"]).collect();
        assert!(before.windows(2).all(|w| w[0] == w[1]), "every payoff row shares one before: {before:?}");
        let sel = &v["tables"]["controls"][0];
        assert_eq!(sel["control"], format!("truthful (selected verifier), K = {k}"));
        assert!(sel["note"].as_str().unwrap().contains("1 unscored"), "{sel}");
        let folds: Vec<&Value> = v["tables"]["leave_one_seed_out"].as_array().unwrap().iter().take(3).collect();
        assert!(folds.iter().all(|f| f["selected"] == "truthful"), "{folds:?}");
        assert!(folds.iter().any(|f| f["note"].as_str().unwrap().contains("1 unscored by truthful")), "{folds:?}");
        if k == 495 {
            base = Some(v);
        }
    }
    // Blanking a cell that does not flag changes no demotion: the payoff is the one of the shipped bank.
    let shipped_v = audit_json(dir.path(), &shipped, &["--bootstrap", "100"]);
    let (a, b) = (
        row(&shipped_v, "payoff", "verifier", "truthful"),
        row(base.as_ref().unwrap(), "payoff", "verifier", "truthful"),
    );
    assert_eq!((&a["delta"], &a["demoted"]), (&b["delta"], &b["demoted"]));
}

/// Issue 33, item 5 (hand count): the self-consistency prune at K = 6 when only 4 trusted
/// memories have an sc demotes those 4 (all right), never the 6 without one.
#[test]
fn the_sc_prune_never_demotes_memories_without_sc() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("r,u,v_a,sc\n");
    for i in 0..10 {
        let sc = if i % 2 == 1 && i < 8 { format!("0.{i}") } else { String::new() };
        csv.push_str(&format!("1,{},{},{sc}\n", i % 2, u8::from(i >= 6)));
    }
    for i in 10..14 {
        csv.push_str(&format!("0,{},1,\n", i % 2));
    }
    let v = audit_csv(dir.path(), "sc.csv", &csv, &[]);
    let sc = row(&v, "controls", "control", "self-consistency prune");
    assert_eq!((f(sc, "demoted"), f(sc, "demoted_correct")), (4.0, 4.0), "{sc}");
    assert!(sc["note"].as_str().unwrap().contains("6 trusted without sc: never pruned"), "{sc}");
    assert_eq!(v["tables"]["controls"][0]["control"], "a (selected verifier), K = 6");
}

/// Issue 33, item 7: the budget sweep of a binary verifier samples its tied flags instead of
/// taking the earliest rows. The 40 flagged trusted memories put their 10 right ones first; at
/// 25 % of K = 40 the sweep demotes 10, of which 10 x 10 / 40 = 2.5 right in expectation
/// (hypergeometric; the mean of 200 draws has a standard error of 0.085), where row order gave 10.
#[test]
fn the_budget_sweep_breaks_ties_by_draws_not_row_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("r,u,v_a\n");
    for i in 0..40 {
        csv.push_str(&format!("1,{},0\n", u8::from(i < 10)));
    }
    for i in 0..40 {
        csv.push_str(&format!("{},{},1\n", u8::from(i < 20), u8::from(i % 2 == 0)));
    }
    let v = audit_csv(dir.path(), "ties.csv", &csv, &[]);
    let quarter = row(&v, "controls", "control", "a at 25 % of K");
    assert_eq!(f(quarter, "demoted"), 10.0);
    assert!((f(quarter, "demoted_correct") - 2.5).abs() < 0.5, "{quarter}");
    assert!(quarter["note"].as_str().unwrap().contains("tie"), "{quarter}");
    let random = row(&v, "controls", "control", "random prune at 25 % of K (mean of 200 seeded draws)");
    assert_eq!(f(random, "demoted"), 10.0, "random prunes at every share of K");
}

/// Issue 33, item 10: a constant verifier's Corr(V, U) is undefined (not about 1e-7), and it
/// fails EIA saying so, not "echoes the grader and barely tracks U".
#[test]
fn a_constant_verifier_is_undefined_not_an_echo() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("r,u,v_const,v_truth\n");
    for i in 0..30 {
        csv.push_str(&format!("{},{},0.7,{}\n", u8::from(i % 3 != 0), i % 2, i % 2));
    }
    let v = audit_csv(dir.path(), "const.csv", &csv, &[]);
    let c = row(&v, "eia", "verifier", "const");
    assert!(c["corr_v_u"].is_null(), "{c}");
    assert_eq!(c["pass"], false);
    assert!(c["failure"].as_str().unwrap().starts_with("undefined"), "{c}");
}

/// Issue 33, item 12 (hand count): a binary self-grade whose first trusted memory is wrong keeps
/// its two isotonic blocks (r = 0: mean U 1/3, r = 1: 3/4), so the gold-fit isotonic map ranks as
/// r does: AUC = (6 wins + 5 ties / 2) / 12 = 8.5 / 12.
#[test]
fn isotonic_keeps_two_blocks_when_the_first_trusted_memory_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let csv = "r,u,v_a\n1,0,1\n1,1,1\n1,1,1\n1,1,1\n0,0,1\n0,0,0\n0,1,1\n";
    let v = audit_csv(dir.path(), "iso.csv", csv, &[]);
    let iso = row(&v, "calibration", "map", "isotonic (gold-fit)");
    let identity = row(&v, "calibration", "map", "identity");
    assert!((f(iso, "auc") - 8.5 / 12.0).abs() < 1e-12, "{iso}");
    assert_eq!(iso["spearman"], identity["spearman"]);
    assert!(!iso["spearman"].is_null());
}

/// Issue 33, item 3 (hand count): with a `graded` column the grader table has the self-grade over
/// graded memories (leniency 3 of 4 wrong, sensitivity 3 of 3 right) and over the stored labels
/// (3 of 6, 3 of 4), each with the 3 ungraded beside it.
#[test]
fn ungraded_memories_count_once_as_stored_and_never_as_graded() {
    let dir = tempfile::tempdir().unwrap();
    let csv =
        "r,u,graded,v_a\n1,0,1,1\n1,0,1,0\n1,0,1,1\n0,0,1,0\n0,0,0,0\n0,0,0,1\n1,1,1,1\n1,1,1,1\n1,1,1,0\n0,1,0,1\n";
    let v = audit_csv(dir.path(), "graded.csv", csv, &[]);
    let g = v["tables"]["grader"].as_array().unwrap();
    assert_eq!(g.len(), 2);
    let pick = |i: usize| (f(&g[i], "leniency"), f(&g[i], "sensitivity"), f(&g[i], "ungraded"), f(&g[i], "memories"));
    assert_eq!(pick(0), (0.75, 1.0, 3.0, 7.0));
    assert_eq!(pick(1), (0.5, 0.75, 3.0, 10.0));
}

/// `lucid audit` on 60 questions under 3 seeds, each wrong question trusted under every seed or
/// under none: with a `question_id` column the grader's leniency interval is the clustered Wilson
/// interval over the questions (`cluster_wilson`, as `grader.sql`'s pooled rows give it), wider
/// than Wilson's over the 180 memories, and the payoff's bootstrap resamples questions (a wider
/// interval around the same Delta); question ids that never repeat change no table.
#[test]
fn repeated_questions_cluster_the_intervals_and_the_bootstrap() {
    use lucid::analysis::clusters::cluster_wilson;
    use lucid::analysis::stats::{Z95, wilson};
    let dir = tempfile::tempdir().unwrap();
    // (r, u, v_a) of question q under seed s: u and v_a by question, r by question where u = 0.
    let memory = |q: usize, s: usize| {
        let u = u8::from(!q.is_multiple_of(3));
        let r = if u == 0 { u8::from((q / 3) % 5 < 3) } else { u8::from(!(q + s).is_multiple_of(7)) };
        (r, u, if q.is_multiple_of(11) { 1 - u } else { u })
    };
    let bank = |name: &str, id: &dyn Fn(usize, usize) -> Option<usize>| {
        let mut text = String::from(if id(0, 0).is_some() { "question_id,seed,r,u,v_a\n" } else { "seed,r,u,v_a\n" });
        for s in 0..3 {
            for q in 0..60 {
                let (r, u, v) = memory(q, s);
                let key = id(q, s).map_or(String::new(), |i| format!("{i},"));
                text.push_str(&format!("{key}{s},{r},{u},{v}\n"));
            }
        }
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        audit_json(dir.path(), &path, &["--bootstrap", "500"])
    };
    let (clustered, distinct, plain) = (
        bank("questions.csv", &|q, _| Some(q)),
        bank("distinct.csv", &|q, s| Some(60 * s + q)),
        bank("plain.csv", &|_, _| None),
    );
    // The wrong questions as clusters: (memories, trusted ones); 12 of 20 trusted under all seeds.
    let clusters: Vec<(f64, f64)> =
        (0..60).filter(|q| q % 3 == 0).map(|q| (3.0, 3.0 * f64::from(memory(q, 0).0))).collect();
    let sum_sq: f64 = clusters.iter().map(|c| c.1).sum();
    assert_eq!(sum_sq, 36.0);
    let (lo, hi) = cluster_wilson(&clusters, sum_sq, Z95).unwrap();
    let (plo, phi) = wilson(36.0, 60.0, Z95).unwrap();
    let g = &clustered["tables"]["grader"][0];
    assert!((f(g, "leniency") - 0.6).abs() < 1e-12, "{g}");
    assert!(
        (f(g, "leniency_lo") - lo).abs() < 1e-12 && (f(g, "leniency_hi") - hi).abs() < 1e-12,
        "{g} vs [{lo}, {hi}]"
    );
    assert!(hi - lo > 1.4 * (phi - plo), "clustered [{lo}, {hi}] vs Wilson [{plo}, {phi}]");
    let p = &plain["tables"]["grader"][0];
    assert!((f(p, "leniency_lo") - plo).abs() < 1e-12 && (f(p, "leniency_hi") - phi).abs() < 1e-12, "{p}");
    // The payoff: the same Delta, its interval from resampled questions wider than from memories.
    let (pc, pp) = (row(&clustered, "payoff", "verifier", "a"), row(&plain, "payoff", "verifier", "a"));
    assert_eq!(pc["delta"], pp["delta"]);
    let width = |r: &Value| f(r, "hi") - f(r, "lo");
    assert!(width(pc) > 1.25 * width(pp), "questions {pc} vs memories {pp}");
    // Ids that never repeat: every memory its own cluster, every table as without the column.
    assert_eq!(distinct["tables"], plain["tables"]);
}
