//! Bring your own agent (`agent: {command: [...]}` of a memory_loop stage): the standard-library
//! example agent (`pipelines/agents/example_agent.py`) runs through the factual loop, every arm,
//! two seeds, its model calls through lucid's loopback endpoint recorded per episode; it never
//! sees gold or a real key; a rerun is served from the stage store, an edited agent reruns from
//! the response cache with no model call, and a replay of the recorded calls reruns it with no
//! model at all. A program that fails, hangs or answers outside the protocol, and a request the
//! endpoint cannot honour, are recorded per episode, the episodes still stored.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::agent::{CANARY, model, pipeline, query, run};
use crate::support::fake_server::{FakeServer, Reply};
use crate::support::{lucid, stderr, stdout};

fn example_agent() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/agents/example_agent.py")
}

#[test]
fn the_example_agent_runs_through_the_loop_recorded_cached_and_replayed() {
    let server = FakeServer::start(vec![], Reply::func(model));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The example agent behind a wrapper that keeps what it was sent and its environment.
    let agent_file = d.join("agent.py");
    std::fs::copy(example_agent(), &agent_file).unwrap();
    let yaml = pipeline(
        d,
        &format!("{{backend: openai, model: m, base_url: '{}/v1'}}", server.url),
        // Unboxed, so that the logs it writes stay in the pipeline's folder to be read here (the
        // box is tests/agent_box.rs'); the environment is the allow-list either way.
        "{command: [sh, -c, 'tee -a requests.log | python3 agent.py; env >> env.log'], files: [agent.py], box: off}",
        "[no-memory, memento, lucid]",
        "[0, 1]",
    );
    std::fs::write(d.join("agent.yaml"), yaml).unwrap();
    run(d, &[("OPENAI_API_KEY", "sk-real-secret-123"), ("HF_TOKEN", "hf-secret-456")]);

    let eps = query(
        d,
        "SELECT arm, seed, step, answer, plan, grade, calls, failed_calls FROM episodes ORDER BY arm, seed, step",
    );
    assert_eq!(eps.len(), 4 * 3 * 2);
    for e in &eps {
        assert_eq!(e["plan"], "Recall the fact.", "{e}");
        assert_eq!(e["grade"], "correct", "lucid's grader graded it: {e}");
        // Two model calls through the endpoint, the program, lucid's grader.
        assert_eq!((e["calls"].as_u64(), e["failed_calls"].as_u64()), (Some(4), Some(0)), "{e}");
    }
    let answers: Vec<&str> = eps.iter().filter_map(|e| e["answer"].as_str()).collect();
    assert!(answers.contains(&"Fredville") && answers.contains(&"Paris"), "{answers:?}");
    // Every endpoint call is a `calls` row of its episode, role `agent`.
    let calls = query(d, "SELECT arm, seed, step, role, text, error FROM calls ORDER BY arm, seed, step, role");
    let by_role = |r: &str| calls.iter().filter(|c| c["role"] == r).count();
    assert_eq!((by_role("agent"), by_role("program"), by_role("grader")), (2 * 24, 24, 24));
    let joined = query(
        d,
        "SELECT count(*) AS n FROM calls c JOIN episodes e ON c.arm = e.arm AND c.seed = e.seed AND c.step = e.step \
         WHERE c.role = 'agent' AND c.text = e.answer",
    );
    assert_eq!(joined[0]["n"], 24, "each episode's answer call is filed under that episode");
    // Memory arms show the program the bank with its labels; no request carries gold, and the
    // program never sees a real key.
    let sent = std::fs::read_to_string(d.join("requests.log")).unwrap();
    assert_eq!(sent.lines().count(), 24);
    let requests: Vec<Value> = sent.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(requests.iter().any(|r| r["episode"]["arm"] == "memento" && !r["memories"].as_array().unwrap().is_empty()));
    assert!(requests.iter().all(|r| r["protocol"] == 1 && r["artifact"] == "answer"));
    assert!(
        requests.iter().filter(|r| r["episode"]["arm"] == "no-memory").all(|r| r["memories"] == Value::Array(vec![]))
    );
    assert!(!sent.contains(CANARY) && !sent.contains("Sylburg"), "gold reached the agent");
    for r in server.requests() {
        assert!(!r.body.to_string().contains(CANARY), "gold reached the model through the endpoint");
    }
    let env = std::fs::read_to_string(d.join("env.log")).unwrap();
    assert!(!env.contains("sk-real-secret-123") && !env.contains("hf-secret-456"), "a real key reached the agent");
    assert!(env.contains("OPENAI_API_KEY=lucid-dummy-key") && env.contains("OPENAI_BASE_URL=http://127.0.0.1:"));

    // A rerun comes from the stage store: no program, no model call.
    let before = server.requests().len();
    run(d, &[]);
    assert_eq!(std::fs::read_to_string(d.join("requests.log")).unwrap().lines().count(), 24);
    // An edited agent reruns the stage; its unchanged requests come from the response cache.
    let mut text = std::fs::read_to_string(&agent_file).unwrap();
    text.push_str("\n# edited\n");
    std::fs::write(&agent_file, text).unwrap();
    run(d, &[]);
    assert_eq!(std::fs::read_to_string(d.join("requests.log")).unwrap().lines().count(), 48, "the agent reran");
    assert_eq!(server.requests().len(), before, "no model call: the response cache answered");
    let hits = query(d, "SELECT count(*) AS n, sum(CAST(cache_hit AS INT)) AS hits FROM calls WHERE role = 'agent'");
    assert_eq!(hits[0]["n"], hits[0]["hits"], "{hits:?}");

    // Replay of the recorded calls: the agent reruns with no model at all, the same answers.
    let recorded = d.join("recorded.parquet");
    let o = lucid(&d.join("cache"))
        .current_dir(d)
        .args(["query", "runs/agent", &format!("COPY (SELECT * FROM calls) TO '{}'", recorded.display())])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let yaml = std::fs::read_to_string(d.join("agent.yaml")).unwrap();
    let replay = yaml
        .replace(
            &format!("{{backend: openai, model: m, base_url: '{}/v1'}}", server.url),
            &format!("{{backend: replay, calls: '{}'}}", recorded.display()),
        )
        .replace("name: agent", "name: replayed");
    std::fs::write(d.join("agent.yaml"), replay).unwrap();
    drop(server);
    run(d, &[]);
    let again = crate::support::study::query_run(
        &d.join("cache"),
        d,
        "runs/replayed",
        "SELECT arm, seed, step, answer, plan, grade, calls, failed_calls FROM episodes ORDER BY arm, seed, step",
    );
    assert_eq!(again, eps, "a replay reproduces every episode");
}

