//! Same inputs, same tables; different inputs, different tables. Against loopback model servers:
//! a model that answers with the gold query verbatim scores exactly the share it answers (quoted
//! identifiers of every style survive extraction); two servers with one model name never share
//! cached answers; `max_concurrency` bounds an endpoint across every instance of a run; an edited
//! database reruns the loop and evaluation; a gold-derived table never reaches an agent stage.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::project::computed;
use crate::support::{lucid, stderr, stdout};

/// A BIRD-layout benchmark whose names need quoting, and its questions' gold queries.
fn quoted_benchmark(dir: &Path) -> (PathBuf, Vec<(String, String)>) {
    let data = dir.join("bench");
    let db = data.join("dev_databases/shop/shop.sqlite");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TABLE `country list` (id INTEGER, name TEXT);
             INSERT INTO `country list` VALUES (1, 'Chile'), (2, 'Peru'), (3, 'Oman');
             CREATE TABLE \"people\" (\"First Name\" TEXT, \"Last Name\" TEXT, age INTEGER, country INTEGER);
             INSERT INTO people VALUES ('Ann', 'Lee', 34, 1), ('Bo', 'Kim', 17, 2), ('Cy', 'Ng', 52, 1);
             CREATE TABLE [order items] ([item id] INTEGER, [unit price] REAL, qty INTEGER);
             INSERT INTO [order items] VALUES (1, 2.5, 2), (2, 10.0, 1), (3, 1.25, 4);",
        )
        .unwrap();
    let gold = [
        ("How many countries are listed?", "SELECT COUNT(*) FROM `country list`"),
        (
            "First names of people over 30?",
            "SELECT \"First Name\" FROM \"people\" WHERE age > 30 ORDER BY \"Last Name\"",
        ),
        ("Total value of the order items?", "SELECT SUM([unit price] * qty) FROM [order items]"),
        (
            "Which country is Ann from?",
            "SELECT T1.`name` FROM `country list` AS T1 JOIN people AS T2 ON T1.id = T2.country WHERE T2.\"First Name\" = 'Ann'",
        ),
        ("How many adults are there?", "SELECT COUNT(*) FROM people WHERE age >= 18;"),
        ("What is the greatest age?", "SELECT MAX(age) FROM people"),
        ("Which country has the highest id?", "SELECT `name` FROM `country list` ORDER BY `id` DESC LIMIT 1"),
        ("Items ordered more than once?", "SELECT [item id] FROM [order items] WHERE qty > 1 ORDER BY [item id]"),
        (
            "Last names of people from country 1?",
            "SELECT \"Last Name\" FROM people WHERE country = 1 ORDER BY \"First Name\"",
        ),
        ("Countries with an a in their name?", "SELECT COUNT(*) FROM `country list` WHERE `name` LIKE '%a%'"),
    ];
    let questions: Vec<serde_json::Value> = gold
        .iter()
        .enumerate()
        .map(|(i, (q, sql))| {
            serde_json::json!({"question_id": i, "db_id": "shop", "question": q, "evidence": "", "SQL": sql, "difficulty": "simple"})
        })
        .collect();
    std::fs::write(data.join("dev.json"), serde_json::to_string_pretty(&questions).unwrap()).unwrap();
    (data, gold.iter().map(|(q, s)| (q.to_string(), s.to_string())).collect())
}

/// The question a prompt asks (its last `Question:` line).
fn asked(prompt: &str) -> &str {
    prompt.lines().rev().find_map(|l| l.strip_prefix("Question: ")).unwrap_or_default()
}

/// A study pipeline over a BIRD folder and an OpenAI-compatible server.
fn study(url: &str, data: &Path, bert: &Path, seeds: &str, arms: &str, agent_extra: &str) -> String {
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/prompts");
    format!(
        "name: x
seeds: {seeds}
arms: {arms}
stages:
  - id: benchmark
    kind: benchmark
    config: {{source: bird, path: '{data}'}}
{front}  - id: agent
    kind: memory_loop
    matrix: [seed, arm]
    inputs: [tasks, order, retrieval]
    config: {{model: {{backend: openai, model: m, base_url: '{url}/v1', retry: {{max_attempts: 2, base_delay_ms: 1}}}}, prompts: '{prompts}'{agent_extra}}}
  - id: evaluate
    kind: evaluate
    matrix: [seed, arm]
    inputs: [tasks, gold, episodes]
",
        data = data.display(),
        front = crate::support::order_embed_retrieve(bert),
        prompts = prompts.display(),
    )
}

