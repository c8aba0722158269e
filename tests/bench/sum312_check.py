"""Holds the multi-turn driver's port of CPython 3.12's sum() (src/domains/tools/multiturn/driver.py) to
3.12's own builtin on generated sums: floats of every magnitude, ints inside and past a C long,
bools, infinities, NaN and -0.0, from int and float starts.

    python3 tests/bench/sum312_check.py /path/to/python3.12

Prints how many results (by repr) the port and this interpreter's own sum() share with 3.12's.
"""
import importlib.util
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PORT = os.path.join(HERE, "..", "..", "src", "domains", "tools", "multiturn", "driver.py")


def cases(n=20000, seed=7):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        xs = []
        for _ in range(rng.randint(0, 12)):
            r = rng.random()
            if r < 0.5:
                xs.append(rng.uniform(-1, 1) * 10 ** rng.randint(-20, 20))
            elif r < 0.65:
                xs.append(rng.randint(-(10**6), 10**6))
            elif r < 0.7:
                xs.append(rng.randint(-(2**62), 2**62))
            elif r < 0.75:
                xs.append(rng.choice([True, False]))
            elif r < 0.8:
                xs.append(rng.randint(-(2**70), 2**70))
            elif r < 0.83:
                xs.append(rng.choice([float("inf"), float("-inf"), float("nan"), 1e308, -0.0]))
            else:
                xs.append(rng.uniform(0, 1))
        out.append((xs, rng.choice([0, 0, 0, 0.0, 1.5, -3])))
    return out


def results(f, all_cases):
    out = []
    for xs, start in all_cases:
        try:
            out.append(repr(f(xs, start)))
        except Exception as e:
            out.append("error " + type(e).__name__)
    return out


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--builtin":
        print(json.dumps(results(sum, cases())))
        sys.exit(0)
    reference = sys.argv[1]
    spec = importlib.util.spec_from_file_location("driver", PORT)
    port = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(port)
    theirs = json.loads(subprocess.run([reference, __file__, "--builtin"], capture_output=True, check=True).stdout)
    version = subprocess.run([reference, "--version"], capture_output=True, text=True).stdout.strip()
    mine, own = results(port._sum312, cases()), results(sum, cases())
    print(f"{len(theirs)} sums; the port equals {version}'s sum() on {sum(a == b for a, b in zip(mine, theirs))}, "
          f"Python {sys.version.split()[0]}'s own sum() on {sum(a == b for a, b in zip(own, theirs))}")
