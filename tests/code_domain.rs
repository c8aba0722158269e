//! Code, the third domain, end to end: the memory loop over tasks in HumanEval's layout with a
//! model that writes planted code (right, wrong on the examples, silently wrong, not Python,
//! mistyped, raising); every answer-free channel fires as its rule says, the hidden tests score
//! it in the sandbox, the arms store what they should, and the verifier ladder on code
//! (self-written tests, self-consistency by behaviour, a judge) scores the bank — while a canary
//! in the hidden tests reaches no request. Then the shipped pipelines (`code.yaml`,
//! `code_bank.yaml`) on HumanEval itself with the scripted model.

use std::path::Path;

use crate::support::fake_server::{FakeServer, Reply};
use crate::support::probes::{Probe, require};
use crate::support::study::{project_with_models, query_run, shipped_project};
use crate::support::{lucid, stderr, stdout};

const CANARY: &str = "lucid-canary-0x5eed";

/// Per entry point: the planted code, the planted self-test, and what must come out:
/// (u, syntax, examples, runtime, types, selftest V).
struct Case {
    entry: &'static str,
    prompt: &'static str,
    test: &'static str,
    code: &'static str,
    selftest: &'static str,
    want: (u8, bool, bool, bool, bool, Option<f64>),
}

const CASES: &[Case] = &[
    Case {
        entry: "add",
        prompt: "def add(a: int, b: int) -> int:\n    \"\"\" Add two numbers.\n    >>> add(2, 3)\n    5\n    \"\"\"\n",
        test: "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n",
        code: "def add(a: int, b: int) -> int:\n    return a + b",
        selftest: "assert add(2, 3) == 5\nassert add(0, 0) == 0",
        want: (1, false, false, false, false, Some(1.0)),
    },
    Case {
        entry: "is_even",
        prompt: "def is_even(n: int) -> bool:\n    \"\"\" Whether n is even.\n    >>> is_even(4)\n    True\n    \"\"\"\n",
        test: "def check(candidate):\n    assert candidate(4) is True\n    assert candidate(3) is False\n",
        code: "def is_even(n: int) -> bool:\n    return n % 2 == 1",
        selftest: "assert is_even(4)",
        want: (0, false, true, false, false, Some(0.0)),
    },
    Case {
        entry: "first",
        prompt: "def first(xs: list) -> int:\n    \"\"\" The first element.\n    >>> first([7, 8])\n    7\n    \"\"\"\n",
        test: "def check(candidate):\n    assert candidate([7, 8]) == 7\n    assert candidate([1]) == 1\n",
        code: "def first(xs: list) -> int:\n    return 7",
        selftest: "assert first([1]) == 1",
        want: (0, false, false, false, false, Some(0.0)),
    },
    Case {
        entry: "shout",
        prompt: "def shout(s: str) -> str:\n    \"\"\" Upper case.\n    >>> shout('a')\n    'A'\n    \"\"\"\n",
        test: "def check(candidate):\n    assert candidate('a') == 'A'\n",
        code: "def shout(s: str) -> str:\n    return s.upper(",
        selftest: "The function looks right.",
        want: (0, true, false, false, false, None),
    },
    Case {
        entry: "halve",
        prompt: "def halve(x: int) -> int:\n    \"\"\" Half of x, rounded down.\n    >>> halve(4)\n    2\n    \"\"\"\n",
        test: "def check(candidate):\n    assert candidate(4) == 2\n    assert candidate(5) == 2\n",
        code: "def halve(x: int) -> int:\n    return x / 2",
        selftest: "assert halve(4) == 2",
        want: (0, false, false, false, true, Some(1.0)),
    },
    Case {
        entry: "at",
        prompt: "from typing import List\n\n\ndef at(xs: List[int], i: int) -> int:\n    \"\"\" The i-th element.\n    >>> at([1, 2], 1)\n    2\n    \"\"\"\n",
        test: "def check(candidate):\n    assert candidate([1, 2], 1) == 2\n",
        code: "    return xs[i + 5]",
        selftest: "```python\nassert at([1, 2], 1) == 2\n```",
        want: (0, false, false, true, false, Some(0.0)),
    },
];

fn case_of(prompt: &str) -> Option<&'static Case> {
    CASES.iter().find(|c| prompt.contains(&format!("`{}`", c.entry)))
}

/// The planted model: code for the executor (in a fence, with prose after it), self-tests for
/// the test writer, CORRECT for every grader and judge.
fn planted(prompt: &str) -> String {
    if prompt.contains("VERDICT") {
        return "VERDICT: CORRECT".into();
    }
    let Some(c) = case_of(prompt) else { return "?".into() };
    if prompt.contains("Write tests for the function") {
        return c.selftest.into();
    }
    format!("Here it is:\n```python\n{}\n```\nThis works.", c.code)
}

