//! The factual QA domain: each layout's loader (and its errors, naming file and row), the
//! bundled set against the packages it is built from, and the closed-book loop end to end over
//! a model that answers from a planted table: named channels fire as their rules say, the
//! oracle and evaluation score by normalised match, the report and the audit work on it, and
//! neither gold nor evidence reaches any request.

use std::path::Path;

use lucid::datasets::qa::FactBench;
use lucid::domains::factual::data::{jsonl, simpleqa};
use serde_json::Value;

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::probes::{Probe, require};
use crate::support::{lucid, stderr};

const CANARY: &str = "lucid-canary-0x5eed";

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn err(r: lucid::Result<FactBench>) -> String {
    r.expect_err("an error").to_string()
}

#[test]
fn each_layout_loads_and_bad_rows_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = write(
        d,
        "q.jsonl",
        r#"{"id": "a1", "question": "What is the capital of France?", "answer": "Paris", "aliases": ["Paname"], "topic": "capital", "answer_type": "name"}

{"id": 7, "question": "How many legs does a spider have?", "answer": "8"}
"#,
    );
    let b = jsonl::load(&good).unwrap();
    assert_eq!(b.tasks.len(), 2);
    assert_eq!((b.tasks[1].question_id, b.tasks[1].task_id.as_str()), (1, "7"), "ids: position and the source's own");
    assert_eq!((b.tasks[1].topic.as_str(), b.tasks[1].answer_type.as_str()), ("general", "text"));
    assert_eq!(b.gold[0].aliases, vec!["Paname".to_string()]);
    let bad = |name: &str, text: &str| err(jsonl::load(&write(d, name, text)));
    let missing =
        bad("m.jsonl", "{\"id\": 1, \"question\": \"Q?\", \"answer\": \"A\"}\n{\"id\": 2, \"question\": \"Q2?\"}\n");
    assert!(missing.contains("m.jsonl") && missing.contains("row 2") && missing.contains("answer"), "{missing}");
    let empty = bad("e.jsonl", "{\"id\": 1, \"question\": \"Q?\", \"answer\": \" . \"}\n");
    assert!(empty.contains("e.jsonl") && empty.contains("row 1") && empty.contains("empty answer"), "{empty}");
    let dup = bad(
        "d.jsonl",
        "{\"id\": 1, \"question\": \"Q?\", \"answer\": \"A\"}\n{\"id\": 1, \"question\": \"R?\", \"answer\": \"B\"}\n",
    );
    assert!(dup.contains("d.jsonl") && dup.contains("row 2") && dup.contains("duplicate id '1'"), "{dup}");
    let unknown = bad("u.jsonl", "{\"id\": 1, \"question\": \"Q?\", \"answer\": \"A\", \"source\": \"x\"}\n");
    assert!(unknown.contains("row 1") && unknown.contains("source"), "unknown keys are errors: {unknown}");

    let csv = write(
        d,
        "simple_qa.csv",
        "metadata,problem,answer\n\"{'topic': 'Science and technology', 'answer_type': 'Person', 'urls': ['https://example.org/x']}\",\"Who received the award in 2010, and why?\",Michio Sugeno\n\"{'topic': 'Geography'}\",What is the capital of Chad?,N'Djamena\n",
    );
    let b = simpleqa::load(&csv).unwrap();
    assert_eq!(b.tasks.len(), 2);
    assert_eq!(b.tasks[0].question, "Who received the award in 2010, and why?", "quoted commas are kept");
    assert_eq!(b.tasks[0].topic, "science_and_technology");
    assert_eq!(b.gold[1].answer, "N'Djamena");
    let (tasks, _) = lucid::datasets::qa::tables::batches(&b).unwrap();
    let shown = arrow::util::pretty::pretty_format_batches(&[tasks]).unwrap().to_string();
    assert!(!shown.contains("example.org"), "SimpleQA's metadata never reaches tasks: {shown}");
    let no_col = err(simpleqa::load(&write(d, "bad.csv", "metadata,question,answer\nx,y,z\n")));
    assert!(no_col.contains("bad.csv") && no_col.contains("row 1") && no_col.contains("'problem'"), "{no_col}");
    let empty = err(simpleqa::load(&write(d, "empty.csv", "metadata,problem,answer\n{},What?,\n")));
    assert!(empty.contains("empty.csv") && empty.contains("row 2") && empty.contains("empty answer"), "{empty}");
}

