"""Throughput of the FSS layer: DCF key generation / evaluation and the less-than gate.

Usage: ``python benchmarks/fss.py [--json] [--quick] [--batch-log2 K] [--repeat R]``

Measures in one run, on the same batch and domain (n = 32 input bits):
  - our DCF (fss.dcf) key generation and evaluation per party (keys/s);
  - the PyPI package ``sycret`` (Rust, LeFactory, 1 thread) when installed,
    and the ratios ours / sycret (null when sycret is missing);
  - the DCF key size for l = 40 (bits per key per party);
  - the less-than gate end to end (dealer + online, two parties, l = 40)
    and its measured online bits per party and rounds (from the network).
``--json`` prints one JSON object on stdout; progress goes to stderr.
``--quick`` uses 2^14 instances and finishes in seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fss import dcf, dpf, gates  # noqa: E402
from mpc.rng import CSPRNG  # noqa: E402
from mpc.session import Session  # noqa: E402
from mpc.sharing import additive_share  # noqa: E402


def _log(*a):
    print(*a, file=sys.stderr, flush=True)


def _best(f, repeat):
    best, res = None, None
    for _ in range(repeat):
        t = time.perf_counter()
        res = f()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best, res


def bench_dcf(B, n, l, repeat, rng):
    params = dcf.DCFParams(n, l)
    alpha = rng.uint64(B) >> np.uint64(64 - n)
    x = rng.uint64(B) >> np.uint64(64 - n)
    t_gen, (k0, k1) = _best(lambda: dcf.gen(params, alpha, 1, rng), repeat)
    t_e0, y0 = _best(lambda: dcf.eval(params, 0, k0, x), repeat)
    t_e1, y1 = _best(lambda: dcf.eval(params, 1, k1, x), repeat)
    ok = bool(np.array_equal((y0 + y1) & np.uint64((1 << l) - 1), (x < alpha).astype(np.uint64)))
    return {"keygen_per_s": B / t_gen, "eval_per_s": 2 * B / (t_e0 + t_e1), "correct": ok}


def bench_sycret(B, repeat):
    try:
        import sycret
    except ImportError:
        return None
    fac = sycret.LeFactory(n_threads=1)
    # same domain (32-bit inputs) and batch; sycret draws alpha itself
    x = (np.frombuffer(os.urandom(4 * B), dtype=np.uint32)).astype(np.int64)
    t_gen, (ka, kb) = _best(lambda: fac.keygen(B), repeat)
    t_e0, _ = _best(lambda: fac.eval(0, x, ka, n_threads=1), repeat)
    t_e1, _ = _best(lambda: fac.eval(1, x, kb, n_threads=1), repeat)
    return {"keygen_per_s": B / t_gen, "eval_per_s": 2 * B / (t_e0 + t_e1),
            "key_bytes": int(fac.key_len), "version": getattr(sycret, "__version__", None)}


def bench_gate(name, B, l, repeat, fn):
    rates, rep = [], None
    for _ in range(repeat):
        s = Session(2, bits=l, seed=None)
        rng = s.rng.derive("bench")
        half = 1 << (l - 2)
        xv = rng.integers(2 * half, (B,)) - half
        yv = rng.integers(2 * half, (B,)) - half
        X = additive_share(s.ring, s.ring.from_signed(xv), 2, rng)
        Y = additive_share(s.ring, s.ring.from_signed(yv), 2, rng)
        h = np.array([0, 1])
        with s.net.phase("computing"):
            t = time.perf_counter()
            out = fn(s, X, Y, h)
            dt = time.perf_counter() - t
        rates.append(B / dt)
        rep = s.net.report()
        res = s.ring.sum(out, axis=0)
    online = rep["phases"]["computing"]["online"]
    offline = rep["phases"]["computing"]["offline"]
    return {
        f"{name}_per_s": max(rates),
        f"{name}_online_bits_per_party": online["max_party_sent_bits"] / B,
        f"{name}_online_sent_plus_received_bits_per_party": online["max_party_bits"] / B,
        f"{name}_online_rounds": online["rounds"],
        f"{name}_offline_bits_per_instance": offline["bits"] / B,
        f"{name}_offline_rounds": offline["rounds"],
    }, (xv, yv, res)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    ap.add_argument("--quick", action="store_true", help="small batch, finishes in seconds")
    ap.add_argument("--batch-log2", type=int, default=None, help="batch = 2^K (default 20, quick 14)")
    ap.add_argument("--repeat", type=int, default=1, help="best of R timings (default 1)")
    args = ap.parse_args(argv)
    k = args.batch_log2 if args.batch_log2 is not None else (14 if args.quick else 20)
    if not 1 <= k <= 24:
        ap.error("--batch-log2 must be in 1..24")
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    B = 1 << k
    n, l_cmp = 32, 32
    rng = CSPRNG()
    out = {"batch": B, "domain_bits": n, "out_bits": l_cmp, "threads": 1,
           "python": platform.python_version(), "numpy": np.__version__}

    _log(f"DCF n={n}, batch 2^{k} ...")
    ours = bench_dcf(B, n, l_cmp, args.repeat, rng)
    out["dcf_keygen_per_s"] = ours["keygen_per_s"]
    out["dcf_eval_per_s"] = ours["eval_per_s"]
    out["dcf_correct"] = ours["correct"]

    _log("sycret LeFactory (1 thread) ...")
    sy = bench_sycret(B, args.repeat)
    out["sycret_keygen_per_s"] = sy["keygen_per_s"] if sy else None
    out["sycret_eval_per_s"] = sy["eval_per_s"] if sy else None
    out["sycret_key_bits"] = 8 * sy["key_bytes"] if sy else None
    out["keygen_ratio"] = ours["keygen_per_s"] / sy["keygen_per_s"] if sy else None
    out["eval_ratio"] = ours["eval_per_s"] / sy["eval_per_s"] if sy else None

    out["dcf_key_bits"] = dcf.key_bits(dcf.DCFParams(n, 40))          # n = 32, l = 40
    out["dcf_key_bits_formula"] = "128 + n*(130 + l) + l"
    out["dcf_key_bits_n40_l40"] = dcf.key_bits(dcf.DCFParams(40, 40))
    out["dpf_key_bits_n40_l40"] = dpf.key_bits(dpf.DPFParams(40, 40))

    _log("less-than gate, l=40, two parties, dealer + online ...")
    lt, (xv, yv, res) = bench_gate("lt_gate", B, 40, args.repeat, gates.less_than)
    out.update(lt)
    out["lt_gate_correct"] = bool(np.array_equal(res, (xv < yv).astype(np.uint64)))
    out["lt_gate_key_bits"] = dcf.key_bits(dcf.DCFParams(39, 40))
    out["lt_gate_l"] = 40
    Bs = max(B // 4, 1)
    _log("sign and equality gates ...")
    sg, _ = bench_gate("sign_gate", Bs, 40, args.repeat, lambda s, x, y, h: gates.sign(s, x, h))
    eq, _ = bench_gate("eq_gate", Bs, 40, args.repeat, gates.equal)
    out["sign_gate_per_s"] = sg["sign_gate_per_s"]
    out["eq_gate_per_s"] = eq["eq_gate_per_s"]

    if args.json:
        print(json.dumps(out))
    else:
        for key, v in out.items():
            print(f"{key:48s} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