fn tasks_jsonl() -> String {
    CASES
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let test = format!("\n\nMETADATA = {{'note': '{CANARY}'}}\n\n{}", c.test);
            serde_json::json!({"task_id": format!("Toy/{i}"), "prompt": c.prompt, "entry_point": c.entry,
                "canonical_solution": "", "test": test})
            .to_string()
                + "\n"
        })
        .collect()
}

#[test]
fn the_code_loop_runs_with_named_channels_and_never_shows_the_tests() {
    if !require(Probe::Code) {
        return;
    }
    let server = FakeServer::start(vec![], Reply::func(planted));
    let dir = project_with_models();
    let d = dir.path();
    std::fs::write(d.join("tasks.jsonl"), tasks_jsonl()).unwrap();
    let bert = crate::support::tiny_models::write_tiny_bert(&d.join("bert"));
    let model = format!("{{backend: openai, model: planted, base_url: '{}/v1'}}", server.url);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let prompts = root.join("pipelines/prompts-code");
    let judges = root.join("pipelines/judges");
    let agent = format!("{{domain: {{kind: code}}, model: {model}, prompts: '{}', k: 2", prompts.display());
    let verifiers = format!(
        "  - id: selftest
    kind: selftest
    matrix: [seed, arm]
    arms: [memento]
    inputs: [tasks, episodes]
    config: {{model: {model}, prompt: '{judges}/selftest.txt', answer_column: code}}
  - id: resample
    kind: resample
    matrix: [seed, arm]
    arms: [memento]
    inputs: [tasks, episodes]
    config: {{model: {model}, prompts: '{prompts}', answer_column: code, samples: 2, decoding: {{max_tokens: 320, temperature: 0.7, stop: ['\n```\n']}}}}
  - id: judge
    kind: judge
    matrix: [seed, arm]
    arms: [memento]
    inputs: [tasks, episodes]
    config: {{model: {model}, prompt: '{judges}/code_regrade.txt', answer_column: code}}
",
        judges = judges.display(),
        prompts = prompts.display()
    );
    let yaml = format!(
        "name: code
seeds: [0]
arms: [no-memory, memento, lucid, oracle]
report: true
stages:
  - id: benchmark
    kind: benchmark
    config: {{source: humaneval-jsonl, path: tasks.jsonl}}
{front}{arms}{verifiers}",
        front = crate::support::order_embed_retrieve(&bert),
        arms = crate::support::study::arm_stages(&agent, ""),
    );
    std::fs::write(d.join("code.yaml"), &yaml).unwrap();
    let cache = d.join("cache");
    let o = lucid(&cache).current_dir(d).args(["run", "code.yaml", "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let q = |sql: &str| query_run(&cache, d, "runs/code", sql);

    let rows = q("SELECT e.arm, t.entry_point, e.code, e.channels, e.flagged, e.stored_q, v.u, v.verdict \
                  FROM episodes e JOIN tasks t USING (question_id) \
                  JOIN evaluation v ON v.arm = e.arm AND v.seed = e.seed AND v.step = e.step");
    assert_eq!(rows.len(), CASES.len() * 4);
    for r in &rows {
        let c = CASES.iter().find(|c| c.entry == r["entry_point"]).unwrap();
        let (u, syntax, examples, runtime, types, _) = c.want;
        let fired = |name: &str| {
            r["channels"].as_array().unwrap().iter().find(|x| x["name"] == name).unwrap()["fired"].as_bool().unwrap()
        };
        assert_eq!(
            (fired("syntax"), fired("examples"), fired("runtime"), fired("types")),
            (syntax, examples, runtime, types),
            "{r}"
        );
        assert_eq!(
            (r["u"].as_u64(), r["verdict"].as_str()),
            (Some(u.into()), Some(if u == 1 { "pass" } else { "fail" }))
        );
        let any = syntax || examples || runtime || types;
        assert_eq!(r["flagged"], any, "{r}");
        let want_q = match r["arm"].as_str().unwrap() {
            "lucid" => u8::from(!any),
            "oracle" => u,
            _ => 1,
        };
        assert_eq!(r["stored_q"], want_q, "{r}");
    }
    // The code is read out of the fence; a bare body stays a body.
    let at = rows.iter().find(|r| r["entry_point"] == "at").unwrap();
    assert_eq!(at["code"], "    return xs[i + 5]\n");
    let add = rows.iter().find(|r| r["entry_point"] == "add").unwrap();
    assert_eq!(add["code"], "\ndef add(a: int, b: int) -> int:\n    return a + b\n");

    // The verifiers on the memento bank: the self-tests ran against the stored code; behaviour
    // agrees with itself where the code loads, and a program that does not compile agrees with nothing.
    let v = |t: &str| {
        q(&format!("SELECT t.entry_point, v.v FROM {t} v JOIN tasks t USING (question_id) WHERE v.arm = 'memento'"))
    };
    for r in v("v_selftest") {
        let c = CASES.iter().find(|c| c.entry == r["entry_point"]).unwrap();
        assert_eq!(r["v"].as_f64(), c.want.5, "selftest {r}");
    }
    for r in v("v_resample") {
        let want = if r["entry_point"] == "shout" { 0.0 } else { 1.0 };
        assert_eq!(r["v"].as_f64(), Some(want), "resample {r}");
    }
    assert!(v("v_judge").iter().all(|r| r["v"].as_f64() == Some(1.0)));

    // Label-free: the hidden tests' canary reaches no request of the loop or of any verifier.
    let requests = server.requests();
    assert!(requests.len() >= CASES.len() * 3);
    for r in &requests {
        let body = r.body.to_string();
        assert!(!body.contains(CANARY) && !body.contains("def check("), "the hidden tests reached a prompt: {body}");
    }
    // The grader sees the examples as they ran.
    assert!(requests.iter().any(|r| r.body.to_string().contains(">>> is_even(4)\\nFalse")));

    // The report and the audit, unchanged, on code: each channel is a verifier.
    let verifiers = crate::support::study::audit_verifiers(&cache, d, "runs/code", "lucid");
    for v in ["syntax", "examples", "runtime", "types", "detector"] {
        assert!(verifiers.iter().any(|x| x == v), "{v} in {verifiers:?}");
    }
    assert!(d.join("runs/code/report/report.json").is_file());

    // `lucid view` shows each episode's code (the tasks' domain names the artifact column).
    let o = lucid(&cache).current_dir(d).args(["view", "runs/code", "--export", "view"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let details: String = std::fs::read_dir(d.join("view/details"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(details.contains(r#""artifact":"\ndef add(a: int, b: int) -> int:"#), "no code in the viewer's episodes");
}

#[test]
fn the_code_that_follows_a_prompt_is_read_from_the_executor_text() {
    use lucid::domains::code::extract::code;
    assert_eq!(code("```python\ndef f(x):\n    return x\n```\nDone.").as_deref(), Some("\ndef f(x):\n    return x\n"));
    assert_eq!(code("```\n    return 1\n").as_deref(), Some("    return 1\n"), "an unclosed fence runs to the end");
    assert_eq!(code("return x + 1\n").as_deref(), Some("    return x + 1\n"), "a body without its indentation");
    assert_eq!(
        code("from math import sqrt\ndef f(x): return sqrt(x)").as_deref().map(|c| c.starts_with('\n')),
        Some(true)
    );
    assert_eq!(
        code("```python\n# Solution\nMOD = 7\ndef f(x):\n    return x % MOD\n```").as_deref(),
        Some("\n# Solution\nMOD = 7\ndef f(x):\n    return x % MOD\n"),
        "a comment and a constant before the definition"
    );
    assert_eq!(code("    # the body\n    return 1").as_deref(), Some("    # the body\n    return 1\n"));
    assert_eq!(code("```python\n\n```"), None);
    assert_eq!(code("  \n"), None);
}

/// `code.yaml` and `code_bank.yaml` as shipped, on HumanEval's first problems, their local
/// models swapped for the scripted backend.
#[test]
fn the_shipped_code_pipelines_run_offline_with_the_scripted_model() {
    if !require(Probe::Code) || !require(Probe::MiniLm) {
        return;
    }
    for (file, run) in [("code.yaml", "runs/code"), ("code_bank.yaml", "runs/code_bank")] {
        let dir = shipped_project(file, |text| {
            let yaml = text
                .replace("{backend: local, model: qwen2.5-coder}", "{backend: scripted}")
                .replace("{backend: local}", "{backend: scripted}");
            assert!(!yaml.contains("backend: local"), "{file} changed its model lines");
            yaml
        });
        let d = dir.path();
        let o = lucid(&d.join("cache"))
            .current_dir(d)
            .args(["run", &format!("pipelines/{file}"), "--quiet", "--limit", "3"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{file}: {}\n{}", stdout(&o), stderr(&o));
        let arms = query_run(
            &d.join("cache"),
            d,
            run,
            "SELECT arm, count(*) AS n, sum(u) AS passed FROM evaluation GROUP BY arm",
        );
        assert!(!arms.is_empty() && arms.iter().all(|a| a["n"] == 6), "{file}: 3 problems x 2 seeds per arm: {arms:?}");
        let o = lucid(&d.join("cache")).current_dir(d).args(["audit", run, "--arm", "memento"]).output().unwrap();
        assert!(o.status.success(), "{file}: {}", stderr(&o));
    }
}
