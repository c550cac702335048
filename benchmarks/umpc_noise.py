"""The DP noise of U-MPC releases: one discrete Laplace sampled inside MPC, against Polya shares.

Usage: python benchmarks/umpc_noise.py [--json] [--quick] (also run by benchmarks/umpc.py).

Keys (all measured in this run; --quick uses the smaller counts in brackets):
- noise_variance_ratio_dis / _hf: the variance of the released noise over one
  discrete Laplace's, over R whole releases each (4000 [200]) of Kendall on
  n = 40 synthetic records with all 780 edges (U is fixed, so the released
  U-statistic minus the exact one, times |E| 2^c, is the noise in ring units),
  noise_method "mpc"; noise_variance_releases = R (the ratio's standard error
  is about sqrt(5 / R), 3.5% at 4000: a Laplace's kurtosis). *_polya: the
  same with Polya shares (R / 4 releases), *_polya_factor the plan's n / h.
- bank_kendall_dp_mse_central_law: Kendall on Bank (age, balance), DP noise
  alone, epsilon = 1, M_Dis, noise sampled inside MPC among the 4521 parties:
  mean of (released - incomplete U on the same edges)^2 over R_bank whole
  releases (2000 [20]) on one BalancedSamp hypergraph, run on two processes;
  _theory = 2 (delta_max Delta f / (epsilon |E|))^2 (one DLap: 1.57e-6),
  _ratio = measured / theory, _runs, _seconds (median per release).
- bank_noise_<method>_<threat>_{online_bits, offline_bits, online_rounds,
  offline_rounds, max_party_bits, seconds}: the noise step (phase "noise")
  of one Bank release, method mpc or polya, threat model dis or hf.
- noise_chi2_pvalue: chi-square of D secure draws (10^6 [10^4]) at Bank's
  scale (t = 2^17 ring units, two contributors, dealer triples) against
  DLap on 40 equiprobable bins; noise_chi2_draws, noise_chi2_seconds,
  noise_chi2_variance_ratio.
- dp_audit_mpc_eps_lower / _eps_claimed / _colluders: noise.audit's
  threshold audit (split "mpc", n = 4, all but one colluding, 10^5 [10^4]
  runs); dp_audit_polya_all_but_one_eps_lower and _exact: the Polya split
  (half the parties tolerated) against the same coalition, for contrast.
- dp_audit_releases_eps_lower / _eps_claimed / _releases: the same threshold
  test on whole releases (run_umpc, M_Dis, in-MPC noise) of Kendall on two
  neighbouring data sets of n = 5 records (all 10 pairs concordant; the
  first record moved so that its 4 pairs turn discordant: the sum moves by
  its full sensitivity 8), R releases each (5000 [500]), read in ring units.
"""

from __future__ import annotations

import math
import os
import time
from concurrent.futures import ProcessPoolExecutor

import _common  # noqa: F401  (puts the repository on sys.path)
import numpy as np
from _common import ROOT, emit

BANK = os.path.join(ROOT, "..", "shared", "data", "bank", "bank.csv")
BANK_BOUNDS = "18:95,-8019:102127"


def _dlap_var(scale: float) -> float:
    a = math.exp(-1.0 / scale)
    return 2 * a / (1 - a) ** 2


def variance_ratio(threat_model: str, method: str, releases: int) -> dict:
    """Released noise over R whole releases of Kendall (n = 40, all edges), in ring units."""
    from mpc.arith.rng import CSPRNG
    from ustat.data import synthetic_uniform
    from ustat.executors import Simulator
    from ustat.specs import UMPCSpec
    from ustat.umpc import run_umpc

    X = synthetic_uniform(40, 2, CSPRNG(1))
    spec = UMPCSpec.of("kendall", epsilon=1.0, edges="all", sampler="all",
                       threat_model=threat_model, noise_method=method)
    first = run_umpc(X, spec, Simulator(workers=1), evaluate=True)
    exact = first.evaluation["u_complete"]
    unit = first.edges * 2 ** first.precision["frac_bits"]
    eta = np.array([round((run_umpc(X, spec, Simulator(workers=1)).u_hat - exact) * unit)
                    for _ in range(releases)], dtype=np.float64)
    info = first.aux["noise"]["u"]
    return {"ratio": float(eta.var() / _dlap_var(info["scale_ring_units"])),
            "factor": info["variance_factor"], "mean_over_sd": float(eta.mean() / eta.std())}


