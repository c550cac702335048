"""Coverage of the private releases' intervals on real data (benchmarks/ecdf.py imports this).

Data (../shared/data): Bank (bank.csv, n = 4521), Heart Disease (Cleveland,
n = 297 complete rows), Diabetes (n = 101766). Scores for ROC/HL: a
logistic regression (numpy IRLS) on each data set's numeric columns; HL's
calibrated labels are drawn y ~ Bernoulli(score) afresh per run. Every run
draws fresh DP noise through the real release code (backend "central":
the same node-noise law as the servers' "split" mode) and checks the
interval against the statistic computed on the raw data. Epsilons 0.1,
0.5, 1, 5; ``runs`` per setting. Pooled figures are over all settings,
``*_by_setting`` gives each (data set, epsilon): coverage, mean width and
how often the interval was the whole range or a single grid point.
"""

from __future__ import annotations

import csv
import math
import os
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")
EPSILONS = (0.1, 0.5, 1.0, 5.0)


def _logistic(X, y, iters=25):
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    A = np.column_stack([np.ones(len(X)), X])
    w = np.zeros(A.shape[1])
    for _ in range(iters):                       # IRLS
        p = 1.0 / (1.0 + np.exp(-A @ w))
        W = p * (1 - p) + 1e-9
        w += np.linalg.solve(A.T @ (A * W[:, None]) + 1e-6 * np.eye(A.shape[1]), A.T @ (y - p))
    return np.clip(1.0 / (1.0 + np.exp(-A @ w)), 1e-6, 1 - 1e-6)


