"""BFCL's multi-turn environments run natively by BFCL's own code: the reference that lucid's
sandboxed runs are held to (tests/tools_multiturn.rs).

    TZ=UTC PYTHONHASHSEED=0 python3 -S multiturn.py <bfcl wheel folder> <mpmath folder> <driver.py>  < job

It runs lucid's driver (src/domains/tools/multiturn/driver.py, the same file the sandbox runs) with
the unpacked wheel and mpmath on sys.path, so BFCL's modules are imported from the wheel's own
files, one fresh process per task (no state crosses tasks). The driver installs its port of
CPython 3.12's sum() on both sides (see its header).
"""
import sys

if __name__ == "__main__":
    wheel, mpmath_dir, driver = sys.argv[1:4]
    sys.path[:0] = [wheel, mpmath_dir]
    with open(driver) as f:
        code = compile(f.read(), driver, "exec")
    exec(code, {"__name__": "__main__"})
