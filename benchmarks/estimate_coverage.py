"""Coverage of ``ustat estimate``'s interval (benchmarks/ecdf.py imports this).

Two kinds of runs, both checked against the complete statistic computed on
the raw values by an independent reference (scikit-learn's ``roc_auc_score``,
scipy's Kendall tau-b turned into tau-a):

* **the protocol** (:func:`protocol_coverage`): ``run_umpc`` as ``ustat
  estimate`` calls it (BalancedSamp, |E| = 2n, M_Dis), fresh edges and noise
  per run: the acceptance keys on Bank at epsilon 1.
* **its release law** (:func:`simulated_coverage`), for every data set and
  epsilon: one real run gives the public parameters (noise laws, ring
  scale, |E|, epsilon split); then each run draws E with the real sampler
  (``ustat.sampling.balanced``), computes the kernel on E in the clear,
  adds the protocol's total noise (the exact Polya difference of the
  reported scale and variance factor, :func:`noise.samplers.polya`) to the
  sum and to the class counts, and calls the real post-processing
  (:func:`ustat.umpc.release.release_fields`). The protocol's release is
  exactly this law (order kernels' values are exact in its fixed point); the
  benchmark also runs both at one setting and reports the two coverages side
  by side. It takes a fraction of a second per run where the MPC takes 1-3 s.

Kendall on tied synthetic data (:func:`kendall_ties_coverage`: n = 2000, two
5-level columns, epsilon 1, 200 runs of the release law):
``estimate_ci_coverage_kendall_ties`` (target within [0.93, 0.99]; the
interval bounds the kernel's variance by the released untied fraction's upper
limit minus U^2) and the half-width over the error's sd.

Cases (raw columns and bounds as a user would pass them):
Bank (n = 4521): AUC of duration for y = yes, Kendall of (age, balance), under
M_Dis and (``bank_hf``) under M_HF;
Heart Disease, Cleveland (n = 297): AUC of a logistic-regression score for
disease, Kendall of (age, trestbps); Diabetes (n = 101766, M_HF: M_Dis is
refused above 20,000 parties): AUC of a logistic-regression score for
readmission < 30 days, Kendall of (time_in_hospital, num_medications).
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


def cases(scores: dict) -> dict:
    """{(data set, kernel): (records, bounds, threat model)} for Bank and the data sets of
    ``scores`` (the logistic-regression scores of benchmarks/ecdf_coverage.load)."""
    def col(rows, name):
        return np.array([float(r[name]) for r in rows])

    with open(os.path.join(DATA, "bank", "bank.csv")) as f:
        bank = list(csv.DictReader(f, delimiter=";"))
    y = np.array([r["y"] == "yes" for r in bank], dtype=np.float64)
    out = {("bank", "auc"): (np.column_stack([col(bank, "duration"), y]), [(0, 5000), None],
                             "dis"),
           ("bank", "kendall"): (np.column_stack([col(bank, "age"), col(bank, "balance")]),
                                 [(18, 95), (-10000, 110000)], "dis")}
    # the committee threat model (M_HF: its own noise split) on Bank too
    for kernel in ("auc", "kendall"):
        X, bounds, _ = out[("bank", kernel)]
        out[("bank_hf", kernel)] = (X, bounds, "hf")
    if "heart" in scores:
        raw = np.genfromtxt(os.path.join(DATA, "heart-disease", "processed.cleveland.data"),
                            delimiter=",", missing_values="?", filling_values=np.nan)
        raw = raw[~np.isnan(raw).any(axis=1)]
        y = (raw[:, 13] > 0).astype(np.float64)
        out[("heart", "auc")] = (np.column_stack([scores["heart"], y]), [(0, 1), None], "dis")
        out[("heart", "kendall")] = (raw[:, [0, 3]], [(0, 100), (80, 220)], "dis")
    if "diabetes" in scores:
        with open(os.path.join(DATA, "diabetes", "diabetic_data.csv"), newline="") as f:
            diab = list(csv.DictReader(f))
        y = np.array([r["readmitted"] == "<30" for r in diab], dtype=np.float64)
        out[("diabetes", "auc")] = (np.column_stack([scores["diabetes"], y]), [(0, 1), None],
                                    "hf")
        out[("diabetes", "kendall")] = (np.column_stack([col(diab, "time_in_hospital"),
                                                         col(diab, "num_medications")]),
                                        [(1, 14), (1, 81)], "hf")
    return out


def reference(kernel: str, X: np.ndarray) -> float:
    """The complete statistic on the raw values, from scikit-learn / scipy."""
    if kernel == "auc":
        from sklearn.metrics import roc_auc_score
        return float(roc_auc_score(X[:, 1], X[:, 0]))
    from scipy.stats import kendalltau

    x, y = X[:, 0], X[:, 1]
    n = x.size
    pairs = n * (n - 1) / 2

    def tied(v):
        c = np.unique(v, return_counts=True)[1].astype(np.float64)
        return float(np.sum(c * (c - 1) / 2))

    tau_b = kendalltau(x, y).statistic          # (P - Q) / sqrt((n0 - n1)(n0 - n2))
    return float(tau_b * math.sqrt((pairs - tied(x)) * (pairs - tied(y))) / pairs)


def _run_umpc(records, kernel, **flat):
    """``run_umpc`` as ``ustat estimate`` runs it here: the spec of ``flat`` (UMPCSpec's
    fields), on the simulator with one worker."""
    from ustat.executors import Simulator
    from ustat.specs import UMPCSpec
    from ustat.umpc import run_umpc

    return run_umpc(records, UMPCSpec.of(kernel, **flat), Simulator(workers=1))


def _hit(ci, truth) -> bool:
    return bool(ci[0] <= truth <= ci[1])


class ReleaseLaw:
    """The release law of ``run_umpc(records, kernel, epsilon, bounds, threat_model)``: the
    public parameters of one real run, then releases drawn without the MPC (module docstring).
    ``tie_aware``: the spec's (Kendall's untied fraction released for the interval)."""

    def __init__(self, records, kernel, epsilon, bounds, threat_model, tie_aware=False):
        from ustat import kernels as K  # noqa: N812 - the codebase's short capital module alias
        from ustat.umpc.precision import reference_records

        first = _run_umpc(records, kernel, epsilon=epsilon, bounds=tuple(bounds),
                          threat_model=threat_model, tie_aware=tie_aware)
        self.kern = K.get(kernel)
        self.X = reference_records(np.asarray(records, dtype=np.float64), bounds, self.kern)
        self.n, self.m = first.n, first.edges
        self.info = dict(first.aux["noise"], **first.edge_aux.get("noise", {}))
        self.frac_scale = float(1 << first.precision["frac_bits"])
        self.frac_bits = first.precision["frac_bits"]
        self.eps = epsilon
        split = first.epsilon_split
        self.eps_u = split.get("statistic", epsilon)
        self.eps_aux = split.get("class_counts", 0.0)
        self.edge_names = list(first.edge_aux.get("names", []))   # Kendall: untied pairs
        self.eps_edge = first.edge_aux.get("epsilon", 0.0)
        aux = self.kern.aux(self.X) if self.kern.aux is not None else np.zeros((self.n, 0))
        self.aux_true = aux.sum(axis=0)
        self.first = first

    def _noise(self, name, rng):
        from noise.samplers import polya
        e = self.info[name]
        R, t = e.get("variance_factor", 1.0), e["scale_ring_units"]
        return float(polya(R, t, (), rng) - polya(R, t, (), rng)) / self.frac_scale

    def draw(self, rng, confidence=0.95) -> dict:
        from ustat.sampling import balanced
        from ustat.umpc.release import Split, release_fields
        from ustat.umpc.sampling_error import Design

        k = self.kern.degree
        E = balanced(self.n, self.m, k, rng).edges
        u = float(np.mean(self.kern.plain(self.X[E])))
        noisy = bool(self.info)
        if noisy:
            u += self._noise("u", rng) / self.m
        edge = []
        if self.edge_names:
            assert self.kern.edge_aux_plain is not None
            means = np.mean(self.kern.edge_aux_plain(self.X[E]), axis=0)
            edge = [float(v) + (self._noise(name, rng) / self.m if noisy else 0.0)
                    for v, name in zip(means, self.edge_names)]
        aux = [a + (self._noise(name, rng) if noisy else 0.0)
               for a, name in zip(self.aux_true, self.kern.aux_names)]
        return release_fields(self.kern, u=u, aux=aux, n=self.n, m=self.m,
                              split=Split(self.eps, self.eps_u, self.eps_aux, self.eps_edge),
                              info=self.info, frac_bits=self.frac_bits, confidence=confidence,
                              design=Design.of_edges(E, self.n, "balanced"), edge_aux=edge)


def _summary(hits, halves, sds, errors) -> dict:
    return {"coverage": float(np.mean(hits)), "runs": len(hits),
            "mean_halfwidth": float(np.mean(halves)), "noise_std": float(np.mean(sds)),
            "error_sd": float(np.std(errors)),
            "halfwidth_over_error_sd": float(np.mean(halves) / max(np.std(errors), 1e-300))}


def _law_draws(law: ReleaseLaw, truth: float, runs: int, rng) -> tuple:
    """(hits, half-widths, noise sds, errors) of ``runs`` releases drawn from ``law``."""
    hits, halves, sds, errs = [], [], [], []
    for _ in range(runs):
        r = law.draw(rng)
        hits.append(_hit(r["ci"], truth))
        halves.append((r["ci"][1] - r["ci"][0]) / 2)
        sds.append(r["noise_std"])
        errs.append(r["estimate"] - truth)
    return hits, halves, sds, errs


def simulated_coverage(all_cases: dict, runs: int, epsilons=EPSILONS) -> dict:
    """Coverage per (data set, kernel, epsilon) of the release law (module docstring)."""
    from mpc.arith.rng import CSPRNG
    by, pooled = {}, {"auc": [], "kendall": []}
    rng = CSPRNG()
    for (ds, kernel), (X, bounds, tm) in all_cases.items():
        truth = reference(kernel, X)
        for eps in epsilons:
            draws = _law_draws(ReleaseLaw(X, kernel, eps, bounds, tm), truth, runs, rng)
            by[f"{ds}_{kernel}_eps{eps:g}"] = dict(_summary(*draws), truth=truth)
            pooled[kernel].extend(draws[0])
    return {"estimate_coverage_by_setting": by,
            "estimate_ci_coverage_simulated_auc": float(np.mean(pooled["auc"])),
            "estimate_ci_coverage_simulated_kendall": float(np.mean(pooled["kendall"]))}


def protocol_coverage(all_cases: dict, runs: int, compare_law: bool = True,
                      kernels=("auc", "kendall"), extras: bool = True) -> dict:
    """The acceptance keys: ``run_umpc`` itself on Bank at epsilon 1 (module docstring), the
    same setting's release law beside it, and (``extras``) the hf half-width over the noise
    sd and the class-count share's noise ratio. ``kernels``: a subset, to split the work."""
    from mpc.arith.rng import CSPRNG
    out = {}
    rng = CSPRNG()
    for kernel in kernels:
        X, bounds, tm = all_cases[("bank", kernel)]
        truth = reference(kernel, X)
        hits, halves, sds, errs = [], [], [], []
        for _ in range(runs):
            r = _run_umpc(X, kernel, epsilon=1.0, bounds=tuple(bounds), threat_model=tm)
            hits.append(_hit(r.ci, truth))
            halves.append((r.ci[1] - r.ci[0]) / 2)
            sds.append(r.noise_std)
            errs.append(r.estimate - truth)
        s = _summary(hits, halves, sds, errs)
        out[f"estimate_ci_coverage_{kernel}"] = s["coverage"]
        out[f"estimate_ci_mean_halfwidth_{kernel}"] = s["mean_halfwidth"]
        out[f"estimate_noise_std_{kernel}"] = s["noise_std"]
        out[f"estimate_error_sd_{kernel}"] = s["error_sd"]
        if compare_law:
            law = ReleaseLaw(X, kernel, 1.0, bounds, tm)
            sim = [law.draw(rng) for _ in range(runs)]
            out[f"estimate_ci_coverage_{kernel}_release_law"] = float(
                np.mean([_hit(r["ci"], truth) for r in sim]))
    if not extras:
        return out
    X, bounds, _ = all_cases[("bank", "auc")]
    hf = [_run_umpc(X, "auc", epsilon=1.0, bounds=tuple(bounds), threat_model="hf")
          for _ in range(max(1, runs // 20))]
    out["estimate_ci_halfwidth_over_noise_std"] = float(
        np.mean([(r.ci[1] - r.ci[0]) / 2 / r.noise_std for r in hf]))
    share = _run_umpc(X, "auc", epsilon=1.0, bounds=tuple(bounds), seed=11)
    old = _run_umpc(X, "auc", epsilon=1.0, bounds=tuple(bounds), seed=11,
                    aux_epsilon_fraction=0.1)
    out["auc_noise_std_ratio_vs_default"] = share.noise_std / old.noise_std
    out["auc_aux_epsilon_fraction"] = share.aux_epsilon_fraction
    out["estimate_runs"] = runs
    return out


def tied_records(n: int = 2000, levels: int = 5, rho: float = 0.3, seed: int = 1) -> np.ndarray:
    """Synthetic tied data: two normal columns of correlation ``rho``, each cut into ``levels``
    equally frequent levels (codes 0..levels - 1; about 36% of pairs tie in a column)."""
    g = np.random.default_rng(seed)
    a = g.standard_normal(n)
    b = rho * a + math.sqrt(1.0 - rho * rho) * g.standard_normal(n)

    def cut(v):
        return np.searchsorted(np.quantile(v, np.linspace(0, 1, levels + 1)[1:-1]),
                               v).astype(np.float64)
    return np.column_stack([cut(a), cut(b)])


def _law_coverage(law: ReleaseLaw, truth: float, runs: int) -> dict:
    from mpc.arith.rng import CSPRNG
    return _summary(*_law_draws(law, truth, runs, CSPRNG()))


def kendall_ties_coverage(runs: int, epsilon: float = 1.0) -> dict:
    """``estimate_ci_coverage_kendall_ties``: Kendall's interval on :func:`tied_records`
    (n = 2000, 5 levels) by its release law with ``tie_aware`` (the untied fraction released),
    ``runs`` runs (target within [0.93, 0.99]); ``..._default``: the same without ``tie_aware``
    (the default: conservative on tied data)."""
    X = tied_records()
    levels = int(X.max()) + 1
    truth = reference("kendall", X)
    law = ReleaseLaw(X, "kendall", epsilon, [(0, levels - 1)] * 2, "dis", tie_aware=True)
    s = _law_coverage(law, truth, runs)
    default = _law_coverage(ReleaseLaw(X, "kendall", epsilon, [(0, levels - 1)] * 2, "dis"),
                            truth, runs)
    return {"estimate_ci_coverage_kendall_ties": s["coverage"],
            "estimate_ci_kendall_ties_halfwidth_over_error_sd": s["halfwidth_over_error_sd"],
            "estimate_ci_kendall_ties_untied_share": law.first.edge_aux_epsilon_fraction,
            "estimate_ci_coverage_kendall_ties_default": default["coverage"],
            "estimate_ci_kendall_ties_default_halfwidth_over_error_sd":
                default["halfwidth_over_error_sd"],
            "estimate_ci_kendall_ties_runs": runs}


def estimate_metrics(scores: dict, quick: bool) -> dict:
    """Both parts (quick: 1 protocol run per kernel, and the release law at epsilon 1 with
    10 runs on Heart only: seconds, not a measurement)."""
    t0 = time.perf_counter()
    all_cases = cases(scores)
    out = protocol_coverage(all_cases, 1 if quick else 200, compare_law=not quick)
    out.update(kendall_ties_coverage(20 if quick else 200))
    if quick:
        sub = {key: v for key, v in all_cases.items() if key[0] == "heart"}
        out.update(simulated_coverage(sub, 10, (1.0,)))
    else:
        out.update(simulated_coverage(all_cases, 200))
    out["estimate_coverage_seconds"] = time.perf_counter() - t0
    return out