fn run(dir: &Path) -> std::process::Output {
    let o = lucid(&dir.join("cache")).current_dir(dir).args(["run", "p.yaml", "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    o
}

fn query(dir: &Path, sql: &str) -> Vec<serde_json::Value> {
    let o =
        lucid(&dir.join("cache")).current_dir(dir).args(["query", "runs/x", sql, "--format", "json"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o).lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("runs/x/manifest.json")).unwrap()).unwrap()
}

/// A model that plans, answers questions `i` with `answered(i)` with their gold SQL verbatim
/// (fenced for even i, unfenced with a trailing `;` and prose for odd i), says it cannot answer
/// the others, and grades with its reason on the verdict line.
fn gold_model(gold: Vec<(String, String)>, answered: fn(usize) -> bool) -> Reply {
    Reply::func(move |prompt| {
        if prompt.contains("numbered plan") {
            return "1. Read the table.".into();
        }
        if prompt.contains("VERDICT") {
            return "VERDICT: CORRECT. The result answers the question.".into();
        }
        let Some(i) = gold.iter().position(|(q, _)| q == asked(prompt)) else { return "?".into() };
        match (answered(i), i % 2) {
            (false, _) => "I cannot answer that.".into(),
            (true, 0) => format!("```sql\n{}\n```\nThis query answers it.", gold[i].1),
            (true, _) => format!("{};\n\nThis query answers it.", gold[i].1.trim_end_matches(';')),
        }
    })
}

#[test]
fn gold_verbatim_answers_score_exactly_their_share() {
    let dir = tempfile::tempdir().unwrap();
    let (data, gold) = quoted_benchmark(dir.path());
    let answered = |i: usize| i != 5 && i != 9;
    let server = FakeServer::start(vec![], gold_model(gold.clone(), answered));
    let bert = crate::support::tiny_models::write_tiny_bert(&dir.path().join("bert"));
    std::fs::write(dir.path().join("p.yaml"), study(&server.url, &data, &bert, "[0, 1]", "[no-memory, memento]", ""))
        .unwrap();
    run(dir.path());
    let ex =
        query(dir.path(), "SELECT arm, seed, count(*) AS n, sum(u) AS c FROM evaluation GROUP BY 1, 2 ORDER BY 1, 2");
    assert_eq!(ex.len(), 4, "{ex:?}");
    for row in &ex {
        assert_eq!((row["n"].as_i64(), row["c"].as_i64()), (Some(10), Some(8)), "EX is the answered share: {row}");
    }
    // Every answered query is stored exactly as written (less a trailing `;`), and graded.
    let eps = query(dir.path(), "SELECT question_id, sql, grade FROM episodes WHERE arm = 'memento' AND seed = 0");
    for e in eps {
        let i = e["question_id"].as_i64().unwrap() as usize;
        let want = answered(i).then(|| gold[i].1.trim_end_matches(';'));
        assert_eq!(e["sql"].as_str(), want, "{e}");
        assert_eq!(e["grade"].as_str(), Some(if answered(i) { "correct" } else { "skipped" }), "{e}");
    }
}

#[test]
fn a_second_server_with_the_same_model_name_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (data, gold) = quoted_benchmark(dir.path());
    let bert = crate::support::tiny_models::write_tiny_bert(&dir.path().join("bert"));
    let (a, b) = (
        FakeServer::start(vec![], gold_model(gold.clone(), |_| true)),
        FakeServer::start(vec![], gold_model(gold, |_| false)),
    );
    for (server, want) in [(&a, 10), (&b, 0)] {
        std::fs::write(dir.path().join("p.yaml"), study(&server.url, &data, &bert, "[0]", "[no-memory]", "")).unwrap();
        run(dir.path());
        assert!(
            !server.requests().is_empty(),
            "{} was never asked: answers came from another server's cache",
            server.url
        );
        let ex = query(dir.path(), "SELECT sum(u) AS c FROM evaluation");
        assert_eq!(ex[0]["c"].as_i64(), Some(want), "{}", server.url);
    }
    // The calls say which server answered; the endpoint is part of every request key.
    let calls = query(dir.path(), "SELECT DISTINCT endpoint FROM calls");
    assert_eq!(calls, vec![serde_json::json!({"endpoint": format!("{}/v1", b.url)})]);
}

