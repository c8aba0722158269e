# BFCL's multi-turn environments run by BFCL's own execute_multi_turn_func_call, in lucid's Python
# sandbox (or natively, by multiturn.py, for the test that holds the two equal).
# Job (stdin JSON): {"modules": {dotted name: source}, "packages": [dotted name], "test_id",
#  "initial_config", "involved_classes", "long_context", "steps": [[call, ...], ...], "tag"}.
# "modules" serves BFCL's and mpmath's sources from the job (the sandbox has no file system);
# natively it is empty and the wheel's folder is on sys.path.
# With "repeat": true, each step is run a second time from a deep copy of the environments as
# they were before it (their random generators included) and "<tag> R i <true|false>" says
# whether the results and the state came out the same (idempotent on repeat); the run goes on
# from the first execution.
# Output, one write each: "<tag> T -1 <state>" (the environment loaded), then per step i
# "<tag> S i <results>", "<tag> T i <state after it>" (and "<tag> R i ..."), then "<tag> END".
# With "mode": "verdict" (the gold, a trusted run: the job also holds "trajectory", the model's
# calls per turn and step, and "ground_truth"), BFCL's own multi-turn evaluation of the trajectory:
# "<tag> V 0 {valid, error_type, error_message}", then "<tag> END".
# "gate": false (the native reference only) runs calls as BFCL does, without the gate.
# The run holds no ground truth: only the initial configuration and the calls to make.
#
# Two departures from BFCL's own process, both the same natively and in the sandbox:
# - The gate: BFCL evals a call's text as Python. Here a call runs only when it is one call of a
#   tool of the task (a public method of its environments) with literal arguments; any other text
#   (a builtin, an attribute, a nested call, an expression such as 'a' + 'b', **kwargs) is refused
#   with an error result and never runs, so no call can reach the driver and forge its report. A
#   name that is neither a tool nor a Python name gets BFCL's own NameError text, a name on BFCL's
#   blocklist its own refusal. All 4,625 ground-truth calls pass the gate; a model's reply decoded
#   as BFCL decodes it (arithmetic evaluated, bare names as strings) passes unless it nests calls.
# - Left as BFCL has it: the long-context TravelAPI puts module-level extension cards and bookings
#   into every instance by reference, so in the gold's run a model's charge to such a card shows on
#   the ground truth's side too and the state check cannot see it (BFCL scores it the same way; no
#   ground-truth call touches those ids).
# - sum(): CPython 3.12's float sum is compensated and its fast paths depend on the width of a C
#   long; the sandbox's CPython is 32-bit (wasm32). _sum312 is 3.12's builtin_sum_impl with a
#   64-bit long, what BFCL computes on x86-64 CPython 3.12, installed on both sides.
import ast, builtins, copy, inspect, sys, json, os, math, importlib.abc, importlib.util

_LONG = (-(2**63), 2**63 - 1)


def _long(x):
    return _LONG[0] <= x <= _LONG[1]


def _sum312(iterable, /, start=0):
    it = iter(iterable)
    result = start
    if type(result) is int and _long(result):
        for item in it:
            fast = type(item) in (int, bool) and _long(item) and _long(result + item)
            result = result + item
            if not fast:
                break
        else:
            return result
    if type(result) is float:
        f, c = result, 0.0
        for item in it:
            if type(item) is float:
                t = f + item
                if abs(f) >= abs(item):
                    c += (f - t) + item
                else:
                    c += (item - t) + f
                f = t
                continue
            if isinstance(item, int) and _long(item):
                f += float(item)
                continue
            if c and math.isfinite(c):
                f += c
            result = f + item
            break
        else:
            if c and math.isfinite(c):
                f += c
            return f
    for item in it:
        result = result + item
    return result


def _plain(x, depth=0):
    # A state as JSON: File and Directory as their __eq__ sees them; a set, a dict (any keys), a
    # tuple, a float JSON cannot hold and an int past 2**53 tagged; anything else by its repr.
    if depth > 400:
        raise TypeError("state nested deeper than 400")
    t = type(x).__name__
    if t == "File":
        return {"__file__": [x.name, x.content]}
    if t == "Directory":
        return {"__dir__": [x.name, _plain(x.contents, depth + 1)]}
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, int):
        return x if abs(x) <= 2**53 else {"__int__": str(x)}
    if isinstance(x, float):
        return x if math.isfinite(x) else {"__float__": repr(x)}
    if isinstance(x, list):
        return [_plain(v, depth + 1) for v in x]
    if isinstance(x, tuple):
        return {"__tuple__": [_plain(v, depth + 1) for v in x]}
    if isinstance(x, (set, frozenset)):
        return {"__set__": sorted((_plain(v, depth + 1) for v in x), key=repr)}
    if isinstance(x, dict):
        return {"__dict__": [[_plain(k, depth + 1), _plain(v, depth + 1)] for k, v in x.items()]}
    return {"__repr__": repr(x)}


def _state(instances):
    return {c: {k: _plain(v) for k, v in vars(i).items() if not k.startswith("_")} for c, i in instances.items()}


# The names BFCL's executor refuses to run, whatever they are (its message kept).
_BLOCKED = {"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"}


