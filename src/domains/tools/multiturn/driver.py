# BFCL's multi-turn environments run by BFCL's own execute_multi_turn_func_call, in lucid's Python
# sandbox (or natively, by multiturn.py, for the test that holds the two equal).
# Job (stdin JSON): {"modules": {dotted name: source}, "packages": [dotted name], "test_id",
#  "initial_config", "involved_classes", "long_context", "steps": [[call, ...], ...], "tag"}.
# "modules" serves BFCL's and mpmath's sources from the job (the sandbox has no file system);
# natively it is empty and the wheel's folder is on sys.path.
# Output, one write each: "<tag> T -1 <state>" (the environment loaded), then per step i
# "<tag> S i <results>" and "<tag> T i <state after it>", then "<tag> END".
# The run holds no ground truth: only the initial configuration and the calls to make.
import sys, json, os, math, importlib.abc, importlib.util

_w = os.write
_job = json.loads(sys.stdin.read())
_tag = _job["tag"]
_mods, _pkgs = _job["modules"], set(_job["packages"])


class _Sources(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name in _mods or name in _pkgs:
            return importlib.util.spec_from_loader(name, self, is_package=name in _pkgs)

    def create_module(self, spec):
        return None

    def exec_module(self, m):
        exec(compile(_mods.get(m.__name__, ""), "<%s>" % m.__name__, "exec"), m.__dict__)


sys.meta_path.insert(0, _Sources())


def _plain(x, depth=0):
    # A state as JSON with BFCL's equality: File and Directory as their __eq__ sees them; a set,
    # a dict (any keys), a tuple, a float JSON cannot hold and an int past 2**53 tagged; anything
    # else by its repr.
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


def _out(kind, i, value):
    _w(1, ("%s %s %d %s\n" % (_tag, kind, i, json.dumps(value))).encode())


from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call as _exec


class _Sink:
    def write(self, s):
        return len(s)

    def flush(self):
        pass


sys.stdout = _Sink()
_args = (_job["initial_config"], _job["involved_classes"], "lucid", _job["test_id"])
_r, _inst = _exec([], *_args, long_context=_job["long_context"], is_evaL_run=False)
_out("T", -1, _state(_inst))
for _i, _calls in enumerate(_job["steps"]):
    _r, _inst = _exec(_calls, *_args, long_context=_job["long_context"], is_evaL_run=False)
    _out("S", _i, _r)
    _out("T", _i, _state(_inst))
_w(1, ("%s END\n" % _tag).encode())
