//! The sandbox for model-written Python (`src/python/`): hostile programs contained, each with the
//! limit or the refusal that stopped it and the machine unchanged; HumanEval's canonical
//! solutions passing their own tests in it; the same run repeating its fuel count exactly.

use std::path::PathBuf;
use std::sync::LazyLock;

use lucid::python::{Ended, PyLimits, Python};

use crate::support::probes::{Probe, require};

fn code_dir() -> PathBuf {
    lucid::model_files::model_path(&lucid::model_files::models_dir(&lucid::cache_dir::cache_dir()), "code")
}

/// One interpreter for the whole test binary (compiled once, then from the cache).
static PY: LazyLock<Python> = LazyLock::new(|| {
    let wasm = lucid::datasets::code::python_wasm(&code_dir()).unwrap();
    Python::load(&wasm, lucid::datasets::code::PYTHON_WASM_BLAKE3, &lucid::cache_dir::cache_dir()).unwrap()
});

/// A hostile program's name, its code, and what its outcome must be.
type Case = (&'static str, String, Box<dyn Fn(&lucid::python::PyOutcome) -> bool>);

fn limits() -> PyLimits {
    PyLimits { fuel: 5_000_000_000, memory_bytes: 256 << 20, output_bytes: 1 << 20, wall_secs: 120 }
}

#[test]
fn hostile_programs_are_contained_each_by_its_limit() {
    if !require(Probe::Code) {
        return;
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let canary = std::env::temp_dir().join(format!("lucid-sandbox-canary-{}", std::process::id()));
    let before: Vec<_> =
        std::fs::read_dir(std::env::temp_dir()).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    let cases: Vec<Case> = vec![
        ("infinite loop", "while True:\n    pass".into(), Box::new(|o| o.ended == Ended::Fuel && o.limit() == Some("fuel"))),
        ("huge allocation", "x = bytearray(10**9)".into(), Box::new(|o| o.ended == Ended::Exit(1) && o.stderr.contains("MemoryError"))),
        ("deep recursion", "import sys\nsys.setrecursionlimit(10**7)\ndef f(n): return f(n + 1)\nf(0)".into(),
            Box::new(|o| matches!(o.ended, Ended::Fuel | Ended::Stack | Ended::Exit(1)) && !o.success())),
        ("recursion through C", "import functools\n@functools.lru_cache(None)\ndef f(n): return 0 if n == 0 else f(n - 1)\nimport sys\nsys.setrecursionlimit(10**6)\nf(100000)".into(),
            Box::new(|o| !o.success())),
        ("read /etc/passwd", "print(open('/etc/passwd').read())".into(), Box::new(|o| o.ended == Ended::Exit(1) && !o.stdout.contains("root:"))),
        ("read the home folder", format!("import os\nprint(os.listdir({home:?}))"), Box::new(|o| o.ended == Ended::Exit(1))),
        ("write outside", format!("open({:?}, 'w').write('x')", canary.display().to_string()), Box::new(|o| o.ended == Ended::Exit(1))),
        ("open a socket", "import socket\ns = socket.socket()\ns.connect(('127.0.0.1', 22))".into(), Box::new(|o| o.ended == Ended::Exit(1))),
        ("fork bomb", "import os\nwhile True:\n    os.fork()".into(), Box::new(|o| o.ended == Ended::Exit(1) && o.stderr.contains("fork"))),
        ("subprocess", "import subprocess\nsubprocess.run(['sh', '-c', 'echo hi'])".into(), Box::new(|o| o.ended == Ended::Exit(1))),
        ("kill the parent", "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)".into(), Box::new(|o| o.ended == Ended::Exit(1))),
        ("a thread", "import threading\nthreading.Thread(target=print).start()".into(), Box::new(|o| o.ended == Ended::Exit(1))),
        ("sleep", "import time\ntime.sleep(3600)\nprint('woke')".into(), Box::new(|o| o.success() && o.stdout.contains("woke"))),
        ("flood the output", "while True:\n    print('x' * 10000)".into(), Box::new(|o| o.ended == Ended::Fuel && o.truncated && o.stdout.len() <= 1 << 20)),
        ("exit status", "import sys\nsys.exit(3)".into(), Box::new(|o| o.ended == Ended::Exit(3))),
    ];
    for (name, code, expect) in &cases {
        let t = std::time::Instant::now();
        let o = PY.run_code(code, b"", &limits());
        assert!(
            expect(&o),
            "{name}: {:?} ({}), stderr {}",
            o.ended,
            o.summary(),
            o.stderr.chars().rev().take(300).collect::<String>().chars().rev().collect::<String>()
        );
        // Nothing here depends on time; this bounds a hang so the test cannot wait forever.
        assert!(t.elapsed().as_secs() < 120, "{name}");
    }
    assert!(!canary.exists(), "a file was written outside the sandbox");
    let after: Vec<_> =
        std::fs::read_dir(std::env::temp_dir()).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert!(after.iter().all(|f| before.contains(f) || !f.to_string_lossy().contains("canary")));
    // Fine programs run, read stdin and print.
    let ok = PY.run_code(
        "import sys, json\nprint(json.dumps(sorted(json.loads(sys.stdin.read()))))",
        b"[3, 1, 2]",
        &limits(),
    );
    assert_eq!((ok.ended.clone(), ok.stdout.trim()), (Ended::Exit(0), "[1, 2, 3]"), "{}", ok.stderr);
}

#[test]
fn every_humaneval_canonical_solution_passes_and_runs_repeat_exactly() {
    if !require(Probe::Code) {
        return;
    }
    let problems =
        lucid::datasets::code::humaneval::read(&lucid::datasets::code::humaneval_file(&code_dir()).unwrap()).unwrap();
    assert_eq!(problems.len(), 164);
    // HumanEval/75 takes 8 G instructions (a triple loop over primes); the default allows 20 G.
    let gold = PyLimits { fuel: PyLimits::default().fuel, ..limits() };
    let mut fuel = Vec::new();
    for p in &problems {
        let program = format!("{}{}\n{}\ncheck({})\n", p.prompt, p.canonical_solution, p.test, p.entry_point);
        let o = PY.run_code(&program, b"", &gold);
        assert!(o.success(), "{}: {}", p.task_id, o.summary());
        fuel.push(o.fuel);
    }
    // The same program twice: the same instructions, the same fuel.
    for (p, f) in problems.iter().zip(&fuel).step_by(41) {
        let program = format!("{}{}\n{}\ncheck({})\n", p.prompt, p.canonical_solution, p.test, p.entry_point);
        assert_eq!(PY.run_code(&program, b"", &gold).fuel, *f, "{}", p.task_id);
    }
    // A wrong body fails.
    let p = &problems[0];
    let wrong = format!("{}    return not ({})\n{}\ncheck({})\n", p.prompt, "True", p.test, p.entry_point);
    assert_eq!(PY.run_code(&wrong, b"", &limits()).ended, Ended::Exit(1));
}
