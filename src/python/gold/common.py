# Shared by calls.py, run.py and replay.py (prepended to each): results copied into plain built-in values,
# and type-strict equality. Anything with behaviour of its own (a class overriding __eq__, an int
# subclass, a generator) is refused, so a result cannot compare equal to what it is not.
import sys, json, ast, random, copy, builtins
sys.set_int_max_str_digits(0)
_ATOMS = (int, float, str, bool, type(None), bytes, complex)


def _san(x, depth=0):
    if depth > 200:
        raise TypeError("result nested too deep")
    t = type(x)
    if t in _ATOMS:
        return x
    if t in (list, tuple):
        r = [_san(v, depth + 1) for v in x]
        return r if t is list else tuple(r)
    if t in (set, frozenset):
        return t(_san(v, depth + 1) for v in x)
    if t is dict:
        return {_san(k, depth + 1): _san(v, depth + 1) for k, v in dict.items(x)}
    raise TypeError("result of type %s is not a plain value" % t.__name__)


def _seq(a, b):
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return a == b or (a != a and b != b)
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(_seq(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        return a.keys() == b.keys() and all(_seq(a[k], b[k]) for k in a)
    return a == b


def _answer(res, exc):
    # A recorded call's answer: its exception raised again by name (an unknown name, or one that
    # is no Exception, as RuntimeError), else its result read back as a literal.
    if exc is not None:
        et = getattr(builtins, exc, None)
        raise (et if isinstance(et, type) and issubclass(et, Exception) else RuntimeError)(exc)
    return ast.literal_eval(res)


class _Sink:
    # A stdout that keeps nothing.
    def write(self, s):
        return len(s)

    def flush(self):
        pass


def _check_with(job, stand_in):
    # The test's check() run against stand_in (the prompt's helpers defined, the entry point
    # bound to the stand-in, the test's random stream seeded as every run of the check seeds it).
    tns = {"__name__": "__test__"}
    exec(job["prompt"], tns)
    tns[job["entry"]] = stand_in
    exec(job["test"], tns)
    random.seed(1234)
    tns["check"](stand_in)
