"""Independent computation of `lucid audit --labels`'s estimates and intervals with numpy, for
tests/hand_labels.rs.

usage: hand_labels.py BANK.csv LABELS.csv OUT.json  -> exit 0 when every row agrees, else prints
the differences.

From the paper's definitions and docs/audit.md's account of the method: strata (label x flag
pattern, else label x flag-count bands, so that two labels a stratum fit in a quarter of the
sheet's rows), the stratified estimator of every quantity (a smooth function of weighted totals),
its linearized variance with the finite-population correction and the floor (the variance of the
linearized terms over the whole stratum were U a coin of the stratum's share, kept one label of
the other truth from 0 and 1), Satterthwaite's degrees of freedom, Student's t (its quantile by
numerical integration here), Wilson / Fisher z / Wald intervals, and a second labeller's
disagreement read as a labelling error: each label read through it (a memory's two labels
averaged), the reading's noise in every stratum's variance without the finite-population
correction, the rate's own uncertainty by the delta method. Nothing is read from lucid but the
numbers compared.
"""
import json
import math
import sys

import numpy as np

bank_path, labels_path, out_path = sys.argv[1:4]
bank = np.genfromtxt(bank_path, delimiter=",", names=True, dtype=None, encoding="utf-8")
ids = [str(x) for x in bank["id"]]
r = bank["r"].astype(float)
vnames = [n for n in bank.dtype.names if n.startswith("v_")]
V = [bank[n].astype(float) for n in vnames]
graded = bank["graded"].astype(float) >= 0.5 if "graded" in bank.dtype.names else np.ones(len(r), bool)
M, k = len(r), len(V)

rows = [line.rstrip("\n").split(",") for line in open(labels_path, encoding="utf-8")]
head, body = rows[0], rows[1:]
col = {c: i for i, c in enumerate(head)}
labelled, first, second = [], [], []
for row in body:
    a = row[col["u"]].strip()
    b = row[col["u2"]].strip() if "u2" in col else ""
    if a == "" and b == "":
        continue
    labelled.append(ids.index(row[col["memory"]]))
    first.append(float(a if a != "" else b))
    second.append(float(b) if (a != "" and b != "") else None)
N_rows = len(body)

# Strata.
trusted = (r >= 0.5).astype(int)
flags = np.array([[v[i] < 0.5 for v in V] for i in range(M)], dtype=int).reshape(M, k)


def used(of):
    return len(set(of))


pattern = [t * (1 << k) + sum(f << j for j, f in enumerate(fl)) for t, fl in zip(trusted, flags)] if k <= 12 else None
if pattern is not None and 4 * used(pattern) <= N_rows:
    of = pattern
else:
    counts = flags.sum(axis=1)
    of = None
    for bands in range(k + 1, 0, -1):
        cand = [t * bands + c * bands // (k + 1) for t, c in zip(trusted, counts)]
        if 4 * used(cand) <= N_rows:
            of = cand
            break
    if of is None:
        of = [t for t in trusted]
of = np.array(of)
strata = sorted(set(of))

# The labelling error.
pairs = [(a, b) for a, b in zip(first, second) if b is not None]
if pairs:
    dis = sum(abs(a - b) > 0.5 for a, b in pairs)
    d = min(dis / len(pairs), 0.49)
    sm = (dis + 0.5) / (len(pairs) + 1)
    root = math.sqrt(1 - 2 * d)
    err, var_err = (1 - root) / 2, sm * (1 - sm) / len(pairs) / (4 * root * root)
else:
    err, var_err = 0.0, 0.0
labelled, first = np.array(labelled), np.array(first)
twice = np.array([b is not None for b in second])
second = np.array([b if b is not None else 0.0 for b in second])


def read(e):
    """Each label read as (L - e) / (1 - 2e), a memory's two labels averaged."""
    one, two = (first - e) / (1 - 2 * e), (second - e) / (1 - 2 * e)
    return np.where(twice, (one + two) / 2, one)


# The variance of a read label around U (a memory labelled twice: half of it).
noise = err * (1 - err) / (1 - 2 * err) ** 2
noise = np.where(twice, noise / 2, noise)


def t_quantile(df):
    """The 97.5 % point of Student's t, from its density integrated numerically."""
    if not np.isfinite(df):
        return 1.959963984540054
    x = np.linspace(0, 60, 600001)
    dens = np.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi) * (1 + x * x / df) ** (-(df + 1) / 2)
    cdf = 0.5 + np.concatenate([[0], np.cumsum((dens[1:] + dens[:-1]) / 2 * np.diff(x))])
    return float(np.interp(0.975, cdf, x))


