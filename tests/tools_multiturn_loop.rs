//! The multi-turn domain in the memory loop: BFCL's prompting loop with a planted model through
//! every arm — each turn's request after the model ended the turn before, the calls' results
//! sent back in BFCL's format, the transcript stored per turn, BFCL's own verdict as U, the
//! `executes` and `contract` channels on a call that fails, LUCID demoting what they flag — and no
//! ground truth, category or environment state in any request.

use lucid::domains::tools::data;
use lucid::domains::tools::multiturn::data::{MultiTurnTask, read};

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::probes::{Probe, require};
use crate::support::study::project_with_models;

/// The first three base tasks: 0 calls `sort('final_report.pdf')`, whose positional argument
/// BFCL's decoder drops (the call fails: a wrong episode); 1 and 2 take keywords only (right).
fn tasks() -> Vec<MultiTurnTask> {
    let dir = data::package_dir(&lucid::cache_dir::cache_dir()).unwrap();
    read(&dir, "multi_turn_base").unwrap().into_iter().take(3).collect()
}

/// The planted model: a turn's request gets that turn's ground-truth calls in one reply; the
/// calls' results get prose (no call: the turn ends); every self-grade is CORRECT.
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
        "?".into()
    }
}

#[test]
fn the_multi_turn_loop_runs_bfcls_dialogue_in_every_arm_and_never_shows_gold() {
    if !require(Probe::ToolsMultiTurn) {
        return;
    }
    let tasks = tasks();
    let server = FakeServer::start(vec![], Reply::func(planted(tasks.clone())));
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
        let wrong = t.id == "multi_turn_base_0";
        let transcript: serde_json::Value = serde_json::from_str(r["tool_trajectory"].as_str().unwrap()).unwrap();
        // One step per turn, each the turn's ground truth as BFCL's decoder reads it; each turn
        // ended by a reply in prose (it does not decode as calls, which ends a turn in BFCL).
        let turns = transcript["turns"].as_array().unwrap();
        assert_eq!(turns.len(), t.ground_truth.len(), "{r}");
        for (steps, truth) in turns.iter().zip(&t.ground_truth) {
            assert_eq!(steps.as_array().unwrap().len(), 1, "{r}");
            assert_eq!(steps[0].as_array().unwrap().len(), truth.len(), "{r}");
        }
        assert!(transcript["ends"].as_array().unwrap().iter().all(|e| e == "does not decode"), "{r}");
        assert_eq!(transcript["stopped"], serde_json::Value::Null, "{r}");
        // Two executor calls per turn (the calls, then prose) and one grader call.
        assert_eq!(r["calls"], 2 * t.ground_truth.len() + 1, "{r}");
        assert_eq!(r["u"], u8::from(!wrong), "{r}");
        let fired =
            |name: &str| r["channels"].as_array().unwrap().iter().any(|c| c["name"] == name && c["fired"] == true);
        assert_eq!((fired("executes"), fired("contract"), fired("repeat")), (wrong, wrong, false), "{r}");
        assert_eq!(r["failed_tool_calls"].as_i64().unwrap() > 0, wrong, "{r}");
        let want_q = match r["arm"].as_str().unwrap() {
            "lucid" => u8::from(!wrong),
            "oracle" => u8::from(!wrong),
            _ => 1,
        };
        assert_eq!(r["stored_q"], want_q, "{r}");
    }
    let requests = server.requests();
    let mut results_seen = 0;
    for r in &requests {
        let messages = r.body["messages"].as_array().unwrap();
        let text: String = messages.iter().filter_map(|m| m["content"].as_str()).collect::<Vec<_>>().join("\n");
        assert!(!text.contains("multi_turn_base"), "a category reached a prompt: {text:.300}");
        for t in &tasks {
            let truth = serde_json::to_string(&t.ground_truth).unwrap();
            assert!(!text.contains(&truth), "a ground truth reached a prompt");
            assert!(!text.contains(&t.initial_config.to_string()), "an environment's state reached a prompt");
            // A later turn's request comes only after every earlier turn's calls were answered.
            let requests: Vec<&str> =
                t.turns.as_array().unwrap().iter().map(|m| m[0]["content"].as_str().unwrap()).collect();
            for (i, req) in requests.iter().enumerate().skip(1) {
                if let Some(at) = messages.iter().position(|m| m["content"] == *req) {
                    let before = &messages[..at];
                    let answered = before
                        .iter()
                        .filter(|m| {
                            m["role"] == "user" && m["content"].as_str().unwrap().starts_with("[{'role': 'tool'")
                        })
                        .count();
                    assert!(answered >= i, "turn {i}'s request before the earlier turns' results");
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
