//! The code domain's gold check against code aimed at the check itself (`src/python/gold.rs`):
//! no expected value within the candidate's reach (frame-walking decoders fail), host work
//! bounded (a 10 GB `writev` ends in the `output` limit with lucid's memory under its stated
//! bound; a correct program that keeps writing passes), the wall-clock backstop never a verdict
//! (unscored), stack and memory exhaustion named, the candidate's text quoted apart, the same
//! records on a loaded machine, issue #69's attacks failing and its right programs passing, and
//! HumanEval's own harness as the referee of generated candidates.

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
    let v = verdict("HumanEval/53", "    x = bytearray(10**9)\n    return x + y\n", &limits);
    assert_eq!((v.passed, v.limit), (false, Some("memory")), "1 GB: {}", v.why);
    // A size wasm32 cannot hold (10 GiB) is refused by CPython itself, as an OverflowError that
    // asks the host for nothing: a failure of the code, no limit named (issue #69).
    let v = verdict("HumanEval/53", "    x = bytearray(10 << 30)\n    return x + y\n", &limits);
    assert_eq!((v.passed, v.limit), (false, None), "10 GiB: {}", v.why);
    assert!(v.why.contains("OverflowError"), "{}", v.why);
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

/// HumanEval's own verdict (its harness's `check_correctness`: the prompt, the completion, the
/// test and `check(entry_point)` exec'd in one process, here the host's python3 with a timeout).
/// Passed only when `check` returned: a line written after it (as the harness appends "passed"
/// after `exec` returns), so a candidate that exits early fails as it does there.
fn referee(id: &str, completion: &str) -> bool {
    referee_of(&problem(id), completion)
}

fn referee_of(p: &lucid::domains::code::data::humaneval::Problem, completion: &str) -> bool {
    let done = format!("REFEREE-PASSED-{:016x}", rand::random::<u64>());
    let program = format!(
        "{}{}\n\n{}\n\ncheck({})\nimport os as _os\n_os.write(1, b'\\n{done}\\n')\n",
        p.prompt, completion, p.test, p.entry_point
    );
    let out =
        std::process::Command::new("timeout").args(["20", "python3", "-c", &program]).output().expect("python3 runs");
    out.status.success() && String::from_utf8_lossy(&out.stdout).trim_end().ends_with(&done)
}

/// Wrong programs aimed at the gold check's machinery (issue #69): the test's random stream, the
/// record channel, a limit read from exception text, fuel spent across rounds.
const ATTACKS: &[(&str, &str, &str)] = &[
    (
        "the test's random draws, from the global stream",
        "HumanEval/38",
        "    import random, string\n    return ''.join(random.choice(string.ascii_lowercase) for i in range(random.randint(10, 20)))\n",
    ),
    (
        "the test's random draws, from the global stream",
        "HumanEval/50",
        "    import random, string\n    return ''.join(random.choice(string.ascii_lowercase) for i in range(random.randint(10, 20)))\n",
    ),
    (
        "the test's random draws, from its own Random(1234) and a call counter",
        "HumanEval/38",
        "    import random, string\n    global _r\n    try:\n        _r\n    except NameError:\n        _r = random.Random(1234)\n    return ''.join(_r.choice(string.ascii_lowercase) for i in range(_r.randint(10, 20)))\n",
    ),
    (
        "a record of its own, with the driver's names",
        "HumanEval/53",
        "    import sys, os, json\n    m = sys.modules['__main__']\n    os.write(1, ('%s R %d %s\\n' % (m._tag, m._i, json.dumps([repr(x + y), None]))).encode())\n    return x * y\n",
    ),
    (
        "a record of its own, with the nonce found in the driver's frame",
        "HumanEval/53",
        "    import os\n    try:\n        raise Exception\n    except Exception as e:\n        L = e.__traceback__.tb_frame.f_back.f_locals\n    os.write(1, ('%s R %d v %r\\n' % (L['tag'], L['i'], x + y)).encode())\n    return x * y\n",
    ),
    (
        "every record of its own and END, then an exit",
        "HumanEval/53",
        "    import os\n    try:\n        raise Exception\n    except Exception as e:\n        L = e.__traceback__.tb_frame.f_back.f_locals\n    for j in range(L['i'], len(L['calls'])):\n        a = L['calls'][j][0]\n        os.write(1, ('%s R %d v %r\\n' % (L['tag'], j, a[0] + a[1])).encode())\n    os.write(1, ('%s END\\n' % L['tag']).encode())\n    os._exit(0)\n",
    ),
    (
        "a trace function that rewrites the driver's result",
        "HumanEval/53",
        "    import sys\n    def t(frame, event, arg):\n        if 'x' in frame.f_locals and frame.f_code.co_name == '_drive':\n            frame.f_locals['x'] = frame.f_locals['a'][0] + frame.f_locals['a'][1]\n        return t\n    sys.settrace(t)\n    sys._getframe(1).f_trace = t\n    return x * y\n",
    ),
];

