//! An agent that is a program (`agent: {command: [python3, my_agent.py]}` of a memory_loop
//! stage) instead of lucid's planner and executor. Protocol version 1, one JSON object each way:
//!
//! - lucid writes to the program's standard input, then closes it: `{"protocol": 1, "episode":
//!   {"seed", "arm", "step", "question_id"}, "task": {"question", ...the variables the domain
//!   gives its prompts (the schema, the topic, ...)}, "artifact": "sql" | "answer" | ...,
//!   "memories": [{"question", "plan", <artifact>, "q" (the label shown), "same_db",
//!   "similarity"}], "openai": {"base_url", "api_key"}}`;
//! - the program writes to its standard output `{"protocol": 1, "artifact": "...", "plan":
//!   "..." (optional), "grade": "correct" | "incorrect" (optional: read when the stage says
//!   `grade: agent`), "trace": any JSON (optional)}` and exits 0. What it prints on standard error
//!   is kept for error messages only.
//!
//! One process per episode, several at once as the loop's DAG allows: a program cannot carry
//! anything from one episode to the next outside the bank lucid shows it — the memory policy
//! stays the controlled variable of the arms — and one crashing episode takes no other with it.
//! The price is the interpreter's start per episode (tens of milliseconds for Python's standard
//! library, a few hundred with heavy imports), small beside a model call. The program's
//! environment has `OPENAI_BASE_URL` and a dummy `OPENAI_API_KEY` for lucid's loopback endpoint
//! ([`super::proxy`]); every variable named like a secret (`*_API_KEY`, `*_TOKEN`, `*SECRET*`)
//! is removed. A program that fails to start, exits non-zero, outlives `timeout_secs`
//! (wall clock: killed, an infrastructure failure, not a verdict), or answers what is not the
//! protocol is recorded as the episode's failed `program` call, and the episode is stored.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::domain::records::CallRecord;
use crate::error::Invalid;

/// The protocol version lucid speaks.
pub const PROTOCOL: u32 = 1;

/// Who grades an agent program's episodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GradeBy {
    /// lucid's self-grader (the prompts' grader.txt, the stage's model), as for its own agent.
    #[default]
    Lucid,
    /// The program's own `grade`.
    Agent,
}

/// The `agent:` block of a memory_loop stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentProgram {
    /// The program and its arguments, run from the pipeline's folder.
    pub command: Vec<String>,
    /// Files whose content is the agent's identity (part of the stage's key: an edited agent
    /// reruns the stage). Files it imports but does not list are not tracked.
    #[serde(default)]
    pub files: Vec<String>,
    /// Who grades: `lucid` (default) or `agent`.
    #[serde(default)]
    pub grade: GradeBy,
    /// Seconds an episode's program may run (operational: not in the key).
    #[serde(default = "default_timeout", skip_serializing)]
    pub timeout_secs: u64,
}

fn default_timeout() -> u64 {
    600
}

/// What the program answered.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// Protocol version (1).
    pub protocol: u32,
    /// The answer the domain extracts its artifact from.
    pub artifact: String,
    /// The plan, when the agent has one.
    #[serde(default)]
    pub plan: Option<String>,
    /// The agent's own grade: correct / incorrect (also true/false, 1/0).
    #[serde(default)]
    pub grade: Option<serde_json::Value>,
    /// Anything the agent wants kept (it is in the `program` call's text).
    #[serde(default)]
    #[allow(dead_code)]
    pub trace: Option<serde_json::Value>,
}