#[test]
fn a_failing_agent_or_a_refused_request_is_recorded_per_episode() {
    let server = FakeServer::start(vec![], Reply::func(model));
    let model_cfg = format!("{{backend: openai, model: m, base_url: '{}/v1'}}", server.url);
    // A request with a field the endpoint cannot honour: the agent prints the answer it got.
    let streaming = "import json, os, sys, urllib.request, urllib.error\n\
        sys.stdin.readline()\n\
        body = json.dumps({'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}], 'stream': True}).encode()\n\
        req = urllib.request.Request(os.environ['OPENAI_BASE_URL'] + '/chat/completions', data=body, headers={'Content-Type': 'application/json'})\n\
        try:\n    urllib.request.urlopen(req)\n\
        except urllib.error.HTTPError as e:\n    sys.stderr.write(e.read().decode()); sys.exit(3)\n";
    for (agent, file, want) in [
        ("{command: [sh, -c, 'echo boom >&2; exit 2']}", None, "exited with exit status: 2: boom"),
        ("{command: [sh, -c, 'echo not json']}", None, "not the protocol"),
        ("{command: [sh, -c, 'echo ''{\"protocol\": 9, \"artifact\": \"x\"}''']}", None, "protocol 9"),
        ("{command: [sh, -c, 'sleep 30; echo late'], timeout_secs: 1}", None, "ran past timeout_secs = 1"),
        ("{command: [python3, stream.py], files: [stream.py]}", Some(streaming), "field 'stream'"),
        ("{command: [no-such-program-lucid]}", None, "did not start"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        if let Some(text) = file {
            std::fs::write(d.join("stream.py"), text).unwrap();
        }
        std::fs::write(d.join("agent.yaml"), pipeline(d, &model_cfg, agent, "[memento]", "[0]")).unwrap();
        run(d, &[]);
        let eps = query(d, "SELECT step, answer, grade, failed_calls FROM episodes ORDER BY step");
        assert_eq!(eps.len(), 4, "{agent}: every episode stored");
        for e in &eps {
            assert_eq!((e["answer"].clone(), e["failed_calls"].as_u64()), (Value::Null, Some(1)), "{agent}: {e}");
        }
        let errors = query(d, "SELECT error FROM calls WHERE role = 'program' ORDER BY step");
        assert_eq!(errors.len(), 4);
        for e in &errors {
            assert!(e["error"].as_str().is_some_and(|s| s.contains(want)), "{agent}: {e}");
        }
    }
}

/// The example agent, unchanged, on every domain: text-to-SQL (the bundled benchmark, a canary in
/// a gold query) and a domain registered by a program (the toy sums), every arm: the domain
/// extracts, observes and evaluates what it answers, and no request carries gold.
#[test]
fn the_example_agent_runs_on_every_domain() {
    use crate::support::study::{canary_benchmark, pipeline, scripted};
    // Unboxed: the example agent is read from the repository and its log written beside the run.
    let command =
        format!("{{command: [sh, -c, 'tee -a requests.log | python3 {}'], box: off}}", example_agent().display());

    // Text-to-SQL: its answers are SQL the domain runs and evaluates.
    let server = FakeServer::start(vec![], Reply::func(scripted));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bert = crate::support::tiny_models::write_tiny_bert(&d.join("bert"));
    let yaml = pipeline(&server.url, &canary_benchmark(d), &bert);
    let yaml = yaml.replace("chunk_size: 3", &format!("chunk_size: 3, agent: {command}"));
    std::fs::write(d.join("study.yaml"), yaml).unwrap();
    let o = lucid(&d.join("cache")).current_dir(d).args(["run", "study.yaml", "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let q = |sql: &str| crate::support::study::query_run(&d.join("cache"), d, "runs/study", sql);
    let by_arm = q("SELECT e.arm, count(*) AS n, count(e.sql) AS sql, count(v.u) AS judged, \
         sum(CASE WHEN e.exec_status = 'ok' THEN 1 ELSE 0 END) AS ran FROM episodes e \
         JOIN evaluation v ON e.arm = v.arm AND e.seed = v.seed AND e.step = v.step GROUP BY e.arm ORDER BY e.arm");
    assert_eq!(by_arm.len(), 4, "{by_arm:?}");
    for a in &by_arm {
        // Every answer is SQL the domain extracted, ran on the task's database, and evaluated.
        assert_eq!(
            (a["sql"].clone(), a["ran"].clone(), a["judged"].clone()),
            (a["n"].clone(), a["n"].clone(), a["n"].clone()),
            "{a}"
        );
    }
    let sent = std::fs::read_to_string(d.join("requests.log")).unwrap();
    assert!(sent.contains("CREATE TABLE") && !sent.contains(CANARY), "the schema, never gold");

    // A registered domain: the toy's answers are numbers its judge scores.
    lucid::domains::registry::register::<crate::toy_domain::Arithmetic>();
    let server = FakeServer::start(vec![], Reply::func(crate::toy_domain::scripted));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("sums.jsonl"), crate::toy_domain::sums_jsonl()).unwrap();
    let bert = crate::support::tiny_models::write_tiny_bert(&d.join("bert"));
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/toy_domain/prompts");
    let agent = format!(
        "{{domain: {{kind: arithmetic}}, model: {{backend: openai, model: toy, base_url: '{}/v1'}}, prompts: '{}', \
         k: 2, agent: {command}",
        server.url,
        prompts.display()
    );
    let yaml = format!(
        "name: sums\nseeds: [0]\narms: [no-memory, memento, lucid, oracle]\nstages:\n  - id: benchmark\n    kind: benchmark\n    \
         config: {{source: sums, path: sums.jsonl}}\n{}{}",
        crate::support::order_embed_retrieve(&bert),
        crate::support::study::arm_stages(&agent, "")
    );
    std::fs::write(d.join("sums.yaml"), yaml).unwrap();
    crate::support::run_in_process(d, "sums.yaml");
    let right = crate::support::study::query_run(
        &d.join("cache"),
        d,
        "runs/sums",
        "SELECT arm, sum(u) AS right, count(*) AS n FROM evaluation GROUP BY arm ORDER BY arm",
    );
    let got: Vec<(String, u64, u64)> = right
        .iter()
        .map(|r| (r["arm"].as_str().unwrap().into(), r["right"].as_u64().unwrap(), r["n"].as_u64().unwrap()))
        .collect();
    // 2 + 2 and 3 + 4 right, 5 + 5 and 1 + 1 wrong, in every arm.
    for arm in ["lucid", "memento", "no-memory", "oracle"] {
        assert!(got.contains(&(arm.to_string(), 2, 4)), "{got:?}");
    }
}

/// Host processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(marker) && !c.contains("python3 -c"))
        .collect()
}

/// A hostile agent: it tries every door the box must hold and answers `clean`, or `LEAK-<what>`
/// for the first door that gave way. `{RUN}`: the pipeline's folder; `{PORT}`: a port that is
/// not the proxy's (the real model server's).
const HOSTILE: &str = r#"import json, os, socket, subprocess, sys
req = json.loads(sys.stdin.readline())
leaks = []
def denied(f):
    try:
        f()
        return False
    except Exception:
        return True
run = "{RUN}"
# Gold and the run store, by every path: absolute, relative, /proc/self/cwd, a symlink.
for p in [run + "/runs", run + "/runs/agent/gold", run + "/questions.jsonl", "../" * 8 + run.lstrip("/") + "/questions.jsonl",
          "/proc/self/cwd/../../" + run.lstrip("/") + "/questions.jsonl", "/proc/1/environ", os.path.expanduser("~root/.cache")]:
    if not denied(lambda: open(p).read(1)) or not denied(lambda: os.listdir(p)):
        leaks.append("read:" + p)
try:
    os.symlink(run, "door")
    if not denied(lambda: open("door/questions.jsonl").read(1)):
        leaks.append("symlink")
except OSError:
    pass
# Writing outside its folder.
for p in [run + "/evil.txt", "/tmp/lucid-evil-{MARK}.txt"]:
    if not denied(lambda: open(p, "w").write("x")):
        leaks.append("write:" + p)
# Secrets it was not given.
for k in ["MY_KEY", "AWS_ACCESS_KEY_ID", "DB_PASSWORD", "HF_TOKEN"]:
    if k in os.environ:
        leaks.append("env:" + k)
if os.environ.get("NAMED_VAR") != "given":
    leaks.append("named-var-missing")
# A socket to anything but its proxy.
s = socket.socket()
s.settimeout(5)
if not denied(lambda: s.connect(("127.0.0.1", {PORT}))):
    leaks.append("socket")
# UDP (a DNS query to the world) and raw sockets.
def udp():
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("1.1.1.1", 53))
if not denied(udp):
    leaks.append("udp")
