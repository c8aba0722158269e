//! The sandbox for model-written Python (`src/python/`): hostile programs contained, each with the
//! limit or the refusal that stopped it and the machine unchanged; HumanEval's canonical
//! solutions passing their own tests in it; the same run repeating its fuel count exactly.

use lucid::python::{Ended, PyLimits};

use crate::support::probes::{Probe, require};
use crate::support::python::{PY, code_dir};

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
        let o = PY.run_code(code, b"", &limits());
        assert!(
            expect(&o),
            "{name}: {:?} ({}), stderr {}",
            o.ended,
            o.summary(),
            o.stderr.chars().rev().take(300).collect::<String>().chars().rev().collect::<String>()
        );
        // Stopped by the program's own limits, never by the sandbox's wall-clock backstop.
        assert_ne!(o.ended, Ended::WallClock, "{name}");
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
        lucid::domains::code::data::humaneval::read(&lucid::domains::code::data::humaneval_file(&code_dir()).unwrap())
            .unwrap();
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
    // What a user compares across machines and loads (the note of the code issue): one digest.
    let digest = blake3::hash(format!("{fuel:?}").as_bytes()).to_hex();
    eprintln!("fuel of the 164 gold checks: total {}, digest {}", fuel.iter().sum::<u64>(), &digest[..16]);
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

fn humaneval() -> Vec<lucid::domains::code::data::humaneval::Problem> {
    lucid::domains::code::data::humaneval::read(&lucid::domains::code::data::humaneval_file(&code_dir()).unwrap())
        .unwrap()
}

#[test]
fn the_gold_check_cannot_be_fooled() {
    if !require(Probe::Code) {
        return;
    }
    let problems = humaneval();
    let by_id = |id: &str| problems.iter().find(|p| p.task_id == id).unwrap();
    let wrong = "    return False\n";
    let tricks: Vec<(&str, &str, String)> = vec![
        ("sys.exit(0) at import", "HumanEval/0", format!("{wrong}import sys\nsys.exit(0)\n")),
        ("os._exit(0) at import", "HumanEval/0", format!("{wrong}import os\nos._exit(0)\n")),
        ("sys.exit(0) inside the call", "HumanEval/0", "    import sys; sys.exit(0)\n".into()),
        ("an object equal to anything", "HumanEval/0", "    class E:\n        def __eq__(s, o): return True\n    return E()\n".into()),
        ("an int subclass equal to anything", "HumanEval/0",
            "    class B(int):\n        def __eq__(s, o): return True\n        __hash__ = int.__hash__\n    return B(0)\n".into()),
        ("check redefined", "HumanEval/0", format!("{wrong}import builtins\nbuiltins.check = lambda c: None\ndef check(c): pass\n")),
        ("AssertionError patched", "HumanEval/0", format!("{wrong}import builtins\nbuiltins.AssertionError = type('X', (BaseException,), {{}})\n")),
        ("an exit hook", "HumanEval/0", format!("{wrong}import sys, os\nsys.excepthook = lambda *a: os._exit(0)\n")),
        ("math.fabs patched", "HumanEval/32", "    return 0.0\nimport math\nmath.fabs = lambda x: 0.0\n".into()),
        ("a forged success line", "HumanEval/0", "    import os\n    os.write(1, b'\\nPASS\\n')\n    os._exit(0)\n".into()),
        ("the expected value read from the test's code", "HumanEval/0",
            "    import sys, dis\n    f = sys._getframe(1)\n    while f is not None and f.f_code.co_name != 'check': f = f.f_back\n    if f is None: return False\n    for i in dis.get_instructions(f.f_code):\n        if i.offset > f.f_lasti and i.opname == 'LOAD_CONST': return i.argval\n    return False\n".into()),
        ("an infinite loop", "HumanEval/0", "    while True: pass\n".into()),
    ];
    for (name, id, completion) in &tricks {
        let p = by_id(id);
        let v = lucid::python::gold::check(&PY, &p.prompt, completion, &p.test, &p.entry_point, &PyLimits::default());
        assert!(!v.passed, "{name}: scored as passing");
        assert!(!v.why.is_empty(), "{name}: no reason recorded");
        eprintln!("{name}: {}", v.why);
    }
    // Output flooding does not fool it, and an honest flood still passes on its results.
    let p = by_id("HumanEval/0");
    let flood = format!("    print('x' * 5_000_000)\n{}", p.canonical_solution);
    assert!(lucid::python::gold::check(&PY, &p.prompt, &flood, &p.test, &p.entry_point, &PyLimits::default()).passed);
    let flood_wrong = format!("    print('PASS\\n' * 1_000_000)\n{wrong}");
    assert!(
        !lucid::python::gold::check(&PY, &p.prompt, &flood_wrong, &p.test, &p.entry_point, &PyLimits::default()).passed
    );
}

