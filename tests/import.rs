//! `lucid import`: other agents' banks, each in its tool's own layout (`tests/fixtures/import/`,
//! cited in its SOURCES.md), become run folders the audit and the reports read; labels keep
//! their raw value and where they came from; truth from a gold file or a results log; nothing
//! dropped silently; inverted labels are reported as such.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{lucid, stderr, stdout};

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import").join(p)
}

/// `lucid import` in `dir` with `args`; its stdout.
fn import(dir: &Path, args: &[&str]) -> String {
    let o = lucid(&dir.join("cache")).current_dir(dir).arg("import").args(args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// Rows of `sql` over the run `runs/<run>`, each as its values joined by `|`.
fn rows(dir: &Path, run: &str, sql: &str) -> Vec<String> {
    let cell = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    crate::support::study::query_run(&dir.join("cache"), dir, &format!("runs/{run}"), sql)
        .iter()
        .map(|r| r.as_object().unwrap().values().map(cell).collect::<Vec<_>>().join("|"))
        .collect()
}

/// The manifest of `runs/<run>`, as compact JSON text.
fn manifest(dir: &Path, run: &str) -> String {
    let text = std::fs::read_to_string(dir.join(format!("runs/{run}/manifest.json"))).unwrap();
    serde_json::from_str::<Value>(&text).unwrap().to_string()
}

/// The audit's JSON tables of `runs/<run>`.
fn audit(dir: &Path, run: &str) -> Value {
    let o = lucid(&dir.join("cache"))
        .current_dir(dir)
        .args(["audit", &format!("runs/{run}"), "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn a_memento_bank_and_its_results_log_round_trip_with_counts_checked_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (bank, log, gold) = (
        fixture("memento/memory/memory.jsonl"),
        fixture("memento/result/result_parametric.jsonl"),
        fixture("memento/data/deepresearcher.jsonl"),
    );
    let out = import(
        d,
        &[
            "--preset",
            "memento",
            "--name",
            "m",
            "--log",
            log.to_str().unwrap(),
            "--gold",
            gold.to_str().unwrap(),
            bank.to_str().unwrap(),
        ],
    );
    assert!(out.contains("an LLM judge that read the reference answer"), "{out}");
    // 12 cases, 7 positive (by hand from the file); the raw label kept beside r.
    assert_eq!(
        rows(d, "m", "SELECT count(*), sum(r), count(DISTINCT raw_label), min(label_source) FROM episodes"),
        ["12|7|2|judge-with-gold"]
    );
    assert_eq!(
        rows(d, "m", "SELECT raw_label, min(r), max(r) FROM episodes GROUP BY raw_label ORDER BY raw_label"),
        ["negative|0|0", "positive|1|1"]
    );
    // The results log answers 7 of the 12 (its `query` is the bank's `case`); 5 have no answer,
    // so no truth: left out of `evaluation`, not scored 0.
    assert_eq!(rows(d, "m", "SELECT count(*), sum(u) FROM evaluation"), ["7|5"]);
    assert_eq!(
        rows(
            d,
            "m",
            "SELECT e.step, e.answer, v.u FROM episodes e JOIN evaluation v ON v.step = e.step WHERE v.u = 0 ORDER BY e.step"
        ),
        ["3|1298|0", "7|Greek|0"]
    );
    // "Greek" is not "Greek-American": the normalised match, like Memento's judge, says wrong.
    let a = audit(d, "m");
    let sanity = &a["tables"]["label_sanity"][0];
    assert_eq!(sanity["label_source"], "judge-with-gold");
    assert_eq!(sanity["counts"], serde_json::json!([5, 0, 0, 2]));
    assert_eq!(sanity["verdict"], "labels carry signal");
}

#[test]
fn an_answer_that_normalises_to_nothing_is_scored_through_its_aliases() {
    // Memento's non-parametric bank: the Moonraker question's gold is the emoji "🌉" with aliases
    // ("bridge", ...), and the agent answered "Bridge".
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (bank, log, gold) = (
        fixture("memento/memory/dummy_memo.jsonl"),
        fixture("memento/result/result_round_0.jsonl"),
        fixture("memento/data/deepresearcher.jsonl"),
    );
    import(
        d,
        &[
            "--preset",
            "memento-reward",
            "--name",
            "np",
            "--log",
            log.to_str().unwrap(),
            "--gold",
            gold.to_str().unwrap(),
            bank.to_str().unwrap(),
        ],
    );
    assert_eq!(
        rows(
            d,
            "np",
            "SELECT e.answer, g.answer AS gold, v.u, v.verdict FROM episodes e JOIN tasks t ON t.question_id = e.question_id \
             JOIN gold g ON g.question_id = e.question_id JOIN evaluation v ON v.step = e.step WHERE t.question LIKE '%Moonraker%'"
        ),
        ["Bridge|🌉|1|match"]
    );
    let manifest = manifest(d, "np");
    assert!(manifest.contains("\"answers_scored_by_aliases\":2"), "{manifest}");
}

#[test]
fn a_reasoningbank_bank_reads_its_answers_and_can_be_read_inverted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bank = fixture("reasoningbank/memories_reasoningbank/shopping.jsonl");
    import(d, &["--preset", "reasoningbank", "--name", "rb", bank.to_str().unwrap()]);
    // 8 trajectories, 5 success; the answer is the last action's send_msg_to_user argument.
    assert_eq!(rows(d, "rb", "SELECT count(*), sum(r), min(label_source) FROM episodes"), ["8|5|judge"]);
    assert_eq!(rows(d, "rb", "SELECT source_id, answer FROM episodes WHERE step = 0"), ["117|3/2/22"]);
    // No truth given: no gold, no evaluation.
    assert!(!d.join("runs/rb/evaluation").exists());
    import(d, &["--preset", "reasoningbank", "--name", "rbi", "--invert-labels", bank.to_str().unwrap()]);
    assert_eq!(
        rows(d, "rbi", "SELECT sum(r), min(raw_label) FROM episodes WHERE raw_label = 'success'"),
        ["0|success"]
    );
}

#[test]
fn unlabelled_banks_are_imported_every_memory_trusted_and_said_so() {
    for (preset, file, first) in [
        ("mem0", "mem0/get_all.json", None),
        ("langmem", "langmem/store_items.json", Some("The user asked: What is the capital of Burkina Faso?")),
        ("amem", "amem/notes.json", None),
        ("letta", "letta/archival_memory.json", None),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let out = import(d, &["--preset", preset, "--name", "b", fixture(file).to_str().unwrap()]);
        assert!(out.contains("no label: every memory is stored trusted (r = 1)"), "{preset}: {out}");
        assert_eq!(
            rows(d, "b", "SELECT count(*), sum(r), count(raw_label), min(label_source) FROM episodes"),
            ["6|6|0|unlabelled"],
            "{preset}"
        );
        // Every memory's text is its question (no memory left out for a missing field).
        assert_eq!(rows(d, "b", "SELECT count(*) FROM tasks WHERE length(question) > 0"), ["6"], "{preset}");
        if let Some(q) = first {
            assert_eq!(rows(d, "b", &format!("SELECT count(*) FROM tasks WHERE question = '{q}'")), ["1"], "{preset}");
        }
    }
}

#[test]
fn a_generic_csv_maps_its_fields_and_labels_and_refuses_what_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bank.csv"), "qid,q,out,verdict\n1,What is the capital of France?,Paris,yes\n2,What is 2 + 2?,5,yes\n3,Who wrote Hamlet?,Shakespeare,no\n").unwrap();
    std::fs::write(d.join("gold.jsonl"), "{\"id\": \"1\", \"question\": \"What is the capital of France?\", \"answer\": \"Paris\"}\n{\"id\": \"2\", \"question\": \"What is 2 + 2?\", \"answer\": \"4\", \"aliases\": \"four|IV\"}\n").unwrap();
    let base = [
        "--preset",
        "generic",
        "--field",
        "question=q",
        "--field",
        "answer=out",
        "--field",
        "label=verdict",
        "--field",
        "id=qid",
        "--label-source",
        "self-graded",
    ];
    let with = |extra: &[&str]| base.iter().chain(extra).map(|s| s.to_string()).collect::<Vec<String>>();
    let args = with(&[
        "--label",
        "yes=1",
        "--label",
        "no=0",
        "--gold",
        "gold.jsonl",
        "--match-on",
        "id",
        "--alias-separator",
        "|",
        "--name",
        "g",
        "bank.csv",
    ]);
    import(d, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        rows(
            d,
            "g",
            "SELECT e.source_id, e.r, v.u FROM episodes e JOIN evaluation v ON v.step = e.step ORDER BY e.step"
        ),
        ["1|1|1", "2|1|0"]
    );
    // The third has no gold: counted in the manifest, not scored.
    let manifest = manifest(d, "g");
    assert!(manifest.contains("\"without_truth\":1"), "{manifest}");
    // A label value nobody mapped names the file and the row.
    let o = lucid(&d.join("cache"))
        .current_dir(d)
        .arg("import")
        .args(with(&["--label", "yes=1", "--name", "bad", "bank.csv"]))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("bank.csv") && stderr(&o).contains("line 3: label value 'no' is not mapped"),
        "{}",
        stderr(&o)
    );
    // A duplicate id too.
    std::fs::write(d.join("dup.csv"), "qid,q,out,verdict\n1,a?,x,yes\n1,b?,y,no\n").unwrap();
    let o = lucid(&d.join("cache"))
        .current_dir(d)
        .arg("import")
        .args(with(&["--label", "yes=1", "--label", "no=0", "--name", "dup", "dup.csv"]))
        .output()
        .unwrap();
    assert!(
        !o.status.success() && stderr(&o).contains("line 2: id `1` appears twice (first on line 1)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_bank_whose_labels_are_inverted_is_reported_as_such() {
    // ReasoningBank's released fault, planted: every right answer stored as a failure and every
    // wrong one as a success (40 memories, half right).
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (mut bank, mut gold) = (String::new(), String::new());
    for i in 0..40 {
        let right = i % 2 == 0;
        let answer = if right { format!("{i}") } else { "no idea".into() };
        let status = if right { "fail" } else { "success" };
        bank.push_str(&format!("{{\"task_id\": \"{i}\", \"query\": \"What is {i}?\", \"action_list\": [\"send_msg_to_user('{answer}')\"], \"status\": \"{status}\"}}\n"));
        gold.push_str(&format!("{{\"id\": \"{i}\", \"question\": \"What is {i}?\", \"answer\": \"{i}\"}}\n"));
    }
    std::fs::write(d.join("bank.jsonl"), bank).unwrap();
    std::fs::write(d.join("gold.jsonl"), gold).unwrap();
    import(
        d,
        &["--preset", "reasoningbank", "--gold", "gold.jsonl", "--match-on", "id", "--name", "inv", "bank.jsonl"],
    );
    let a = audit(d, "inv");
    let s = &a["tables"]["label_sanity"][0];
    assert_eq!(s["verdict"], "labels look inverted", "{s}");
    assert_eq!(s["counts"], serde_json::json!([0, 20, 20, 0]));
    assert!(s["hi"].as_f64().unwrap() < 0.0);
    // Read the right way round, the same bank carries signal.
    import(
        d,
        &[
            "--preset",
            "reasoningbank",
            "--gold",
            "gold.jsonl",
            "--match-on",
            "id",
            "--invert-labels",
            "--name",
            "fixed",
            "bank.jsonl",
        ],
    );
    assert_eq!(audit(d, "fixed")["tables"]["label_sanity"][0]["verdict"], "labels carry signal");
}

/// `pipelines/import.yaml` as shipped (the bank of `data/banks/memento/`, the bundled evidence
/// corpus), its two judges answered by the scripted backend instead of SmolLM2 (the debug build
/// runs the local model too slowly for a test): every stage runs, and the audit reads the
/// import's provenance, its truth and all four verifiers.
#[test]
fn the_import_pipeline_runs_from_bank_to_audit() {
    if !crate::support::probes::require(crate::support::probes::Probe::Facts) {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let models = lucid::model_files::models_dir(&lucid::cache_dir::cache_dir());
    std::os::unix::fs::symlink(&models, cache.join("models")).unwrap();
    let mut cmd = lucid(&cache);
    cmd.current_dir(root)
        .args(["run", "pipelines/import.yaml", "--quiet", "--set"])
        .arg(format!("runs_dir={}", dir.path().join("runs").display()));
    cmd.args(["--set", "stages.resample.config.model={backend: scripted}"]);
    for judge in ["regrade", "adversarial"] {
        cmd.args(["--set", &format!("stages.{judge}.config.model={{backend: scripted}}")]);
        cmd.args(["--set", &format!("stages.{judge}.config.decoding={{max_tokens: 8}}")]);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let run = dir.path().join("runs/import");
    let manifest = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    assert!(manifest.contains("re_asked"), "the resample stage says its questions were re-asked");
    let json: Value = {
        let b = lucid::table::read_parquet(&run.join("audit_label_sanity/all.parquet")).unwrap();
        let rows = lucid::runs::sql_over(&[("t".into(), b)], "SELECT label_source, memories, verdict FROM t").unwrap();
        let text = arrow::util::pretty::pretty_format_batches(&[rows]).unwrap().to_string();
        Value::String(text)
    };
    let text = json.as_str().unwrap();
    assert!(
        text.contains("judge-with-gold") && text.contains("| 7 ") && text.contains("labels carry signal"),
        "{text}"
    );
    let eia = lucid::table::read_parquet(&run.join("audit_eia/all.parquet")).unwrap();
    let rows =
        lucid::runs::sql_over(&[("t".into(), eia)], "SELECT verifier FROM t WHERE kind = 'verifier' ORDER BY verifier")
            .unwrap();
    let names = arrow::util::pretty::pretty_format_batches(&[rows]).unwrap().to_string();
    for v in ["adversarial", "evidence", "panel", "regrade", "resample"] {
        assert!(names.contains(v), "{v} missing from the EIA rows:\n{names}");
    }
}

/// A bank with no truth cannot be audited for inflation, but its labels are checked against
/// every verifier that scored it: a planted ReasoningBank-layout bank whose labels are reversed,
/// and a judge that is right every time, disagree on every memory — reported as inverted.
#[test]
fn without_truth_inverted_labels_are_caught_by_the_verifiers() {
    use crate::support::fake_server::{FakeServer, Reply};
    // CORRECT exactly when the answer is the number the question asks about.
    let judge = |p: &str| -> String {
        let q = p.rsplit("Question: What is ").next().unwrap_or("");
        let asked = q.split('?').next().unwrap_or("").trim();
        let answer = q.split("Answer:").nth(1).and_then(|a| a.lines().next()).unwrap_or("").trim();
        if !asked.is_empty() && answer == asked { "VERDICT: CORRECT".into() } else { "VERDICT: INCORRECT".into() }
    };
    let server = FakeServer::start(vec![], Reply::func(judge));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut bank = String::new();
    for i in 0..30 {
        let right = i % 3 != 0;
        let answer = if right { format!("{i}") } else { "no idea".into() };
        let status = if right { "fail" } else { "success" };
        bank.push_str(&format!("{{\"task_id\": \"{i}\", \"query\": \"What is {i}?\", \"action_list\": [\"send_msg_to_user('{answer}')\"], \"status\": \"{status}\"}}\n"));
    }
    std::fs::write(d.join("bank.jsonl"), bank).unwrap();
    let prompt = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/judges/regrade.txt");
    let yaml = format!(
        "name: nt
seeds: [0]
arms: [reasoningbank]
stages:
  - id: bank
    kind: import
    matrix: [seed, arm]
    config: {{preset: reasoningbank, bank: bank.jsonl}}
  - id: judge
    kind: judge
    matrix: [seed, arm]
    inputs: [tasks, episodes]
    config: {{model: {{backend: openai, model: j, base_url: '{}/v1'}}, prompt: '{}', decoding: {{max_tokens: 8}}}}
",
        server.url,
        prompt.display()
    );
    std::fs::write(d.join("nt.yaml"), yaml).unwrap();
    let o = lucid(&d.join("cache")).current_dir(d).args(["run", "nt.yaml", "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = lucid(&d.join("cache")).current_dir(d).args(["audit", "runs/nt", "--format", "json"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let t = &v["no_truth"];
    assert!(t["verdict"].as_str().unwrap().starts_with("labels look inverted"), "{t}");
    assert_eq!(t["label_source"], "judge");
    assert_eq!(
        (
            t["agreement"][0]["verifier"].as_str(),
            t["agreement"][0]["scored"].as_i64(),
            t["agreement"][0]["agree"].as_i64()
        ),
        (Some("judge"), Some(30), Some(0))
    );
    // The Markdown says why the inflation tables are missing, and offers the ways to get truth:
    // hand labels first (the path every bank has), then the import's own flags.
    let o = lucid(&d.join("cache")).current_dir(d).args(["audit", "runs/nt"]).output().unwrap();
    let md = stdout(&o);
    assert!(
        md.contains("lucid audit runs/nt --sample 50") && md.contains("`--log`") && md.contains("`--gold`"),
        "{md}"
    );
    // --out writes it, and --format html renders it, instead of being ignored.
    let out = d.join("nt-audit");
    let o = lucid(&d.join("cache"))
        .current_dir(d)
        .args(["audit", "runs/nt", "--format", "html", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success() && stdout(&o).starts_with("<!doctype html>"), "{}", stderr(&o));
    for f in ["no_truth.md", "no_truth.json", "no_truth.html"] {
        assert!(out.join(f).is_file(), "{f}");
    }
}

#[test]
fn a_gold_row_written_twice_counts_once_and_conflicting_gold_leaves_its_memories_unscored() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("bank.jsonl"),
        concat!(
            r#"{"q": "What is 2 + 2?", "out": "4", "verdict": "correct"}"#,
            "\n",
            r#"{"q": "Who wrote Hamlet?", "out": "Shakespeare", "verdict": "correct"}"#,
            "\n",
            r#"{"q": "What is the capital of France?", "out": "Lyon", "verdict": "incorrect"}"#,
            "\n",
        ),
    )
    .unwrap();
    // 2 + 2 written twice with the same answer (counted once); Hamlet with two different answers.
    std::fs::write(
        d.join("gold.jsonl"),
        concat!(
            r#"{"question": "What is 2 + 2?", "answer": "4"}"#,
            "\n",
            r#"{"question": "Who wrote Hamlet?", "answer": "Shakespeare"}"#,
            "\n",
            r#"{"question": "What is 2 + 2?", "answer": "4"}"#,
            "\n",
            r#"{"question": "Who wrote Hamlet?", "answer": "Marlowe"}"#,
            "\n",
            r#"{"question": "What is the capital of France?", "answer": "Paris"}"#,
            "\n",
        ),
    )
    .unwrap();
    let o = lucid(&d.join("cache"))
        .current_dir(d)
        .arg("import")
        .args(["--preset", "generic", "--field", "question=q", "--field", "answer=out", "--field", "label=verdict"])
        .args(["--gold", "gold.jsonl", "--name", "g", "bank.jsonl"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    // The ambiguous question is named with its lines, and its memory left unscored (not scored 0).
    assert!(
        err.contains("`Who wrote Hamlet?` (lines 2, 4)") && err.contains("1 of 3 memories are left unscored"),
        "{err}"
    );
    assert_eq!(
        rows(d, "g", "SELECT e.step, v.u FROM episodes e JOIN evaluation v ON v.step = e.step ORDER BY e.step"),
        ["0|1", "2|0"]
    );
    assert_eq!(rows(d, "g", "SELECT count(*) FROM gold"), ["2"]);
    let manifest = manifest(d, "g");
    assert!(
        manifest.contains("\"unscored_by_ambiguous_gold\":1") && manifest.contains("\"Who wrote Hamlet?\":[2,4]"),
        "{manifest}"
    );
}

#[test]
fn a_reasoningbank_record_that_sends_no_message_has_no_answer_and_escapes_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("bank.jsonl"),
        concat!(
            r#"{"task_id": "a", "query": "Q a?", "action_list": ["click('1')", "stop()"], "status": "success"}"#,
            "\n",
            r#"{"task_id": "b", "query": "Q b?", "action_list": ["send_msg_to_user('it\\'s 4')"], "status": "success"}"#,
            "\n",
            r#"{"task_id": "c", "query": "Q c?", "action_list": ["send_msg_to_user(\"5\")", "stop()"], "status": "fail"}"#,
            "\n",
        ),
    )
    .unwrap();
    let gold: String = [("a", "x"), ("b", "it's 4"), ("c", "5")]
        .iter()
        .map(|(id, a)| format!("{{\"id\": \"{id}\", \"question\": \"Q {id}?\", \"answer\": \"{a}\"}}\n"))
        .collect();
    std::fs::write(d.join("gold.jsonl"), gold).unwrap();
    import(d, &["--preset", "reasoningbank", "--gold", "gold.jsonl", "--match-on", "id", "--name", "rb", "bank.jsonl"]);
    // a never answered (its last action `stop()` is no answer); b's quote keeps no backslash; c's
    // answer is its message, though an action follows it.
    assert_eq!(
        rows(d, "rb", "SELECT source_id, coalesce(answer, '-') AS answer FROM episodes ORDER BY step"),
        ["a|-", "b|it's 4", "c|5"]
    );
    // Without an answer a has no truth: unscored and counted, not scored 0.
    assert_eq!(
        rows(d, "rb", "SELECT e.source_id, v.u FROM episodes e JOIN evaluation v ON v.step = e.step ORDER BY e.step"),
        ["b|1", "c|1"]
    );
    let manifest = manifest(d, "rb");
    assert!(manifest.contains("\"without_truth\":1"), "{manifest}");
}

#[test]
fn errors_name_the_users_file_its_line_and_flag_never_the_pipeline_behind_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bank = fixture("memento/memory/memory.jsonl");
    std::fs::write(
        d.join("gold.jsonl"),
        "{\"question\": \"q?\", \"ground_truth\": \"a\"}\n{\"question\": \"r?\", \"ground_truth\": \"\"}\n",
    )
    .unwrap();
    let import_with = |extra: &[&str]| {
        let o = lucid(&d.join("cache"))
            .current_dir(d)
            .arg("import")
            .args(["--preset", "memento", "--name", "m"])
            .args(extra)
            .arg(&bank)
            .output()
            .unwrap();
        assert!(!o.status.success());
        stderr(&o)
    };
    // A bad row of the gold file: the flag, the file as typed, the line.
    let e = import_with(&["--gold", "gold.jsonl"]);
    assert!(e.contains("--gold gold.jsonl: line 2: the answer is empty"), "{e}");
    assert!(!e.contains(".yaml") && !e.contains("bank[") && !e.contains("stage 'bank'"), "{e}");
    // A file that is not there, before anything runs.
    let e = import_with(&["--log", "nope.jsonl"]);
    assert!(e.contains("--log nope.jsonl: no such file"), "{e}");
    assert!(!e.contains(".yaml") && !e.contains("stage 'bank'"), "{e}");
    // An unknown preset is the flag's.
    let o = lucid(&d.join("cache"))
        .current_dir(d)
        .args(["import", "--preset", "memory", "--name", "m"])
        .arg(&bank)
        .output()
        .unwrap();
    assert!(!o.status.success() && stderr(&o).contains("--preset: unknown preset 'memory'"), "{}", stderr(&o));
}

#[test]
fn the_help_lists_every_preset() {
    let dir = tempfile::tempdir().unwrap();
    let o = lucid(dir.path()).args(["import", "--help"]).output().unwrap();
    let help = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    for p in lucid::import::presets::all() {
        assert!(help.contains(p.name), "--help omits the preset {}:\n{help}", p.name);
    }
}

#[test]
fn a_bank_that_is_not_utf8_names_its_line_and_a_byte_order_mark_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let row = |q: &str| format!("{{\"case\": \"{q}\", \"plan\": \"p\", \"case_label\": \"positive\"}}\n");
    // A byte-order mark (as some Windows editors write it) before the first record is skipped.
    std::fs::write(d.join("bom.jsonl"), format!("\u{feff}{}{}", row("a?"), row("b?"))).unwrap();
    import(d, &["--preset", "memento", "--name", "bom", "bom.jsonl"]);
    assert_eq!(rows(d, "bom", "SELECT count(*) FROM episodes"), ["2"]);
    // A Latin-1 byte on line 2: the file and the line.
    let mut bytes = row("a?").into_bytes();
    bytes.extend_from_slice(b"{\"case\": \"caf\xe9?\", \"plan\": \"p\", \"case_label\": \"positive\"}\n");
    std::fs::write(d.join("latin1.jsonl"), bytes).unwrap();
    let o = lucid(&d.join("cache"))
        .current_dir(d)
        .args(["import", "--preset", "memento", "--name", "l1", "latin1.jsonl"])
        .output()
        .unwrap();
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("latin1.jsonl: line 2: byte 0xe9 is not UTF-8"), "{e}");
}

#[test]
fn a_memento_bank_with_repeated_questions_is_audited_by_its_log_or_by_hand() {
    // Memento's layout, as its real question file has it: a question repeated with the same
    // answer and one repeated with two different answers (PopQA's "Who was the director of
    // Pilot?"), and a case bank with no answers. With --gold alone nothing can be scored: the
    // audit says so and offers hand labels (it used to exit 3, "no arm with memories"); the
    // sheet and --labels then audit it; with the results log the full audit runs.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let read = |p: &str| std::fs::read_to_string(fixture(p)).unwrap();
    let mut gold = read("memento/data/deepresearcher.jsonl");
    let first = gold.lines().next().unwrap().to_string();
    gold.push_str(&format!("{first}\n"));
    gold.push_str("{\"question\": \"Who was the director of Pilot?\", \"ground_truth\": \"David Nutter\"}\n");
    gold.push_str("{\"question\": \"Who was the director of Pilot?\", \"ground_truth\": \"Ridley Scott\"}\n");
    std::fs::write(d.join("questions.jsonl"), gold).unwrap();
    let mut bank = read("memento/memory/memory.jsonl");
    bank.push_str("{\"case\": \"Who was the director of Pilot?\", \"plan\": \"{}\", \"case_label\": \"positive\"}\n");
    std::fs::write(d.join("memory.jsonl"), bank).unwrap();
    import(d, &["--preset", "memento", "--gold", "questions.jsonl", "--name", "m", "memory.jsonl"]);
    let o = lucid(&d.join("cache")).current_dir(d).args(["audit", "runs/m"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("no truth") && stdout(&o).contains("lucid audit runs/m --sample 50"), "{}", stdout(&o));
    // By hand: a sheet of every memory, labelled, audited (with a warning that it has no answers).
    let o = lucid(&d.join("cache")).current_dir(d).args(["audit", "runs/m", "--sample", "13"]).output().unwrap();
    assert!(o.status.success() && stderr(&o).contains("holds no answers"), "{}", stderr(&o));
    let sheet = stdout(&o);
    let mut labels = String::from("memory,u\n");
    for (k, line) in sheet.lines().skip(1).enumerate() {
        labels.push_str(&format!("{},{}\n", line.split(',').next().unwrap(), k % 2));
    }
    std::fs::write(d.join("labels.csv"), labels).unwrap();
    let o = lucid(&d.join("cache"))
        .current_dir(d)
        .args(["audit", "runs/m", "--labels", "labels.csv", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["hand_labels"]["labelled"], 13);
    // With the results log: answers and verdicts, the full audit.
    import(
        d,
        &[
            "--preset",
            "memento",
            "--log",
            &fixture("memento/result/result_parametric.jsonl").display().to_string(),
            "--name",
            "ml",
            "memory.jsonl",
        ],
    );
    let a = audit(d, "ml");
    assert!(a["tables"]["grader"].as_array().is_some_and(|g| !g.is_empty()), "{a}");
}