# Quantities: (name, verifier, terms(i, u) -> vector, f(totals), scale).
def corr_from(t):
    n, sx, sxx, sy, syy, sxy = t
    if n <= 1:
        return None
    cxx, cyy, cxy = sxx - sx * sx / n, syy - sy * sy / n, sxy - sx * sy / n
    if cxx <= 1e-12 * max(abs(sxx), 1) or cyy <= 1e-12 * max(abs(syy), 1):
        return None
    return max(-1.0, min(1.0, cxy / math.sqrt(cxx * cyy)))


def ratio(t):
    return t[1] / t[0] if t[0] > 0 else None


def payoff(t):
    a, b = corr_from([t[0], t[6], t[7], t[3], t[4], t[8]]), corr_from(t[:6])
    return None if a is None or b is None else a - b


quantities = []
trust = (r >= 0.5).astype(float)
quantities.append(("accuracy", None, lambda i, u: [1, u], ratio, "p"))
quantities.append(("leniency", None, lambda i, u: [graded[i] * (1 - u), graded[i] * trust[i] * (1 - u)], ratio, "p"))
quantities.append(("sensitivity", None, lambda i, u: [graded[i] * u, graded[i] * trust[i] * u], ratio, "p"))
quantities.append(("corr_r_u", None, lambda i, u: [1, r[i], r[i] ** 2, u, u * u, r[i] * u], corr_from, "c"))
for name, v in zip(vnames, V):
    q = np.where((r >= 0.5) & (v < 0.5), 0.0, r)

    def cnb(i, u, v=v):
        if np.isnan(v[i]):
            return [0] * 6
        x, y = v[i] - u, r[i] - u
        return [1, x, x * x, y, y * y, x * y]

    def cvu(i, u, v=v):
        return [0] * 6 if np.isnan(v[i]) else [1, v[i], v[i] ** 2, u, u * u, v[i] * u]

    def pay(i, u, q=q):
        return [1, r[i], r[i] ** 2, u, u * u, r[i] * u, q[i], q[i] ** 2, q[i] * u]

    quantities += [("corr_nu_b", name[2:], cnb, corr_from, "c"), ("corr_v_u", name[2:], cvu, corr_from, "c"),
                   ("payoff", name[2:], pay, payoff, "d")]


def affine(terms):
    a = np.array([terms(i, 0.0) for i in range(M)], float)
    b = np.array([terms(i, 1.0) for i in range(M)], float) - a
    return a, b


def totals(a, b, u):
    tot = np.zeros(a.shape[1])
    for h in strata:
        mem = labelled[of[labelled] == h]
        uu = u[of[labelled] == h]
        if len(mem) == 0:
            allh = np.where(of == h)[0]
            tot += (a[allh] + 0.5 * b[allh]).sum(axis=0)
            continue
        w = (of == h).sum() / len(mem)
        tot += w * (a[mem] + uu[:, None] * b[mem]).sum(axis=0)
    return tot


def grad(f, x):
    g = np.zeros(len(x))
    for j in range(len(x)):
        h = 1e-5 * max(abs(x[j]), 1)
        up, dn = x.copy(), x.copy()
        up[j] += h
        dn[j] -= h
        fu, fd = f(up), f(dn)
        if fu is None or fd is None:
            return None
        g[j] = (fu - fd) / (2 * h)
    return g


def wilson(p, n, z):
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return c - half, c + half


