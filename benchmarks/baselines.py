"""The papers' baseline protocols against U-MPC: Kendall's tau on UCI Bank and a private AUC.

Usage: python benchmarks/baselines.py [--json] [--quick] [--runs R] [--gc-runs G] [--only p,q]

Kendall's tau between age and balance of ../shared/data/bank/bank.csv
(n = 4521, public bounds 18:95 and -8019:102127, epsilon = 1, t = 64 bins
per column, so T = 4096 cells), for every protocol of
:data:`ustat.baselines.PROTOCOLS` that computes it (bell-ldp, ghazi,
ghazi-sm, umpc with threat model "dis" and |E| = 2n; bell-2pc with P = 1
pair per user). Keys, per protocol p:

- ``<p>_mse``: mean over R runs (default 50) of (release - U)^2 with U the
  complete U-statistic on the raw normalized values;
- ``<p>_mse_discretized``: the same against the complete U-statistic on the
  values the protocol discretizes to (bin representatives; U-MPC's
  fixed-point encoding), ``<p>_bias``: mean(release) - U;
- ``<p>_variance_theory``: the variance formula at these data (Bell: the
  exact variance of Algorithm 1's estimator; Ghazi and GhaziSM: the
  variance given the factorization; U-MPC: the DP noise variance alone);
- ``<p>_online_bits``, ``<p>_offline_bits``, ``<p>_rounds``,
  ``<p>_max_party_bits`` (from the network's counters of one run),
  ``<p>_seconds`` (median over the R runs, warm) and ``<p>_cold_seconds``
  (the first run in the process, kernel matrix built).

bell-2pc (Bell et al. Section 5, Yao garbled circuits per pair, P = 1): its
costs and ``_seconds`` (median of ``--gc-runs`` warm runs, default 3) come from
the garbled-circuit engine; its ``_mse`` over R runs from ``engine="plain"``,
which evaluates the same circuit on the same coins in the clear (the GC
engine's output is identical on the same coins, tested), because a GC run
costs about 15 s here (the 53 base OTs per pair dominate). ``bell-2pc_mse_gc``
is the MSE of the few GC runs, ``bell-2pc_plain_seconds`` the plain engine's
median time; ``bell-2pc_variance_theory`` is Theorem 5's MSE at the data's
zeta_1, zeta_2 with the exact in-circuit noise variance. The all-pairs
variant (n(n-1)/2 = 10^7 circuits here) is not run.

AUC: a logistic-regression score (sklearn, features age, balance, duration,
campaign, pdays, previous of bank.csv, standardized, fitted on a random half
of the rows) on the other half (n = 2261), labels y; public score bounds
[0, 1]; epsilon = 1; bell-auc with t = 64, fedauc-rr, fedauc-lap (adaptive,
discrete Laplace), umpc (kernel auc). The same keys prefixed ``auc_``, MSE
against sklearn's roc_auc_score on the raw scores.

With --quick: the first 600 rows, t = 16 and R = 3 (keys ``quick_*`` say so).
No peer library implements these protocols, so none is measured.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from benchmarks._common import ROOT, emit

BANK = os.path.join(ROOT, "..", "shared", "data", "bank", "bank.csv")
BANK_BOUNDS = [(18, 95), (-8019, 102127)]
EPSILON = 1.0
UMPC = {"threat_model": "dis", "edges": "2n"}
THEORY_KEYS = ("variance_exact", "variance_given_factorization")


def _theory_variance(res) -> float | None:
    ev = res.evaluation or {}
    for key in THEORY_KEYS + ("mse_thm5",):
        if ev.get(key) is not None:
            return float(ev[key])
    if res.protocol == "umpc":
        return float(res.theory.get("dp_variance", 0.0))
    for key in ("variance_delta_method", "mse_bound_thm3_auc"):
        if key in res.theory:
            return float(res.theory[key])
    return None


def run(protocol: str, X, kernel: str, evaluate: bool = False, **params):
    """One run of ``protocol`` at epsilon = EPSILON (``params``: fields of its
    :class:`ustat.specs.BaselineSpec`), in this process. Timed as a whole: the spec is built
    inside, as the reference tree's keyword call built its arguments."""
    from ustat.baselines import BaselineSpec, run_protocol

    return run_protocol(X, BaselineSpec.of(protocol, kernel, epsilon=EPSILON, **params),
                        evaluate=evaluate)


def measure(prefix: str, protocol: str, X, kernel: str, truth: float, runs: int, **params) -> dict:
    """One evaluated run (costs, discretized truth, theory), one cold timed run, R timed runs."""
    first = run(protocol, X, kernel, evaluate=True, **params)
    disc = first.evaluation.get("statistic_discretized")
    t = time.perf_counter()
    run(protocol, X, kernel, **params)
    cold = time.perf_counter() - t
    est, secs = [], []
    for _ in range(runs):
        t = time.perf_counter()
        r = run(protocol, X, kernel, **params)
        secs.append(time.perf_counter() - t)
        est.append(r.estimate)
    est = np.array(est, dtype=np.float64)
    p = f"{prefix}{protocol}"
    out = {
        f"{p}_mse": float(np.mean((est - truth) ** 2)),
        f"{p}_mse_discretized": None if disc is None else float(np.mean((est - disc) ** 2)),
        f"{p}_bias": float(est.mean() - truth),
        f"{p}_variance_theory": _theory_variance(first),
        f"{p}_online_bits": int(first.online_bits),
        f"{p}_offline_bits": int(first.offline_bits),
        f"{p}_rounds": int(first.rounds),
        f"{p}_max_party_bits": int(first.max_party_bits),
        f"{p}_seconds": float(statistics.median(secs)),
        f"{p}_cold_seconds": cold,
        f"{p}_discretized_statistic": disc,
    }
    return out