def load(diabetes: bool = True) -> dict | None:
    """{name: {"column", "bounds", "thresholds", "scores", "labels"}} or None without data
    (``diabetes=False``: Bank and Heart only, for --quick)."""
    if not os.path.isdir(DATA):
        return None
    out = {}
    with open(os.path.join(DATA, "bank", "bank.csv")) as f:
        rows = list(csv.DictReader(f, delimiter=";"))
    num = np.array([[float(r[c]) for c in ("age", "balance", "duration", "campaign", "pdays",
                                           "previous")] for r in rows])
    y = np.array([r["y"] == "yes" for r in rows], dtype=np.int64)
    out["bank"] = {"column": num[:, 0], "bounds": (18.0, 95.0),
                   "thresholds": np.arange(18.0, 96.0), "scores": _logistic(num, y), "labels": y}
    raw = np.genfromtxt(os.path.join(DATA, "heart-disease", "processed.cleveland.data"),
                        delimiter=",", missing_values="?", filling_values=np.nan)
    raw = raw[~np.isnan(raw).any(axis=1)]
    y = (raw[:, 13] > 0).astype(np.int64)
    out["heart"] = {"column": raw[:, 4], "bounds": (100.0, 600.0),
                    "thresholds": np.linspace(100.0, 600.0, 256),
                    "scores": _logistic(raw[:, [0, 3, 4, 7, 9]], y), "labels": y}
    if not diabetes:
        return out
    cols = ("time_in_hospital", "num_lab_procedures", "num_procedures", "num_medications",
            "number_outpatient", "number_emergency", "number_inpatient", "number_diagnoses")
    with open(os.path.join(DATA, "diabetes", "diabetic_data.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    num = np.array([[float(r[c]) for c in cols] for r in rows])
    y = np.array([r["readmitted"] == "<30" for r in rows], dtype=np.int64)
    out["diabetes"] = {"column": num[:, 1], "bounds": (1.0, 132.0),
                       "thresholds": np.arange(1.0, 133.0), "scores": _logistic(num, y),
                       "labels": y}
    return out


def _summary(hits, widths, degenerate=None):
    d = {"coverage": float(np.mean(hits)), "mean_width": float(np.mean(widths)),
         "runs": int(np.size(hits))}
    if degenerate is not None:
        d["whole_range_or_point"] = float(np.mean(degenerate))
    return d


def _within(lo, x, hi):
    """Elementwise lo <= x <= hi (arrays)."""
    return (lo <= x) & (x <= hi)


def ecdf_coverage(data, runs, epsilons=EPSILONS) -> dict:
    """Pointwise, band and quantile intervals of the ECDF release. Quantiles: the interval of
    the interpolated (grouped-data) quantile (``quantile_ci_coverage``) and, rounded up to the
    grid, of the grid quantile (``quantile_grid_ci_coverage``)."""
    from ustat.ecdf import release
    from ustat.ecdf.intervals import quantile_noise_check
    from ustat.ecdf.quantiles import interpolated_quantiles
    from ustat.ecdf.release import exact_counts
    from ustat.ecdf.thresholds import grid_rank
    from ustat.ecdf.tree import Tree, planned_law
    from ustat.specs import ECDFSpec
    levels = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
    pooled = {"pt": [], "band": [], "q": [], "grid": []}
    by, refused = {}, []
    for name, d in data.items():
        x, tau = d["column"], d["thresholds"]
        F = exact_counts(grid_rank(x, tau), tau.size) / x.size
        Q = tau[np.argmax(F[None, :] >= levels[:, None], axis=1)]
        Q_int = interpolated_quantiles(F, levels, tau)
        for eps in epsilons:
            pt, band, q, qw, qd, grid = [], [], [], [], [], []
            tree = Tree(tau.size)
            try:            # what `ustat quantile` refuses from public parameters
                quantile_noise_check(x.size, planned_law(tree, eps, mode="central"), tree, 0.95)
                located = True
            except ValueError:
                located = False
                refused.append(f"{name}_eps{eps:g}")
            spec = ECDFSpec.of(thresholds=tau, epsilon=eps, backend="central",
                               bounds=d["bounds"])
            for _ in range(runs):
                r = release(x, spec)
                iv = r.intervals()
                pt.append(np.mean(_within(iv["pointwise_lo"], F, iv["pointwise_hi"])))
                band.append(bool(np.all(_within(iv["band_lo"], F, iv["band_hi"]))))
                if not located:
                    continue
                qi = r.quantile_intervals(levels)
                lo, hi = qi["interpolated_lo"], qi["interpolated_hi"]
                q.extend(_within(lo, Q_int, hi))
                qw.extend(hi - lo)
                qd.extend((lo == tau[0]) & (hi == tau[-1]))
                grid.extend(_within(qi["lo"], Q, qi["hi"]))
            by[f"{name}_eps{eps:g}"] = {"pointwise": float(np.mean(pt)),
                                        "band": float(np.mean(band)),
                                        "band_halfwidth": iv["band_halfwidth_counts"] / r.n}
            if located:
                by[f"{name}_eps{eps:g}"].update(quantile=_summary(q, qw, qd),
                                                quantile_grid=float(np.mean(grid)))
            pooled["pt"].extend(pt)
            pooled["band"].extend(band)
            pooled["q"].extend(q)
            pooled["grid"].extend(grid)
    return {"ecdf_pointwise_coverage": float(np.mean(pooled["pt"])),
            "ecdf_band_coverage": float(np.mean(pooled["band"])),
            "quantile_ci_coverage": float(np.mean(pooled["q"])),
            "quantile_grid_ci_coverage": float(np.mean(pooled["grid"])),
            "quantile_refused_settings": refused, "ecdf_coverage_by_setting": by}


def roc_coverage(data, runs, n_thresholds=128, epsilons=EPSILONS, limit=None,
                 settings=None) -> dict:
    """AUC CI and the simultaneous ROC band. ``limit``: the refusal's AUC half-width (None:
    the library's default); ``settings``: only these "name_eps" settings."""
    from ustat.ecdf import private_roc
    from ustat.ecdf.roc import MAX_AUC_HALFWIDTH
    limit = MAX_AUC_HALFWIDTH if limit is None else (None if limit == math.inf else limit)
    from ustat.ecdf.release import exact_counts
    from ustat.ecdf.roc import auc, roc_points
    from ustat.ecdf.thresholds import grid_rank
    from ustat.specs import ROCSpec
    tau = np.linspace(0.0, 1.0, n_thresholds)
    pooled_auc, pooled_band, by, refused = [], [], {}, []
    for name, d in data.items():
        s, y = d["scores"], d["labels"]
        r = grid_rank(s, tau)
        f, t = roc_points(exact_counts(r, tau.size, y), exact_counts(r, tau.size, 1 - y),
                          float(y.sum()), float((1 - y).sum()))
        A = auc(f, t)
        for eps in epsilons:
            if settings is not None and f"{name}_eps{eps:g}" not in settings:
                continue
            hits, widths, whole, band = [], [], [], []
            spec = ROCSpec.of(thresholds=tau, epsilon=eps, bounds=(0, 1), backend="central",
                              max_auc_halfwidth=limit)
            for _ in range(runs):
                try:
                    rr = private_roc(s, y, spec)
                except ValueError as exc:           # refused from public parameters, or a
                    if "noise dominates" in str(exc):   # noisy class size <= 0: no release
                        refused.append(f"{name}_eps{eps:g}")
                        break
                    continue
                iv = rr.intervals
                lo, hi = iv["auc_ci"]
                hits.append(lo <= A <= hi)
                widths.append(hi - lo)
                whole.append(lo == 0.0 and hi == 1.0)
                band.append(bool(np.all((iv["tpr_lo"] <= t) & (t <= iv["tpr_hi"])
                                        & (iv["fpr_lo"] <= f) & (f <= iv["fpr_hi"]))))
            if hits:
                by[f"{name}_eps{eps:g}"] = dict(_summary(hits, widths, whole), auc=A,
                                                band=float(np.mean(band)))
            pooled_auc.extend(hits)
            pooled_band.extend(band)
    return {"roc_auc_ci_coverage": float(np.mean(pooled_auc)) if pooled_auc else None,
            "roc_band_coverage": float(np.mean(pooled_band)) if pooled_band else None,
            "roc_coverage_by_setting": by, "roc_refused_settings": refused}


def hl_rejection(data, runs, epsilons=EPSILONS) -> dict:
    """False rejections at alpha = 0.05 on calibrated labels; refused settings listed."""
    from ustat.ecdf import private_hosmer_lemeshow
    from ustat.specs import HLSpec
    gen = np.random.default_rng(7)
    pooled, by, refused = [], {}, []
    for name, d in data.items():
        p = d["scores"]
        for eps in epsilons:
            rej = []
            spec = HLSpec.of(groups=10, epsilon=eps, backend="central")
            for _ in range(runs):
                y = (gen.random(p.size) < p).astype(np.int64)
                try:
                    r = private_hosmer_lemeshow(p, y, spec)
                except ValueError as exc:
                    if "noise dominates" not in str(exc):
                        raise
                    refused.append(f"{name}_eps{eps:g}")
                    break
                rej.append(r.p_value < 0.05)
            if rej:
                by[f"{name}_eps{eps:g}"] = {"false_rejection_rate": float(np.mean(rej)),
                                            "runs": len(rej)}
                pooled.extend(rej)
    return {"hl_false_rejection_rate": float(np.mean(pooled)) if pooled else None,
            "hl_by_setting": by, "hl_refused_settings": refused}


def sensitivity_exact(quick: bool) -> dict:
    """Every N in 2..2000, b in 2..8: the release's sensitivity is the DP's exact diameter; the
    DP equals BFS on every N <= 300 and on a sample of larger N up to 2000. Quick: a subset
    (N <= 200 and 20 sampled N up to 2000; BFS on N <= 40), named in
    ``ecdf_sensitivity_checked``: the full check is the full run's."""
    from ustat.ecdf.sensitivity import brute_force_sensitivity, tree_sensitivity
    from ustat.ecdf.tree import Tree
    t0 = time.perf_counter()
    if quick:
        release_N = list(range(2, 201)) + list(range(211, 2001, 95)) + [2000]
        small, big = 40, []
        checked = ("quick subset: N in 2..200 and 20 sampled N up to 2000 against the DP, "
                   "BFS on N <= 40, b in 2..8")
    else:
        release_N = list(range(2, 2001))
        small, big = 300, list(range(301, 2001, 97)) + [2000]
        checked = ("every N in 2..2000 against the DP, BFS on N <= 300 and 18 sampled N up "
                   "to 2000, b in 2..8")
    ok, brute = True, 0
    for b in range(2, 9):
        for N in release_N:
            ok &= Tree(N, b).sensitivity() == tree_sensitivity(N, b)
        for N in list(range(2, small + 1)) + big:
            ok &= tree_sensitivity(N, b) == brute_force_sensitivity(N, b)
            brute += 1
    return {"ecdf_sensitivity_exact": bool(ok), "ecdf_sensitivity_brute_force_cases": brute,
            "ecdf_sensitivity_checked": checked,
            "ecdf_sensitivity_bank_age_N78": Tree(78).sensitivity(),
            "ecdf_sensitivity_seconds": time.perf_counter() - t0}


def coverage_metrics(quick: bool, parts=("releases", "estimate")) -> dict:
    """Every coverage key (module docstring). Quick: Bank and Heart at epsilon 1 and 5, 5
    runs per setting (3 for ROC), and the quick estimate part: seconds, not a measurement.
    ``parts``: "releases" (the sensitivity check, ECDF, quantiles, ROC, HL) and/or
    "estimate"."""
    from estimate_coverage import estimate_metrics
    out = sensitivity_exact(quick) if "releases" in parts else {}
    data = load(diabetes=not quick)
    if data is None:
        out["coverage_skipped"] = "../shared/data is absent"
        return out
    runs = 5 if quick else 200
    eps = (1.0, 5.0) if quick else EPSILONS
    t0 = time.perf_counter()
    if "releases" in parts:
        out.update(ecdf_coverage(data, runs, eps))
        out.update(roc_coverage(data, 3 if quick else 200, epsilons=eps))
        # what the refused settings' intervals would have covered (private_roc with
        # max_auc_halfwidth=None): not released by the CLI
        off = roc_coverage(data, 3 if quick else 200, epsilons=eps, limit=math.inf,
                           settings=set(out["roc_refused_settings"]))
        out["roc_coverage_refused_settings_unrefused"] = off["roc_coverage_by_setting"]
        out.update(hl_rejection(data, runs, eps))
    if "estimate" in parts:
        out.update(estimate_metrics({k: d["scores"] for k, d in data.items()}, quick))
    out["coverage_runs"] = runs
    out["coverage_epsilons"] = list(eps)
    out["coverage_seconds"] = time.perf_counter() - t0
    out["coverage_nominal"] = 0.95
    return out