#[test]
fn issue_69_no_attack_on_the_gold_checks_machinery_passes() {
    if !require(Probe::Code) || !require(Probe::Python) {
        return;
    }
    let limits = PyLimits::default();
    for (name, id, completion) in ATTACKS {
        let v = verdict(id, completion, &limits);
        assert!(!v.passed && !v.unscored, "{name} ({id}) passed");
        assert!(!referee(id, completion), "{name} ({id}): HumanEval's harness passes it");
    }
}

#[test]
fn issue_69_a_limit_is_named_by_the_host_never_by_exception_text() {
    if !require(Probe::Code) {
        return;
    }
    let limits = PyLimits::default();
    let fake = "    raise OverflowError(\"cannot fit 'int' into an index-sized integer\")\n";
    let v = verdict("HumanEval/53", fake, &limits);
    assert_eq!((v.passed, v.limit), (false, None), "{}", v.why);
    let fake = "    raise MemoryError()\n";
    let v = verdict("HumanEval/53", fake, &limits);
    assert_eq!((v.passed, v.limit), (false, None), "{}", v.why);
}

#[test]
fn issue_69_one_fuel_budget_per_check_not_per_round() {
    if !require(Probe::Code) {
        return;
    }
    // Each call's argument is the previous result: every round answers one more call (8 rounds
    // at most, here 6). The cheap candidate's check costs 11.5 G (about 1.9 G of interpreter
    // start-up a round: the listing and the candidate's run); the burner's costs 60.5 G with no
    // limit, 10 G a round: a budget per round would pass it, one budget per check stops it.
    let prompt = "def f(x):\n    \"\"\"x plus one.\"\"\"\n";
    let test =
        "def check(candidate):\n    x = 0\n    for _ in range(6):\n        x = candidate(x)\n    assert x == 6\n";
    let limits = PyLimits::default();
    // A prompt that does not load (no body) lists no calls: a failure that says so.
    let v = check(&PY, "def f(x):\n", "    return x + 1\n", test, "f", &limits);
    assert!(!v.passed && v.why.starts_with("the test's calls could not be listed"), "{v:?}");
    let cheap = check(&PY, prompt, "    return x + 1\n", test, "f", &limits);
    assert!(cheap.passed && cheap.fuel <= limits.fuel, "{cheap:?}");
    let burner = "    for _ in range(1500000):\n        pass\n    return x + 1 if type(x) is int else 0\n";
    let v = check(&PY, prompt, burner, test, "f", &limits);
    assert!(v.fuel <= limits.fuel, "the check burned {} fuel against a limit of {}", v.fuel, limits.fuel);
    assert_eq!((v.passed, v.limit), (false, Some("fuel")), "{v:?}");
}

/// Right programs whose results are not plain built-in values (issue #69): HumanEval's harness
/// passes each.
const RIGHT: &[(&str, &str, &str)] = &[
    (
        "a namedtuple",
        "HumanEval/8",
        "    import collections\n    P = collections.namedtuple('P', 'sum product')\n    s, p = 0, 1\n    for n in numbers:\n        s += n\n        p *= n\n    return P(s, p)\n",
    ),
    (
        "a Counter",
        "HumanEval/111",
        "    import collections\n    c = collections.Counter(w for w in test.split(' ') if w)\n    if not c:\n        return collections.Counter()\n    m = max(c.values())\n    return collections.Counter({k: v for k, v in c.items() if v == m})\n",
    ),
    ("a Fraction", "HumanEval/2", "    import fractions\n    return fractions.Fraction(number) % 1\n"),
    (
        "a generator the test takes tuple() of",
        "HumanEval/33",
        "    t = sorted(l[::3])\n    return (t[i // 3] if i % 3 == 0 else v for i, v in enumerate(l))\n",
    ),
];

#[test]
fn issue_69_right_programs_with_other_result_types_pass() {
    if !require(Probe::Code) || !require(Probe::Python) {
        return;
    }
    let limits = PyLimits::default();
    for (name, id, completion) in RIGHT {
        assert!(referee(id, completion), "{name} ({id}): HumanEval's harness fails it");
        let v = verdict(id, completion, &limits);
        assert!(v.passed, "{name} ({id}): {}", v.why);
    }
    // A result lucid does not copy is refused by what it is.
    let v = verdict("HumanEval/53", "    class E:\n        def __eq__(s, o): return True\n    return E()\n", &limits);
    assert!(!v.passed && v.why.contains("an object of type 'E'"), "{}", v.why);
}

/// The issue's problems and every 16th (`LUCID_REFEREE=all`, as `just bench-referees` sets it:
/// every problem).
fn referee_sample() -> Vec<lucid::domains::code::data::humaneval::Problem> {
    let file = lucid::domains::code::data::humaneval_file(&code_dir()).unwrap();
    let all = std::env::var("LUCID_REFEREE").is_ok_and(|v| v == "all");
    let named = [2, 8, 33, 38, 50, 53, 111];
    let problems = lucid::domains::code::data::humaneval::read(&file).unwrap();
    problems.into_iter().enumerate().filter(|(i, _)| all || i % 16 == 0 || named.contains(i)).map(|(_, p)| p).collect()
}

