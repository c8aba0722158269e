//! The shipped agent pipelines (`pipelines/agent.yaml`: the standard-library example agent;
//! `pipelines/agent-openai.yaml`: an agent written with the `openai` client package, grading
//! itself) as a user runs them, their local model swapped for a scripted loopback server: every
//! arm and both seeds, `lucid audit` on the run, a second run with no model call, a `backend:
//! replay` rerun that reproduces every deterministic column; a killed run that resumes with no
//! episode lost or duplicated, and a second worker served from a shared store.

use std::path::Path;

use serde_json::Value;

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::probes::{Probe, require};
use crate::support::study::{factual_answers, query_run, shipped_project};
use crate::support::{lucid, run_killed, stderr, stdout};

/// The scripted closed-book model of the factual tests for both agents and both graders: a plan,
/// an answer (bare, or after a line of reasoning for the openai agent's `Final answer:`), and a
/// self-check that, like the grader, trusts every one-word answer.
fn answers(prompt: &str) -> String {
    if prompt.contains("Reply YES or NO") {
        let last = prompt.rsplit("Proposed answer:").next().unwrap_or("");
        let answer = last.lines().next().unwrap_or("").trim();
        return if answer.contains(' ') { "NO" } else { "YES" }.into();
    }
    if prompt.contains("Plan the answer") {
        return "Recall the fact.".into();
    }
    let a = factual_answers(prompt);
    if prompt.contains("VERDICT") || prompt.contains("Write the answer only") {
        a
    } else {
        format!("I recall it.\nFinal answer: {a}")
    }
}

/// The shipped pipelines with `file`'s local model swapped for the scripted server at `url`.
fn project(url: &str, file: &str) -> tempfile::TempDir {
    let model = format!("{{backend: openai, model: scripted, base_url: '{url}/v1'}}");
    shipped_project(file, |text| {
        let yaml = text
            .replace("{backend: local, requantize: q8_0}", &model)
            .replace("grader: {choices: [\"VERDICT: CORRECT\", \"VERDICT: INCORRECT\"]}", "grader: {max_tokens: 8}");
        assert!(yaml.matches(&model).count() == 2 && !yaml.contains("choices"), "{file} changed its model lines");
        yaml
    })
}

/// `lucid run pipelines/<file>` on one question a topic, with `extra` arguments.
fn run(d: &Path, file: &str, extra: &[&str]) {
    let o = lucid(&d.join("cache")).current_dir(d).args(run_args(file)).args(extra).output().unwrap();
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
}

fn run_args(file: &str) -> Vec<String> {
    ["run", &format!("pipelines/{file}"), "--quiet", "--set", "stages.benchmark.config.per_topic=1"]
        .map(String::from)
        .to_vec()
}

/// Every deterministic column of episodes, evaluation and calls, in a total order.
fn tables(d: &Path, run: &str) -> Vec<Vec<Value>> {
    [
        ("episodes", "factual/episodes", "arm, seed, step"),
        ("evaluation", "factual/evaluation", "arm, seed, step"),
        ("calls", "calls", "arm, seed, step, role, key"),
    ]
    .iter()
    .map(|(t, doc, order)| {
        let cols = crate::support::schemas::deterministic(doc).join(", ");
        query_run(&d.join("cache"), d, run, &format!("SELECT {cols} FROM {t} ORDER BY {order}"))
    })
    .collect()
}

fn needs() -> bool {
    require(Probe::MiniLm) && require(Probe::Facts)
}