#[test]
fn answers_match_by_the_normalisation_rule() {
    use lucid::datasets::qa::normalize::{matches, normalize};
    assert_eq!(normalize("  São Tomé!  "), "sao tome");
    assert_eq!(normalize("The Hague"), "hague");
    assert_eq!(normalize("A"), "a", "an answer that is only an article keeps it");
    assert!(matches("Ouagadougou", "Ouagadougou", &[]));
    assert!(matches("It is Ouagadougou.", "ouagadougou", &[]), "whole words inside the answer");
    assert!(matches("Sao Tome", "São Tomé", &[]));
    assert!(matches("Aluminium", "Aluminum", &["Aluminium".into()]));
    assert!(!matches("Ouaga", "Ouagadougou", &[]), "part of a word is not a match");
    assert!(!matches("Paris or Lyon", "Paris", &[]), "a hedge between candidates is not a match");
    assert!(matches("Trinidad or Tobago", "Trinidad or Tobago", &[]), "unless the gold holds 'or' itself");
    assert!(
        !matches("26.5", "26", &[]) || normalize("26.5") == "26 5",
        "the rule is whole words of the normalised text"
    );
}

#[test]
fn the_bundled_set_matches_its_packages() {
    if !require(Probe::Facts) {
        return;
    }
    let facts =
        lucid::model_files::model_path(&lucid::model_files::models_dir(&lucid::cache_dir::cache_dir()), "facts");
    let b = lucid::domains::factual::data::bundled::build(&facts).unwrap();
    let gold = |question: &str| {
        let t = b.tasks.iter().find(|t| t.question == question).unwrap_or_else(|| panic!("no task {question:?}"));
        b.gold[t.question_id as usize].clone()
    };
    // Against the packages' own files, read here independently of the builder.
    let bf: Value = serde_json::from_str(
        &std::fs::read_to_string(facts.join("countryinfo/countryinfo/data/burkina_faso.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(gold("What is the capital of Burkina Faso?").answer, bf["capital"].as_str().unwrap());
    assert_eq!(gold("What is the capital of Burkina Faso?").answer, "Ouagadougou");
    assert_eq!(gold("What is the ISO 4217 code of the currency of Burkina Faso?").answer, "XOF");
    assert_eq!(
        gold("How many countries share a land border with Burkina Faso?").answer,
        bf["borders"].as_array().unwrap().len().to_string()
    );
    let db = rusqlite::Connection::open(facts.join("mendeleev/mendeleev/elements.db")).unwrap();
    let (sym, z): (String, i64) = db
        .query_row("SELECT symbol, atomic_number FROM elements WHERE name = 'Iron'", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!((sym.as_str(), z), ("Fe", 26));
    assert_eq!(gold("What is the chemical symbol of Iron?").answer, sym);
    assert_eq!(gold("What is the atomic number of Oxygen?").answer, "8");
    assert_eq!(gold("Which chemical element has atomic number 79?").answer, "Gold");
    assert!(gold("Which chemical element has atomic number 13?").aliases.contains(&"Aluminium".to_string()));
    // Every element once per element topic; every topic present; no id twice.
    for topic in ["element_symbol", "atomic_number", "element_of_number"] {
        assert_eq!(b.tasks.iter().filter(|t| t.topic == topic).count(), 118, "{topic}");
    }
    for (topic, _) in lucid::domains::factual::data::bundled::TOPICS {
        assert!(b.tasks.iter().filter(|t| t.topic == *topic).count() >= 90, "{topic}");
    }
    // The evidence corpus comes from other packages and agrees with most country capitals.
    let corpus = lucid::domains::factual::data::evidence::Corpus::bundled(&facts).unwrap();
    assert!(corpus.passages.len() > 30_000, "countries, cities and elements");
    let capitals: Vec<_> = b.tasks.iter().filter(|t| t.topic == "capital").collect();
    let agree = capitals
        .iter()
        .filter(|t| {
            let g = &b.gold[t.question_id as usize];
            let hits = corpus.retrieve(&t.question, 3);
            let a = lucid::datasets::qa::normalize::normalize(&g.answer);
            hits.iter().any(|&d| lucid::datasets::qa::normalize::contains_words(&corpus.normalized[d], &a))
        })
        .count();
    let share = agree as f64 / capitals.len() as f64;
    assert!(
        (0.75..1.0).contains(&share),
        "evidence agrees with gold on {share:.2} of capitals: imperfect, not useless"
    );
}

/// The planted model: an answer per question (the prompt's last line, `Q: ...`), every self-grade
/// CORRECT; as the gold judge, CORRECT when the target is in the prediction, NOT_ATTEMPTED for
/// "I don't know", else INCORRECT.
fn planted(prompt: &str) -> String {
    if let Some((_, rest)) = prompt.split_once("Gold target: ") {
        let target = rest.lines().next().unwrap_or("").split(" (also accepted").next().unwrap_or("").to_lowercase();
        let predicted =
            rest.split("Predicted answer: ").nth(1).unwrap_or("").lines().next().unwrap_or("").to_lowercase();
        let v = if predicted.contains("know") {
            "NOT_ATTEMPTED"
        } else if predicted.contains(&target) {
            "CORRECT"
        } else {
            "INCORRECT"
        };
        return v.into();
    }
    if prompt.contains("VERDICT") {
        return "VERDICT: CORRECT".into();
    }
    let last = prompt.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    let q = last.trim().trim_start_matches("Q:").trim();
    match q {
        "What is the capital of Freedonia?" => "Fredville",
        "What is the capital of Sylvania?" => "Paris",
        "How many moons does Zorb have?" => "three",
        "Who founded Freedonia?" => "I don't know",
        "What is the currency code of Freedonia?" => "FRD",
        "What is the capital of Atlantis?" => "Poseidonia",
        "In which year was Zorb discovered?" => "Answer: 1999.",
        _ => "?",
    }
    .into()
}

/// Per question: (u, no_answer, unsupported, format) as the rules say.
const EXPECTED: &[(&str, u8, bool, bool, bool)] = &[
    ("What is the capital of Freedonia?", 1, false, false, false),
    ("What is the capital of Sylvania?", 0, false, true, false),
    ("How many moons does Zorb have?", 0, false, true, true),
    ("Who founded Freedonia?", 0, true, false, false),
    ("What is the currency code of Freedonia?", 1, false, false, false),
    ("What is the capital of Atlantis?", 1, false, true, false),
    ("In which year was Zorb discovered?", 1, false, false, false),
];

const QUESTIONS: &str = r#"{"id": "fr-cap", "question": "What is the capital of Freedonia?", "answer": "Fredville", "aliases": ["lucid-canary-0x5eed"], "topic": "capital", "answer_type": "name"}
{"id": "sy-cap", "question": "What is the capital of Sylvania?", "answer": "Sylburg", "topic": "capital", "answer_type": "name"}
{"id": "zo-moons", "question": "How many moons does Zorb have?", "answer": "3", "topic": "planets", "answer_type": "number"}
{"id": "fr-founder", "question": "Who founded Freedonia?", "answer": "Rufus T. Firefly", "aliases": ["Firefly"], "topic": "history", "answer_type": "name"}
{"id": "fr-cur", "question": "What is the currency code of Freedonia?", "answer": "FRD", "topic": "currency", "answer_type": "code"}
{"id": "at-cap", "question": "What is the capital of Atlantis?", "answer": "Poseidonia", "topic": "capital", "answer_type": "name"}
{"id": "zo-year", "question": "In which year was Zorb discovered?", "answer": "1999", "topic": "planets", "answer_type": "year"}
"#;

const CORPUS: &str = r#"{"id": "p1", "title": "Freedonia", "text": "Freedonia is a country. Its capital is Fredville. Its currency is the Freedonian dollar (FRD). It was founded by Rufus T. Firefly."}
{"id": "p2", "title": "Sylvania", "text": "Sylvania is a country whose capital is Sylburg."}
{"id": "p3", "title": "Zorb", "text": "Zorb is a planet discovered in 1999. It has 3 moons."}
{"id": "p4", "title": "Paris", "text": "Paris is the capital of France."}
"#;

#[test]
fn the_closed_book_loop_runs_with_named_channels_and_never_shows_gold_or_evidence() {
    let server = FakeServer::start(vec![], Reply::func(planted));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "questions.jsonl", QUESTIONS);
    write(d, "corpus.jsonl", CORPUS);
    let bert = crate::support::tiny_models::write_tiny_bert(&d.join("bert"));
    let model = format!("{{backend: openai, model: planted, base_url: '{}/v1'}}", server.url);
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/prompts-factual");
    let domain = "{kind: factual, evidence: corpus.jsonl, top_k: 1}";
    let agent = format!("{{domain: {domain}, model: {model}, prompts: '{}', k: 2", prompts.display());
    let judge = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/judges/simpleqa.txt");
    let evaluate = format!(
        "    config: {{factual: {{evidence: corpus.jsonl, top_k: 1}}, judge: {{model: {model}, prompt: '{}'}}}}\n",
        judge.display()
    );
    let cache = d.join("cache");
    let q = |sql: &str| crate::support::study::query_run(&cache, d, "runs/facts", sql);
    let rows = crate::support::study::run_every_arm(
        d,
        "facts",
        "{source: jsonl, path: questions.jsonl}",
        &agent,
        &evaluate,
        &bert,
        "SELECT e.arm, e.seed, t.question, e.answer, e.channels, e.flagged, e.r, e.stored_q, v.u, v.judge \
         FROM episodes e JOIN tasks t USING (question_id) \
         JOIN evaluation v ON v.arm = e.arm AND v.seed = e.seed AND v.step = e.step",
    );
    assert_eq!(rows.len(), 7 * 4 * 2);
    for r in &rows {
        let (_, u, no_answer, unsupported, format) =
            *EXPECTED.iter().find(|e| e.0 == r["question"]).unwrap_or_else(|| panic!("{r}"));
        let fired =
            |name: &str| r["channels"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap()["fired"].clone();
        let names: Vec<&str> = r["channels"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["no_answer", "unsupported", "format"], "{r}");
        assert_eq!(
            (fired("no_answer"), fired("unsupported"), fired("format")),
            (no_answer.into(), unsupported.into(), format.into()),
            "{r}"
        );
        assert_eq!(r["u"], u, "{r}");
        assert_eq!(r["flagged"], no_answer || unsupported || format, "{r}");
        let want_q = match r["arm"].as_str().unwrap() {
            "lucid" => u8::from(!(no_answer || unsupported || format)),
            "oracle" => u,
            _ => 1,
        };
        assert_eq!(r["stored_q"], want_q, "{r}");
    }
    let answer = rows.iter().find(|r| r["question"] == "In which year was Zorb discovered?").unwrap();
    assert_eq!(answer["answer"], "1999", "the answer line without its label and period");
    // The gold judge's verdicts, recorded beside the normalised match.
    for r in &rows {
        let want = match r["answer"].as_str().unwrap() {
            "I don't know" => "not_attempted",
            "Fredville" | "FRD" | "Poseidonia" | "1999" => "correct",
            _ => "incorrect",
        };
        assert_eq!(r["judge"], want, "{r}");
    }
    let agreement = q(Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/reports/gold_judge.sql").to_str().unwrap());
    let all = agreement.iter().find(|r| r["arm"] == "all").unwrap();
    assert_eq!((all["n"].as_i64(), all["agreement"].as_f64()), (Some(56), Some(1.0)), "{all}");

    // Closed book and label-free: only the gold judge's requests carry gold (the canary alias);
    // no request carries evidence text.
    let requests = server.requests();
    assert!(requests.len() >= 7 * 3, "each question answered, graded and judged at least once (repeats are cached)");
    let mut judged = 0;
    for r in &requests {
        let body = r.body.to_string();
        let judge = body.contains("Gold target:");
        judged += usize::from(judge && body.contains(CANARY));
        assert!(judge || !body.contains(CANARY), "gold reached an agent's prompt: {body}");
        assert!(!body.contains("founded by") && !body.contains("It has 3 moons"), "evidence reached a prompt: {body}");
    }
    assert!(judged > 0, "the gold judge sees the gold (aliases included)");

    // The report's SQL is domain-free: the detector table has this domain's channels.
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("runs/facts/report/report.json")).unwrap()).unwrap();
    let channels: Vec<&str> = report["tables"]["detector"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["arm"] == "all")
        .map(|r| r["channel"].as_str().unwrap())
        .collect();
    assert_eq!(channels, ["no_answer", "unsupported", "format", "any"]);
    // The audit reads the run's bank with each channel as a verifier.
    let verifiers = crate::support::study::audit_verifiers(&cache, d, "runs/facts", "lucid");
    for v in ["no_answer", "unsupported", "format", "detector"] {
        assert!(verifiers.iter().any(|x| x == v), "{v} in {verifiers:?}");
    }
}

#[test]
fn the_answer_line_drops_lead_ins_and_refuses_a_new_question() {
    use lucid::domains::factual::channels::answer_line;
    for (text, want) in [
        ("Paris", Some("Paris")),
        ("\n**Answer:** Paris.\nBecause ...", Some("Paris")),
        ("A: 1999", Some("1999")),
        ("A: The answer is Paris.", Some("Paris")),
        ("The answer to the question is: Erbium", Some("Erbium")),
        ("The answer is Ouagadougou.", Some("Ouagadougou")),
        ("\"Tokyo\"", Some("Tokyo")),
        ("Question: What is the capital of Chad?", None),
        ("Q: What is 2 + 2?", None),
        ("  \n ", None),
    ] {
        assert_eq!(answer_line(text).as_deref(), want, "{text:?}");
    }
}

#[test]
fn an_arm_naming_a_channel_of_another_domain_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bert = crate::support::tiny_models::write_tiny_bert(&d.join("bert"));
    let yaml = format!(
        "name: wrong
seeds: [0]
arms: [strict]
stages:
  - id: benchmark
    kind: benchmark
    config: {{source: bundled, per_db: 1}}
{}  - id: agent
    kind: memory_loop
    matrix: [seed, arm]
    inputs: [tasks, order, retrieval]
    config: {{model: {{backend: scripted}}, prompts: '{}', arms: {{strict: {{mode: lucid, channels: [execution, unsupported]}}}}}}
",
        crate::support::order_embed_retrieve(&bert),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/prompts").display()
    );
    write(d, "wrong.yaml", &yaml);
    let o = lucid(&d.join("cache")).current_dir(d).args(["run", "wrong.yaml", "--quiet"]).output().unwrap();
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("'unsupported' is not a sql channel") && e.contains("execution, degeneracy, literal"), "{e}");
}
