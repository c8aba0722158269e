//! The sandbox for model-written Python: CPython 3.12 built for WASI (the `python` entry of
//! `lucid models fetch`, hash-checked: [`package`]) run by wasmtime, with nothing of the machine
//! in reach and limits whose verdict does not depend on the machine or its load.
//!
//! - **Isolation**: the interpreter is a WebAssembly module: it can touch only its own linear
//!   memory and the host calls [`wasi`] gives it — standard input, output and error, a virtual
//!   clock and a fixed random stream. No file, directory, socket, process, thread or signal
//!   exists for it (the standard library is packed inside the module), so reading `/etc/passwd`,
//!   opening a socket, forking or killing the parent fail inside Python, and nothing outlives the
//!   run: the machine is unchanged.
//! - **Limits** ([`PyLimits`]): *fuel* — WebAssembly instructions executed, counted by wasmtime, the
//!   same count on every machine and under any load (an infinite loop ends in `fuel`); *memory*
//!   — the linear memory's ceiling (`bytearray(10**9)` is a `MemoryError` inside Python, and the
//!   run that fails after it is named `memory`); *stack* — wasmtime's native stack for the
//!   module, or the interpreter's C stack in linear memory (a trap, `stack`); *output* — bytes of
//!   stdout and stderr kept (the rest dropped uncopied, `truncated`). Host calls are charged to
//!   fuel by the bytes they copy ([`wasi`]), and the module has no bulk-memory instructions
//!   (`memory.fill`/`memory.copy`, one instruction for any length): every byte the guest moves
//!   costs instructions, so fuel bounds a run's time. A wall-clock backstop (epoch interruption)
//!   guards against a host fault only: hitting it is recorded as an infrastructure failure, never
//!   as a verdict about the program.
//! - **Determinism**: `PYTHONHASHSEED=0`, virtual clocks, a fixed random stream: the same program
//!   with the same input runs the same instructions, so its fuel, output and verdict repeat.
//! - **Cost**: the module (26 MB) is compiled once per machine and cached
//!   (`<cache>/python-wasm/`, [`compiled`]); each run gets a fresh instance (copy-on-write memory
//!   image, about 0.25 G fuel and 50 ms to start the interpreter).

pub mod checks;
mod compiled;
pub mod gold;
pub mod package;
pub mod program;
pub mod wasi;

use std::path::Path;
use std::time::Duration;

use wasmtime::{Config, Engine, Module, Store, Trap};

use crate::error::{Error, Result};

/// What one run may use.
#[derive(Clone, Debug, PartialEq)]
pub struct PyLimits {
    /// WebAssembly instructions (wasmtime fuel). Starting the interpreter costs about 0.25 G.
    pub fuel: u64,
    /// Linear memory ceiling, bytes.
    pub memory_bytes: usize,
    /// Bytes of stdout and of stderr kept.
    pub output_bytes: usize,
    /// The backstop against a host fault, seconds of wall time (an infrastructure failure).
    pub wall_secs: u64,
}

impl Default for PyLimits {
    fn default() -> Self {
        PyLimits { fuel: 20_000_000_000, memory_bytes: 512 << 20, output_bytes: 4 << 20, wall_secs: 300 }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The interpreter exited with this status (0: success; 1: an uncaught exception).
    Exit(i32),
    /// Out of fuel: the instruction limit (a program that loops forever ends here).
    Fuel,
    /// A stack overflowed: wasmtime's native stack for the module, or the interpreter's C stack
    /// in its linear memory (recursion through C code runs it below address 0: an out-of-bounds
    /// access, which nothing else in CPython's module makes).
    Stack,
    /// One write asked for more bytes than the memory limit (the `output` limit).
    Output,
    /// The wall-clock backstop: an infrastructure failure, not the program's verdict.
    WallClock,
    /// Another trap (out-of-bounds access, unreachable): the interpreter crashed.
    Trap(String),
}

/// What a run did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PyOutcome {
    /// How it ended.
    pub ended: Ended,
    /// Standard output (lossy UTF-8), up to the output limit.
    pub stdout: String,
    /// Standard error (lossy UTF-8), up to the output limit.
    pub stderr: String,
    /// Whether output past the limit was dropped.
    pub truncated: bool,
    /// Fuel used.
    pub fuel: u64,
    /// The stdout writes that started with the record tag (the gold check's records), if one was set.
    pub records: String,
    /// The guest asked for memory past the ceiling (and was refused).
    pub memory_refused: bool,
    /// The run ended through WASI's `proc_exit` (an exit call: `os._exit`, or the interpreter's
    /// own exit path), not by returning from `_start`.
    pub proc_exit: bool,
}

impl PyOutcome {
    /// Exit status 0.
    pub fn success(&self) -> bool {
        self.ended == Ended::Exit(0)
    }

