//! The sandbox for model-written Python: CPython 3.12 built for WASI (the `code` entry of
//! `lucid models fetch`, hash-checked) run by wasmtime, with nothing of the machine in reach and
//! limits whose verdict does not depend on the machine or its load.
//!
//! - **Isolation**: the interpreter is a WebAssembly module: it can touch only its own linear
//!   memory and the host calls [`wasi`] gives it — standard input, output and error, a virtual
//!   clock and a fixed random stream. No file, directory, socket, process, thread or signal
//!   exists for it (the standard library is packed inside the module), so reading `/etc/passwd`,
//!   opening a socket, forking or killing the parent fail inside Python, and nothing outlives the
//!   run: the machine is unchanged.
//! - **Limits** ([`PyLimits`]): *fuel* — WebAssembly instructions executed, counted by wasmtime, the
//!   same count on every machine and under any load (an infinite loop ends in `fuel`); *memory*
//!   — the linear memory's ceiling (`bytearray(10**9)` is a `MemoryError` inside Python); *stack*
//!   — wasmtime's native stack for the module (a trap, `stack`); *output* — bytes of stdout and
//!   stderr kept (the rest dropped, `truncated`). A wall-clock backstop (epoch interruption)
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
pub mod wasi;

use std::path::Path;
use std::time::Duration;

use wasmtime::{Config, Engine, Module, Store, StoreLimits, StoreLimitsBuilder, Trap};

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
    /// wasmtime's stack for the module overflowed (recursion through C code).
    Stack,
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
}

impl PyOutcome {
    /// Exit status 0.
    pub fn success(&self) -> bool {
        self.ended == Ended::Exit(0)
    }

    /// The limit that stopped the run, by name (`fuel`, `stack`, `wall-clock`), if one did.
    pub fn limit(&self) -> Option<&'static str> {
        match self.ended {
            Ended::Fuel => Some("fuel"),
            Ended::Stack => Some("stack"),
            Ended::WallClock => Some("wall-clock"),
            _ => None,
        }
    }

    /// One line on how the run ended (the last line of stderr for an exception).
    pub fn summary(&self) -> String {
        match &self.ended {
            Ended::Exit(0) => "exit 0".into(),
            Ended::Exit(c) => {
                let last = self.stderr.trim_end().lines().last().unwrap_or("").chars().take(200).collect::<String>();
                format!("exit {c}: {last}")
            }
            Ended::Fuel => "out of fuel (the instruction limit)".into(),
            Ended::Stack => "stack overflow".into(),
            Ended::WallClock => "wall-clock backstop (an infrastructure failure)".into(),
            Ended::Trap(t) => format!("interpreter crashed: {t}"),
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
    out_cap: usize,
    truncated: bool,
    clock_ns: u64,
    rng: u64,
    limits: StoreLimits,
}

impl Host {
    fn write(&mut self, fd: i32, bytes: &[u8]) {
        let (cap, buf) = (self.out_cap, if fd == 1 { &mut self.stdout } else { &mut self.stderr });
        let room = cap.saturating_sub(buf.len());
        buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.truncated |= bytes.len() > room;
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
        let state = Host {
            args: argv.iter().map(|a| a.to_string()).collect(),
            env: vec!["PYTHONHASHSEED=0".into(), "PYTHONDONTWRITEBYTECODE=1".into(), "PYTHONIOENCODING=utf-8".into()],
            stdin: stdin.to_vec(),
            out_cap: limits.output_bytes,
            rng: 0x9E37_79B9_7F4A_7C15,
            limits: StoreLimitsBuilder::new().memory_size(limits.memory_bytes).instances(1).build(),
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
                match e.downcast_ref::<Trap>() {
                    Some(Trap::OutOfFuel) => Ended::Fuel,
                    Some(Trap::StackOverflow) => Ended::Stack,
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