#[test]
fn max_concurrency_bounds_an_endpoint_across_instances() {
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = quoted_benchmark(dir.path());
    let bert = crate::support::tiny_models::write_tiny_bert(&dir.path().join("bert"));
    let server = FakeServer::start(
        vec![],
        Reply::func(|p| {
            std::thread::sleep(Duration::from_millis(20));
            if p.contains("VERDICT") { "VERDICT: INCORRECT".into() } else { "SELECT 1".into() }
        }),
    );
    // 4 seeds x 2 arms = 8 loop instances at once, each with 4 episodes in flight, no cache.
    let extra = ", concurrency: 4, response_cache: false";
    let yaml = study(&server.url, &data, &bert, "[0, 1, 2, 3]", "[no-memory, memento]", extra)
        .replace("retry: {", "max_concurrency: 2, retry: {")
        .replace("stages:", "max_parallel: 8\nstages:");
    std::fs::write(dir.path().join("p.yaml"), yaml).unwrap();
    run(dir.path());
    assert_eq!(server.requests().len(), 8 * 10 * 3);
    let peak = server.max_in_flight.load(std::sync::atomic::Ordering::SeqCst);
    assert!(peak <= 2, "{peak} requests in flight at one endpoint with max_concurrency 2");
}

#[test]
fn an_edited_database_reruns_the_loop_and_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    let (data, gold) = quoted_benchmark(dir.path());
    let bert = crate::support::tiny_models::write_tiny_bert(&dir.path().join("bert"));
    let server = FakeServer::start(vec![], gold_model(gold, |_| true));
    std::fs::write(dir.path().join("p.yaml"), study(&server.url, &data, &bert, "[0]", "[no-memory]", "")).unwrap();
    run(dir.path());
    run(dir.path());
    assert!(computed(&manifest(dir.path())).is_empty(), "an identical rerun computes nothing");
    // Touching the file (same bytes, a new time) leaves everything after the benchmark cached.
    let db = data.join("dev_databases/shop/shop.sqlite");
    set_mtime(&db, 1_000_000_000);
    run(dir.path());
    assert_eq!(computed(&manifest(dir.path())), vec!["benchmark[all]"]);
    // New bytes: the loop and evaluation run again, and see the new data.
    let adults = "SELECT result_hash FROM episodes WHERE question_id = 4";
    let before = query(dir.path(), adults);
    rusqlite::Connection::open(&db).unwrap().execute("INSERT INTO people VALUES ('Di', 'Ox', 40, 3)", []).unwrap();
    set_mtime(&db, 1_000_000_001);
    run(dir.path());
    let again: BTreeMap<String, ()> = computed(&manifest(dir.path())).into_iter().map(|c| (c, ())).collect();
    for inst in ["benchmark[all]", "agent[seed-0_arm-no-memory]", "evaluate[seed-0_arm-no-memory]"] {
        assert!(again.contains_key(inst), "{inst} not recomputed: {again:?}");
    }
    assert_ne!(query(dir.path(), adults), before, "the count of adults is read from the new data");
    let hashes = query(dir.path(), "SELECT count(DISTINCT db_hash) AS h FROM tasks");
    assert_eq!(hashes[0]["h"].as_i64(), Some(1));
}

/// Set `path`'s modification time to `secs` after the epoch. lucid looks at a database again when
/// its (path, size, time) changes; an edit that keeps the size within the filesystem's clock tick
/// would keep the time too, so the tests set a distinct time instead of waiting for one.
fn set_mtime(path: &Path, secs: u64) {
    let time = std::time::UNIX_EPOCH + Duration::from_secs(secs);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(time).unwrap();
}

#[test]
fn a_gold_derived_table_never_reaches_an_agent_stage() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("leak.sql"), "SELECT * FROM evaluation").unwrap();
    // A report reads evaluation (computed from gold) and names its output `retrieval`.
    let yaml = "name: x\nseeds: [0]\narms: [lucid]\nstages:
  - id: benchmark
    kind: benchmark
  - id: order
    kind: permutation
    matrix: [seed]
    inputs: [tasks]
  - id: predictions
    kind: predictions
    matrix: [arm]
    inputs: [tasks]
    config: {path: pred.json}
  - id: evaluate
    kind: evaluate
    matrix: [seed, arm]
    inputs: [tasks, gold, predictions, order]
  - id: retrieval
    kind: report
    inputs: [evaluation]
    config: {sql: leak.sql}
  - id: agent
    kind: memory_loop
    matrix: [seed, arm]
    inputs: [tasks, order, retrieval]
