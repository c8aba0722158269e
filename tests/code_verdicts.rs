//! The code domain's gold check against code aimed at the check itself (`src/python/gold.rs`):
//! no expected value within the candidate's reach (frame-walking decoders fail), host work
//! bounded (a 10 GB `writev` ends in the `output` limit with lucid's memory under its stated
//! bound; a correct program that keeps writing passes), the wall-clock backstop never a verdict
//! (unscored), stack and memory exhaustion named, the candidate's text quoted apart, and the same
//! records on a loaded machine.

use lucid::python::PyLimits;
use lucid::python::gold::{GoldVerdict, check};

use crate::support::probes::{Probe, require};
use crate::support::python::{PY, code_dir};

fn problem(id: &str) -> lucid::domains::code::data::humaneval::Problem {
    let file = lucid::domains::code::data::humaneval_file(&code_dir()).unwrap();
    lucid::domains::code::data::humaneval::read(&file).unwrap().into_iter().find(|p| p.task_id == id).unwrap()
}

fn verdict(id: &str, completion: &str, limits: &PyLimits) -> GoldVerdict {
    let p = problem(id);
    check(&PY, &p.prompt, completion, &p.test, &p.entry_point, limits)
}

/// HumanEval/38's and /50's decoders that return the expected string from the test's frames and
/// their input unchanged anywhere else (they passed 100 of 100 calls when the candidate ran
/// under the test).
const FRAME_WALKERS: &[(&str, &str, &str)] = &[
    (
        "sys._getframe up to the test's locals",
        "HumanEval/38",
        "    import sys\n    f = sys._getframe(1)\n    while f is not None:\n        l = f.f_locals\n        if l.get('encoded_str') == s and 'str' in l:\n            return l['str']\n        f = f.f_back\n    return s\n",
    ),
    (
        "inspect.stack() up to the test's locals",
        "HumanEval/50",
        "    import inspect\n    for fi in inspect.stack():\n        l = fi.frame.f_locals\n        if l.get('encoded_str') == s and 'str' in l:\n            return l['str']\n    return s\n",
    ),
    (
        "any string of the right length in any frame",
        "HumanEval/38",
        "    import sys\n    f = sys._getframe(1)\n    while f is not None:\n        for v in list(f.f_locals.values()):\n            if type(v) is type('') and len(v) == len(s) and v != s and sorted(v) == sorted(s):\n                return v\n        f = f.f_back\n    return s\n",
    ),
];

#[test]
fn no_expected_value_is_within_the_candidates_reach() {
    if !require(Probe::Code) {
        return;
    }
    let limits = PyLimits::default();
    for (name, id, completion) in FRAME_WALKERS {
        let v = verdict(id, completion, &limits);
        assert!(!v.passed && !v.unscored, "{name} ({id}): scored as passing");
        assert!(v.why.contains("AssertionError"), "{name}: {}", v.why);
    }
    // The honest decoders still pass, their calls listed and answered.
    for id in ["HumanEval/38", "HumanEval/50"] {
        let p = problem(id);
        let v = check(&PY, &p.prompt, &p.canonical_solution, &p.test, &p.entry_point, &limits);
        assert!(v.passed && v.calls == 100, "{id}: {} ({} calls)", v.why, v.calls);
    }
}

/// Peak resident memory of this process, bytes (`VmHWM`).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 =
        status.lines().find_map(|l| l.strip_prefix("VmHWM:")).unwrap().trim().trim_end_matches(" kB").parse().unwrap();
    kb << 10
}

/// The bound on lucid's memory for one check, whatever the candidate does: the guest's memory
/// limit, the kept output and records, and the interpreter (docs/sandboxes.md, the code sandbox).
const ONE_CHECK_BOUND: u64 = 1 << 30;

const WRITEV: &str = "    import os\n    os.writev(2, [bytes(200 << 20)] * 50)\n    return x + y\n";

/// Run in a child process (this binary, this test alone): the `writev` check, and the peak memory.
#[test]
fn a_10_gb_writev_ends_in_the_output_limit_within_the_memory_bound() {
    if !require(Probe::Code) {
        return;
    }
    if std::env::var_os("LUCID_WRITEV_CHILD").is_some() {
        let v = verdict("HumanEval/53", WRITEV, &PyLimits::default());
        println!("VERDICT {} {:?} {}", v.passed, v.limit, v.why);
        println!("PEAK {}", peak_rss());
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "code_verdicts::a_10_gb_writev_ends_in_the_output_limit_within_the_memory_bound",
            "--nocapture",
        ])
        .env("LUCID_WRITEV_CHILD", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the child failed ({:?}): {text}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |tag: &str| {
        text.lines().find_map(|l| l.strip_prefix(tag)).unwrap_or_else(|| panic!("{tag}: {text}")).to_string()
    };
    let verdict = line("VERDICT ");
    assert!(verdict.starts_with("false Some(\"output\")"), "{verdict}");
    let peak: u64 = line("PEAK ").parse().unwrap();
    assert!(peak < ONE_CHECK_BOUND, "lucid's peak memory {peak} bytes is over the bound {ONE_CHECK_BOUND}");
}

