//! The multi-turn domain in the memory loop: BFCL's prompting loop with a planted model through
//! every arm — each turn's request after the model ended the turn before, the calls' results
//! sent back in BFCL's format, the transcript stored per turn, BFCL's own verdict as U, the
//! `executes` and `contract` channels on a call that fails, LUCID demoting what they flag — and no
//! ground truth, category or environment state in any request; a dialogue driven by hand: the
//! held-out functions' turn, a failed call's result, the step limit, the contract on a held-out
//! function called early.

use std::sync::Arc;

use lucid::domains::tools::data;
use lucid::domains::tools::multiturn::data::{MultiTurnTask, read};
use lucid::domains::tools::multiturn::dialogue::{Bench, Conversation};
use lucid::domains::tools::multiturn::env::Sources;
use lucid::domains::tools::multiturn::sources::split;
use lucid::domains::tools::multiturn::transcript::{STEP_LIMIT, Transcript, UNDECODABLE};
use lucid::domains::tools::multiturn::{MultiTurnConfig, MultiTurnDomain, MultiTurnObs};
use lucid::llm::{Message, Role};
use lucid::python::{PyLimits, Python};
use lucid::seam::Domain;
use lucid::seam::dialogue::{Dialogue, Next};

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::probes::{Probe, require};
use crate::support::study::project_with_models;

/// The first three base tasks: 0 calls `sort('final_report.pdf')`, whose positional argument
/// BFCL's decoder drops (the call fails: a wrong episode); 1 takes keywords only (right); 2 is the
/// canary: the planted model never answers it with a call, so none of its ground-truth calls and
/// none of its environments' contents may reach a request.
fn tasks() -> Vec<MultiTurnTask> {
    let dir = data::package_dir(&lucid::cache_dir::cache_dir()).unwrap();
    read(&dir, "multi_turn_base").unwrap().into_iter().take(3).collect()
}

/// The planted model: a turn's request of `tasks` gets that turn's ground-truth calls in one
/// reply; the calls' results, and any other request, get prose (no call: the turn ends); every
/// self-grade is CORRECT.
fn planted(tasks: Vec<MultiTurnTask>) -> impl Fn(&str) -> String + Send + Sync + 'static {
    move |last: &str| {
        if last.contains("VERDICT") {
            return "VERDICT: CORRECT".into();
        }
        if last.starts_with("[{'role': 'tool'") {
            return "All done.".into();
        }
        for t in &tasks {
            for (turn, calls) in t.turns.as_array().unwrap().iter().zip(&t.ground_truth) {
                let request = turn[0]["content"].as_str().unwrap();
                if last.trim_end().ends_with(request.trim_end()) {
                    return format!("[{}]", calls.join(", "));
                }
            }
        }
        "I cannot help with that.".into()
    }
}

/// The string leaves of a JSON value (an environment's file contents, names, messages).
fn leaves(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| leaves(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| leaves(x, out)),
        _ => {}
    }
}