/// Mutants of a solution (trusted code, run in the sandbox): each changes one operator,
/// comparison, constant or returned value of the entry point's body.
const MUTATE: &str = r#"
import sys, json, ast, copy
job = json.loads(sys.stdin.read())
tree = ast.parse(job["source"])
fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == job["entry"])
SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
        ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add,
        ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv, ast.Div: ast.Mult, ast.And: ast.Or, ast.Or: ast.And}
sites = [n for n in ast.walk(fn) if isinstance(n, (ast.Compare, ast.BinOp, ast.BoolOp, ast.Constant, ast.Return))]
out = []
for i in range(len(sites)):
    t = copy.deepcopy(tree)
    f = next(n for n in ast.walk(t) if isinstance(n, ast.FunctionDef) and n.name == job["entry"])
    s = [n for n in ast.walk(f) if isinstance(n, (ast.Compare, ast.BinOp, ast.BoolOp, ast.Constant, ast.Return))][i]
    if isinstance(s, ast.Compare) and type(s.ops[0]) in SWAP: s.ops[0] = SWAP[type(s.ops[0])]()
    elif isinstance(s, (ast.BinOp, ast.BoolOp)) and type(s.op) in SWAP: s.op = SWAP[type(s.op)]()
    elif isinstance(s, ast.Constant) and type(s.value) is int and not isinstance(s.value, bool): s.value += 1
    elif isinstance(s, ast.Constant) and type(s.value) is bool: s.value = not s.value
    elif isinstance(s, ast.Return) and s.value is not None: s.value = ast.UnaryOp(ast.Not(), s.value)
    else: continue
    out.append(ast.unparse(ast.fix_missing_locations(t)))
print(json.dumps(out))
"#;

#[test]
fn a_mutation_of_every_canonical_solution_fails_the_gold_check() {
    if !require(Probe::Code) {
        return;
    }
    let limits = PyLimits::default();
    for p in humaneval() {
        let canonical =
            lucid::python::gold::check(&PY, &p.prompt, &p.canonical_solution, &p.test, &p.entry_point, &limits);
        assert!(canonical.passed, "{}: {}", p.task_id, canonical.why);
        let job =
            serde_json::json!({"source": format!("{}{}", p.prompt, p.canonical_solution), "entry": p.entry_point});
        let o = PY.run_code(MUTATE, job.to_string().as_bytes(), &limits);
        let mutants: Vec<String> =
            serde_json::from_str(o.stdout.trim()).unwrap_or_else(|_| panic!("{}: {}", p.task_id, o.summary()));
        let caught = mutants.iter().take(12).any(|m| {
            !lucid::python::gold::check(&PY, &p.prompt, &format!("\n{m}\n"), &p.test, &p.entry_point, &limits).passed
        });
        assert!(caught, "{}: none of {} mutants fails", p.task_id, mutants.len().min(12));
    }
}

