# Shared by calls.py, run.py and replay.py (prepended to each): arguments copied into plain
# built-in values, type-strict equality, results read back as run.py wrote them, and the test's
# check() run against a stand-in for the candidate.
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


def _lit(text):
    # A result as run.py wrote it: a Python literal, where Fraction(n, d), Decimal('..'),
    # set([..]), frozenset([..]) and _iter([..]) (an iterator the candidate returned, consumed
    # there) are the only calls, and nan / inf the only names.
    import fractions, decimal
    makers = {"Fraction": lambda n, d: fractions.Fraction(n, d) if type(n) is int and type(d) is int else _no(),
              "Decimal": lambda s: decimal.Decimal(s) if type(s) is str else _no(),
              "set": set, "frozenset": frozenset, "_iter": iter}

    def ev(n):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in makers and not n.keywords:
            return makers[n.func.id](*[ev(a) for a in n.args])
        if isinstance(n, ast.Name) and n.id in ("nan", "inf"):
            return float(n.id)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and isinstance(n.operand, ast.Name):
            return -ev(n.operand)
        if isinstance(n, (ast.Tuple, ast.List, ast.Set)):
            items = [ev(e) for e in n.elts]
            return tuple(items) if isinstance(n, ast.Tuple) else items if isinstance(n, ast.List) else set(items)
        if isinstance(n, ast.Dict):
            return {ev(k): ev(v) for k, v in zip(n.keys, n.values)}
        return ast.literal_eval(n)

    return ev(ast.parse(text, mode="eval").body)


def _no():
    raise ValueError("a malformed record")


def _answer(res, exc):
    # A recorded call's answer: its exception raised again by name (the nearest built-in class
    # run.py found; one that is no Exception, as RuntimeError), else its result read back (_lit).
    if exc is not None:
        et = getattr(builtins, exc, None)
        et = et if isinstance(et, type) and issubclass(et, Exception) else RuntimeError
        raise et("the candidate's call raised %s" % exc)
    return _lit(res)


class _Sink:
    # A stdout that keeps nothing.
    def write(self, s):
        return len(s)

    def flush(self):
        pass


def _test_ns(job, stand_in):
    # The test's namespace: the prompt's helpers defined, the entry point bound to the stand-in,
    # the test loaded (a prompt or test that does not load raises here, before any call).
    tns = {"__name__": "__test__"}
    exec(job["prompt"], tns)
    tns[job["entry"]] = stand_in
    exec(job["test"], tns)
    return tns


def _run_check(job, tns, stand_in):
    # The test's check() against stand_in, the test's random stream seeded with the check's
    # secret, which the candidate's process never sees: its draws are not the test's.
    random.seed(job["seed"])
    tns["check"](stand_in)


def _check_with(job, stand_in):
    _run_check(job, _test_ns(job, stand_in), stand_in)