# Another episode's endpoint.
base = os.environ["OPENAI_BASE_URL"]
host = base.split("/e/")[0]
for guess in ["0-0", "1-1", "2-2", "3-3"]:
    try:
        c = socket.create_connection(("127.0.0.1", int(host.rsplit(":", 1)[1])), timeout=5)
        c.sendall(("GET /e/" + guess + "/v1/models HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n").encode())
        if b" 200 " in c.recv(100):
            leaks.append("endpoint:" + guess)
    except OSError:
        pass
# A file left by an earlier episode.
if os.path.exists("state.txt"):
    leaks.append("state")
open("state.txt", "w").write("x")
# Processes that try to outlive the episode: one holding stdout, one double-forked daemon.
subprocess.Popen(["sleep", "61.{MARK}"])
subprocess.Popen(["sh", "-c", "setsid sh -c 'sleep 62.{MARK}' >/dev/null 2>&1 </dev/null &"])
print(json.dumps({"protocol": 1, "artifact": "Answer: " + ("clean" if not leaks else "LEAK-" + leaks[0])}))
sys.stdout.flush()
"#;

#[test]
fn a_hostile_agent_finds_every_door_of_its_box_shut() {
    let server = FakeServer::start(vec![], Reply::func(model));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = server.url.rsplit(':').next().unwrap().trim_end_matches('/').to_string();
    let mark = format!("{}", std::process::id());
    let script = HOSTILE.replace("{RUN}", &d.display().to_string()).replace("{PORT}", &port).replace("{MARK}", &mark);
    std::fs::write(d.join("hostile.py"), script).unwrap();
    let model_cfg = format!("{{backend: openai, model: m, base_url: '{}/v1'}}", server.url);
    let agent = "{command: [python3, hostile.py], files: [hostile.py], env: [NAMED_VAR], timeout_secs: 120}";
    std::fs::write(d.join("agent.yaml"), pipeline(d, &model_cfg, agent, "[memento]", "[0]")).unwrap();
    run(
        d,
        &[
            ("MY_KEY", "k1"),
            ("AWS_ACCESS_KEY_ID", "k2"),
            ("DB_PASSWORD", "k3"),
            ("HF_TOKEN", "k4"),
            ("NAMED_VAR", "given"),
        ],
    );
    let eps = query(d, "SELECT step, answer FROM episodes ORDER BY step");
    assert_eq!(eps.len(), 4);
    for e in &eps {
        assert_eq!(e["answer"], "clean", "{e}");
    }
    assert!(!d.join("evil.txt").exists() && !Path::new(&format!("/tmp/lucid-evil-{mark}.txt")).exists());
    // No process of any episode is left: not the child holding stdout, not the daemon.
    assert_eq!(processes_with(&format!("61.{mark}")), Vec::<String>::new());
    assert_eq!(processes_with(&format!("62.{mark}")), Vec::<String>::new());
}

