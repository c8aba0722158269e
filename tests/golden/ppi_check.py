"""lucid's PPI++ accuracy against ppi-python's (Angelopoulos et al.), for tests/hand_labels.rs.

usage: ppi_check.py BANK.csv LABELS.csv OUT.json -> exit 0 when they agree, else prints why.

The bank is one stratum (every memory trusted, no verifier flags it), so lucid's stratified
sample is a simple random sample and both estimators apply: the mean of U from labels Y, the
verifier's score as the prediction Yhat on the labelled memories and on every memory of the bank.
lucid's point estimate at its own lambda must equal ppi_mean_pointestimate's at that lambda
exactly; its interval (finite-population correction, Wilson at the effective size, lambda on a
grid of 0.05) must be close to ppi_mean_ci's (lambda tuned, normal interval), and both narrower
than the classical interval of the labels alone.
"""
import csv
import json
import sys

import numpy as np
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

bank_path, labels_path, out_path = sys.argv[1:4]
bank = list(csv.DictReader(open(bank_path)))
score = {row["id"]: float(row["v_s"]) for row in bank}
labels = [row for row in csv.DictReader(open(labels_path)) if row["u"].strip() != ""]
Y = np.array([float(row["u"]) for row in labels])
Yhat = np.array([score[row["memory"]] for row in labels])
Yhat_all = np.array([score[row["id"]] for row in bank])

got = json.load(open(out_path))["hand_labels"]["rows"]
acc = next(r for r in got if r["quantity"] == "accuracy")
ppi = acc["ppi"]
bad = []
if ppi is None or ppi["predictor"] != "v_s":
    bad.append(f"lucid gave no PPI++ estimate with v_s: {acc}")
else:
    lam = ppi["lambda"]
    theirs = float(np.ravel(ppi_mean_pointestimate(Y, Yhat, Yhat_all, lam=lam))[0])
    if abs(theirs - ppi["estimate"]) > 1e-9:
        bad.append(f"point estimate at lambda {lam}: lucid {ppi['estimate']} ppi-python {theirs}")
    lo, hi = (float(np.ravel(x)[0]) for x in ppi_mean_ci(Y, Yhat, Yhat_all, alpha=0.05))
    width, ours = hi - lo, ppi["hi"] - ppi["lo"]
    if abs(ours - width) > 0.1 * width:
        bad.append(f"interval width: lucid {ours:.4f} ppi-python {width:.4f} ([{lo:.4f}, {hi:.4f}])")
    if abs((ppi["lo"] + ppi["hi"]) / 2 - (lo + hi) / 2) > 0.25 * width:
        bad.append(f"interval centre: lucid [{ppi['lo']:.4f}, {ppi['hi']:.4f}] ppi-python [{lo:.4f}, {hi:.4f}]")
    clo, chi = (float(np.ravel(x)[0]) for x in classical_mean_ci(Y, alpha=0.05))
    if not (width < chi - clo and ours < acc["hi"] - acc["lo"]):
        bad.append(f"PPI++ not narrower: ppi-python {width:.4f} vs classical {chi - clo:.4f}; lucid {ours:.4f} vs "
                   f"stratified {acc['hi'] - acc['lo']:.4f}")
    print(f"lambda {lam}; lucid [{ppi['lo']:.4f}, {ppi['hi']:.4f}], ppi-python [{lo:.4f}, {hi:.4f}], "
          f"classical [{clo:.4f}, {chi:.4f}]")
if bad:
    print("\n".join(bad))
    sys.exit(1)
