"""tests/bench/results/demo.md from tests/bench/demo_time.sh's runs: the demo end to end after
the build (models fetched inside) for the previous and the current build in one sitting, each
run's wall time and peak memory, the medians and their ratio, whether both printed the same
results (every table the demo prints, less its wall-clock seconds and response-cache hits), and
the machine (tests/bench/machine.py); the README's demo figure is rewritten from it between its
markers.

usage: python3 tests/bench/demo_report.py RUNS_DIR [--out tests/bench/results/demo.md] [--readme README.md]
"""
import argparse
import glob
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
import machine  # noqa: E402
from build_report import mmss, wall_seconds, write_figure  # noqa: E402


def timed(path):
    text = open(path).read()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
    status = int(re.search(r"Exit status: (\d+)", text).group(1))
    return wall_seconds(text), rss / 2**20, status


# Columns that vary from run to run: wall-clock seconds, and response-cache hits (which episode
# asks first depends on the scheduling), as tests/unchanged.rs leaves them out too.
VARIES = ("seconds", "cache_hits")


def printed(path):
    """What the demo printed, with every pretty table's VARIES columns blanked and the run's own
    folder written $WORK."""
    work = os.path.basename(path).rsplit(".", 1)[0]
    lines, blank = [], []
    for line in open(path).read().replace(f"work-{work}", "$WORK").splitlines():
        cells = line.split("|")
        names = [c.strip() for c in cells]
        if line.startswith("|") and any(v in names for v in VARIES):
            blank = [i for i, n in enumerate(names) if n in VARIES]
        elif not line.startswith(("|", "+")):
            blank = []
        if blank and line.startswith("|"):
            cells = [" ~ " if i in blank else c for i, c in enumerate(cells)]
            line = "|".join(cells)
        lines.append(line)
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs")
    ap.add_argument("--out", default="tests/bench/results/demo.md")
    ap.add_argument("--readme", default="README.md")
    a = ap.parse_args()
    sides = {}
    for side in ("previous", "current"):
        rev = open(os.path.join(a.runs, f"{side}.rev")).read().strip()
        runs = sorted(glob.glob(os.path.join(a.runs, f"{side}-*.err")))
        sides[side] = {"rev": rev, "runs": [(p[: -len(".err")], *timed(p)) for p in runs]}
        failed = [p for p, _, _, status in sides[side]["runs"] if status != 0]
        if failed:
            sys.exit(f"demo runs that failed: {', '.join(failed)}")
    med = {s: statistics.median(w for _, w, _, _ in v["runs"]) for s, v in sides.items()}
    same = all(printed(p + ".out") == printed(sides["previous"]["runs"][0][0] + ".out")
               for v in sides.values() for p, _, _, _ in v["runs"])
    m = machine.describe()
    rows = [f"| {s} ({v['rev']}) | {i} | {mmss(w)} | {rss:.1f} GB |"
            for s, v in sides.items() for i, (_, w, rss, _) in enumerate(v["runs"], 1)]
    text = [
        "# The demo end to end, after the build (#58)",
        "",
        f"Machine: {machine.line(m)}. Written by `tests/bench/demo_report.py` from",
        "`tests/bench/demo_time.sh`: `lucid demo` in a fresh clone with an empty model cache and pip's",
        "cache off, so the models are fetched from PyPI inside the timed run; the previous and the",
        "current build alternate in one sitting on an idle machine.",
        "",
        "| build | run | wall | peak memory |",
        "|---|---:|---:|---:|",
        *rows,
        "",
        f"Median: current {mmss(med['current'])}, previous {mmss(med['previous'])}; current / previous "
        f"{med['current'] / med['previous']:.2f}.",
        "",
        ("Every run printed the same results: every table the demo prints, less its wall-clock `seconds` "
         "and its `cache_hits` (which episode asks the response cache first depends on the "
         "scheduling)." if same else "**The runs printed different results.**"),
        "",
    ]
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    open(a.out, "w").write("\n".join(text))
    write_figure(a.readme, "demo-figure", f"The demo then took {mmss(med['current'])} end to end, models "
                 f"fetched inside, against {mmss(med['previous'])} for the previous build "
                 f"({sides['previous']['rev']}) in the same sitting, on {machine.line(m)} "
                 "([demo.md](tests/bench/results/demo.md)).")
    if not same:
        sys.exit("the demo's printed results differ between runs")


if __name__ == "__main__":
    main()
