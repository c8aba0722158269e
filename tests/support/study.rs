//! The scripted study: a scripted model behind the loopback server, the bundled benchmark with a
//! canary in a gold query, the study pipeline with its operational settings, and reading its run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{lucid, stderr, stdout};

pub const CANARY: &str = "lucid-canary-0x5eed";

/// A scripted model: a plan, then a query over the first table of the schema (a count for "How
/// many" questions, an empty result otherwise), then a lenient self-grade.
pub fn scripted(prompt: &str) -> String {
    if prompt.contains("numbered plan") {
        return "1. Read the first table.".into();
    }
    if prompt.contains("Write one SQLite") {
        let table = prompt
            .split("CREATE TABLE ")
            .nth(1)
            .and_then(|r| r.split(|c: char| !(c.is_alphanumeric() || c == '_')).next())
            .unwrap_or("missing");
        return if prompt.contains("How many") {
            format!("```sql\nSELECT COUNT(*) FROM {table}\n```")
        } else {
            format!("```sql\nSELECT * FROM {table} WHERE 1 = 0\n```")
        };
    }
    if prompt.contains("VERDICT") {
        return "VERDICT: CORRECT\nIt answers the question.".into();
    }
    "?".into()
}

/// A scripted closed-book answerer: a country's capital or an element's symbol right for some
/// questions, wrong for others; the grader trusts every answer that is one word.
pub fn factual_answers(prompt: &str) -> String {
    let last = prompt.rsplit("Question:").next().unwrap_or("");
    if prompt.contains("VERDICT") {
        let answer = last.split("Answer:").nth(1).unwrap_or("").trim();
        let one_word = !answer.is_empty() && !answer.contains(' ');
        return if one_word { "VERDICT: CORRECT" } else { "VERDICT: INCORRECT" }.into();
    }
    let q = last.lines().next().unwrap_or("");
    let a = if q.contains("capital") {
        if q.len().is_multiple_of(2) { "Paris" } else { "The capital city" }
    } else if q.contains("symbol") {
        "Fe"
    } else if q.contains("How many") || q.contains("number") {
        "8"
    } else {
        "Gold"
    };
    a.into()
}

/// A project folder holding the shipped `pipelines/` (agents, prompts, report SQL) with `file`'s
/// text changed by `edit`, and the fetched models linked into its cache (`<dir>/cache`).
pub fn shipped_project(file: &str, edit: impl Fn(String) -> String) -> tempfile::TempDir {
    let dir = project_with_models();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    copy_dir(&root.join("pipelines"), &dir.path().join("pipelines"));
    let text = std::fs::read_to_string(root.join("pipelines").join(file)).unwrap();
    std::fs::write(dir.path().join("pipelines").join(file), edit(text)).unwrap();
    dir
}

/// An empty project folder whose cache (`cache/`) sees the fetched models and data packages.
pub fn project_with_models() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let models = lucid::model_files::models_dir(&lucid::cache_dir::cache_dir());
    std::os::unix::fs::symlink(models, cache.join("models")).unwrap();
    dir
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// The bundled benchmark with a canary in question 0's gold SQL (same result as the original).
pub fn canary_benchmark(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mini"), &data);
    let path = data.join("questions.json");
    let mut q: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let sql = q[0]["SQL"].as_str().unwrap().to_string();
    q[0]["SQL"] = format!("{sql} AND '{CANARY}' = '{CANARY}'").into();
    std::fs::write(&path, serde_json::to_string_pretty(&q).unwrap()).unwrap();
    data
}

/// Operational settings of the loop: none of them is part of what it computes.
#[derive(Clone, Copy)]
pub struct Ops {
    pub chunk_size: usize,
    pub concurrency: usize,
    pub max_concurrency: usize,
    pub max_attempts: u32,
}

pub const OPS: Ops = Ops { chunk_size: 3, concurrency: 1, max_concurrency: 1, max_attempts: 3 };

pub fn pipeline(url: &str, data: &Path, bert: &Path) -> String {
    pipeline_with(url, data, bert, OPS)
}

pub fn pipeline_with(url: &str, data: &Path, bert: &Path, ops: Ops) -> String {
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/prompts");
    let Ops { chunk_size, concurrency, max_concurrency, max_attempts } = ops;
    let agent = format!(
        "{{model: {{backend: openai, model: scripted, base_url: '{url}/v1', max_concurrency: {max_concurrency}, \
         retry: {{max_attempts: {max_attempts}, base_delay_ms: 1, max_delay_ms: 5}}}}, prompts: '{}', \
         concurrency: {concurrency}, chunk_size: {chunk_size}",
        prompts.display()
    );
    format!(
        "name: study
seeds: [0, 1]
arms: [no-memory, memento, lucid, oracle]
max_parallel: 1
stages:
  - id: benchmark
    kind: benchmark
    config: {{source: bundled, path: '{data}', per_db: 3}}
{front}{arms}  - id: flags
    kind: flag
    matrix: [seed, arm]
    inputs: [tasks, episodes]
    config: {{channels: [execution]}}
",
        data = data.display(),
        front = super::order_embed_retrieve(bert),
        arms = arm_stages(&agent, "")
    )
}