def measure_bell_2pc(X, truth: float, runs: int, gc_runs: int, bins: int) -> dict:
    """bell-2pc: costs and seconds by garbled circuits, MSE over ``runs`` with the plain engine."""
    params = {"bins": bins, "pairs": 1}
    out = measure("", "bell-2pc", X, "kendall", truth, gc_runs, **params)
    gc_mse = out["bell-2pc_mse"]
    plain = measure("", "bell-2pc", X, "kendall", truth, runs, engine="plain", **params)
    first = run("bell-2pc", X, "kendall", **params)
    out.update({
        "bell-2pc_mse": plain["bell-2pc_mse"],
        "bell-2pc_mse_discretized": plain["bell-2pc_mse_discretized"],
        "bell-2pc_bias": plain["bell-2pc_bias"],
        "bell-2pc_mse_engine": "plain (same circuit, same coin law; GC output identical)",
        "bell-2pc_mse_gc": gc_mse, "bell-2pc_gc_runs": gc_runs,
        "bell-2pc_plain_seconds": plain["bell-2pc_seconds"],
        "bell-2pc_n_and_per_pair": first.params["n_and"],
        "bell-2pc_n_pairs": first.params["n_pairs"],
        "bell-2pc_offline_rounds": first.offline_rounds,
        "bell-2pc_delta": first.delta,
        "bell-2pc_noise_table_size": first.theory["noise_table_size"],
    })
    return out


def kendall(runs: int, quick: bool, gc_runs: int = 3, only=None) -> dict:
    from ustat.baselines import PROTOCOLS
    from ustat.data import load_csv, normalize
    from ustat.kernels import complete_u, get

    raw, _ = load_csv(BANK, columns=["age", "balance"])
    X, _ = normalize(raw, BANK_BOUNDS)
    bins = 64
    if quick:
        X, bins = X[:600], 16
    truth = complete_u(get("kendall"), X)
    out = {"kendall_n": int(X.shape[0]), "kendall_bins": bins, "kendall_runs": runs,
           "kendall_u_complete": truth, "epsilon": EPSILON}
    for name in ("bell-ldp", "ghazi", "ghazi-sm", "bell-2pc", "umpc"):
        if name not in PROTOCOLS or (only is not None and name not in only):
            continue
        if name == "bell-2pc":
            print("kendall: bell-2pc", file=sys.stderr)
            out.update(measure_bell_2pc(X, truth, runs, gc_runs, bins))
            continue
        params = dict(UMPC) if name == "umpc" else {"bins": bins}
        print(f"kendall: {name}", file=sys.stderr)
        out.update(measure("", name, X, "kendall", truth, runs, **params))
    return out


def auc_records(quick: bool):
    """(score, label) records: a logistic regression fitted on a random half of Bank."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from mpc.arith.rng import CSPRNG
    from ustat.data import load_csv

    cols = ["age", "balance", "duration", "campaign", "pdays", "previous", "y"]
    raw, _ = load_csv(BANK, columns=cols, categorical=["y"])
    feats, y = raw[:, :-1], raw[:, -1]
    perm = CSPRNG("bank-auc-split").permutation(raw.shape[0])   # public split, fixed
    train, test = perm[: raw.shape[0] // 2], perm[raw.shape[0] // 2:]
    scaler = StandardScaler().fit(feats[train])
    model = LogisticRegression(max_iter=1000).fit(scaler.transform(feats[train]), y[train])
    score = model.predict_proba(scaler.transform(feats[test]))[:, 1]
    X = np.column_stack([np.clip(score, 0.0, 1.0), y[test]])
    return X[:600] if quick else X


def auc(runs: int, quick: bool) -> dict:
    from sklearn.metrics import roc_auc_score

    X = auc_records(quick)
    truth = float(roc_auc_score(X[:, 1], X[:, 0]))
    out = {"auc_n": int(X.shape[0]), "auc_positives": int(X[:, 1].sum()), "auc_true": truth,
           "auc_score_model": "sklearn LogisticRegression on standardized age, balance, duration, "
                              "campaign, pdays, previous (fitted on a random half)"}
    for name, params in (("bell-auc", {"bins": 64}), ("fedauc-rr", {}), ("fedauc-lap", {}),
                         ("umpc", dict(UMPC))):
        print(f"auc: {name}", file=sys.stderr)
        out.update(measure("auc_", name, X, "auc", truth, runs, **params))
    return out


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--gc-runs", type=int, default=None,
                    help="warm bell-2pc runs by garbled circuits (default 3, 1 with --quick)")
    ap.add_argument("--only", default=None,
                    help="comma-separated protocols of the Kendall part (default: all); "
                         "skips the AUC part")
    args = ap.parse_args(argv)
    runs = args.runs or (3 if args.quick else 50)
    if not os.path.exists(BANK):
        emit({"skipped": f"{BANK} not found"}, args.json)
        return 0
    result = {"quick": bool(args.quick)}
    only = None if args.only is None else tuple(args.only.split(","))
    gc_runs = args.gc_runs or (1 if args.quick else 3)
    result.update(kendall(runs, args.quick, gc_runs, only))
    if only is not None:
        result["auc_skipped"] = "--only given: the AUC part is not run"
    elif importlib.util.find_spec("sklearn") is None:
        result["auc_skipped"] = "scikit-learn is not installed (pip install '.[test]')"
    else:
        result.update(auc(runs, args.quick))
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
