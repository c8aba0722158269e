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
//! One process per episode, several at once as the loop's DAG allows, each in its own **box**
//! ([`super::sandbox`]): a fresh folder holding the stage's `files` (its working directory and
//! home, removed after the episode), nothing else of the machine writable and nothing of the run
//! store, the runs folder, the caches or the user's home readable, no network but its own proxy
//! endpoint, and every process it starts ended with the episode. So a program cannot carry
//! anything from one episode to the next outside the bank lucid shows it — the memory policy
//! stays the controlled variable of the arms — nor read gold, and one crashing episode takes no
//! other with it. The price is the interpreter's start per episode (tens of milliseconds for
//! Python's standard library, a few hundred with heavy imports), small beside a model call.
//!
//! The environment is an allow-list: `PATH`, `LANG`, `LC_ALL`, `TZ`, the variables the stage
//! names (`env: [...]`), `OPENAI_BASE_URL` and a dummy `OPENAI_API_KEY` for the episode's loopback
//! endpoint ([`super::proxy`]), `HOME` and `TMPDIR` in the box. A program that fails to start,
//! exits non-zero, outlives `timeout_secs` (wall clock: killed, an infrastructure failure, not a
//! verdict), writes more than [`super::sandbox::STDOUT_LIMIT`] on standard output, or answers what
//! is not the protocol is recorded as the episode's failed `program` call, and the episode is
//! stored.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::sandbox;
use super::watch::{Bound, Watch};
use crate::error::Invalid;
use crate::seam::records::CallRecord;

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
    /// CPU seconds each of its processes may use (default: `timeout_secs`; operational).
    #[serde(default, skip_serializing)]
    pub cpu_secs: Option<u64>,
    /// MiB of memory its processes may hold together, and the address space of each
    /// (operational).
    #[serde(default = "default_memory_mb", skip_serializing)]
    pub memory_mb: u64,
    /// MiB its box folder may hold, and the largest file it may write (operational).
    #[serde(default = "default_disk_mb", skip_serializing)]
    pub disk_mb: u64,
    /// Environment variables passed through by name (nothing else of lucid's environment is,
    /// beyond the allow-list of the module doc).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Trees the program may read beyond the system's and its interpreter's (a virtual
    /// environment elsewhere, a model folder; operational: not in the key).
    #[serde(default, skip_serializing)]
    pub read: Vec<String>,
    /// `on` (the default): the box; `off`: the program runs unboxed from the pipeline's folder,
    /// with none of the box's guarantees (recorded in the stage's config and manifest).
    #[serde(default, rename = "box", skip_serializing_if = "BoxMode::is_on")]
    pub boxed: BoxMode,
}

/// Whether an agent program runs boxed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BoxMode {
    /// In the box of [`super::sandbox`].
    #[default]
    On,
    /// Unboxed.
    Off,
}

impl BoxMode {
    fn is_on(&self) -> bool {
        *self == BoxMode::On
    }
}

/// The variables every program gets from lucid's environment (when set).
const BASE_ENV: [&str; 4] = ["PATH", "LANG", "LC_ALL", "TZ"];

fn default_timeout() -> u64 {
    600
}

fn default_memory_mb() -> u64 {
    4096
}

