"""The machine a figure was measured on, as every absolute figure in the README carries it: CPU
model, cores, memory, and the memory read bandwidth of one thread (numpy's sum over 1 GiB of
float32, best of 3; what bounds a small model's generation). Prints one line, or JSON with --json.

usage: python3 tests/bench/machine.py [--json]
"""
import json
import os
import sys
import time


def bandwidth():
    try:
        import numpy as np
    except ImportError:
        return None
    a = np.ones(1 << 28, dtype=np.float32)  # 1 GiB
    a.sum()
    best = min((lambda t: (a.sum(), time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(3))
    return a.nbytes / best / 1e9


def describe():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem, 1), "read_gb_per_s": bandwidth()}


def line(m):
    bw = f"{m['read_gb_per_s']:.1f} GB/s" if m["read_gb_per_s"] else "unmeasured (no numpy)"
    return f"{m['cores']} cores ({m['cpu']}), {m['memory_gib']:.0f} GiB, memory read {bw} on one thread"


if __name__ == "__main__":
    m = describe()
    print(json.dumps(m) if "--json" in sys.argv else line(m))