impl Reply {
    /// The agent's grade as r (1 correct, 0 incorrect); None when absent or unreadable.
    pub fn r(&self) -> Option<u8> {
        match self.grade.as_ref()? {
            serde_json::Value::Bool(b) => Some(u8::from(*b)),
            serde_json::Value::Number(n) => n.as_f64().map(|x| u8::from(x >= 0.5)),
            serde_json::Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                "correct" | "true" | "1" | "yes" => Some(1),
                "incorrect" | "false" | "0" | "no" => Some(0),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Whether an environment variable looks like a secret.
fn secret(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n.ends_with("_API_KEY") || n.ends_with("_TOKEN") || n.contains("SECRET") || n == "API_KEY"
}

/// Run `program` from `dir` on `request` (sent as one JSON line) with the loopback endpoint
/// `base_url`: its reply, and the `program` call row for episode `step` of task `question_id`.
pub fn run(
    program: &AgentProgram,
    dir: &Path,
    request: &serde_json::Value,
    base_url: &str,
    step: u64,
    question_id: i64,
) -> (Option<Reply>, CallRecord) {
    let started = Instant::now();
    // The key is the request without its endpoint (a port and a ticket that differ per run).
    let mut keyed = request.clone();
    if let Some(o) = keyed.as_object_mut() {
        o.remove("openai");
    }
    let mut rec = CallRecord {
        step,
        question_id,
        role: "program",
        key: blake3::hash(keyed.to_string().as_bytes()).to_hex().to_string(),
        backend: "program".into(),
        model: program.command.join(" "),
        endpoint: None,
        text: None,
        error: None,
        tokens_in: 0,
        tokens_out: 0,
        latency_ms: 0.0,
        attempts: 1,
        cache_hit: false,
    };
    let out = spawn_and_wait(program, dir, &request.to_string(), base_url);
    rec.latency_ms = started.elapsed().as_secs_f64() * 1e3;
    let reply = out.and_then(|stdout| {
        rec.text = Some(stdout.trim().to_string());
        let reply: Reply = serde_json::from_str(stdout.trim()).map_err(|e| {
            let head: String = stdout.trim().chars().take(200).collect();
            Invalid(format!("the agent's answer is not the protocol ({e}): {head:?}"))
        })?;
        if reply.protocol != PROTOCOL {
            return Err(Invalid(format!("the agent speaks protocol {}, lucid speaks {PROTOCOL}", reply.protocol)));
        }
        Ok(reply)
    });
    match reply {
        Ok(r) => (Some(r), rec),
        Err(why) => {
            rec.error = Some(why.0);
            (None, rec)
        }
    }
}

/// The program's standard output, or why there is none.
fn spawn_and_wait(program: &AgentProgram, dir: &Path, request: &str, base_url: &str) -> Result<String, Invalid> {
    let (bin, args) = program.command.split_first().ok_or(Invalid::from("agent.command is empty"))?;
    let mut cmd = Command::new(bin);
    // Its own process group, so a timeout kills what it started too (a shell's children, a
    // tool's subprocesses), not only the program.
    cmd.process_group(0);
    cmd.args(args).current_dir(dir).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(secret) {
            cmd.env_remove(&name);
        }
    }
    cmd.env("OPENAI_BASE_URL", base_url).env("OPENAI_API_KEY", "lucid-dummy-key").env("LUCID_PROTOCOL", "1");
    let mut child =
        cmd.spawn().map_err(|e| Invalid(format!("the agent did not start ({}): {e}", program.command.join(" "))))?;
    let mut stdin = child.stdin.take().expect("piped");
    let (mut stdout, mut stderr) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
    let request = request.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(request.as_bytes());
        let _ = stdin.write_all(b"\n");
    });
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(program.timeout_secs.max(1));
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let group = format!("-{}", child.id());
                let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let _ = writer.join();
    let (stdout, stderr) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
    let tail = |s: &str| {
        let t = s.trim();
        let start = t.char_indices().rev().nth(600).map_or(0, |(i, _)| i);
        t[start..].to_string()
    };
    match status {
        None => Err(Invalid(format!(
            "the agent ran past timeout_secs = {} and was killed (an infrastructure failure, not a verdict)",
            program.timeout_secs
        ))),
        Some(s) if !s.success() => Err(Invalid(format!("the agent exited with {s}: {}", tail(&stderr)))),
        Some(_) => Ok(stdout),
    }
}