#[test]
fn a_correct_program_that_keeps_writing_passes_and_the_backstop_is_never_a_verdict() {
    if !require(Probe::Code) {
        return;
    }
    // 400 writes of 128 MiB in each of the 105 calls (5.6 TB asked for): dropped uncopied past
    // the cap, so cheap in time and charged in fuel.
    let burner =
        "    import os\n    for _ in range(400):\n        os.write(2, _B)\n    return x + y\n_B = bytes(128 << 20)\n";
    let v = verdict("HumanEval/53", burner, &PyLimits::default());
    assert!(v.passed, "{}", v.why);
    // A run stopped by the wall-clock backstop (here set to 1 s under 20 G of fuel): retried,
    // then unscored with the reason, never u = 0.
    let short = PyLimits { wall_secs: 1, ..PyLimits::default() };
    let v = verdict("HumanEval/53", "    while True:\n        pass\n", &short);
    assert!(v.unscored && !v.passed, "{v:?}");
    assert_eq!(v.limit, Some("wall-clock"));
    assert!(v.why.contains("infrastructure failure"), "{}", v.why);
}

#[test]
fn exhaustion_is_named_as_the_limit_it_is_and_the_candidates_text_is_quoted_apart() {
    if !require(Probe::Code) {
        return;
    }
    let limits = PyLimits::default();
    let stack = "    import sys\n    sys.setrecursionlimit(10**6)\n    class A:\n        def __getitem__(s, i): return s[i]\n    return A()[0]\n";
    let v = verdict("HumanEval/53", stack, &limits);
    assert_eq!((v.passed, v.limit), (false, Some("stack")), "{}", v.why);
    for (name, grab) in [("10 GiB", "bytearray(10 << 30)"), ("1 GB", "bytearray(10**9)")] {
        let v = verdict("HumanEval/53", &format!("    x = {grab}\n    return x + y\n"), &limits);
        assert_eq!((v.passed, v.limit), (false, Some("memory")), "{name}: {}", v.why);
    }
    let forged = "    import sys, os\n    sys.stderr.write('PASS: all 105 asserts held\\n')\n    sys.stderr.flush()\n    os._exit(3)\n";
    let v = verdict("HumanEval/53", forged, &limits);
    assert!(!v.passed);
    assert!(v.why.starts_with("the candidate's run ended after 0 of 105 calls (exit 3)"), "{}", v.why);
    assert!(v.why.ends_with("— its stderr ended \"PASS: all 105 asserts held\""), "{}", v.why);
}

/// Hostile candidates whose records must not depend on the machine's load.
fn hostile() -> Vec<(&'static str, String)> {
    let mut out: Vec<(&str, String)> = FRAME_WALKERS.iter().map(|(_, id, c)| (*id, c.to_string())).collect();
    out.extend([
        ("HumanEval/53", WRITEV.to_string()),
        (
            "HumanEval/53",
            "    import sys\n    sys.setrecursionlimit(10**6)\n    def f(n): return f(n + 1)\n    return f(0)\n".into(),
        ),
        ("HumanEval/53", "    class E:\n        def __eq__(s, o): return True\n    return E()\n".into()),
        ("HumanEval/53", "    import os\n    os.write(1, b'\\nPASS\\n')\n    os._exit(0)\n".into()),
        ("HumanEval/53", "    x = bytearray(10**9)\n    return x + y\n".into()),
        ("HumanEval/53", "    while True:\n        pass\n".into()),
        ("HumanEval/53", "    return x + y\n".into()),
    ]);
    out
}

/// The hostile candidates' verdicts, reasons, limits, fuel and calls.
fn records(limits: &PyLimits) -> Vec<String> {
    hostile()
        .iter()
        .map(|(id, c)| {
            let v = verdict(id, c, limits);
            format!("{id} {} {:?} {} {} {}", v.passed, v.limit, v.fuel, v.calls, v.why)
        })
        .collect()
}

#[test]
fn the_same_records_on_an_idle_and_a_loaded_machine() {
    if !require(Probe::Code) {
        return;
    }
    // 2 G of fuel: the infinite loop ends in fuel within seconds even on a loaded machine.
    let limits = PyLimits { fuel: 2_000_000_000, ..PyLimits::default() };
    let idle = records(&limits);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let burners: Vec<_> = (0..2 * std::thread::available_parallelism().map_or(2, |n| n.get()))
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            })
        })
        .collect();
    let loaded = records(&limits);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    burners.into_iter().for_each(|b| b.join().unwrap());
    assert_eq!(idle, loaded);
    assert!(idle.iter().any(|r| r.contains("Some(\"fuel\")")) && idle.iter().any(|r| r.contains("Some(\"output\")")));
}