/// Operator swaps: a problem's first two that apply to its reference body make its mutants.
const MUTATIONS: &[(&str, &str)] = &[
    (" + ", " - "),
    (" < ", " <= "),
    (" > ", " >= "),
    (" == ", " != "),
    ("True", "False"),
    ("[1:]", "[2:]"),
    ("return ", "return not "),
];

/// What a wrapper around the reference body returns in place of its result `r`: other types
/// for the same content (a tuple for a list, a subclass, an iterator, a `Fraction` for an int,
/// an `OrderedDict` for a dict) and near misses (an int as text, a float nudged).
const WRAPPERS: &[(&str, &str)] = &[
    ("a list as a tuple", "tuple(r) if type(r) is list else r"),
    ("a subclass", "type('S', (type(r),), {})(r) if type(r) in (list, tuple, dict, str, int, float) else r"),
    ("an iterator", "iter(r) if type(r) in (list, tuple) else r"),
    (
        "a Fraction or an OrderedDict",
        "__import__('fractions').Fraction(r) if type(r) is int else __import__('collections').OrderedDict(r) if type(r) is dict else r",
    ),
    ("a near miss", "str(r) if type(r) is int else r + 1e-9 if type(r) is float else r"),
];

/// Candidates generated from a problem's reference body, each with its class.
fn generated(p: &lucid::domains::code::data::humaneval::Problem) -> Vec<(String, String)> {
    let canon = &p.canonical_solution;
    let e = &p.entry_point;
    let mut out = vec![
        ("the reference".to_string(), canon.clone()),
        ("None".into(), "    return None\n".into()),
        ("a raise".into(), "    raise ValueError('no')\n".into()),
    ];
    let mutants = MUTATIONS.iter().filter(|(from, _)| canon.contains(from)).take(2);
    out.extend(mutants.map(|(from, to)| (format!("mutant {from:?} -> {to:?}"), canon.replacen(from, to, 1))));
    out.extend(WRAPPERS.iter().map(|(name, w)| {
        let wrapped =
            format!("{canon}\n\n_inner = {e}\n\n\ndef {e}(*a, **k):\n    r = _inner(*a, **k)\n    return {w}\n");
        (name.to_string(), wrapped)
    }));
    out
}

/// The differential referee (issue #69): lucid's verdict equals HumanEval's harness's on every
/// generated candidate of the sample, the issue's attacks and right programs. The one class
/// where they differ by design is counted apart: decoders that read the expected value out of
/// the test's frames pass the harness (the candidate runs inside the test there) and fail lucid.
#[test]
fn issue_69_lucid_agrees_with_humanevals_harness_on_generated_candidates() {
    if !require(Probe::Code) || !require(Probe::Python) {
        return;
    }
    let limits = PyLimits::default();
    let sample = referee_sample();
    let mut cases: Vec<(String, &lucid::domains::code::data::humaneval::Problem, String)> = Vec::new();
    for p in &sample {
        cases.extend(generated(p).into_iter().map(|(class, c)| (class, p, c)));
    }
    let named = |id: &str| sample.iter().find(|p| p.task_id == id).unwrap();
    for (class, id, c) in ATTACKS.iter().chain(RIGHT) {
        cases.push((class.to_string(), named(id), c.to_string()));
    }
    let verdicts: Vec<(bool, bool, String)> = std::thread::scope(|s| {
        let workers: Vec<_> = cases
            .chunks(cases.len().div_ceil(2))
            .map(|chunk| {
                s.spawn(|| {
                    chunk
                        .iter()
                        .map(|(_, p, c)| {
                            let v = check(&PY, &p.prompt, c, &p.test, &p.entry_point, &limits);
                            assert!(!v.unscored, "{}: unscored ({})", p.task_id, v.why);
                            (v.passed, referee_of(p, c), v.why)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    let differ: Vec<String> = cases
        .iter()
        .zip(&verdicts)
        .filter(|(_, (lucid, harness, _))| lucid != harness)
        .map(|((class, p, _), (lucid, harness, why))| {
            format!("{} {class}: lucid {lucid}, harness {harness} ({why})", p.task_id)
        })
        .collect();
    let passed = verdicts.iter().filter(|(l, _, _)| *l).count();
    println!(
        "CODE REFEREE: {} candidates over {} problems: {} agree with HumanEval's harness ({passed} pass, {} fail)",
        cases.len(),
        sample.len(),
        cases.len() - differ.len(),
        cases.len() - passed
    );
    assert!(differ.is_empty(), "lucid and HumanEval's harness differ on:\n{}", differ.join("\n"));
    assert!(passed >= sample.len() && cases.len() - passed >= sample.len(), "a one-sided sample");
    // Frame walkers: the harness passes them (its candidate runs under the test); lucid does not.
    for (name, id, c) in FRAME_WALKERS {
        assert!(referee(id, c) && !verdict(id, c, &limits).passed, "{name} ({id})");
    }
}