#[test]
fn the_multi_turn_loop_runs_bfcls_dialogue_in_every_arm_and_never_shows_gold() {
    if !require(Probe::ToolsMultiTurn) {
        return;
    }
    let tasks = tasks();
    let server = FakeServer::start(vec![], Reply::func(planted(tasks[..2].to_vec())));
    let dir = project_with_models();
    let d = dir.path();
    let bert = crate::support::tiny_models::write_tiny_bert(&d.join("bert"));
    let model = format!("{{backend: openai, model: planted, base_url: '{}/v1'}}", server.url);
    let agent = format!("{{domain: {{kind: tools_multiturn}}, model: {model}, k: 2");
    let rows = crate::support::study::run_every_arm(
        d,
        "mt",
        "{source: bfcl_multi_turn, categories: [multi_turn_base], per_topic: 3}",
        &agent,
        "",
        &bert,
        "SELECT e.arm, t.task_id, e.tool_trajectory, e.turns_done, e.steps, e.failed_tool_calls, e.first_failure, \
         e.channels, e.flagged, e.stored_q, e.calls, v.u \
         FROM episodes e JOIN tasks t USING (question_id) \
         JOIN evaluation v ON v.arm = e.arm AND v.seed = e.seed AND v.step = e.step",
    );
    assert_eq!(rows.len(), 3 * 4 * 2);
    for r in &rows {
        let t = tasks.iter().find(|t| t.id == r["task_id"]).unwrap();
        let (wrong, canary) = (t.id == "multi_turn_base_0", t.id == "multi_turn_base_2");
        let transcript: serde_json::Value = serde_json::from_str(r["tool_trajectory"].as_str().unwrap()).unwrap();
        // One step per turn, each the turn's ground truth as BFCL's decoder reads it (none on the
        // canary); each turn ended by a reply in prose (it does not decode as calls, which ends a
        // turn in BFCL).
        let turns = transcript["turns"].as_array().unwrap();
        assert_eq!(turns.len(), t.ground_truth.len(), "{r}");
        for (steps, truth) in turns.iter().zip(&t.ground_truth) {
            assert_eq!(steps.as_array().unwrap().len(), usize::from(!canary), "{r}");
            if !canary {
                assert_eq!(steps[0].as_array().unwrap().len(), truth.len(), "{r}");
            }
        }
        assert!(transcript["ends"].as_array().unwrap().iter().all(|e| e == "does not decode"), "{r}");
        assert_eq!(transcript["stopped"], serde_json::Value::Null, "{r}");
        // Two executor calls per turn (the calls, then prose; one on the canary) and one grader call.
        let per_turn = if canary { 1 } else { 2 };
        assert_eq!(r["calls"], per_turn * t.ground_truth.len() + 1, "{r}");
        let right = !wrong && !canary;
        assert_eq!(r["u"], u8::from(right), "{r}");
        let fired =
            |name: &str| r["channels"].as_array().unwrap().iter().any(|c| c["name"] == name && c["fired"] == true);
        assert_eq!((fired("executes"), fired("contract"), fired("repeat")), (wrong, wrong, false), "{r}");
        assert_eq!(r["failed_tool_calls"].as_i64().unwrap() > 0, wrong, "{r}");
        let want_q = match r["arm"].as_str().unwrap() {
            "lucid" => u8::from(!wrong),
            "oracle" => u8::from(right),
            _ => 1,
        };
        assert_eq!(r["stored_q"], want_q, "{r}");
    }
    let requests = server.requests();
    let canary = &tasks[2];
    let mut secrets: Vec<String> = canary.ground_truth.iter().flatten().cloned().collect();
    leaves(&canary.initial_config, &mut secrets);
    // What the canary's own requests say is the agent's to see.
    let said = canary.turns.to_string();
    secrets.retain(|s| s.len() >= 12 && !said.contains(s.as_str()));
    assert!(secrets.len() >= 8, "{secrets:?}");
    let mut results_seen = 0;
    for r in &requests {
        let messages = r.body["messages"].as_array().unwrap();
        let text: String = messages.iter().filter_map(|m| m["content"].as_str()).collect::<Vec<_>>().join("\n");
        assert!(!text.contains("multi_turn_base"), "a category reached a prompt: {text:.300}");
        for secret in &secrets {
            assert!(!text.contains(secret.as_str()), "the canary's ground truth or state reached a request: {secret}");
        }
        for t in &tasks {
            // A later turn's request comes only after the earlier turns: each of their calls
            // answered with its results, each turn ended by a reply without calls.
            let requests: Vec<&str> =
                t.turns.as_array().unwrap().iter().map(|m| m[0]["content"].as_str().unwrap()).collect();
            for (i, req) in requests.iter().enumerate().skip(1) {
                if let Some(at) = messages.iter().position(|m| m["content"] == *req) {
                    let before = &messages[..at];
                    let is_results = |m: &&serde_json::Value| {
                        m["role"] == "user" && m["content"].as_str().unwrap().starts_with("[{'role': 'tool'")
                    };
                    let replies = before.iter().filter(|m| m["role"] == "assistant").count();
                    assert_eq!(replies, i + before.iter().filter(is_results).count(), "turn {i}'s request too early");
                }
            }
        }
        results_seen += messages
            .iter()
            .filter(|m| {
                m["content"]
                    .as_str()
                    .is_some_and(|c| c.starts_with("[{'role': 'tool', 'name': \"cd(folder='workspace')\""))
            })
            .count();
    }
    assert!(results_seen > 0, "no results went back in BFCL's format");
}

/// The interpreter and the sources, when fetched (None: skip, or fail under CI).
fn bench_parts() -> Option<(Arc<Python>, Arc<Sources>)> {
    if !require(Probe::ToolsMultiTurn) {
        return None;
    }
    let cache = lucid::cache_dir::cache_dir();
    let sources = Sources::read(&data::package_dir(&cache).unwrap(), &data::mpmath_dir(&cache).unwrap()).unwrap();
    Some((Arc::new(lucid::python::package::interpreter(&cache).unwrap()), Arc::new(sources)))
}

/// The messages of an ask (panics on the end).
fn asked(next: Next) -> Vec<Message> {
    match next {
        Next::Ask(m) => m,
        Next::Done(a) => panic!("done early: {a:?}"),
    }
}

/// The transcript a dialogue ended with (panics on an ask).
fn ended(next: Next) -> Transcript {
    match next {
        Next::Done(a) => Transcript::parse(&a.unwrap()).unwrap(),
        Next::Ask(m) => panic!("still asking: {:?}", m.last()),
    }
}

