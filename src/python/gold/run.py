# Untrusted: the candidate's code, called with each call's arguments (data listed by calls.py in a
# run without the candidate) and nothing else: no test, no expected value, no seed of the test's
# random stream and no frame of the test exists in this process. Nothing here decides the verdict:
# a record is only a claim "f(args) = value", which the real asserts then judge in replay.py.
#
# The driver's own work after the candidate's code loads runs in one frame (_drive) and calls only
# C functions it bound to its locals before that (a Python function, a closure cell, a module's
# names or a builtin can all be replaced by the candidate; a running frame's locals cannot, once
# the hooks that write them back, settrace and setprofile, are gone). Each call's record is one
# write that starts with the run's nonce; the host takes the records only as exactly
# "R 0", "R 1", ... "END", one write each, and the run returning normally (not through an exit):
# a record the candidate wrote, with a nonce it found, comes as a second record of its call or one
# after END, and the check fails.
import os, itertools, fractions, decimal, collections, typing

_job = json.loads(sys.stdin.read())


def _drive(job, write, K):
    (repr_, type_, issubclass_, len_, list_, islice, name_of, atoms, iters, F, Fnum, Fden, D, Dstr,
     int_int, float_float, str_str, bytes_bytes, list_copy, tup_all, dict_items, set_copy,
     frozenset_copy, join, BaseException_, cap, mro_of, builtin_exc) = K
    tag = job["tag"]
    calls = [ast.literal_eval(c) for c in job["calls"]]
    n = len_(calls)
    ns = {"__name__": "__candidate__"}
    source = job["prompt"] + job["completion"]
    entry = job["entry"]
    del job
    # Nothing that writes a running frame's locals back, or runs code inside the driver's, after this.
    for hook in ("settrace", "setprofile", "monitoring", "addaudithook", "_current_frames"):
        if hasattr(sys, hook):
            delattr(sys, hook)
    sys.modules["_lsprof"] = None
    sys.modules["cProfile"] = None
    sys.modules["profile"] = None
    sys.stdout = _Sink()
    exec(compile(source, "<candidate>", "exec"), ns)
    cand = ns[entry]
    del ns, source
    i = 0
    while i < n:
        a, k = calls[i]
        kind = "v"
        try:
            x = cand(*a, **k)
            # The result, copied into text the trusted runs read back (common.py's _lit): plain
            # values and their subclasses as their base type's content, Fractions, Decimals, and
            # iterators consumed (at most cap items). Iterative: no Python function is called.
            out = []
            work = [(0, x, 0)]
            while work:
                op, v, depth = work.pop()
                if op == 1:
                    out.append(v)
                    continue
                if depth > 200:
                    kind, text = "x", "a result nested more than 200 deep"
                    break
                t = type_(v)
                d = depth + 1
                if t in atoms:
                    out.append(repr_(v))
                elif t is F:
                    work.extend([(1, ")", 0), (0, Fden(v), d), (1, ", ", 0), (0, Fnum(v), d), (1, "Fraction(", 0)])
                elif t is D and Dstr is not None:
                    out.append("Decimal(%s)" % repr_(str_str(Dstr(v))))
                elif t in iters:
                    items = list_(islice(v, cap + 1))
                    if len_(items) > cap:
                        kind, text = "x", "an iterator of more than %d items" % cap
                        break
                    work.append((1, "])", 0))
                    for it in items[::-1]:
                        work.extend([(1, ", ", 0), (0, it, d)])
                    work.append((1, "_iter([", 0))
                elif issubclass_(t, bool):
                    out.append(repr_(v))
                elif issubclass_(t, int):
                    out.append(repr_(int_int(v)))
                elif issubclass_(t, float):
                    out.append(repr_(float_float(v)))
                elif issubclass_(t, str):
                    out.append(repr_(str_str(v)))
                elif issubclass_(t, bytes):
                    out.append(repr_(bytes_bytes(v)))
                elif issubclass_(t, list) or issubclass_(t, tuple):
                    items = list_copy(v) if issubclass_(t, list) else tup_all(v, slice(0, None))
                    work.append((1, "]" if issubclass_(t, list) else ")", 0))
                    for it in items[::-1]:
                        work.extend([(1, ", ", 0), (0, it, d)])
                    work.append((1, "[" if issubclass_(t, list) else "(", 0))
                elif issubclass_(t, dict):
                    items = list_(dict_items(v))
                    work.append((1, "}", 0))
                    for kv in items[::-1]:
                        work.extend([(1, ", ", 0), (0, kv[1], d), (1, ": ", 0), (0, kv[0], d)])
                    work.append((1, "{", 0))
                elif issubclass_(t, set) or issubclass_(t, frozenset):
                    items = list_(set_copy(v) if issubclass_(t, set) else frozenset_copy(v))
                    work.append((1, "])", 0))
                    for it in items[::-1]:
                        work.extend([(1, ", ", 0), (0, it, d)])
                    work.append((1, "set([" if issubclass_(t, set) else "frozenset([", 0))
                else:
                    kind, text = "x", "an object of type %s" % repr_(name_of(t))[:200]
                    break
            if kind == "v":
                text = join(out)
        except BaseException_ as e:
            # Named by its nearest built-in class (a json.JSONDecodeError is the ValueError the
            # test may catch, as it would catch it from the candidate itself).
            kind, text = "e", "BaseException"
            for c in mro_of(type_(e)):
                if c in builtin_exc:
                    text = name_of(c)
                    break
        x = v = out = work = items = None
        write(1, ("%s R %d %s %s\n" % (tag, i, kind, text)).encode())
        i = i + 1
    write(1, ("%s END\n" % tag).encode())


def _c(f):
    # A C function (no __code__ the candidate could replace), else None.
    return None if hasattr(f, "__code__") else f


_F = fractions.Fraction
_drive(_job, os.write, (
    repr, type, issubclass, len, list, itertools.islice, type.__dict__["__name__"].__get__,
    frozenset({int, float, str, bool, type(None), bytes, complex}),
    frozenset({type((lambda: (yield))()), map, filter, zip, enumerate, reversed, type(iter([])),
               type(iter(())), type(iter(range(0))), type(iter("")), type(iter({}.keys())),
               type(iter({}.values())), type(iter({}.items())), itertools.chain, itertools.islice}),
    _F, _F._numerator.__get__, _F._denominator.__get__, decimal.Decimal, _c(decimal.Decimal.__str__),
    int.__int__, float.__float__, str.__str__, bytes.__bytes__, list.copy, tuple.__getitem__, dict.items,
    set.copy, frozenset.copy, "".join, BaseException, 100000, type.__dict__["__mro__"].__get__,
    frozenset(v for v in vars(builtins).values() if isinstance(v, type) and issubclass(v, BaseException)),
))
