#!/usr/bin/env python3
"""BIRD's EX rule, written out literally in Python for cross-checking lucid (not BIRD's code).

For each pair, on the gold's database: one connection, run the prediction, then the gold, under one
timeout for the pair; score 1 iff set(pred_rows) == set(gold_rows); any exception or timeout scores
0; a prediction that is not a string scores 0. Writes {"idx", "res"} JSON lines in input order.
"""
import argparse
import json
import sqlite3
import time

SEP = "\t----- bird -----\t"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pred", required=True)
    ap.add_argument("--gold", required=True)
    ap.add_argument("--db-root", required=True)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    preds = list(json.load(open(a.pred)).values())
    gold = [l.rstrip("\n").rsplit("\t", 1) for l in open(a.gold) if l.strip()]
    assert len(preds) == len(gold)
    with open(a.out, "w") as out:
        for i, (p, (g, db)) in enumerate(zip(preds, gold)):
            res = 0
            if isinstance(p, str):
                sql = p.split(SEP)[0]
                conn = sqlite3.connect(f"{a.db_root}/{db}/{db}.sqlite")
                deadline = time.monotonic() + a.timeout
                conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 1000)
                try:
                    cur = conn.cursor()
                    cur.execute(sql)
                    pr = cur.fetchall()
                    cur.execute(g)
                    gr = cur.fetchall()
                    res = int(set(pr) == set(gr))
                except Exception:
                    res = 0
                finally:
                    conn.close()
            out.write(json.dumps({"idx": i, "res": res}) + "\n")


if __name__ == "__main__":
    main()
