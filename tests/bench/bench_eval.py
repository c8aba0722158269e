#!/usr/bin/env python3
"""EX benchmark: lucid eval vs BIRD's official evaluation.py on SpiderMan-train (6,716 pairs).

Measures, on the same machine and cores, in one run:
  official   BIRD's evaluation.py (path in --official or $BIRD_EVAL; never committed here)
  floor      every gold query executed once with CPython's sqlite3, one connection per database,
             no comparison: single-core seconds, and that time spread over the cores
  lucid cold lucid eval with an empty cache
  lucid warm lucid eval of a *second* prediction set against the same gold (gold cached)
for two prediction sets: A = gold as predictions, B = mutated predictions. Checks that every
tool's accuracy table is identical, and writes a Markdown report (--out).
"""
import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

SEP = "\t----- bird -----\t"


def mutate(i, qs):
    """Same mutation family as tests/spiderman.rs: each kind BIRD's rule must get right."""
    g = qs[i]["SQL"].rstrip(";")
    k = i // 4 % 10
    return [
        g,
        f"SELECT * FROM ({g}) ORDER BY 1 DESC",
        g.replace("SELECT", "SELECT DISTINCT", 1),
        f"SELECT * FROM ({g}) UNION ALL SELECT * FROM ({g})",
        f"SELECT * FROM ({g}) LIMIT 1",
        qs[(i + 1) % len(qs)]["SQL"],
        "SELEC" + g[6:],
        f"SELECT * FROM ({g}) WHERE 0",
        g.replace("COUNT(*)", "COUNT(*) * 1.0", 1),
        None,
    ][k]


def one_line(sql):
    """BIRD's file formats are line- and tab-separated: fold both out of the query text."""
    return sql.replace("\n", " ").replace("\t", " ")


def write_pred(path, qs, sqls):
    with open(path, "w") as f:
        json.dump({str(i): (None if s is None else one_line(s) + SEP + q["db_id"]) for i, (q, s) in enumerate(zip(qs, sqls))}, f)


def timed(cmd, env=None):
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    return dt, p.stdout


def accuracy_rows(out):
    """The count and accuracy rows of a BIRD-layout table, whitespace-normalised."""
    rows = [" ".join(l.split()) for l in out.splitlines() if l.startswith("count") or l.startswith("accuracy")]
    return rows


def floor_seconds(qs, db_root):
    conns = {}
    t = time.perf_counter()
    for q in qs:
        db = q["db_id"]
        if db not in conns:
            conns[db] = sqlite3.connect(f"file:{db_root}/{db}/{db}.sqlite?mode=ro", uri=True)
        conns[db].execute(one_line(q["SQL"])).fetchall()
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lucid", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--official", default=os.environ.get("BIRD_EVAL"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if not a.official or not os.path.isfile(a.official):
        sys.exit("set --official or BIRD_EVAL to BIRD's evaluation.py (bird/llm/src/evaluation.py)")
    qs = json.load(open(os.path.join(a.data, "dev.json")))
    db_root = os.path.abspath(os.path.join(a.data, "dev_databases"))
    work = tempfile.mkdtemp(prefix="lucid-bench-")
    sets = {}
    for name, sqls in [("A", [q["SQL"] for q in qs]), ("B", [mutate(i, qs) for i in range(len(qs))])]:
        d = os.path.join(work, name)
        os.makedirs(d)
        write_pred(os.path.join(d, "predict_dev.json"), qs, sqls)
        with open(os.path.join(d, "dev_gold.sql"), "w") as f:
            f.writelines(one_line(q["SQL"]) + "\t" + q["db_id"] + "\n" for q in qs)
        sets[name] = d
    diff = os.path.join(a.data, "dev.json")

    def official(name):
        d = sets[name] + "/"
        return timed([sys.executable, a.official, "--predicted_sql_path", d, "--ground_truth_path", d, "--data_mode", "dev",
                      "--db_root_path", db_root + "/", "--num_cpus", str(a.jobs), "--meta_time_out", "30",
                      "--diff_json_path", diff])

    def lucid(name, cache):
        d = sets[name]
        env = dict(os.environ, LUCID_CACHE_DIR=cache)
        return timed([a.lucid, "eval", "--pred", os.path.join(d, "predict_dev.json"), "--gold", os.path.join(d, "dev_gold.sql"),
                      "--db-root", db_root, "--diff-json", diff, "--jobs", str(a.jobs), "--timeout", "30"], env)

    res = {k: [] for k in ["official A", "official B", "floor", "lucid cold A", "lucid cold B", "lucid warm B (after A)", "lucid warm A (after A)"]}
    tables = {}
    for r in range(a.repeat):
        for name in "AB":
            dt, out = official(name)
            res[f"official {name}"].append(dt)
            tables[f"official {name}"] = accuracy_rows(out)
        res["floor"].append(floor_seconds(qs, db_root))
        for name in "AB":
            cache = tempfile.mkdtemp(prefix="lucid-cache-", dir=work)
            dt, out = lucid(name, cache)
            res[f"lucid cold {name}"].append(dt)
            tables[f"lucid {name}"] = accuracy_rows(out)
            if name == "A":
                dt, out = lucid("B", cache)
                res["lucid warm B (after A)"].append(dt)
                assert accuracy_rows(out) == tables.get("lucid B", accuracy_rows(out))
                dt, out = lucid("A", cache)
                res["lucid warm A (after A)"].append(dt)
    med = {k: statistics.median(v) for k, v in res.items()}
    same = {n: tables[f"official {n}"] == tables[f"lucid {n}"] for n in "AB"}
    floor_spread = med["floor"] / a.jobs
    lines = [
        "# lucid eval vs BIRD's official evaluator (SpiderMan-train, 6,716 pairs)",
        "",
        f"Machine: {os.cpu_count()} cores; --jobs/--num_cpus {a.jobs}; timeout 30 s; median of {a.repeat} runs; "
        f"written {time.strftime('%Y-%m-%d %H:%M')} by `just bench-eval`.",
        "Set A = gold as predictions; set B = mutated predictions (ORDER BY, DISTINCT, UNION ALL duplicates, LIMIT, wrong question, syntax error, empty filter, int vs float, not a string).",
        "",
        "| measurement | seconds | vs official (same set) |",
        "|---|---:|---:|",
    ]
    for k, v in med.items():
        base = med["official B"] if " B" in k else med["official A"]
        ratio = "" if k == "floor" else f"{base / v:.2f}x faster" if not k.startswith("official") else "1.00x"
        lines.append(f"| {k} | {v:.3f} | {ratio} |")
    lines += [
        "",
        f"- SQLite floor spread over {a.jobs} cores: {floor_spread:.3f} s; lucid cold A / that floor = {med['lucid cold A'] / floor_spread:.2f} (target <= 1.25)",
        f"- lucid warm B / official B speed-up: {med['official B'] / med['lucid warm B (after A)']:.1f}x (target >= 3x)",
        f"- identical accuracy tables: set A {same['A']}, set B {same['B']}",
        "",
        "Accuracy rows (official, set A): " + " / ".join(tables["official A"]),
        "",
        "Accuracy rows (official, set B): " + " / ".join(tables["official B"]),
        "",
    ]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    open(a.out, "w").write("\n".join(lines))
    print("\n".join(lines))
    shutil.rmtree(work, ignore_errors=True)
    if not all(same.values()):
        sys.exit("accuracy tables differ")


if __name__ == "__main__":
    main()
