"""Golden data for the paper's report SQL (tests/reports.rs).

Writes a run folder with hand-built `episodes` and `evaluation` tables whose outcomes follow a
planted model, and `expected.json`: what every report table must say, computed here with numpy,
independently of lucid's code.

Planted model, per memory arm and seed, step by step: each episode retrieves up to 4 earlier
episodes at random; c_bad / c_good = share of them shown trusted (stored Q = 1) that were wrong /
right; P(error) = 0.30 + 0.40 c_bad - 0.15 c_good (no-memory: 0.30). The self-grade passes a wrong
episode with probability 0.76 and a right one with 0.90 (5 % unparseable, 3 % skipped); three
detector channels fire more often on wrong episodes; memento stores Q = r, LUCID Q = 0 when flagged.
no-memory answers a question the same under both seeds (its prompts do not change with the order,
so a real run answers them from the response cache): pooled over seeds, its questions are
clusters of two identical trials, and an interval that treated them as independent would be
sqrt(2) too narrow. Intervals pooled over seeds cluster on the question: Wilson at the effective
sample size n / deff (deff = sum over questions (s_q - p n_q)^2 / sum over rows (x - p)^2, at least
1) for shares, and a bootstrap over questions (numpy's own generator) for the coupling slopes.

usage: python3 reports.py OUT_DIR
"""

import json
import sys

import numpy as np
import polars as pl

Z = 1.959963984540054
ARMS = ["no-memory", "memento", "lucid"]
SEEDS = [0, 1]
N = 1500
DIFFS = ["simple", "moderate", "challenging"]


def wilson(k, n):
    if n == 0:
        return None, None
    p = k / n
    d = 1 + Z * Z / n
    c = (p + Z * Z / (2 * n)) / d
    h = Z * np.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def cluster_wilson(xs, keys):
    """Wilson at the effective sample size: rows x (None skipped) clustered by key."""
    pairs = [(x, k) for x, k in zip(xs, keys) if x is not None]
    if not pairs:
        return None, None
    x = np.array([p[0] for p in pairs], float)
    n, k = len(x), x.sum()
    p = k / n
    within = ((x - p) ** 2).sum()
    sums = {}
    for xi, key in pairs:
        c = sums.setdefault(key, [0.0, 0.0])
        c[0] += 1
        c[1] += xi
    between = sum((s - p * m) ** 2 for m, s in sums.values())
    repeated = any(m > 1 for m, _ in sums.values())
    deff = max(1.0, between / within) if repeated and within > 1e-12 * (x ** 2).sum() else 1.0
    return wilson(k / deff, n / deff)


def cluster_boot(ys, xs, keys, rng, b=4000):
    """Percentile bootstrap (2.5 %, 97.5 %) of the OLS slope and intercept of y on x, questions
    resampled with replacement and their rows kept together; and each one's bootstrap sd."""
    sums = {}
    for y, x, k in zip(ys, xs, keys):
        c = sums.setdefault(k, np.zeros(5))
        c += [1.0, x, y, x * x, x * y]
    m = np.array(list(sums.values()))
    w = rng.multinomial(len(m), np.full(len(m), 1.0 / len(m)), size=b)
    n, sx, sy, sxx, sxy = (w @ m).T
    sxx_c = sxx - sx * sx / n
    ok = sxx_c > 1e-12 * n
    slope = (sxy - sx * sy / n)[ok] / sxx_c[ok]
    icept = (sy[ok] - slope * sx[ok]) / n[ok]
    q = lambda v: (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5)), float(v.std()))
    return q(slope), q(icept)