#[test]
fn the_shipped_agent_pipelines_run_every_arm_offline_then_from_cache_and_from_replay() {
    if !needs() || !require(Probe::OpenAiClient) {
        return;
    }
    for (file, name, grader_calls) in [("agent.yaml", "agent", 1), ("agent-openai.yaml", "agent-openai", 0)] {
        let server = FakeServer::start(vec![], Reply::func(answers));
        let dir = project(&server.url, file);
        let d = dir.path();
        run(d, file, &[]);
        let run_dir = format!("runs/{name}");
        let q = |sql: &str| query_run(&d.join("cache"), d, &run_dir, sql);
        let arms = q("SELECT arm, count(*) AS n, sum(failed_calls) AS failed, count(answer) AS answered, \
             sum(CASE WHEN grade = 'correct' THEN 1 ELSE 0 END) AS correct, \
             sum(CASE WHEN answer NOT LIKE '% %' THEN 1 ELSE 0 END) AS one_word FROM episodes GROUP BY arm ORDER BY arm");
        assert_eq!(arms.len(), 4, "{file}: every arm: {arms:?}");
        for a in &arms {
            assert_eq!((a["n"].as_u64(), a["failed"].as_u64(), a["answered"].as_u64()), (Some(22), Some(0), Some(22)));
            // One-word answers are graded correct, the rest not, by lucid's grader or the agent's own check.
            assert_eq!(a["correct"], a["one_word"], "{file}: {a}");
        }
        let roles = q("SELECT role, count(*) AS n FROM calls GROUP BY role ORDER BY role");
        let n = |r: &str| roles.iter().find(|x| x["role"] == r).and_then(|x| x["n"].as_u64()).unwrap_or(0);
        assert_eq!((n("agent"), n("program"), n("grader")), (2 * 88, 88, grader_calls * 88), "{file}: {roles:?}");
        // The report the pipeline writes, and the bank-level audit a user runs on it.
        assert!(d.join(&run_dir).join("report").is_dir(), "{file}: no report");
        let o = lucid(&d.join("cache")).current_dir(d).args(["audit", &run_dir, "--arm", "memento"]).output().unwrap();
        assert!(o.status.success() && stdout(&o).contains("memento"), "{}\n{}", stdout(&o), stderr(&o));

        // A second run: the stage store, no model call.
        let calls = server.requests().len();
        run(d, file, &[]);
        assert_eq!(server.requests().len(), calls, "{file}: a rerun called the model");
        let first = tables(d, &run_dir);

        // A replay of the recorded calls, the server gone: every deterministic column again.
        let recorded = d.join("recorded.parquet");
        let copy = format!("COPY (SELECT * FROM calls) TO '{}'", recorded.display());
        let o = lucid(&d.join("cache")).current_dir(d).args(["query", &run_dir, &copy]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        drop(server);
        let replay = format!("{{backend: replay, calls: '{}'}}", recorded.display());
        let sets = [
            format!("name={name}-replayed"),
            format!("stages.agent.config.model={replay}"),
            format!("stages.oracle.config.model={replay}"),
        ];
        let args: Vec<&str> = sets.iter().flat_map(|s| ["--set", s.as_str()]).collect();
        run(d, file, &args);
        let again = tables(d, &format!("{run_dir}-replayed"));
        assert_eq!(again[0], first[0], "{file}: replayed episodes differ");
        assert_eq!(again[1], first[1], "{file}: replayed evaluation differs");
    }
}

/// The example agent's run (one seed) killed after a few checkpoint parts, up to three times, sharing a store
/// with another worker: resumed, its tables equal an uninterrupted run's; the other worker, in
/// another folder, takes every stage from the store without a model call or an agent process.
#[test]
fn a_killed_agent_run_resumes_exactly_and_a_shared_store_serves_another_worker() {
    if !needs() {
        return;
    }
    let server = FakeServer::start(vec![], Reply::func(answers));
    let store = tempfile::tempdir().unwrap();
    let store_url = format!("file://{}", store.path().display());
    let one_seed = ["--set", "seeds=[0]", "--store", &store_url];
    let killed = project(&server.url, "agent.yaml");
    let d = killed.path();
    let mut kills = 0;
    for parts in [3, 4, 5] {
        let mut cmd = lucid(&d.join("cache"));
        cmd.current_dir(d).args(run_args("agent.yaml")).args(one_seed);
        kills += usize::from(run_killed(&mut cmd, parts));
    }
    assert!(kills >= 1, "no kill landed");
    run(d, "agent.yaml", &one_seed);
    let resumed = tables(d, "runs/agent");

    let clean = project(&server.url, "agent.yaml");
    run(clean.path(), "agent.yaml", &one_seed[..2]);
    let want = tables(clean.path(), "runs/agent");
    for (t, (got, want)) in ["episodes", "evaluation", "calls"].iter().zip(resumed.iter().zip(&want)) {
        assert_eq!(got.len(), want.len(), "{t}: rows lost or duplicated after kills");
        assert_eq!(got, want, "{t}: a killed and resumed agent run differs from an uninterrupted one");
    }

    // Another worker in another folder, the same store: no model call (its response cache is
    // empty, so an agent process would have called the server).
    let other = project(&server.url, "agent.yaml");
    let calls = server.requests().len();
    run(other.path(), "agent.yaml", &one_seed);
    assert_eq!(server.requests().len(), calls, "the shared store's worker ran the agent");
    assert_eq!(tables(other.path(), "runs/agent"), resumed);
}
