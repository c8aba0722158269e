"""Independent computation of `lucid audit`'s statistics with numpy, for tests/audit.rs.

usage: audit.py BANK.csv AUDIT.json [JUDGES]  -> exit 0 when every table agrees, else prints the
differences. JUDGES: the comma-separated verifiers the ensembles combine (default: every v_ column).

Everything is recomputed from the bank's columns with numpy's own routines (corrcoef, lstsq,
argsort) and the paper's definitions; nothing is read from lucid except the numbers compared.
"""
import json
import sys

import numpy as np

bank_path, audit_path = sys.argv[1], sys.argv[2]
cols = np.genfromtxt(bank_path, delimiter=",", names=True)
r, u = cols["r"].astype(float), cols["u"].astype(float)
names = [n for n in cols.dtype.names if n.startswith("v_")]
V = {n[2:]: cols[n].astype(float) for n in names}
seed = cols["seed"].astype(int)
judges = sys.argv[3].split(",") if len(sys.argv) > 3 else list(V)
audit = json.load(open(audit_path))
got = audit["tables"]
bad = []


def close(what, a, b, tol=1e-9):
    if a is None or b is None or not np.isfinite(b):
        if not (a is None and (b is None or not np.isfinite(b))):
            bad.append(f"{what}: lucid {a} numpy {b}")
        return
    if abs(a - b) > tol:
        bad.append(f"{what}: lucid {a} numpy {b}")


def corr(x, y):
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def demote(v):
    # NaN < 0.5 is False: an unscored memory is not flagged.
    q = r.copy()
    with np.errstate(invalid="ignore"):
        q[(r >= 0.5) & (v < 0.5)] = 0.0
    return q