fn default_disk_mb() -> u64 {
    1024
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
    // A relative path to the interpreter (`venv/bin/python`) is the pipeline folder's, as the
    // program's files are (the box's working directory is its own folder).
    let bin = if bin.contains('/') && Path::new(bin).is_relative() {
        dir.join(bin).to_string_lossy().into_owned()
    } else {
        bin.clone()
    };
    let command: Vec<String> = std::iter::once(bin.clone()).chain(args.iter().cloned()).collect();
    let boxed = program.boxed == BoxMode::On;
    let home = if boxed { Some(BoxDir::new(program, dir)?) } else { None };
    let timeout = Duration::from_secs(program.timeout_secs.max(1));
    // Never a tree that holds the pipeline's folder (its gold): an interpreter there is the
    // user's to move into a folder of its own (a virtual environment is one).
    let interpreter: Vec<PathBuf> = if boxed { sandbox::interpreter_trees(&bin) } else { Vec::new() };
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let interpreter: Vec<PathBuf> = interpreter.into_iter().filter(|t| !real(dir).starts_with(real(t))).collect();
    let (memory, disk) = (program.memory_mb << 20, program.disk_mb << 20);
    let limits =
        sandbox::BoxLimits { cpu_secs: program.cpu_secs.unwrap_or(program.timeout_secs).max(1), memory, file: disk };
    let mut cmd = match &home {
        Some(h) => {
            let port = base_url.rsplit_once(':').and_then(|(_, p)| p.split('/').next()?.parse().ok()).unwrap_or(0);
            let mut read: Vec<PathBuf> = program.read.iter().map(|r| dir.join(r)).collect();
            read.extend(interpreter.clone());
            let spec = sandbox::BoxSpec { dir: h.0.clone(), read, port, timeout, limits };
            sandbox::command(&spec, &command).map_err(|e| Invalid(format!("the box did not start: {e}")))?
        }
        None => {
            let mut c = Command::new(&bin);
            c.args(args).current_dir(dir);
            c
        }
    };
    // Its own process group, so lucid's backstop kills what it started too.
    cmd.process_group(0).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).env_clear();
    for name in BASE_ENV.iter().copied().chain(program.env.iter().map(String::as_str)) {
        if let Some(v) = std::env::var_os(name) {
            cmd.env(name, v);
        }
    }
    cmd.env("OPENAI_BASE_URL", base_url).env("OPENAI_API_KEY", "lucid-dummy-key").env("LUCID_PROTOCOL", "1");
    if let Some(h) = &home {
        cmd.env("HOME", &h.0).env("TMPDIR", h.0.join("tmp"));
        // pyenv's shims find their root from it (else from HOME, which is the box).
        if let Some(root) = interpreter.iter().find(|t| t.join("shims").is_dir() && t.join("versions").is_dir()) {
            cmd.env("PYENV_ROOT", root);
        }
    }
    let mut child =
        cmd.spawn().map_err(|e| Invalid(format!("the agent did not start ({}): {e}", program.command.join(" "))))?;
    let mut stdin = child.stdin.take().expect("piped");
    let (stdout, stderr) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
    let request = request.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(request.as_bytes());
        let _ = stdin.write_all(b"\n");
    });
    let flood = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = flood.clone();
    let out = std::thread::spawn(move || bounded(stdout, sandbox::STDOUT_LIMIT, Some(&flag)));
    let err = std::thread::spawn(move || bounded(stderr, sandbox::STDERR_LIMIT, None));
    // The box kills at the timeout itself; lucid's backstop a little later.
    let deadline = Instant::now() + timeout + if boxed { Duration::from_secs(10) } else { Duration::ZERO };
    let mut watch = home.as_ref().map(|h| Watch::new(child.id(), &h.0, memory, disk));
    let status = sandbox::wait_until(
        &mut child,
        deadline,
        || flood.load(std::sync::atomic::Ordering::SeqCst) || watch.as_mut().is_some_and(Watch::over),
        |child| {
            // Its group: the launcher and the program (process 1 of the box: the rest of the box
            // ends with it), or an unboxed program and what it started in its group.
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        },
    );
    let _ = writer.join();
    let ((stdout, over), (stderr, _)) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
    let tail = |s: &str| {
        let t = s.trim();
        let start = t.char_indices().rev().nth(600).map_or(0, |(i, _)| i);
        t[start..].to_string()
    };
    let timed_out = || {
        Invalid(format!(
            "the agent ran past timeout_secs = {} and was killed (an infrastructure failure, not a verdict)",
            program.timeout_secs
        ))
    };
    let code = status.and_then(|s| s.code());
    let passed = watch.and_then(|w| w.passed);
    match (status, code) {
        _ if over => Err(over_limit()),
        _ if passed == Some(Bound::Memory) => Err(Invalid(format!(
            "limit memory: the agent's processes held more than memory_mb = {} MiB together and were killed",
            program.memory_mb
        ))),
        _ if passed == Some(Bound::Disk) => Err(Invalid(format!(
            "limit disk: the agent's folder held more than disk_mb = {} MiB and it was killed",
            program.disk_mb
        ))),
        (Some(_), Some(sandbox::CPU_LIMIT)) if boxed => Err(Invalid(format!(
            "limit cpu: the agent used more than cpu_secs = {} CPU seconds and was ended",
            limits.cpu_secs
        ))),
        (None, _) => Err(timed_out()),
        (Some(_), Some(sandbox::TIMEOUT)) if boxed => Err(timed_out()),
        (Some(_), Some(sandbox::UNAVAILABLE)) if boxed => Err(Invalid(tail(&stderr))),
        (Some(s), _) if !s.success() => Err(Invalid(format!("the agent exited with {s}: {}", tail(&stderr)))),
        (Some(_), _) => Ok(stdout),
    }
}

/// The failure of a program whose standard output passed its limit.
fn over_limit() -> Invalid {
    Invalid(format!(
        "the agent wrote more than {} MiB on standard output and was killed (its reply is one JSON object)",
        sandbox::STDOUT_LIMIT >> 20
    ))
}

/// Up to `limit` bytes of `from` as text, and whether it had more (read to its end regardless;
/// `flood` set as soon as it has).
fn bounded(mut from: impl Read, limit: usize, flood: Option<&std::sync::atomic::AtomicBool>) -> (String, bool) {
    let (mut kept, mut buf, mut over) = (Vec::new(), vec![0u8; 64 << 10], false);
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let keep = n.min(limit.saturating_sub(kept.len()));
                kept.extend_from_slice(&buf[..keep]);
                if keep < n {
                    over = true;
                    flood.inspect(|f| f.store(true, std::sync::atomic::Ordering::SeqCst));
                }
            }
        }
    }
    (String::from_utf8_lossy(&kept).into_owned(), over)
}

/// An episode's box folder: the stage's `files` copied in (at their paths relative to the
/// pipeline's folder) and an empty `tmp/`; removed when dropped.
struct BoxDir(PathBuf);

impl BoxDir {
    fn new(program: &AgentProgram, dir: &Path) -> Result<BoxDir, Invalid> {
        use std::os::unix::fs::DirBuilderExt;
        let name = format!("lucid-box-{}-{:032x}", std::process::id(), rand::random::<u128>());
        let root = std::env::temp_dir().join(name);
        let fail = |e: std::io::Error| Invalid(format!("the box's folder {}: {e}", root.display()));
        std::fs::DirBuilder::new().mode(0o700).create(&root).map_err(fail)?;
        let made = BoxDir(root.clone());
        std::fs::create_dir(root.join("tmp")).map_err(fail)?;
        for f in &program.files {
            let rel = Path::new(f);
            if rel.is_absolute() || rel.components().any(|c| c == std::path::Component::ParentDir) {
                return Err(Invalid(format!("agent.files: '{f}' is not a path inside the pipeline's folder")));
            }
            let to = root.join(rel);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(fail)?;
            }
            std::fs::copy(dir.join(rel), &to).map_err(|e| Invalid(format!("agent.files: {f}: {e}")))?;
        }
        Ok(made)
    }
}

impl Drop for BoxDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