    /// The limit that stopped the run, by name (`fuel`, `memory`, `stack`, `wall-clock`), if one
    /// did. `memory`: the run failed after the host refused the guest memory past the ceiling
    /// (never read from what the program raised or wrote).
    pub fn limit(&self) -> Option<&'static str> {
        match self.ended {
            Ended::Fuel => Some("fuel"),
            Ended::Stack => Some("stack"),
            Ended::Output => Some("output"),
            Ended::WallClock => Some("wall-clock"),
            Ended::Exit(c) if c != 0 && self.memory_refused => Some("memory"),
            _ => None,
        }
    }

    /// How the run ended, in lucid's words only (nothing the program wrote).
    pub fn ending(&self) -> String {
        match (&self.ended, self.limit()) {
            (Ended::Exit(c), Some("memory")) => format!("exit {c} after the memory limit refused it memory"),
            (Ended::Exit(c), _) => format!("exit {c}"),
            (Ended::Fuel, _) => "out of fuel (the instruction limit)".into(),
            (Ended::Stack, _) => "stack overflow (the stack limit)".into(),
            (Ended::Output, _) => "one write past the memory limit (the output limit)".into(),
            (Ended::WallClock, _) => "wall-clock backstop (an infrastructure failure)".into(),
            (Ended::Trap(t), _) => format!("interpreter crashed: {t}"),
        }
    }

    /// The last line the program wrote to stderr (200 characters at most), quoted, if any.
    pub fn stderr_tail(&self) -> Option<String> {
        let last = self.stderr.trim_end().lines().last()?.chars().take(200).collect::<String>();
        Some(format!("{last:?}"))
    }

    /// One line on how the run ended: [`PyOutcome::ending`], then, for a failure, the program's
    /// last line of stderr, quoted apart (text a program writes never reads as lucid's words).
    pub fn summary(&self) -> String {
        match (self.success(), self.stderr_tail()) {
            (false, Some(tail)) => format!("{} — its stderr ended {tail}", self.ending()),
            _ => self.ending(),
        }
    }
}

/// A tag that frames a driver's report apart from anything else a run prints: derived from the
/// run's inputs, so a run repeats exactly (not a secret: what forging it can do is bounded by the
/// caller, see [`gold`] and [`checks`]).
pub fn mark(parts: &[&str]) -> String {
    blake3::hash(parts.join("\u{0}").as_bytes()).to_hex()[..32].to_string()
}

/// The last line of `stdout` that starts with `mark` and a space, without them.
pub fn marked<'a>(stdout: &'a str, mark: &str) -> Option<&'a str> {
    stdout.lines().rev().find_map(|l| l.strip_prefix(mark)?.strip_prefix(' '))
}

/// A run's host state (what the WASI calls read and write).
#[derive(Default)]
pub struct Host {
    args: Vec<String>,
    env: Vec<String>,
    stdin: Vec<u8>,
    stdin_pos: usize,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    records: Vec<u8>,
    out_cap: usize,
    records_cap: usize,
    records_tag: Option<Vec<u8>>,
    truncated: bool,
    proc_exit: bool,
    clock_ns: u64,
    rng: u64,
    limits: Limiter,
}

/// Where a write goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
    /// The gold check's call records (a stdout write that starts with the run's record tag).
    Records,
}

impl From<i32> for Stream {
    fn from(fd: i32) -> Stream {
        if fd == 1 { Stream::Stdout } else { Stream::Stderr }
    }
}

impl Host {
    /// Keep what `stream`'s buffer has room for; the number of bytes copied.
    fn write(&mut self, stream: Stream, bytes: &[u8]) -> usize {
        let (cap, buf) = match stream {
            Stream::Stdout => (self.out_cap, &mut self.stdout),
            Stream::Stderr => (self.out_cap, &mut self.stderr),
            Stream::Records => (self.records_cap, &mut self.records),
        };
        let keep = bytes.len().min(cap.saturating_sub(buf.len()));
        buf.extend_from_slice(&bytes[..keep]);
        self.truncated |= keep < bytes.len();
        keep
    }
}

/// The memory ceiling, remembering whether the guest asked past it (so a run that fails after a
/// refused growth is named as stopped by the `memory` limit, not by the exception it raised).
#[derive(Default)]
struct Limiter {
    memory_bytes: usize,
    refused: bool,
}

impl wasmtime::ResourceLimiter for Limiter {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let ok = desired <= self.memory_bytes;
        self.refused |= !ok;
        Ok(ok)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }

    fn instances(&self) -> usize {
        1
    }
}

/// The pinned interpreter, compiled, ready to run programs.
pub struct Python {
    engine: Engine,
    module: Module,
    linker: wasmtime::Linker<Host>,
}