def avg_ranks(x):
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    xs = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and xs[j + 1] == xs[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


# Grader row: leniency and sensitivity (every memory of a synthetic bank was graded).
g = got["grader"][0]
close("ungraded", g["ungraded"], 0, 0)
close("leniency", g["leniency"], float(np.mean(r[u == 0] >= 0.5)))
close("sensitivity", g["sensitivity"], float(np.mean(r[u == 1] >= 0.5)))
close("trusted_corruption", g["trusted_corruption"], float(np.mean(u[r >= 0.5] == 0)))

# The Echo Gap among wrong memories: E[b | U=0], population Cov(b, n | U=0), Corr.
if "n" in cols.dtype.names:
    w = u == 0
    bw, nw = (r - u)[w], cols["n"].astype(float)[w]
    e = got["echo_gap"][0]
    close("echo_gap wrong", e["wrong"], int(w.sum()), 0)
    close("echo_gap mean_b", e["mean_b"], float(bw.mean()))
    close("echo_gap cov_b_n", e["cov_b_n"], float(np.cov(bw, nw, bias=True)[0, 1]))
    close("echo_gap corr_b_n", e["corr_b_n"], corr(bw, nw))
    if e["gap"] != bool(bw.mean() > 0 and np.cov(bw, nw, bias=True)[0, 1] > 0):
        bad.append(f"echo_gap gap {e['gap']}")

# Ensembles of the judges (a tie or a missing vote: unscored, NaN) and the gold-fit aggregator.
if audit["ensemble"] != (judges if len(judges) > 1 else []):
    bad.append(f"ensemble members: lucid {audit['ensemble']} numpy {judges}")
M = np.column_stack([V[k] for k in judges])
rows = dict(V)
rows["ensemble-mean"] = M.mean(axis=1)
yes = (M >= 0.5).sum(axis=1)
no = M.shape[1] - yes
rows["ensemble-majority"] = np.where(yes > no, 1.0, np.where(yes < no, 0.0, np.nan))
X = np.column_stack([np.ones(len(r)), M])
beta, *_ = np.linalg.lstsq(X, u, rcond=None)
rows["gold-fit"] = np.clip(X @ beta, 0, 1)

# EIA.
b = r - u
for e in got["eia"]:
    v = rows[e["verifier"]]
    tol = 1e-6 if e["verifier"] == "gold-fit" else 1e-9  # lstsq vs normal equations with a tiny ridge
    close(f"eia {e['verifier']} corr_nu_b", e["corr_nu_b"], corr(v - u, b), tol)
    close(f"eia {e['verifier']} corr_v_u", e["corr_v_u"], corr(v, u), tol)
    dec, tru = corr(v - u, b), corr(v, u)
    want = dec is not None and tru is not None and abs(dec) < 0.3 and tru > 0.3
    close(f"eia {e['verifier']} scored", e["scored"], int(np.sum(~np.isnan(v))), 0)
    if e["pass"] != want:
        bad.append(f"eia {e['verifier']} pass {e['pass']} numpy {want}")

# Error correlations.
for p in got["error_correlations"]:
    close(f"errors {p['a']}~{p['b']}", p["corr_errors"], corr(V[p["a"]] - u, V[p["b"]] - u))
    close(f"errors {p['a']}~{p['b']} memories", p["memories"], int(np.sum(~np.isnan(V[p["a"]] + V[p["b"]]))), 0)

# Payoff: the point estimates, and the bootstrap interval against numpy's own bootstrap.
rng = np.random.default_rng(1)
boot_idx = rng.integers(0, len(r), size=(1000, len(r)))
for p in got["payoff"]:
    name = p["verifier"]
    if name == "calibration":
        q = (r - r.mean()) / r.std()
    else:
        v = u if name == "oracle" else rows[name]
        q = demote(v)
        close(f"payoff {name} demoted", p["demoted"], int(np.sum((r >= 0.5) & (v < 0.5))), 0)
        close(f"payoff {name} demoted_correct", p["demoted_correct"], int(np.sum((r >= 0.5) & (v < 0.5) & (u == 1))), 0)
    close(f"payoff {name} delta", p["delta"], corr(q, u) - corr(r, u))
    if name in ("truthful", "oracle"):
        reps = np.array([corr(q[i], u[i]) - corr(r[i], u[i]) for i in boot_idx])
        lo, hi = np.quantile(reps, [0.025, 0.975])
        # Two Monte Carlo bootstraps agree on the interval to within their own noise.
        close(f"payoff {name} lo", p["lo"], float(lo), 0.25 * (hi - lo))
        close(f"payoff {name} hi", p["hi"], float(hi), 0.25 * (hi - lo))

# Proposition 2: beta, Var(eta), alpha*, removed (closed form) and measured, over the memories
# the row scored.
for p in got["proposition2"]:
    v = rows[p["verifier"]]
    keep = ~np.isnan(v)
    close(f"prop2 {p['verifier']} scored", p["scored"], int(keep.sum()), 0)
    v, b, rk, uk = v[keep], (r - u)[keep], r[keep], u[keep]
    nu = v - uk
    var_b = np.var(b)
    be = np.cov(nu, b, bias=True)[0, 1] / var_b
    var_eta = np.var(nu - be * b)
    denom = (1 - be) ** 2 * var_b + var_eta
    alpha = float(np.clip((1 - be) * var_b / denom, 0, 1)) if denom > 0 else 0.0
    tol = 1e-6 if p["verifier"] == "gold-fit" else 1e-9
    close(f"prop2 {p['verifier']} beta", p["beta"], float(be), tol)
    close(f"prop2 {p['verifier']} var_eta", p["var_eta"], float(var_eta), tol)
    close(f"prop2 {p['verifier']} alpha_star", p["alpha_star"], alpha, tol)
    b2 = rk - alpha * (rk - v) - uk
    close(f"prop2 {p['verifier']} removed_measured", p["removed_measured"], float(var_b - np.var(b2)), tol)

# Calibration: Spearman, AUC (Mann-Whitney) and top-10 gold rate of the label-blind maps.
def auc(q):
    pos, neg = q[u == 1], q[u == 0]
    gt = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return gt / (len(pos) * len(neg))


blind = {
    "identity": r,
    "mean-subtract": r - r.mean(),
    "z-score": (r - r.mean()) / r.std(),
    "min-max": (r - r.min()) / (r.max() - r.min()),
    "temperature T=0.5": r / 0.5,
    "sigmoid": 1 / (1 + np.exp(-r)),
    "oracle": u,
}
for c in got["calibration"]:
    if c["map"] not in blind:
        continue
    q = blind[c["map"]]
    close(f"calibration {c['map']} spearman", c["spearman"], corr(avg_ranks(q), avg_ranks(u)))
    close(f"calibration {c['map']} auc", c["auc"], float(auc(q)))
    # Ties at the 10th score share the places left: the mean over random tie-breaks.
    k = min(10, len(q))
    cut = np.sort(q)[::-1][k - 1]
    above, tied = q > cut, q == cut
    expected = (u[above].sum() + (k - above.sum()) * u[tied].mean()) / k
    close(f"calibration {c['map']} top10", c["top10"], float(expected))

# Leave-one-seed-out: select on the other seeds, measure on the held-out one; how many pass on
# the other seeds, the selected one's held-out rank, and the means over folds.
folds = got["leave_one_seed_out"]
deltas, gaps = [], []
for f in folds[:-1]:
    s = f["held_out"]
    tr, te = seed != s, seed == s
    best, best_d, passing, test_d = None, -np.inf, {}, {}
    for name, v in ((k, w) for k, w in rows.items() if k != "gold-fit"):
        e_dec, e_tru = corr(v[tr] - u[tr], r[tr] - u[tr]), corr(v[tr], u[tr])
        passing[name] = e_dec is not None and e_tru is not None and abs(e_dec) < 0.3 and e_tru > 0.3
        q = demote(v)
        test_d[name] = corr(q[te], u[te]) - corr(r[te], u[te])
        if passing[name]:
            d = corr(q[tr], u[tr]) - corr(r[tr], u[tr])
            if d >= best_d:
                best, best_d = name, d
    close(f"loso {s} passing", f["passing"], sum(passing.values()), 0)
    if f["selected"] != best:
        bad.append(f"loso {s}: lucid selected {f['selected']}, numpy {best}")
    elif best is not None:
        close(f"loso {s} held_out_delta", f["held_out_delta"], test_d[best])
        close(f"loso {s} rank", f["held_out_rank"], 1 + sum(d > test_d[best] for d in test_d.values()), 0)
        deltas.append(test_d[best])
    p_ = [test_d[k] for k in test_d if passing[k]]
    f_ = [test_d[k] for k in test_d if not passing[k]]
    gap = float(np.mean(p_) - np.mean(f_)) if p_ and f_ else None
    close(f"loso {s} pass_minus_fail", f["pass_minus_fail"], gap)
    if gap is not None:
        gaps.append(gap)
if folds:
    close("loso mean held_out_delta", folds[-1]["held_out_delta"], float(np.mean(deltas)) if deltas else None)
    close("loso mean gap", folds[-1]["pass_minus_fail"], float(np.mean(gaps)) if gaps else None)

if bad:
    print("\n".join(bad))
    sys.exit(1)
print("audit agrees with numpy")
