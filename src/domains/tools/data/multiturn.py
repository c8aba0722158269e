"""BFCL's multi-turn environments run natively by BFCL's own code: the reference that lucid's
sandboxed runs are held to (tests/tools_multiturn.rs).

    TZ=UTC python3 -S multiturn.py <bfcl wheel folder> <mpmath folder> <driver.py>  < job

It runs lucid's driver (src/domains/tools/multiturn/driver.py, the same file the sandbox runs) with
the unpacked wheel and mpmath on sys.path, so BFCL's modules are imported from the wheel's own
files, one fresh process per task (no state crosses tasks). The sandbox's interpreter is CPython
3.12, whose sum() of floats is compensated (Neumaier); under an older CPython, sum() is replaced by
a port of 3.12's (Python/bltinmodule.c, builtin_sum_impl) so the reference computes what 3.12 does:
BFCL's MathAPI mean and standard deviation differ otherwise in the last bits.
"""
import builtins
import math
import sys


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


if __name__ == "__main__":
    wheel, mpmath_dir, driver = sys.argv[1:4]
    sys.path[:0] = [wheel, mpmath_dir]
    if sys.version_info < (3, 12):
        builtins.sum = _sum312
    with open(driver) as f:
        code = compile(f.read(), driver, "exec")
    exec(code, {"__name__": "__main__"})