/// Wall-clock ticks per second of the backstop (one engine-wide ticker thread).
const TICKS_PER_SEC: u64 = 10;

impl Python {
    /// Load the interpreter at `wasm` (its BLAKE3 must be `blake3`), compiling it once per
    /// machine into `cache_dir`.
    pub fn load(wasm: &Path, blake3: &str, cache_dir: &Path) -> Result<Python> {
        let mut config = Config::new();
        config.consume_fuel(true).epoch_interruption(true).max_wasm_stack(1 << 20);
        let engine = Engine::new(&config).map_err(|e| Error::model(format!("wasmtime: {e}")))?;
        let module = compiled::module(&engine, wasm, blake3, cache_dir)?;
        let linker = wasi::linker(&engine, &module).map_err(|e| Error::model(format!("wasmtime linker: {e}")))?;
        ticker(&engine);
        Ok(Python { engine, module, linker })
    }

    /// Run `python -S -c code` with `stdin`.
    pub fn run_code(&self, code: &str, stdin: &[u8], limits: &PyLimits) -> PyOutcome {
        self.run(&["python", "-S", "-c", code], stdin, limits)
    }

    /// Run the interpreter with `argv` (argv[0] first) and `stdin`.
    pub fn run(&self, argv: &[&str], stdin: &[u8], limits: &PyLimits) -> PyOutcome {
        self.run_with_records(argv, stdin, limits, None)
    }

    /// [`Python::run`] where each stdout write that starts with `records.0` (the tag) is kept apart
    /// as a record, up to `records.1` bytes, so nothing else the program prints can crowd them out.
    pub fn run_with_records(
        &self,
        argv: &[&str],
        stdin: &[u8],
        limits: &PyLimits,
        records: Option<(&str, usize)>,
    ) -> PyOutcome {
        let state = Host {
            args: argv.iter().map(|a| a.to_string()).collect(),
            env: vec!["PYTHONHASHSEED=0".into(), "PYTHONDONTWRITEBYTECODE=1".into(), "PYTHONIOENCODING=utf-8".into()],
            stdin: stdin.to_vec(),
            out_cap: limits.output_bytes,
            records_cap: records.map_or(0, |r| r.1),
            records_tag: records.map(|r| r.0.as_bytes().to_vec()),
            rng: 0x9E37_79B9_7F4A_7C15,
            limits: Limiter { memory_bytes: limits.memory_bytes, refused: false },
            ..Host::default()
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        let ended = self.start(&mut store, limits);
        let fuel = limits.fuel.saturating_sub(store.get_fuel().unwrap_or(0));
        let st = store.into_data();
        PyOutcome {
            ended,
            stdout: String::from_utf8_lossy(&st.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&st.stderr).into_owned(),
            truncated: st.truncated,
            fuel,
            records: String::from_utf8_lossy(&st.records).into_owned(),
            memory_refused: st.limits.refused,
            proc_exit: st.proc_exit,
        }
    }

    fn start(&self, store: &mut Store<Host>, limits: &PyLimits) -> Ended {
        if store.set_fuel(limits.fuel).is_err() {
            return Ended::Trap("fuel is not enabled".into());
        }
        store.set_epoch_deadline(limits.wall_secs.saturating_mul(TICKS_PER_SEC).max(1));
        let run = self
            .linker
            .instantiate(&mut *store, &self.module)
            .and_then(|i| i.get_typed_func::<(), ()>(&mut *store, "_start"))
            .and_then(|f| f.call(&mut *store, ()));
        match run {
            Ok(()) => Ended::Exit(0),
            Err(e) => {
                if let Some(wasi::Exit(code)) = e.downcast_ref::<wasi::Exit>() {
                    return Ended::Exit(*code);
                }
                if e.downcast_ref::<wasi::OutputLimit>().is_some() {
                    return Ended::Output;
                }
                match e.downcast_ref::<Trap>() {
                    Some(Trap::OutOfFuel) => Ended::Fuel,
                    Some(Trap::StackOverflow | Trap::MemoryOutOfBounds) => Ended::Stack,
                    Some(Trap::Interrupt) => Ended::WallClock,
                    Some(t) => Ended::Trap(t.to_string()),
                    None => Ended::Trap(e.to_string()),
                }
            }
        }
    }
}

/// One thread per engine advancing its epoch [`TICKS_PER_SEC`] times a second (the backstop); it
/// holds a weak handle and ends with the engine.
fn ticker(engine: &Engine) {
    let weak = engine.weak();
    std::thread::spawn(move || {
        while let Some(engine) = weak.upgrade() {
            engine.increment_epoch();
            drop(engine);
            std::thread::sleep(Duration::from_millis(1000 / TICKS_PER_SEC));
        }
    });
}