def generate(rng):
    episodes, evaluation = [], []
    no_memory = {}
    for seed in SEEDS:
        order = rng.permutation(N)
        for arm in ARMS:
            u = np.zeros(N, dtype=int)
            q = np.zeros(N, dtype=int)
            for t in range(N):
                qid = int(order[t])
                retrieved = []
                c_bad = c_good = 0.0
                if arm != "no-memory" and t > 0:
                    nb = rng.choice(t, size=min(4, t), replace=False)
                    shown = [int(q[j]) for j in nb]
                    c_bad = float(np.mean([s == 1 and u[j] == 0 for s, j in zip(shown, nb)]))
                    c_good = float(np.mean([s == 1 and u[j] == 1 for s, j in zip(shown, nb)]))
                    retrieved = [
                        {"step": int(j), "question_id": int(order[j]), "similarity": 0.5, "shown_label": s, "same_db": True}
                        for s, j in zip(shown, nb)
                    ]
                if arm == "no-memory" and qid in no_memory:
                    u[t], grade, r, fe, fd, fl = no_memory[qid]
                else:
                    p_err = min(1.0, max(0.0, 0.30 + 0.40 * c_bad - 0.15 * c_good))
                    u[t] = 0 if rng.random() < p_err else 1
                    roll = rng.random()
                    if roll < 0.05:
                        grade, r = "unparseable", None
                    elif roll < 0.08:
                        grade, r = "skipped", None
                    else:
                        r = int(rng.random() < (0.76 if u[t] == 0 else 0.90))
                        grade = "correct" if r == 1 else "incorrect"
                    wrong = u[t] == 0
                    fe = bool(rng.random() < (0.30 if wrong else 0.03))
                    fd = bool(rng.random() < (0.20 if wrong else 0.02))
                    fl = bool(rng.random() < (0.10 if wrong else 0.05))
                    if arm == "no-memory":
                        no_memory[qid] = (u[t], grade, r, fe, fd, fl)
                flagged = fe or fd or fl
                rr = 0 if r is None else r
                q[t] = 0 if (arm == "lucid" and flagged) else rr
                episodes.append(
                    {"seed": seed, "arm": arm, "step": t, "question_id": qid, "retrieved": retrieved, "grade": grade,
                     "r": r, "stored_q": int(q[t]), "flag_exec": fe, "flag_degenerate": fd, "flag_literal": fl,
                     "flagged": flagged}
                )
                evaluation.append(
                    {"seed": seed, "arm": arm, "step": t, "question_id": qid, "db_id": "db", "difficulty": DIFFS[qid % 3],
                     "u": int(u[t])}
                )
    return episodes, evaluation


def write(out, episodes, evaluation):
    struct = pl.Struct({"step": pl.UInt64, "question_id": pl.Int64, "similarity": pl.Float32, "shown_label": pl.UInt8,
                        "same_db": pl.Boolean})
    ep = pl.DataFrame(episodes, schema={
        "seed": pl.UInt64, "arm": pl.Utf8, "step": pl.UInt64, "question_id": pl.Int64, "retrieved": pl.List(struct),
        "grade": pl.Utf8, "r": pl.UInt8, "stored_q": pl.UInt8, "flag_exec": pl.Boolean, "flag_degenerate": pl.Boolean,
        "flag_literal": pl.Boolean, "flagged": pl.Boolean})
    ev = pl.DataFrame(evaluation, schema={
        "seed": pl.UInt64, "arm": pl.Utf8, "step": pl.UInt64, "question_id": pl.Int64, "db_id": pl.Utf8,
        "difficulty": pl.Utf8, "u": pl.UInt8})
    import os
    for name, df in [("episodes", ep), ("evaluation", ev)]:
        os.makedirs(f"{out}/run/{name}", exist_ok=True)
        for (seed, arm), part in df.group_by(["seed", "arm"]):
            part.write_parquet(f"{out}/run/{name}/seed-{seed}_arm-{arm}.parquet")


def groups(rows, keys_sets):
    """Yield (key dict, rows) for every grouping set, None for the keys it rolls up."""
    all_keys = sorted({k for ks in keys_sets for k in ks})
    for ks in keys_sets:
        buckets = {}
        for r in rows:
            buckets.setdefault(tuple(r[k] for k in ks), []).append(r)
        for vals, rs in buckets.items():
            key = {k: None for k in all_keys}
            key.update(dict(zip(ks, vals)))
            yield key, rs


