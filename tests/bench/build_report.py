"""tests/bench/results/build.md from two cold release builds (tests/bench/build_time.sh) of the
same machine and sitting: wall and CPU time, the crates compiled, the 25 costliest units before
and after, the machine (tests/bench/machine.py); and the README's build figure, rewritten from it
between its markers.

usage: python3 tests/bench/build_report.py BEFORE_DIR AFTER_DIR [--out tests/bench/results/build.md]
       [--readme README.md] [--shipped before|after] [--note FILE]

--shipped names the build whose profile the commit ships (the README quotes its time); --note
appends a file of prose (what was decided from the figures) to build.md.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
import machine  # noqa: E402


def units(d):
    html = open(os.path.join(d, "timing.html")).read()
    return json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S).group(1))


def wall_seconds(text):
    """The wall-clock seconds of a `time -v` output."""
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text).group(1)
    return sum(float(p) * 60 ** i for i, p in enumerate(reversed(wall.split(":"))))


def timed(d):
    log = open(os.path.join(d, "build.log")).read()
    seconds = wall_seconds(log)
    user = float(re.search(r"User time \(seconds\): (\S+)", log).group(1))
    system = float(re.search(r"System time \(seconds\): (\S+)", log).group(1))
    rev = open(os.path.join(d, "rev")).read().strip() if os.path.exists(os.path.join(d, "rev")) else os.path.basename(d)
    binary = os.path.join(d, "target", "release", "lucid")
    size = os.path.getsize(binary) / 1e6 if os.path.exists(binary) else None
    return {"wall": seconds, "cpu": user + system, "rev": rev, "binary": size}


def label(u):
    """A unit as the timing report names it: the crate, its version and its target when not the library."""
    target = u["target"].strip()
    return f"{u['name']} {u['version']}{f' ({target})' if target else ''}"


def mb(build):
    """The release binary's size, or - when the folder no longer holds it."""
    return f"{build['binary']:.1f} MB" if build["binary"] else "-"


def mmss(s):
    m, s = divmod(round(s), 60)
    return f"{m} min {s:02d} s"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--out", default="tests/bench/results/build.md")
    ap.add_argument("--readme", default="README.md")
    ap.add_argument("--shipped", choices=["before", "after"], default="after")
    ap.add_argument("--note")
    a = ap.parse_args()
    b, f = timed(a.before), timed(a.after)
    ub, ua = units(a.before), units(a.after)
    crates = lambda us: len({u["name"] for u in us})  # noqa: E731
    m = machine.describe()
    key = lambda u: (u["name"], u["version"], u["mode"], u["target"])  # noqa: E731
    after_by = {}
    for u in ua:  # a crate built for the host and the target: both units, summed
        after_by[key(u)] = after_by.get(key(u), 0) + u["duration"]
    after = lambda u: f"{after_by[key(u)]:.1f}" if key(u) in after_by else "-"  # noqa: E731
    top = sorted(ub, key=lambda u: -u["duration"])[:25]
    rows = [f"| {label(u)} | {u['duration']:.1f} | "
            f"{after(u)} |" for u in top]
    top_after = sorted(ua, key=lambda u: -u["duration"])[:25]
    rows_after = [f"| {label(u)} | {u['duration']:.1f} |" for u in top_after]
    ratio = f["wall"] / b["wall"]
    text = [
        "# A cold release build, before and after (#58)",
        "",
        f"Machine: {machine.line(m)}. Written by `tests/bench/build_report.py` from two runs of",
        "`tests/bench/build_time.sh` in one sitting on an idle machine: a fresh clone and a fresh target",
        "folder each (crate sources from cargo's registry cache), `cargo build --release --timings`.",
        "",
        "| build | wall | CPU (user + system) | crates compiled | units | binary |",
        "|---|---:|---:|---:|---:|---:|",
        f"| before ({b['rev']}) | {mmss(b['wall'])} | {mmss(b['cpu'])} | {crates(ub)} | {len(ub)} | {mb(b)} |",
        f"| after ({f['rev']}) | {mmss(f['wall'])} | {mmss(f['cpu'])} | {crates(ua)} | {len(ua)} | {mb(f)} |",
        f"| after / before | {ratio:.2f} | {f['cpu'] / b['cpu']:.2f} | | | |",
        "",
        "The 25 costliest units before, with the same units after (wall seconds of each unit):",
        "",
        "| unit | before | after |",
        "|---|---:|---:|",
        *rows,
        "",
        "The 25 costliest units after:",
        "",
        "| unit | after |",
        "|---|---:|",
        *rows_after,
        "",
    ]
    if a.note:
        text += [open(a.note).read().rstrip(), ""]
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    open(a.out, "w").write("\n".join(text))
    shipped = f if a.shipped == "after" else b
    write_figure(a.readme, "build-figure", f"A cold `cargo build --release` took {mmss(shipped['wall'])} on "
                 f"{machine.line(m)} ([build.md](tests/bench/results/build.md)).")


def write_figure(readme, marker, text):
    """Rewrites the README's text between `<!-- marker -->` and `<!-- /marker -->`."""
    figure = f"<!-- {marker} -->{text}<!-- /{marker} -->"
    old = open(readme).read()
    new = re.sub(f"<!-- {marker} -->.*?<!-- /{marker} -->", lambda _: figure, old, flags=re.S)
    if new == old and figure not in old:
        sys.exit(f"{readme} has no <!-- {marker} --> markers")
    open(readme, "w").write(new)
    print(figure)


if __name__ == "__main__":
    main()
