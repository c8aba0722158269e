//! The tool-use domain: lucid's port of BFCL's decoder and AST checker gives BFCL's own verdict
//! (and `error_type`) on every recorded prediction of every single-turn task — BFCL's code run
//! beside it by `src/domains/tools/data/check.py`, on predictions that are right, wrong in each
//! way its checker tells apart, raw replies in every form its decoder accepts or refuses, and the
//! offline models' real replies (`tests/fixtures/tools/replies.jsonl`); the `contract` channel
//! never reads gold and fires on what breaks a function document; the loop through every arm
//! with a planted model, its channel and U as the rules say, and no possible answer nor category
//! in any request.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;

use lucid::domains::tools::bfcl_reader::BfclReader;
use lucid::domains::tools::value::Py;
use lucid::domains::tools::{checker, contract, data, sources};
use serde_json::Value as Json;

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::probes::{Probe, require};
use crate::support::study::project_with_models;

/// The unpacked wheel.
fn package() -> std::path::PathBuf {
    data::package_dir(&lucid::cache_dir::cache_dir()).unwrap()
}

/// Every single-turn task by BFCL id: (category, function documents, ground truth).
fn tasks(dir: &Path) -> HashMap<String, (String, Json, Json)> {
    let mut out = HashMap::new();
    for category in sources::CATEGORIES {
        let (tasks, gold) = sources::read(dir, category).unwrap();
        for (t, g) in tasks.into_iter().zip(gold) {
            let functions = serde_json::from_str(&t.functions).unwrap();
            out.insert(t.task_id, (t.category, functions, serde_json::from_str(&g.ground_truth).unwrap()));
        }
    }
    out
}