#[test]
fn a_flood_of_output_or_calls_is_bounded_and_counted() {
    let server = FakeServer::start(vec![], Reply::func(model));
    let model_cfg = format!("{{backend: openai, model: m, base_url: '{}/v1'}}", server.url);
    // 500 MB on standard output: killed at the 16 MiB limit, the limit named; lucid's peak
    // memory stays under 1 GiB (its own RSS, read by a parent that runs it).
    let flood = "import sys\nsys.stdin.readline()\nblock = b'x' * (1 << 20)\nfor _ in range(500):\n    sys.stdout.buffer.write(block)\n";
    // 300 calls through the proxy in one episode: every one a `calls` row, counted in full.
    let chatty = "import json, os, sys, urllib.request\nsys.stdin.readline()\n\
        body = json.dumps({'model': 'm', 'messages': [{'role': 'user', 'content': 'Question: What is the capital of Freedonia?'}], 'max_tokens': 8}).encode()\n\
        for _ in range(300):\n    r = urllib.request.Request(os.environ['OPENAI_BASE_URL'] + '/chat/completions', data=body, headers={'Content-Type': 'application/json'})\n    a = json.loads(urllib.request.urlopen(r).read())['choices'][0]['message']['content']\n\
        bad = json.dumps({'model': 'm', 'messages': [{'role': 'user', 'content': 'x'}], 'max_tokens': -5}).encode()\n\
        try:\n    urllib.request.urlopen(urllib.request.Request(os.environ['OPENAI_BASE_URL'] + '/chat/completions', data=bad, headers={'Content-Type': 'application/json'}))\n    a = 'accepted-negative'\nexcept Exception:\n    pass\n\
        print(json.dumps({'protocol': 1, 'artifact': 'Answer: ' + a}))\n";
    for (name, text) in [("flood.py", flood), ("chatty.py", chatty)] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join(name), text).unwrap();
        let agent = format!("{{command: [python3, {name}], files: [{name}], timeout_secs: 300}}");
        std::fs::write(d.join("agent.yaml"), pipeline(d, &model_cfg, &agent, "[memento]", "[0]")).unwrap();
        let bin = crate::support::lucid(&d.join("cache")).get_program().to_owned();
        let o = std::process::Command::new("python3")
            .current_dir(d)
            .env("LUCID_CACHE_DIR", d.join("cache"))
            .args(["-c", "import resource, subprocess, sys\nr = subprocess.run(sys.argv[1:])\nprint(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\nsys.exit(r.returncode)"])
            .arg(&bin)
            .args(["run", "agent.yaml", "--quiet"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let peak_kib: u64 = stdout(&o).trim().lines().last().unwrap().parse().unwrap();
        assert!(peak_kib < 1 << 20, "{name}: lucid's peak {peak_kib} KiB");
        if name == "flood.py" {
            let errors = query(d, "SELECT error FROM calls WHERE role = 'program'");
            assert_eq!(errors.len(), 4);
            for e in &errors {
                assert!(e["error"].as_str().is_some_and(|s| s.contains("more than 16 MiB")), "{e}");
            }
        } else {
            let eps = query(
                d,
                "SELECT e.step, e.answer, e.calls, (SELECT count(*) FROM calls c WHERE c.step = e.step) AS rows FROM episodes e ORDER BY e.step",
            );
            for e in &eps {
                assert_eq!(e["answer"], "Fredville", "max_tokens -5 is refused: {e}");
                // 300 proxied calls + the refused one is not a call + the program + the grader.
                assert_eq!((e["calls"].as_u64(), e["rows"].as_u64()), (Some(302), Some(302)), "{e}");
            }
        }
    }
}