def estimate(terms, f, scale):
    rng = {"p": (0, 1), "c": (-1, 1), "d": (-2, 2)}[scale]
    a, b = affine(terms)
    u = read(err)
    tot = totals(a, b, u)
    value = f(tot)
    if value is None:
        return None, rng[0], rng[1], None
    if len(labelled) == M and err == 0:
        return value, value, value, 0.0
    point = tot
    if scale == "c" and abs(value) > 1 - 1e-9:
        nudged = u.copy()
        for h in strata:
            sel = of[labelled] == h
            step = 1.0 / (sel.sum() + 1.0)
            nudged[sel] = u[sel] + (1 - 2 * u[sel]) * step
        point = totals(a, b, nudged)
    center = f(point)
    g = grad(f, point) if center is not None else None
    if g is None:
        return value, rng[0], rng[1], None
    d, c = a @ g, b @ g
    parts = []
    for h in strata:
        allh = np.where(of == h)[0]
        sel = of[labelled] == h
        mem, uu = labelled[sel], u[sel]
        big, n = len(allh), len(mem)
        if n == 0:
            parts.append((c[allh].sum() ** 2 / 12 + (c[allh] ** 2).sum() / 6, 1.0))
            continue
        nz = (c[mem] ** 2 * noise[sel]).mean()
        if n == big:
            parts.append((big * nz, 1e6))
            continue
        z = d[mem] + uu * c[mem]
        s2 = z.var(ddof=1) if n > 1 else 0.0
        p = min(max(uu.sum() / n, 1 / (n + 1)), n / (n + 1))
        zp = d[allh] + p * c[allh]
        floor = zp.var() + p * (1 - p) * (c[allh] ** 2).mean()
        parts.append((big * big * (1 - n / big) * max(s2, floor + nz) / n + big * nz, max(n - 1.0, 1.0)))
    var = sum(v for v, _ in parts)
    if var_err > 0:
        up, dn = min(err + 1e-4, 0.49), max(err - 1e-4, 0)
        fu, fd = f(totals(a, b, read(up))), f(totals(a, b, read(dn)))
        if fu is not None and fd is not None:
            var += ((fu - fd) / (up - dn)) ** 2 * var_err
    if var <= 0:
        return value, rng[0], rng[1], None
    den = sum(v * v / df for v, df in parts)
    df = max(var * var / den, 1.0) if den > 0 else float("inf")
    t = t_quantile(df)
    se = math.sqrt(var)
    if scale == "p":
        pp = min(max(center, 0), 1)
        if pp * (1 - pp) <= 0:
            lo, hi = max(pp - t * se, 0), min(pp + t * se, 1)
        else:
            n_eff = min(max(pp * (1 - pp) / var, 1), 1e12)
            lo, hi = wilson(pp, n_eff, t)
            lo, hi = min(lo, pp), max(hi, pp)
    elif scale == "c":
        rr = min(max(center, -0.9999), 0.9999)
        half = t * se / (1 - rr * rr)
        lo, hi = min(math.tanh(math.atanh(rr) - half), center), max(math.tanh(math.atanh(rr) + half), center)
    else:
        lo, hi = center - t * se, center + t * se
    return value, min(lo, value), max(hi, value), se


got = json.load(open(out_path))["hand_labels"]["rows"]
bad = []
for name, ver, terms, f, scale in quantities:
    row = next(x for x in got if x["quantity"] == name and x["verifier"] == ver)
    value, lo, hi, se = estimate(terms, f, scale)
    width = max(hi - lo, 1e-9)
    checks = [("estimate", row["estimate"], value, 1e-9), ("lo", row["lo"], lo, 2e-3 * width + 1e-9),
              ("hi", row["hi"], hi, 2e-3 * width + 1e-9), ("se", row["se"], se, 1e-5 * (se or 0) + 1e-9)]
    for what, a, b, tol in checks:
        if (a is None) != (b is None) or (a is not None and abs(a - b) > tol):
            bad.append(f"{name} {ver} {what}: lucid {a} numpy {b}")
if bad:
    print("\n".join(bad))
    sys.exit(1)
print(f"{len(quantities)} quantities agree")
