"""Independent computation of `lucid audit`'s statistics with numpy, for tests/audit.rs.

usage: audit.py BANK.csv AUDIT.json  -> exit 0 when every table agrees, else prints the differences.

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
got = json.load(open(audit_path))["tables"]
bad = []


def close(what, a, b, tol=1e-9):
    if a is None or b is None or not np.isfinite(b):
        if not (a is None and (b is None or not np.isfinite(b))):
            bad.append(f"{what}: lucid {a} numpy {b}")
        return
    if abs(a - b) > tol:
        bad.append(f"{what}: lucid {a} numpy {b}")


def corr(x, y):
    if np.std(x) == 0 or np.std(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def demote(v):
    q = r.copy()
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


# Grader row: leniency and sensitivity.
g = got["grader"][0]
close("leniency", g["leniency"], float(np.mean(r[u == 0] >= 0.5)))
close("sensitivity", g["sensitivity"], float(np.mean(r[u == 1] >= 0.5)))
close("trusted_corruption", g["trusted_corruption"], float(np.mean(u[r >= 0.5] == 0)))

# Ensembles and the gold-fit aggregator.
M = np.column_stack([V[k] for k in V])
rows = dict(V)
rows["ensemble-mean"] = M.mean(axis=1)
passes = (M >= 0.5).sum(axis=1) * 2
rows["ensemble-majority"] = np.where(passes > M.shape[1], 1.0, np.where(passes < M.shape[1], 0.0, 0.5))
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
    want = abs(corr(v - u, b)) < 0.3 and corr(v, u) > 0.3
    if e["pass"] != want:
        bad.append(f"eia {e['verifier']} pass {e['pass']} numpy {want}")

# Error correlations.
for p in got["error_correlations"]:
    close(f"errors {p['a']}~{p['b']}", p["corr_errors"], corr(V[p["a"]] - u, V[p["b"]] - u))

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

# Proposition 2: beta, Var(eta), alpha*, removed (closed form) and measured.
for p in got["proposition2"]:
    v = rows[p["verifier"]]
    nu = v - u
    var_b = np.var(b)
    be = np.cov(nu, b, bias=True)[0, 1] / var_b
    var_eta = np.var(nu - be * b)
    denom = (1 - be) ** 2 * var_b + var_eta
    alpha = float(np.clip((1 - be) * var_b / denom, 0, 1)) if denom > 0 else 0.0
    tol = 1e-6 if p["verifier"] == "gold-fit" else 1e-9
    close(f"prop2 {p['verifier']} beta", p["beta"], float(be), tol)
    close(f"prop2 {p['verifier']} var_eta", p["var_eta"], float(var_eta), tol)
    close(f"prop2 {p['verifier']} alpha_star", p["alpha_star"], alpha, tol)
    b2 = r - alpha * (r - v) - u
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
    top = np.lexsort((np.arange(len(q)), -q))[:10]
    close(f"calibration {c['map']} top10", c["top10"], float(u[top].mean()))

# Leave-one-seed-out: select on the other seeds, measure on the held-out one.
for f in got["leave_one_seed_out"]:
    s = f["held_out"]
    tr, te = seed != s, seed == s
    best, best_d = None, -np.inf
    for name, v in ((k, w) for k, w in rows.items() if k != "gold-fit"):
        e_dec, e_tru = corr(v[tr] - u[tr], r[tr] - u[tr]), corr(v[tr], u[tr])
        if abs(e_dec) < 0.3 and e_tru > 0.3:
            q = demote(v)
            d = corr(q[tr], u[tr]) - corr(r[tr], u[tr])
            if d > best_d:
                best, best_d = name, d
    if f["selected"] != best:
        bad.append(f"loso {s}: lucid selected {f['selected']}, numpy {best}")
    elif best is not None:
        q = demote(rows[best])
        close(f"loso {s} held_out_delta", f["held_out_delta"], corr(q[te], u[te]) - corr(r[te], u[te]))

if bad:
    print("\n".join(bad))
    sys.exit(1)
print("audit agrees with numpy")