def expected(episodes, evaluation):
    ev = {(r["seed"], r["arm"], r["step"]): r for r in evaluation}
    joined = [dict(e, u=ev[(e["seed"], e["arm"], e["step"])]["u"], difficulty=ev[(e["seed"], e["arm"], e["step"])]["difficulty"])
              for e in episodes]
    out = {}

    rows = []
    for key, rs in groups(evaluation, [("arm", "seed", "difficulty"), ("arm", "seed"), ("arm", "difficulty"), ("arm",)]):
        n, k = len(rs), sum(r["u"] for r in rs)
        if key["seed"] is None:
            lo, hi = cluster_wilson([r["u"] for r in rs], [r["question_id"] for r in rs])
        else:
            lo, hi = wilson(k, n)
        rows.append(dict(key, difficulty=key["difficulty"] or "all", n=n, correct=k, ex=100 * k / n, lo=100 * lo, hi=100 * hi))
    out["ex"] = rows

    rows = []
    for seed in SEEDS:
        for a, b in [("lucid", "memento"), ("memento", "no-memory")]:
            ua = {r["question_id"]: r["u"] for r in evaluation if r["seed"] == seed and r["arm"] == a}
            ub = {r["question_id"]: r["u"] for r in evaluation if r["seed"] == seed and r["arm"] == b}
            d = np.array([ua[k] - ub[k] for k in ua])
            rows.append({"seed": seed, "a": a, "b": b, "n": len(d), "diff": 100 * d.mean(),
                         "se": 100 * d.std() / np.sqrt(len(d))})
    out["paired_difference"] = rows

    memory = [e for e in joined if e["arm"] not in ("no-memory", "oracle")]
    pooled_all = [({"arm": "all", "seed": None}, memory)]
    rows = []
    for key, rs in list(groups(joined, [("arm", "seed"), ("arm",)])) + pooled_all:
        gw = [r for r in rs if r["r"] is not None and r["u"] == 0]
        gr = [r for r in rs if r["r"] is not None and r["u"] == 1]
        lk, sk = sum(r["r"] for r in gw), sum(r["r"] for r in gr)
        if key["seed"] is None:
            qids = [r["question_id"] for r in rs]
            llo, lhi = cluster_wilson([r["r"] if r["r"] is not None and r["u"] == 0 else None for r in rs], qids)
            slo, shi = cluster_wilson([r["r"] if r["r"] is not None and r["u"] == 1 else None for r in rs], qids)
        else:
            llo, lhi = wilson(lk, len(gw))
            slo, shi = wilson(sk, len(gr))
        rows.append(dict(key, arm=key["arm"] or "all", n=len(rs), graded=len(gw) + len(gr),
                         unparseable=sum(r["grade"] == "unparseable" for r in rs),
                         skipped=sum(r["grade"] == "skipped" for r in rs), failed=0,
                         leniency=lk / len(gw), leniency_lo=llo, leniency_hi=lhi,
                         sensitivity=sk / len(gr), sensitivity_lo=slo, sensitivity_hi=shi))
    out["grader"] = rows

    q_of = {(e["seed"], e["arm"], e["step"]): e for e in joined}
    pts = []
    for e in joined:
        if e["arm"] == "no-memory" or not e["retrieved"]:
            continue
        mem = [(m["shown_label"], q_of[(e["seed"], e["arm"], m["step"])]["u"]) for m in e["retrieved"]]
        pts.append({"arm": e["arm"], "seed": e["seed"], "difficulty": e["difficulty"], "err": 1 - e["u"],
                    "question_id": e["question_id"],
                    "c_bad": np.mean([s == 1 and u == 0 for s, u in mem]),
                    "c_good": np.mean([s == 1 and u == 1 for s, u in mem])})
    rows = []
    for key, rs in groups(pts, [("arm", "seed", "difficulty"), ("arm", "seed"), ("arm", "difficulty"), ("arm",)]):
        y = np.array([r["err"] for r in rs], float)
        x1 = np.array([r["c_bad"] for r in rs], float)
        x2 = np.array([r["c_good"] for r in rs], float)
        kappa, e0 = np.polyfit(x1, y, 1)
        coef, *_ = np.linalg.lstsq(np.column_stack([np.ones_like(x1), x1, x2]), y, rcond=None)
        clean = y[x1 == 0]
        full = y[x1 == 1]
        rows.append(dict(key, difficulty=key["difficulty"] or "all", n=len(rs), mean_corruption=x1.mean(), kappa=kappa,
                         e0=e0, err_clean=clean.mean() if len(clean) else None,
                         err_full=full.mean() if len(full) else None, kappa_two=coef[1], gamma_two=-coef[2],
                         e0_two=coef[0]))
    out["coupling"] = rows
    boot_rng = np.random.default_rng(7)
    rows = []
    for key, rs in groups(pts, [("arm", "difficulty"), ("arm",)]):
        (klo, khi, ksd), (elo, ehi, esd) = cluster_boot([r["err"] for r in rs], [r["c_bad"] for r in rs],
                                                        [r["question_id"] for r in rs], boot_rng)
        rows.append({"arm": key["arm"], "seed": None, "difficulty": key["difficulty"] or "all", "kappa_lo": klo,
                     "kappa_hi": khi, "kappa_sd": ksd, "e0_lo": elo, "e0_hi": ehi, "e0_sd": esd})
    out["coupling_cluster"] = rows

    rows = []
    for seed in SEEDS:
        for arm in ["memento", "lucid"]:
            rs = sorted([r for r in joined if r["seed"] == seed and r["arm"] == arm], key=lambda r: r["step"])
            tr = np.cumsum([r["r"] == 1 for r in rs])
            wr = np.cumsum([r["r"] == 1 and r["u"] == 0 for r in rs])
            tq = np.cumsum([r["stored_q"] == 1 for r in rs])
            wq = np.cumsum([r["stored_q"] == 1 and r["u"] == 0 for r in rs])
            step_every = max(1, N // 50)
            for i in range(N):
                bank = i + 1
                if bank % step_every == 0 or bank == N:
                    rows.append({"arm": arm, "seed": seed, "bank": bank,
                                 "corruption_r": wr[i] / tr[i] if tr[i] else None,
                                 "corruption_q": wq[i] / tq[i] if tq[i] else None})
    out["trajectory"] = rows

    rows = []
    channels = {"execution": "flag_exec", "degeneracy": "flag_degenerate", "literal": "flag_literal", "any": "flagged"}
    for key, rs in list(groups(joined, [("arm",)])) + pooled_all:
        qids = [r["question_id"] for r in rs]
        for ch, col in channels.items():
            f = [r for r in rs if r[col]]
            tp = sum(r["u"] == 0 for r in f)
            wrong = sum(r["u"] == 0 for r in rs)
            plo, phi = cluster_wilson([1 - r["u"] if r[col] else None for r in rs], qids)
            rlo, rhi = cluster_wilson([int(r[col]) if r["u"] == 0 else None for r in rs], qids)
            rows.append({"arm": key["arm"] or "all", "channel": ch, "n": len(rs), "flags": len(f),
                         "precision": tp / len(f), "precision_lo": plo, "precision_hi": phi, "recall": tp / wrong,
                         "recall_lo": rlo, "recall_hi": rhi, "base_rate": wrong / len(rs)})
    out["detector"] = rows

    reuse = {}
    for e in joined:
        for m in e["retrieved"]:
            k = (e["seed"], e["arm"], m["step"])
            reuse[k] = reuse.get(k, 0) + 1
    w = [{"arm": e["arm"], "seed": e["seed"], "b": e["r"] - e["u"], "n": reuse.get((e["seed"], e["arm"], e["step"]), 0)}
         for e in joined if e["u"] == 0 and e["r"] is not None and e["arm"] != "no-memory"]
    rows = []
    for key, rs in groups(w, [("arm", "seed"), ("arm",)]):
        b = np.array([r["b"] for r in rs], float)
        n = np.array([r["n"] for r in rs], float)
        rows.append(dict(key, n_wrong=len(rs), mean_b=b.mean(), mean_reuse=n.mean(),
                         cov_b_n=np.cov(b, n, bias=True)[0, 1], corr_b_n=np.corrcoef(b, n)[0, 1]))
    out["echo_gap"] = rows

    rows = []
    for seed in SEEDS:
        for arm in ["memento", "lucid"]:
            c = [r for r in out["coupling"] if r["arm"] == arm and r["seed"] == seed and r["difficulty"] == "all"][0]
            # The label the planner is shown (stored Q), over graded episodes: memento's is r.
            graded = [r for r in joined if r["arm"] == arm and r["seed"] == seed and r["r"] is not None]
            l = np.mean([r["stored_q"] == 1 for r in graded if r["u"] == 0])
            s = np.mean([r["stored_q"] == 1 for r in graded if r["u"] == 1])
            kappa, e0 = c["kappa"], c["e0"]
            # Theorem 2: the smallest root in [0, 1] of kappa (l-s) p^2 + (e0 (l-s) + s - kappa l) p - e0 l.
            roots = np.roots([kappa * (l - s), e0 * (l - s) + s - kappa * l, -e0 * l])
            p_star = min(float(r.real) for r in roots if abs(r.imag) < 1e-12 and -1e-12 <= r.real <= 1 + 1e-12)
            p0 = e0 * l / (e0 * l + (1 - e0) * s)
            e_star = e0 + kappa * p_star
            slope = kappa * l * s / (e_star * (l - s) + s) ** 2
            traj = [r for r in joined if r["arm"] == arm and r["seed"] == seed]
            traj.sort(key=lambda r: r["step"])
            tr = np.cumsum([r["stored_q"] == 1 for r in traj])
            wr = np.cumsum([r["stored_q"] == 1 and r["u"] == 0 for r in traj])
            with np.errstate(invalid="ignore"):
                corr = wr / tr  # NaN while no memory is trusted yet (not in the second half here)
            settled = corr[[i for i in range(N) if 2 * (i + 1) > N]].mean()
            rows.append({"arm": arm, "seed": seed, "kappa": kappa, "leniency": l, "sensitivity": s, "e0": e0,
                         "p_star": p_star, "p0": p0, "slope": slope, "observed_settled": settled,
                         "observed_final": corr[-1]})
    out["attractor"] = rows

    rows, boots = [], []
    for arm in ARMS:
        rs = [r for r in joined if r["arm"] == arm]
        qids = [r["question_id"] for r in rs]
        n, k = len(rs), sum(r["u"] for r in rs)
        ex_lo, ex_hi = cluster_wilson([r["u"] for r in rs], qids)
        lv = [r["r"] if r["r"] is not None and r["u"] == 0 else None for r in rs]
        sv = [r["r"] if r["r"] is not None and r["u"] == 1 else None for r in rs]
        fv = [1 - r["u"] if r["flagged"] else None for r in rs]
        share = lambda v: np.mean([x for x in v if x is not None])
        trusted = [r for r in rs if r["stored_q"] == 1]
        row = {"arm": arm, "episodes": n, "ex": 100 * k / n, "ex_lo": 100 * ex_lo, "ex_hi": 100 * ex_hi,
               "parsed": sum(r["grade"] in ("correct", "incorrect") for r in rs) / sum(r["grade"] != "skipped" for r in rs),
               "trusted": len(trusted), "trusted_corruption": np.mean([r["u"] == 0 for r in trusted])}
        for name, v in [("leniency", lv), ("sensitivity", sv), ("detector", fv)]:
            lo, hi = cluster_wilson(v, qids)
            row.update({"detector_precision" if name == "detector" else name: share(v), f"{name}_lo": lo, f"{name}_hi": hi})
        mine = [p for p in pts if p["arm"] == arm]
        if mine:
            row["kappa"] = np.polyfit([p["c_bad"] for p in mine], [p["err"] for p in mine], 1)[0]
            (klo, khi, ksd), _ = cluster_boot([p["err"] for p in mine], [p["c_bad"] for p in mine],
                                              [p["question_id"] for p in mine], boot_rng)
            boots.append({"arm": arm, "kappa_lo": klo, "kappa_hi": khi, "kappa_sd": ksd})
        else:
            row["kappa"] = None
        rows.append(row)
    out["headline"] = rows
    out["headline_cluster"] = boots
    return out


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(20251123)
    episodes, evaluation = generate(rng)
    write(out, episodes, evaluation)
    exp = expected(episodes, evaluation)

    def clean(v):
        if isinstance(v, (np.floating, float)):
            return None if np.isnan(v) else float(v)
        if isinstance(v, np.integer):
            return int(v)
        return v

    exp = {t: [{k: clean(v) for k, v in r.items()} for r in rows] for t, rows in exp.items()}
    with open(f"{out}/expected.json", "w") as f:
        json.dump(exp, f)


if __name__ == "__main__":
    main()