def _bank():
    from ustat.data import load_csv, normalize, parse_bounds

    raw, _ = load_csv(BANK, columns=["age", "balance"])
    X, _ = normalize(raw, parse_bounds(BANK_BOUNDS, 2))
    return X


def _bank_chunk(args):
    """Worker: ``count`` releases on the fixed hypergraph; (released - incomplete)^2, seconds."""
    count, hg_seed = args
    from mpc.arith.rng import CSPRNG
    from ustat import sampling
    from ustat.executors import Simulator
    from ustat.specs import UMPCSpec
    from ustat.umpc import run_umpc

    X = _bank()
    hg = sampling.sample("balanced", X.shape[0], 2 * X.shape[0], 2, CSPRNG(hg_seed))
    first = run_umpc(
        X,
        UMPCSpec.of("kendall", epsilon=1.0),
        Simulator(workers=1),
        hypergraph=hg,
        evaluate="incomplete")
    inc = first.evaluation["u_incomplete"]
    err, secs = [], []
    for _ in range(count):
        t = time.perf_counter()
        r = run_umpc(X, UMPCSpec.of("kendall", epsilon=1.0), Simulator(workers=1), hypergraph=hg)
        secs.append(time.perf_counter() - t)
        err.append((r.estimate - inc) ** 2)
    return err, secs, first.max_degree, first.edges