def _refusal(call, tools, python_names):
    # None when the call may run; else its result.
    try:
        body = ast.parse(call, filename="<string>", mode="eval").body  # eval's name, as BFCL's message has it
    except Exception as e:  # SyntaxError; ValueError, RecursionError, MemoryError on hostile text
        return "Error during execution: %s" % e
    if not (isinstance(body, ast.Call) and isinstance(body.func, ast.Name)):
        return "Error during execution: not one call of a tool by name (lucid runs only the task's tools)"
    name = body.func.id
    if name in _BLOCKED:
        return "Error during execution: Function call %s is not allowed." % name
    if name not in tools:
        if name in python_names:
            return "Error during execution: %s is not a tool of this task (lucid runs only the task's tools)" % name
        return "Error during execution: name '%s' is not defined" % name
    for a in list(body.args) + [k.value for k in body.keywords]:
        if isinstance(a, ast.Starred) or a is None:
            return "Error during execution: an unpacked argument (lucid runs tools with literal arguments only)"
        try:
            ast.literal_eval(a)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return "Error during execution: an argument that is not a literal (lucid runs tools with literal arguments only)"
    if any(k.arg is None for k in body.keywords):
        return "Error during execution: an unpacked argument (lucid runs tools with literal arguments only)"
    return None


class _Sources(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, mods, pkgs):
        self.mods, self.pkgs = mods, pkgs

    def find_spec(self, name, path=None, target=None):
        if name in self.mods or name in self.pkgs:
            return importlib.util.spec_from_loader(name, self, is_package=name in self.pkgs)

    def create_module(self, spec):
        return None

    def exec_module(self, m):
        exec(compile(self.mods.get(m.__name__, ""), "<%s>" % m.__name__, "exec"), m.__dict__)


class _Sink:
    def write(self, s):
        return len(s)

    def flush(self):
        pass


def _tools(instances):
    # The names BFCL's executor maps to the environments (its own rule: public bound methods).
    return {n for i in instances.values() for n, _ in inspect.getmembers(i, inspect.ismethod) if not n.startswith("_")}


def _gated(real, python_names, gate):
    # BFCL's executor, with the model's calls through the gate (the ground truth's run as it is).
    def execute(func_call_list, initial_config, involved_classes, model_name, test_entry_id, long_context=False, is_evaL_run=False):
        kw = dict(initial_config=initial_config, involved_classes=involved_classes, model_name=model_name,
                  test_entry_id=test_entry_id, long_context=long_context, is_evaL_run=is_evaL_run)
        if not gate or model_name.endswith("_ground_truth"):
            return real(func_call_list, **kw)
        _, instances = real([], **kw)
        tools = _tools(instances)
        refused = [_refusal(c, tools, python_names) for c in func_call_list]
        ran, instances = real([c for c, r in zip(func_call_list, refused) if r is None], **kw)
        ran = iter(ran)
        return [next(ran) if r is None else r for r in refused], instances

    return execute


def _steps(job, run, out, executor):
    args = (job["initial_config"], job["involved_classes"], "lucid", job["test_id"])
    _, inst = run([], *args, long_context=job["long_context"], is_evaL_run=False)
    out("T", -1, _state(inst))
    # The executor keeps the environments in its module's globals, by instance name.
    held = vars(executor)
    names = [k for k, v in list(held.items()) if any(v is i for i in inst.values())]

    def step(calls):
        ran, now = run(calls, *args, long_context=job["long_context"], is_evaL_run=False)
        return ran, _state(now)

    for i, calls in enumerate(job["steps"]):
        before = {k: copy.deepcopy(held[k]) for k in names} if job.get("repeat") else None
        results, state = step(calls)
        out("S", i, results)
        out("T", i, state)
        if before is not None:
            after = {k: held[k] for k in names}
            held.update(before)
            again = step(calls)
            held.update(after)
            out("R", i, again == (results, state))


def _verdict(job, out):
    # BFCL's evaluation of a multi-turn entry (eval_runner._evaluate_single_multi_turn_entry):
    # the turn count (force-terminated), empty decoded steps dropped, then multi_turn_checker.
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker as mtc
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import is_empty_execute_response

    model, truth = job["trajectory"], job["ground_truth"]
    if len(model) != len(truth):
        result = {"valid": False, "error_type": "multi_turn:force_terminated",
                  "error_message": "the model's turns (%d) are not the ground truth's (%d)" % (len(model), len(truth))}
    else:
        decoded = [[s for s in turn if not is_empty_execute_response(s)] for turn in model]
        entry = {"id": job["test_id"], "initial_config": job["initial_config"], "involved_classes": job["involved_classes"]}
        result = mtc.multi_turn_checker(decoded, truth, entry, job["test_id"].rsplit("_", 1)[0], "lucid")
    out("V", 0, {k: (None if result.get(k) is None else result[k] if k == "valid" else str(result[k]))
                 for k in ("valid", "error_type", "error_message")})


def _main():
    w, dumps = os.write, json.dumps
    job = json.loads(sys.stdin.read())
    tag = job["tag"]
    sys.meta_path.insert(0, _Sources(job["modules"], set(job["packages"])))
    builtins.sum = _sum312
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils, multi_turn_checker

    python_names = set(dir(builtins)) | set(vars(multi_turn_utils)) | set(vars(multi_turn_checker))
    run = _gated(multi_turn_utils.execute_multi_turn_func_call, python_names, job.get("gate", True))
    multi_turn_checker.execute_multi_turn_func_call = run

    def out(kind, i, value):
        w(1, ("%s %s %d %s\n" % (tag, kind, i, dumps(value))).encode())

    sys.stdout = _Sink()
    if job.get("mode") == "verdict":
        _verdict(job, out)
    else:
        _steps(job, run, out, multi_turn_utils)
    w(1, ("%s END\n" % tag).encode())


if __name__ == "__main__":
    _main()