";
    std::fs::write(dir.path().join("p.yaml"), yaml).unwrap();
    let o =
        lucid(&dir.path().join("cache")).current_dir(dir.path()).args(["run", "p.yaml", "--dry-run"]).output().unwrap();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("may not read 'retrieval'") && err.contains("stage 'retrieval' (report) computed it from gold"),
        "{err}"
    );
    assert!(err.contains("p.yaml:"), "the error points into the file: {err}");
}

/// Forced-choice grading needs a backend that scores continuations: asked of Anthropic's API
/// (which returns no log-probabilities), the stage stops before any call with a message that says
/// so (never a silent generation). OpenAI-compatible servers score it from their logprobs
/// (tests/llm_http.rs).
#[test]
fn forced_choice_on_a_generating_backend_is_refused_before_any_call() {
    let server = FakeServer::start(vec![], Reply::func(crate::support::study::scripted));
    let dir = crate::support::study::project(&server.url);
    let yaml = dir.path().join("study.yaml");
    let text = std::fs::read_to_string(&yaml)
        .unwrap()
        .replace(
            "', concurrency: 1,",
            "', concurrency: 1, roles: {grader: {choices: ['VERDICT: CORRECT', 'VERDICT: INCORRECT']}},",
        )
        // Any variable that is set: the key is never used, the stage stops first.
        .replace("backend: openai,", "backend: anthropic, api_key_env: PATH,");
    std::fs::write(&yaml, text).unwrap();
    let o = lucid(&dir.path().join("cache"))
        .current_dir(dir.path())
        .args(["run", "study.yaml", "--quiet"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("roles.grader.choices") && stderr(&o).contains("anthropic backend generates"),
        "{}",
        stderr(&o)
    );
    assert!(server.requests().is_empty(), "no call was made");
}

/// What a run under test did: asked the model, or ended.
enum Run {
    Asked,
    Ended(std::process::Output),
}

/// A prompt edited while the loop runs: the instances that read it are not stored under the key
/// computed from the old text (they fail, naming the file); a rerun computes them with the new one.
#[test]
fn a_prompt_edited_during_a_run_is_not_stored_under_the_old_key() {
    // The model answers nothing until the test has edited the prompt: the edit lands while the
    // loop instance runs, whatever the machine's load. The test waits for events (the model is
    // asked, the run ends), never for a time.
    let gate = std::sync::Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let held = gate.clone();
    let (events, next) = std::sync::mpsc::channel();
    let asked = events.clone();
    let server = FakeServer::start(
        vec![],
        Reply::func(move |p| {
            let _ = asked.send(Run::Asked);
            let (open, cv) = &*held;
            let _open = cv.wait_while(open.lock().unwrap(), |open| !*open).unwrap();
            crate::support::study::scripted(p)
        }),
    );
    let dir = crate::support::study::project(&server.url);
    let prompts = dir.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/prompts");
    for e in std::fs::read_dir(&shipped).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), prompts.join(e.file_name())).unwrap();
    }
    let yaml = dir.path().join("study.yaml");
    let text =
        std::fs::read_to_string(&yaml).unwrap().replace(&shipped.display().to_string(), &prompts.display().to_string());
    std::fs::write(&yaml, text).unwrap();
    let cache = dir.path().join("cache");
    let child = lucid(&cache)
        .current_dir(dir.path())
        .args(["run", "study.yaml", "--quiet"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::spawn(move || _ = events.send(Run::Ended(child.wait_with_output().unwrap())));
    // Edit once a loop instance has asked the model (its key was computed from the old text),
    // then let the model answer.
    if let Run::Ended(o) = next.recv().unwrap() {
        panic!("the run ended before it asked the model:\n{}", stderr(&o));
    }
    let system = prompts.join("system.txt");
    let edited = std::fs::read_to_string(&system).unwrap() + "Answer carefully.\n";
    std::fs::write(&system, edited).unwrap();
    *gate.0.lock().unwrap() = true;
    gate.1.notify_all();
    let o = next.iter().find_map(|e| if let Run::Ended(o) = e { Some(o) } else { None }).unwrap();
    assert!(!o.status.success(), "an instance that read the old prompt must not be stored");
    assert!(stderr(&o).contains("changed while it ran") && stderr(&o).contains("system.txt"), "{}", stderr(&o));
    let o = lucid(&cache).current_dir(dir.path()).args(["run", "study.yaml", "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}