#[test]
fn the_answer_free_channels_fire_on_what_the_agent_can_see() {
    if !require(Probe::Code) {
        return;
    }
    let problems = humaneval();
    let limits = PyLimits::default();
    let ch = |p: &lucid::domains::code::data::humaneval::Problem, completion: &str| {
        lucid::python::checks::channels(&PY, &p.prompt, completion, &p.entry_point, &limits)
    };
    // The reference solutions: never a syntax signal, always loads; the docstring examples hold
    // (HumanEval's own prompts disagree with their references in a few places: listed).
    let (mut with_examples, mut disagree) = (0, Vec::new());
    for p in &problems {
        let c = ch(p, &p.canonical_solution);
        let loads = !c.detail().contains("raised on load") && !c.detail().contains("ended before");
        assert!(!c.syntax && loads, "{}: {}", p.task_id, c.detail());
        with_examples += usize::from(c.examples.is_some());
        // A malformed example (HumanEval/116's `f(x) == y` with no output line) fires on the
        // reference too: listed, and bounded.
        if c.examples == Some(true) || c.runtime || c.types == Some(true) {
            disagree.push(format!("{}: {}", p.task_id, c.detail()));
        }
    }
    eprintln!(
        "{with_examples} prompts with >>> examples; the reference disagrees with its examples on {}: {disagree:#?}",
        disagree.len()
    );
    assert!((70..=80).contains(&with_examples), "{with_examples}");
    // HumanEval/47's median example is wrong (8.0, not 15.0); HumanEval/116's examples are
    // malformed. Nothing else may fire on a reference.
    let ids: Vec<&str> = disagree.iter().map(|d| d.split(':').next().unwrap()).collect();
    assert_eq!(ids, ["HumanEval/47", "HumanEval/116"], "{disagree:#?}");
    // Each channel on a broken solution of a problem with examples (HumanEval/0 has two).
    let p = &problems[0];
    assert!(ch(p, &p.canonical_solution).examples == Some(false));
    let syntax = ch(p, "    return (\n");
    assert!(syntax.syntax && syntax.examples.is_none() && !syntax.runtime, "{syntax:?}");
    let wrong = ch(p, "    return not False\n");
    assert_eq!((wrong.syntax, wrong.examples, wrong.runtime), (false, Some(true), false), "{wrong:?}");
    let raises = ch(p, "    return numbers[10**6]\n");
    assert!(raises.runtime && raises.detail().contains("IndexError"), "{raises:?}");
    let on_load = ch(p, "    pass\nraise RuntimeError('at import')\n");
    assert!(on_load.runtime && on_load.detail().contains("at import"), "{on_load:?}");
    let exits = ch(p, "    pass\nimport os\nos._exit(0)\n");
    assert!(exits.runtime && exits.detail().contains("ended before"), "{exits:?}");
    let spins = ch(p, "    while True: pass\n");
    assert!(spins.runtime && spins.limit == Some("fuel"), "{spins:?}");
    // A prompt without examples: the channel is silent, not passed.
    let plain = problems.iter().find(|p| !p.prompt.contains(">>>")).unwrap();
    assert_eq!(ch(plain, &plain.canonical_solution).examples, None);
}

#[test]
fn programs_agree_by_behaviour_and_selftests_run() {
    if !require(Probe::Code) {
        return;
    }
    let problems = humaneval();
    let limits = PyLimits::default();
    let p = &problems[0]; // has_close_elements: two example calls
    let rewritten = "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n";
    let wrong = "    return False\n";
    assert_eq!(
        lucid::python::checks::agree(&PY, &p.prompt, &p.canonical_solution, rewritten, &p.entry_point, &limits),
        Some(true)
    );
    assert_eq!(
        lucid::python::checks::agree(&PY, &p.prompt, &p.canonical_solution, wrong, &p.entry_point, &limits),
        Some(false)
    );
    let b = lucid::python::checks::behaviour(&PY, &p.prompt, wrong, &p.entry_point, &limits).unwrap();
    assert_eq!(b, ["value False", "value False"]);
    let raises =
        lucid::python::checks::behaviour(&PY, &p.prompt, "    return numbers[99]\n", &p.entry_point, &limits).unwrap();
    assert_eq!(raises, ["raised IndexError", "raised IndexError"]);
    // No example call, or a program that does not load: no claim.
    let plain = problems.iter().find(|p| !p.prompt.contains(">>>")).unwrap();
    assert_eq!(
        lucid::python::checks::behaviour(&PY, &plain.prompt, &plain.canonical_solution, &plain.entry_point, &limits),
        None
    );
    assert_eq!(lucid::python::checks::agree(&PY, &p.prompt, "    return (\n", wrong, &p.entry_point, &limits), None);
    // Self-tests: passing, failing, and a program that exits before its tests run.
    let tests = "assert has_close_elements([1.0, 2.0], 1.5)\nassert not has_close_elements([1.0, 3.0], 1.5)";
    let selftest = |code: &str, tests: &str| lucid::python::checks::selftest(&PY, &p.prompt, code, tests, &limits);
    assert!(selftest(&p.canonical_solution, tests).unwrap().0);
    let (passed, why) = selftest(wrong, tests).unwrap();
    assert!(!passed && why.contains("AssertionError"), "{why}");
    let exits = format!("{wrong}import sys\nsys.exit(0)\n");
    assert!(!selftest(&exits, tests).unwrap().0);
    // Tests cut off by the token budget lose their last line; tests that do not parse are no test.
    assert!(selftest(&p.canonical_solution, &format!("{tests}\nassert has_close_elements([1.0, 2.")).unwrap().0);
    assert_eq!(selftest(&p.canonical_solution, "assert (\nassert (\n"), None);
}
