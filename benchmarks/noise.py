"""Throughput of the exact samplers and cost of the distributed noise protocols.

Usage: ``python benchmarks/noise.py [--json] [--quick]``. ``--json`` prints
one JSON object on stdout (progress goes to stderr). Measured, not asserted:

* ``dlap_per_s`` / ``dgauss_per_s``: exact discrete Laplace (scale 2^14) and
  discrete Gaussian (sigma 2^14) samples per second, batch of 10^6;
* ``opendp_dlap_per_s`` / ``opendp_dgauss_per_s``: OpenDP's samplers for the
  same distributions and parameters in the same run (``make_laplace`` /
  ``make_gaussian`` on integer vectors), ``null`` if opendp is missing;
* ``pidlap_1e3_bits`` / ``pidlap_1e3_seconds``: Pi_DLap (Protocol B.1) at
  n = 10^3, bits counted by the network, and its formula n(n-1)l;
* ``committee_1e6_bits`` / ``committee_1e6_seconds``: the M_HF committee
  variant at n = 10^6 (fail = 2^-40, f_H = 1/2), and its formula m(n-1)l.

``--quick`` shrinks the sampler batches (10^5 ours, 10^4 OpenDP) so the run
takes seconds; the protocol sizes are unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

from mpc.arith.rng import CSPRNG
from mpc.session import Session
from noise import distributed as D  # noqa: N812 - the codebase's short capital module alias
from noise import samplers as S  # noqa: N812 - the codebase's short capital module alias

SCALE = 2 ** 14  # fixed-point units of the paper's default c = 14 at epsilon = sensitivity


def _log(msg):
    print(msg, file=sys.stderr, flush=True)


def _rate(fn, batch, repeat=1):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn(batch)
        best = min(best, time.perf_counter() - t)
    return batch / best


def bench_samplers(batch, repeat):
    rng = CSPRNG()
    S.discrete_laplace(SCALE, 1000, rng)      # warm-up (threshold table)
    out = {
        "dlap_per_s": _rate(lambda m: S.discrete_laplace(SCALE, m, rng), batch, repeat),
        "dgauss_per_s": _rate(lambda m: S.discrete_gaussian(SCALE ** 2, m, rng), batch, repeat),
        "dlap_scale1_per_s": _rate(lambda m: S.discrete_laplace(1, m, rng), batch, repeat),
        "polya_1e3_per_s": _rate(lambda m: S.polya(0.001, SCALE, m, rng), batch, repeat),
    }
    return out


def bench_opendp(batch):
    try:
        import opendp.prelude as dp
    except Exception as exc:  # missing or broken install: report null
        _log(f"opendp unavailable: {exc}")
        return {"opendp_dlap_per_s": None, "opendp_dgauss_per_s": None, "opendp_version": None}
    import importlib.metadata as md

    dp.enable_features("contrib")
    lap = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int),
                            scale=float(SCALE))
    gau = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int),
                             scale=float(SCALE))
    zeros = [0] * batch
    return {
        "opendp_dlap_per_s": _rate(lambda m: lap(zeros), batch),
        "opendp_dgauss_per_s": _rate(lambda m: gau(zeros), batch),
        "opendp_version": md.version("opendp"),
    }


def bench_protocol(n, threat_model):
    s = Session(n)
    t = time.perf_counter()
    with s.net.phase("noise"):
        ns = D.shared_dlap_noise(s, 1.0, 1.0, threat_model=threat_model)
    dt = time.perf_counter() - t
    rep = s.net.report()["phases"]["noise"]["online"]
    return ns, rep, dt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    ap.add_argument("--quick", action="store_true", help="small batches: finishes in seconds")
    args = ap.parse_args(argv)
    batch = 10 ** 5 if args.quick else 10 ** 6
    od_batch = 10 ** 4 if args.quick else 10 ** 6
    res = {"quick": args.quick, "batch": batch, "opendp_batch": od_batch,
           "scale": SCALE, "sigma": SCALE, "python": platform.python_version(),
           "numpy": np.__version__}
    _log(f"samplers, batch {batch} ...")
    res.update(bench_samplers(batch, 1 if args.quick else 3))
    _log(f"opendp, batch {od_batch} ...")
    res.update(bench_opendp(od_batch))
    for key in ("dlap", "dgauss"):
        o = res.get(f"opendp_{key}_per_s")
        res[f"{key}_speedup_vs_opendp"] = (res[f"{key}_per_s"] / o) if o else None
    _log("Pi_DLap at n = 10^3 ...")
    ns, rep, dt = bench_protocol(10 ** 3, "dis")
    res.update(pidlap_1e3_bits=rep["bits"], pidlap_1e3_seconds=dt, pidlap_1e3_rounds=rep["rounds"],
               pidlap_1e3_formula_bits=D.pidlap_bits(10 ** 3, 40))
    _log("committee at n = 10^6 ...")
    ns, rep, dt = bench_protocol(10 ** 6, "hf")
    m = int(ns.committee.size)
    res.update(committee_1e6_bits=rep["bits"], committee_1e6_seconds=dt,
               committee_1e6_rounds=rep["rounds"], committee_1e6_size=m,
               committee_1e6_formula_bits=D.committee_bits(10 ** 6, m, 40))
    if args.json:
        print(json.dumps(res))
    else:
        for k, v in res.items():
            print(f"{k:32s} {v}")
    return res


if __name__ == "__main__":
    main()