/// The YAML stages of a study's arms after order, embeddings and retrieval: the memory loop
/// with `agent` (a flow mapping left open for more keys) for no-memory, memento and LUCID, the
/// oracle in its own gold-reading stage, and evaluation (with `evaluate`, its config lines).
pub fn arm_stages(agent: &str, evaluate: &str) -> String {
    format!(
        "  - id: agent
    kind: memory_loop
    matrix: [seed, arm]
    arms: [no-memory, memento, lucid]
    inputs: [tasks, order, retrieval]
    config: {agent}}}
  - id: oracle
    kind: memory_loop
    matrix: [seed, arm]
    arms: [oracle]
    inputs: [tasks, order, retrieval, gold]
    config: {agent}, read_gold: true}}
  - id: evaluate
    kind: evaluate
    matrix: [seed, arm]
    inputs: [tasks, gold, episodes]
{evaluate}"
    )
}

/// Run, in `dir`, the pipeline `<name>.yaml` of a domain's loop in every arm (two seeds, the
/// report on) over the `benchmark` config (a flow mapping), with `agent` and the evaluate
/// stage's `evaluate` lines (as [`arm_stages`] takes them), embedding with the tiny BERT at `bert`; the project's `pipelines/` linked in for
/// the domain's prompts. Then the rows of `sql` over the run, as JSON objects.
pub fn run_every_arm(
    dir: &Path,
    name: &str,
    benchmark: &str,
    agent: &str,
    evaluate: &str,
    bert: &Path,
    sql: &str,
) -> Vec<serde_json::Value> {
    let yaml = format!(
        "name: {name}
seeds: [0, 1]
arms: [no-memory, memento, lucid, oracle]
report: true
stages:
  - id: benchmark
    kind: benchmark
    config: {benchmark}
{front}{arms}",
        front = super::order_embed_retrieve(bert),
        arms = arm_stages(agent, evaluate)
    );
    std::fs::write(dir.join(format!("{name}.yaml")), yaml).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::os::unix::fs::symlink(root.join("pipelines"), dir.join("pipelines")).unwrap();
    let cache = dir.join("cache");
    let o = lucid(&cache).current_dir(dir).args(["run", &format!("{name}.yaml"), "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    query_run(&cache, dir, &format!("runs/{name}"), sql)
}

/// Rows of `sql` over the project's run `runs/study`, as JSON objects.
pub fn query(cache: &Path, dir: &Path, sql: &str) -> Vec<serde_json::Value> {
    query_run(cache, dir, "runs/study", sql)
}

/// Rows of `sql` over the run folder `run` (relative to `dir`), as JSON objects.
pub fn query_run(cache: &Path, dir: &Path, run: &str, sql: &str) -> Vec<serde_json::Value> {
    let o = lucid(cache).current_dir(dir).args(["query", run, sql, "--format", "json"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The verifiers `lucid audit <run> --arm <arm>` (run in `dir`) puts on the EIA axes.
pub fn audit_verifiers(cache: &Path, dir: &Path, run: &str, arm: &str) -> Vec<String> {
    let o = lucid(cache).current_dir(dir).args(["audit", run, "--arm", arm, "--format", "json"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let audit: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    audit["tables"]["eia"].as_array().unwrap().iter().map(|r| r["verifier"].as_str().unwrap().to_string()).collect()
}

/// Start `lucid run study.yaml` in `dir` with the kill hook set to stop it right after its
/// `parts`-th checkpoint part (a deterministic point of its work, whatever the machine's load);
/// true when the kill landed (the run had that many parts left to write), false when it finished.
pub fn run_and_kill(cache: &Path, dir: &Path, parts: usize) -> bool {
    super::run_killed(lucid(cache).current_dir(dir).args(["run", "study.yaml", "--quiet"]), parts)
}

/// Every deterministic column of episodes, calls and evaluation, in step order.
pub fn stable_tables(cache: &Path, dir: &Path) -> BTreeMap<&'static str, Vec<serde_json::Value>> {
    stable_tables_of(cache, dir, "runs/study")
}

/// [`stable_tables`] of the run folder `run` (relative to `dir`).
pub fn stable_tables_of(cache: &Path, dir: &Path, run: &str) -> BTreeMap<&'static str, Vec<serde_json::Value>> {
    [("episodes", "arm, seed, step"), ("calls", "arm, seed, step, role"), ("evaluation", "arm, seed, step")]
        .into_iter()
        .map(|(t, order)| {
            let cols = super::schemas::deterministic(t).join(", ");
            (t, query_run(cache, dir, run, &format!("SELECT {cols} FROM {t} ORDER BY {order}")))
        })
        .collect()
}

/// A project with the study pipeline over the server at `url`.
pub fn project(url: &str) -> tempfile::TempDir {
    project_with(url, OPS)
}

/// [`project`] with other operational settings.
pub fn project_with(url: &str, ops: Ops) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let data = canary_benchmark(dir.path());
    let bert = super::tiny_models::write_tiny_bert(&dir.path().join("bert"));
    std::fs::write(dir.path().join("study.yaml"), pipeline_with(url, &data, &bert, ops)).unwrap();
    dir
}