def bank_central_law(runs: int) -> dict:
    halves = [(runs - runs // 2, 5), (runs // 2, 5)]
    with ProcessPoolExecutor(2) as pool:
        parts = list(pool.map(_bank_chunk, [h for h in halves if h[0]]))
    err = np.concatenate([p[0] for p in parts])
    secs = np.concatenate([p[1] for p in parts])
    delta_max, m = parts[0][2], parts[0][3]
    theory = 2 * (delta_max * 2.0 / (1.0 * m)) ** 2
    mse = float(err.mean())
    return {"bank_kendall_dp_mse_central_law": mse,
            "bank_kendall_dp_mse_central_law_theory": theory,
            "bank_kendall_dp_mse_central_law_ratio": mse / theory,
            "bank_kendall_dp_mse_central_law_runs": int(err.size),
            "bank_kendall_dp_mse_central_law_seconds": float(np.median(secs))}


def bank_noise_step() -> dict:
    """Bits, rounds and seconds of the noise phase of one Bank release per method and model."""
    from ustat.executors import Simulator
    from ustat.specs import UMPCSpec
    from ustat.umpc import run_umpc

    X = _bank()
    out = {}
    for method in ("mpc", "polya"):
        for tm in ("dis", "hf"):
            run_umpc(
                X,
                UMPCSpec.of("kendall", epsilon=1.0, threat_model=tm, noise_method=method),
                Simulator(workers=1))
            r = run_umpc(
                X,
                UMPCSpec.of("kendall", epsilon=1.0, threat_model=tm, noise_method=method),
                Simulator(workers=1))
            ph = r.communication["phases"]["noise"]
            on, off = ph.get("online", {}), ph.get("offline", {})
            key = f"bank_noise_{method}_{tm}"
            out.update({f"{key}_online_bits": on.get("bits", 0),
                        f"{key}_offline_bits": off.get("bits", 0),
                        f"{key}_online_rounds": on.get("rounds", 0),
                        f"{key}_offline_rounds": off.get("rounds", 0),
                        f"{key}_max_party_bits": on.get("max_party_bits", 0),
                        f"{key}_seconds": r.noise_seconds})
    return out


def chi2_secure_draws(draws: int, chunk: int = 50_000) -> dict:
    from scipy import stats

    from mpc.session import Session
    from noise.mpc_sampler import plan_dlap, secure_dlap

    scale = 131072
    plan = plan_dlap(scale, epsilon=1.0)
    t = time.perf_counter()
    xs = []
    for start in range(0, draws, chunk):
        s = Session(2)
        out = secure_dlap(s, [plan] * min(chunk, draws - start), holders=np.arange(2))
        xs.append(s.ring.to_signed(s.ring.sum(out.shares, axis=0)).astype(np.int64))
    secs = time.perf_counter() - t
    x = np.concatenate(xs)
    a = math.exp(-1 / scale)
    q = np.linspace(0, 1, 41)[1:-1]
    k = np.unique(np.where(q < 0.5, -np.ceil(np.log(q * (1 + a)) / np.log(a)),
                           np.ceil(np.log((1 - q) * (1 + a)) / np.log(a)) - 1).astype(np.int64))
    cdf = np.where(k >= 0, 1 - a ** (k + 1) / (1 + a), a ** (-k) / (1 + a))
    probs = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
    counts = np.bincount(np.searchsorted(k, x, side="left"), minlength=k.size + 1)
    return {"noise_chi2_pvalue": float(stats.chisquare(counts, probs * x.size).pvalue),
            "noise_chi2_draws": int(x.size), "noise_chi2_seconds": secs,
            "noise_chi2_variance_ratio": float(x.var() / _dlap_var(scale))}


def audit(runs: int) -> dict:
    from noise.audit import audit_epsilon_lower_bound

    eps, d = audit_epsilon_lower_bound(n=4, split="mpc", runs=runs)
    eps_p, dp = audit_epsilon_lower_bound(n=4, split="collusion", colluders=3, runs=runs)
    return {"dp_audit_mpc_eps_lower": eps, "dp_audit_mpc_eps_claimed": d["eps_claimed"],
            "dp_audit_mpc_colluders": d["colluders"], "dp_audit_mpc_runs": runs,
            "dp_audit_polya_all_but_one_eps_lower": eps_p,
            "dp_audit_polya_all_but_one_eps_exact": dp["eps_exact"]}


def release_audit(releases: int) -> dict:
    """The threshold audit on whole releases of two neighbouring data sets (docstring)."""
    from noise.audit import threshold_audit
    from ustat.executors import Simulator
    from ustat.specs import UMPCSpec
    from ustat.umpc import run_umpc

    D0 = np.column_stack([np.arange(5) / 4, (np.arange(5) + 1) / 8])   # all pairs concordant
    D1 = D0.copy()
    D1[0, 1] = 1.0             # x smallest, y largest: its 4 pairs discordant, the sum 10 -> 2
    views, first = [], None
    for D in (D0, D1):
        out = []
        for _ in range(releases):
            r = run_umpc(
                D,
                UMPCSpec.of("kendall", epsilon=1.0, edges="all", sampler="all", noise_method="mpc"),
                Simulator(workers=1))
            first = first or r
            out.append(round(r.u_hat * r.edges * 2 ** r.precision["frac_bits"]))
        views.append(np.array(out, dtype=np.int64))
    eps, _ = threshold_audit(views[1], views[0])       # the second sample is the larger query
    return {"dp_audit_releases_eps_lower": eps,
            "dp_audit_releases_eps_claimed": first.aux["noise"]["u"]["epsilon"],
            "dp_audit_releases": releases}


def noise_metrics(quick: bool) -> dict:
    out = {}
    R = 200 if quick else 4000
    for tm in ("dis", "hf"):
        mpc = variance_ratio(tm, "mpc", R)
        polya = variance_ratio(tm, "polya", max(50, R // 4))
        out[f"noise_variance_ratio_{tm}"] = mpc["ratio"]
        out[f"noise_variance_ratio_{tm}_polya"] = polya["ratio"]
        out[f"noise_variance_ratio_{tm}_polya_factor"] = polya["factor"]
    out["noise_variance_releases"] = R
    if os.path.exists(BANK):
        out.update(bank_central_law(20 if quick else 2000))
        out.update(bank_noise_step())
    out.update(chi2_secure_draws(10**4 if quick else 10**6))
    out.update(audit(10**4 if quick else 10**5))
    out.update(release_audit(500 if quick else 5000))
    return out


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    emit(noise_metrics(args.quick), args.json)


if __name__ == "__main__":
    main()