fn jsonl(path: &Path) -> Vec<Json> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Run `src/domains/tools/data/check.py` (BFCL's own evaluator) with `args` in `dir`.
fn check_py(dir: &Path, args: &[&str]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/domains/tools/data/check.py");
    let o = Command::new("python3")
        .current_dir(dir)
        .arg(&script)
        .arg("--package")
        .arg(package())
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "check.py {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// lucid's verdict on a prediction record: `{output: [...]}` (decoded calls) or `{raw: text}`
/// (read as the domain's scoring reads it).
fn lucid_verdict(reader: &BfclReader, record: &Json, functions: &Json, truth: &Json, category: &str) -> (bool, String) {
    let decoded = match (&record["output"], record["raw"].as_str()) {
        (_, Some(raw)) => reader.decode(raw),
        (Json::Array(_), _) => match Py::from_json(&record["output"]) {
            Py::List(items) => Ok(items),
            _ => unreachable!(),
        },
        _ => panic!("a record without output or raw: {record}"),
    };
    let decoded = decoded.ok();
    match checker::evaluate(functions, decoded.as_deref(), truth, category) {
        Ok(v) => (v.valid, v.error_type),
        Err(raised) => (false, format!("raised: {raised}")),
    }
}

/// Values lucid's `Py` does not hold (an int past 128 bits, a complex, bytes): BFCL's checker calls
/// them wrong by type or value, lucid's reading refuses them (wrong too, error type `decode`).
const VALUES_LUCID_DOES_NOT_HOLD: &[&str] =
    &["reader_int:big", "reader_int:complex", "reader_str:bytes_prefix", "reader_float:power_half"];

/// Replies of each variant that only BFCL's decoder reads, read in the fixed sample.
const SAMPLE_PER_VARIANT: usize = 3;

#[test]
fn the_checker_gives_bfcls_verdict_on_every_recorded_prediction() {
    if !require(Probe::Tools) || !require(Probe::Python) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    check_py(d, &["generate", "--out", "generated.jsonl"]);
    let mut records = jsonl(&d.join("generated.jsonl"));
    let replies = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tools/replies.jsonl");
    let real = jsonl(&replies);
    assert!(real.len() >= 100, "the recorded model replies: {}", real.len());
    records.extend(real);
    let all: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(d.join("predictions.jsonl"), all).unwrap();
    check_py(d, &["verdict", "--predictions", "predictions.jsonl", "--out", "verdicts.jsonl"]);
    let verdicts = jsonl(&d.join("verdicts.jsonl"));
    assert_eq!(verdicts.len(), records.len());

    let tasks = tasks(&package());
    // A reply lucid's own reader refuses is read by BFCL's decoder in the sandbox, as scoring
    // reads it. Where BFCL's decoder fails too they agree already; the rest (replies BFCL reads
    // with `eval`: `abs(x) + 1`, `'%s' % s`, ...; one sandbox process each) are all read under
    // LUCID_REFEREE=all (`just bench-referees`), a fixed sample of each variant otherwise.
    let reader = BfclReader::new(Some(&lucid::cache_dir::cache_dir()));
    let all = std::env::var("LUCID_REFEREE").is_ok_and(|v| v == "all");
    let mut sampled = BTreeMap::<String, usize>::new();
    let mut unread = 0;
    let keep: Vec<bool> = records
        .iter()
        .zip(&verdicts)
        .map(|(r, bfcl)| {
            let Some(raw) = r["raw"].as_str() else { return true };
            if lucid::domains::tools::calls::decode(raw).is_ok() || bfcl["error_type"] == "decode" || all {
                return true;
            }
            let n = sampled.entry(r["variant"].as_str().unwrap_or("").to_string()).or_default();
            *n += 1;
            let keep = *n <= SAMPLE_PER_VARIANT;
            unread += usize::from(!keep);
            keep
        })
        .collect();
    let to_read: Vec<&str> =
        records.iter().zip(&keep).filter(|(_, k)| **k).filter_map(|(r, _)| r["raw"].as_str()).collect();
    reader.prepare(&to_read);
    let (mut differ, mut by_variant) = (Vec::new(), BTreeMap::<String, [usize; 2]>::new());
    let mut differ_by_variant = BTreeMap::<String, usize>::new();
    let mut gaps = BTreeMap::<String, usize>::new();
    for ((record, bfcl), _) in records.iter().zip(&verdicts).zip(&keep).filter(|(_, k)| **k) {
        let id = record["id"].as_str().unwrap();
        let (category, functions, truth) = &tasks[id];
        let (valid, error_type) = lucid_verdict(&reader, record, functions, truth, category);
        let theirs = (bfcl["valid"].as_bool().unwrap(), bfcl["error_type"].as_str().unwrap_or("").to_string());
        let variant = record["variant"].as_str().unwrap_or("").split(':').next().unwrap_or("").to_string();
        by_variant.entry(variant).or_default()[usize::from(valid)] += 1;
        // A right prediction has no error type on either side.
        let (ours, bfcls) = (
            (valid, if valid { String::new() } else { error_type.clone() }),
            (theirs.0, if theirs.0 { String::new() } else { theirs.1.clone() }),
        );
        let variant_name = record["variant"].as_str().unwrap_or("");
        if ours != bfcls && !valid && !theirs.0 && VALUES_LUCID_DOES_NOT_HOLD.contains(&variant_name) {
            *gaps.entry(variant_name.to_string()).or_default() += 1;
            continue;
        }
        if ours != bfcls {
            let count = differ_by_variant.entry(record["variant"].as_str().unwrap_or("").to_string()).or_default();
            *count += 1;
            if *count <= 2 {
                differ.push(format!(
                    "{id} {}: lucid {valid} {error_type}, BFCL {} {}",
                    record["variant"], theirs.0, theirs.1
                ));
            }
        }
    }
    eprintln!(
        "{} predictions ({} real replies) over {} tasks; {} compared, {unread} replies BFCL reads with eval outside the sample (LUCID_REFEREE=all reads them)",
        records.len(),
        jsonl(&replies).len(),
        tasks.len(),
        records.len() - unread
    );
    for (variant, [wrong, right]) in &by_variant {
        eprintln!("  {variant:<40} right {right:>6}  wrong {wrong:>6}");
    }
    eprintln!("same verdict (wrong), another error type, a value lucid does not hold: {gaps:?}");
    assert!(
        differ.is_empty(),
        "{} verdicts differ from BFCL's, by variant {differ_by_variant:?}; e.g.:\n{}",
        differ_by_variant.values().sum::<usize>(),
        differ[..differ.len().min(60)].join("\n")
    );
    assert!(records.len() > 100_000);
}

#[test]
fn the_contract_reads_the_documents_and_fires_on_what_breaks_them() {
    if !require(Probe::Tools) || !require(Probe::Python) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    check_py(dir.path(), &["generate", "--out", "generated.jsonl"]);
    let tasks = tasks(&package());
    // Per variant: [kept, broke] the contract.
    let mut count: BTreeMap<String, [usize; 2]> = BTreeMap::new();
    for r in jsonl(&dir.path().join("generated.jsonl")) {
        let Py::List(calls) = Py::from_json(&r["output"]) else { continue };
        let (_, functions, _) = &tasks[r["id"].as_str().unwrap()];
        let variant = r["variant"].as_str().unwrap().to_string();
        count.entry(variant).or_default()[usize::from(contract::breach_calls(functions, &calls).is_some())] += 1;
    }
    eprintln!("contract [kept, broke] by variant: {count:#?}");
    // BFCL's own right answers keep their documents' contract, but for a handful whose gold
    // breaks its own document (a parameter it does not have, a value outside its enum).
    let [kept, broke] = count["right"];
    assert!(kept > 2300 && broke * 100 < kept, "right answers: {kept} kept, {broke} broke the contract");
    // What breaks a document breaks it on every task.
    for variant in [
        "wrong_func_name",
        "missing_required",
        "str_as_int",
        "int_as_str",
        "bool_as_str",
        "float_as_str",
        "list_item_str_as_int",
    ] {
        let [kept, broke] = count[variant];
        assert!(kept == 0 && broke > 0, "{variant}: {kept} kept the contract, {broke} broke it");
    }
}

/// Per request: the planted reply, U, and whether `contract` fires.
const PLANTED: &[(&str, &str, u8, bool)] = &[
    (
        "Find the area of a triangle with a base of 10 units and height of 5 units.",
        "[calculate_triangle_area(base=10, height=5)]",
        1,
        false,
    ),
    ("Calculate the factorial of 5 using math functions.", "[math.factorial(number='5')]", 0, true),
    (
        "Calculate the area of a triangle given the base is 10 meters and height is 5 meters.",
        "None of the functions can be used: they compute a body mass index.",
        1,
        false,
    ),
    (
        "Solve the quadratic equation with coefficients a = 1, b = 2, and c = 3.",
        "[math.sum(numbers=[1.0, 2.0, 3.0])]",
        0,
        false,
    ),
];

/// The planted model: a reply per request (the prompt's last line), every self-grade CORRECT.
fn planted(prompt: &str) -> String {
    if prompt.contains("VERDICT") {
        return "VERDICT: CORRECT".into();
    }
    let last = prompt.trim_end().lines().last().unwrap_or("").trim();
    PLANTED.iter().find(|p| p.0 == last).map_or("?", |p| p.1).into()
}

#[test]
fn the_tools_loop_runs_every_arm_and_never_shows_gold_or_category() {
    if !require(Probe::Tools) {
        return;
    }
    let server = FakeServer::start(vec![], Reply::func(planted));
    let dir = project_with_models();
    let d = dir.path();
    let bert = crate::support::tiny_models::write_tiny_bert(&d.join("bert"));
    let model = format!("{{backend: openai, model: planted, base_url: '{}/v1'}}", server.url);
    let agent = format!("{{domain: {{kind: tools}}, model: {model}, k: 2");
    let rows = crate::support::study::run_every_arm(
        d,
        "tools",
        "{source: bfcl, categories: [simple_python, irrelevance], per_topic: 2}",
        &agent,
        "",
        &bert,
        "SELECT e.arm, t.question, e.tool_calls, e.canonical, e.channels, e.flagged, e.stored_q, v.u \
         FROM episodes e JOIN tasks t USING (question_id) \
         JOIN evaluation v ON v.arm = e.arm AND v.seed = e.seed AND v.step = e.step",
    );
    assert_eq!(rows.len(), PLANTED.len() * 4 * 2);
    for r in &rows {
        let &(_, reply, u, breach) = PLANTED.iter().find(|p| p.0 == r["question"]).unwrap_or_else(|| panic!("{r}"));
        assert_eq!(r["tool_calls"], reply, "{r}");
        let contract = r["channels"].as_array().unwrap().iter().find(|c| c["name"] == "contract").unwrap();
        assert_eq!((&contract["fired"], &r["u"], &r["flagged"]), (&breach.into(), &u.into(), &breach.into()), "{r}");
        let want_q = match r["arm"].as_str().unwrap() {
            "lucid" => u8::from(!breach),
            "oracle" => u,
            _ => 1,
        };
        assert_eq!(r["stored_q"], want_q, "{r}");
    }
    let gold: Vec<String> = (0..2)
        .flat_map(|i| {
            let (_, g) = sources::read(&package(), "simple_python").unwrap();
            g.into_iter().nth(i).map(|g| g.ground_truth)
        })
        .collect();
    for r in server.requests() {
        let text: String = r.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["content"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            !text.contains("irrelevance") && !text.contains("simple_python"),
            "a category reached a prompt: {text}"
        );
        for g in &gold {
            assert!(!text.contains(g.as_str()), "gold reached a prompt: {text}");
        }
    }
}