#[test]
fn a_dialogue_sends_bfcls_turns_holdout_results_and_stops_at_the_step_limit() {
    let Some((py, sources)) = bench_parts() else { return };
    let dir = data::package_dir(&lucid::cache_dir::cache_dir()).unwrap();
    let limits = PyLimits::default();
    let bench = || Bench { py: &py, sources: &sources, limits: &limits, step_limit: 2 };

    // multi_turn_miss_func_0 holds `sort` out until turn 3, whose request is the new functions.
    let t = read(&dir, "multi_turn_miss_func").unwrap().remove(0);
    assert_eq!(t.holdout.keys().collect::<Vec<_>>(), [&3]);
    let (task, _) = split(0, &t);
    let mut c = Conversation::new(bench(), &task, "SYSTEM", "FIRST").unwrap();
    let mut messages = asked(c.start().unwrap());
    assert_eq!((messages[0].role, messages[0].content.as_str()), (Role::System, "SYSTEM"));
    assert_eq!((messages[1].role, messages[1].content.as_str()), (Role::User, "FIRST"));
    let mut transcript = None;
    for (turn, truth) in t.ground_truth.iter().enumerate() {
        let request = &messages.last().unwrap().content;
        match turn {
            0 => assert_eq!(request, "FIRST"),
            3 => assert!(
                request.contains("'name': 'sort'")
                    && request.ends_with("I have updated some more functions you can choose from. What about now?"),
                "{request}"
            ),
            _ => assert_eq!(request, t.turns[turn][0]["content"].as_str().unwrap()),
        }
        // A turn with calls: one step, whose results come back in BFCL's format; then prose.
        if !truth.is_empty() {
            messages = asked(c.next(Some(&format!("[{}]", truth.join(", ")))).unwrap());
            let results = &messages.last().unwrap().content;
            assert!(results.starts_with("[{'role': 'tool', 'name': "), "{results}");
            assert_eq!(messages[messages.len() - 2].role, Role::Assistant);
        }
        let next = c.next(Some("Done.")).unwrap();
        if turn + 1 == t.ground_truth.len() {
            transcript = Some(ended(next));
        } else {
            messages = asked(next);
        }
    }
    let transcript = transcript.unwrap();
    assert_eq!(transcript.turns.len(), t.ground_truth.len());
    assert_eq!(transcript.stopped, None);
    assert!(transcript.ends.iter().all(|e| e == UNDECODABLE));

    // The held-out function called before its turn breaks the contract (BFCL's executor would run
    // it); its own environment runs it without an error.
    let domain = MultiTurnDomain::new(MultiTurnConfig::default(), py.clone(), sources.clone()).unwrap();
    let early =
        Transcript { turns: vec![vec![vec!["sort(file_name='final_report.pdf')".into()]]], ..Transcript::default() };
    let channels = domain.channels(&task, Some(&early.to_artifact()), &MultiTurnObs::default());
    let contract = channels.0.iter().find(|c| c.name == "contract").unwrap();
    assert!(
        contract.fired && contract.detail.as_deref().unwrap().contains("sort is not one of the functions offered"),
        "{contract:?}"
    );

    // A turn past the step limit (2 here, BFCL's 20 by default) stops the episode; a call that
    // fails sends BFCL's error back as its result.
    let t = read(&dir, "multi_turn_base").unwrap().remove(1);
    let (task, _) = split(1, &t);
    let mut c = Conversation::new(bench(), &task, "SYSTEM", "FIRST").unwrap();
    asked(c.start().unwrap());
    let failed = asked(c.next(Some("[cat(file_name='no_such_file.txt')]")).unwrap());
    assert!(failed.last().unwrap().content.contains("No such file"), "{:?}", failed.last());
    asked(c.next(Some("[ls(a=True)]")).unwrap());
    let stopped = ended(c.next(Some("[ls(a=True)]")).unwrap());
    assert_eq!((stopped.turns.len(), stopped.turns[0].len()), (1, 3));
    assert_eq!(stopped.stopped.as_deref(), Some(STEP_LIMIT));
}

/// An agent program cannot hold a dialogue yet: the loop refuses it before any episode, naming
/// the domain, instead of running episodes that give no artifact.
#[test]
fn an_agent_program_on_multi_turn_tasks_is_refused_before_any_episode() {
    if !require(Probe::ToolsMultiTurn) {
        return;
    }
    let dir = project_with_models();
    let d = dir.path();
    let bert = crate::support::tiny_models::write_tiny_bert(&d.join("bert"));
    let yaml = format!(
        "name: mt_program
seeds: [0]
arms: [memento]
stages:
  - id: benchmark
    kind: benchmark
    config: {{source: bfcl_multi_turn, per_topic: 1}}
{front}  - id: agent
    kind: memory_loop
    matrix: [seed, arm]
    inputs: [tasks, order, retrieval]
    config: {{domain: {{kind: tools_multiturn}}, model: {{backend: openai, model: none, base_url: 'http://127.0.0.1:9/v1'}}, k: 2, agent: {{command: [python3, -c, 'pass']}}}}
",
        front = crate::support::order_embed_retrieve(&bert)
    );
    std::fs::write(d.join("mt_program.yaml"), yaml).unwrap();
    std::os::unix::fs::symlink(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines"), d.join("pipelines"))
        .unwrap();
    let o = crate::support::lucid(&d.join("cache"))
        .current_dir(d)
        .args(["run", "mt_program.yaml", "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("tools_multiturn domain's episodes are dialogues"), "{err}");
}
