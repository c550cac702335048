"""Throughput of oblivious transfer (mpc.ot): base OT, IKNP extension, many pairs.

Usage: ``python benchmarks/ot.py [--json] [--quick]``

Measures in one run (single process, one core; the simulated network counts
bits but does not delay):

- ``ot_ext_per_s``: random OTs (16-byte messages) between one pair by IKNP,
  base OTs included (end to end, 10^6 OTs; 2^16 with --quick), and
  ``ot_ext_per_s_excl_base``: the extension alone (PRG, matrix, transposes,
  hash) on precomputed base-OT keys;
- ``cot_per_s``: correlated OTs with one delta (the free-XOR input labels),
  base OTs included; ``chosen_ot_per_s``: chosen-message OTs (16 bytes);
- ``base_ot_per_s``: Chou-Orlandi base OTs on the default curve backend
  (and on the pycryptodome P-256 fallback);
- ``many_pairs``: correlated OT for 2 x 10^4 distinct pairs x 40 OTs (500 with
  --quick): seconds, OTs/s, method chosen, bits per OT;
- ``crossover``: seconds per pair of direct base OTs versus IKNP at several
  OTs per pair, and the measured crossover;
- ``bits_per_ot`` from the network's counts;
- peers: the PyPI package ``otc`` (Chou-Orlandi over ristretto255, one OT per
  call) when installed, with the ratio; no OT-extension library with Python
  bindings installs from PyPI, so the published emp-ot figures are quoted.

Times are medians of ``repeat`` (>= 3) warm runs; the first (cold) run of the
10^6 extension is reported apart. ``measure(quick)`` returns the dict
(benchmarks/gc.py imports it); ``--json`` prints it as one JSON object.
"""

from __future__ import annotations

import functools
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from mpc.arith.rng import CSPRNG
from mpc.ot import DEFAULT_CROSSOVER, available_groups, base_ot, chosen_ot, correlated_ot, random_ot
from mpc.ot.iknp import KAPPA, Layout, receiver_matrix, rows, sender_matrix
from mpc.ot.prg import hash_rows
from mpc.session import Session

PUBLISHED = {
    "source": "emp-ot README, Performance section (v1.0.0-alpha.1): two AWS m8a.8xlarge "
              "(Zen 5), one thread per party, 9.5 Gbps link",
    "iknp_semi_honest_rcot_per_s": 73e6,
    "iknp_bits_per_rcot": 127,
    "co_128_base_ots_seconds": 0.010,
    "note": "C++ with AES-NI on a real network (link-bound); quoted, not measured here",
}


def _log(*a):
    print(*a, file=sys.stderr, flush=True)


def _timed(fn, repeat):
    """(cold seconds, median warm seconds, last result): one cold call then ``repeat`` warm."""
    t = time.perf_counter()
    res = fn()
    cold = time.perf_counter() - t
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        res = fn()
        times.append(time.perf_counter() - t)
    return cold, statistics.median(times), res


def _streams(*tag):
    root = CSPRNG().derive("bench-ot", *tag)
    return root.derive("sender"), root.derive("receiver")


def _delta(rng, P):
    d = rng.bytes_array(16 * P).reshape(P, 16)
    d[:, 0] |= 1
    return d


def bench_single_pair(n, repeat):
    """Random, correlated and chosen OT between one pair (IKNP), base OTs included."""
    rs, rr = _streams("pair")
    c = rr.bits((1, n))
    out = {"n": n}
    s = Session(2)

    def rot():
        s.net.reset()
        return random_ot(s, [0], [1], c, rng_sender=rs, rng_receiver=rr, method="iknp")

    cold, warm, (m0, m1, mc) = _timed(rot, repeat)
    assert np.array_equal(mc, np.where(c[..., None] == 1, m1, m0))
    out.update(ot_ext_per_s=n / warm, ot_ext_cold_s=cold, ot_ext_warm_s=warm,
               random_bits_per_ot=s.net.report()["total_bits"] / n)
    d = _delta(rs, 1)

    def cot():
        s.net.reset()
        return correlated_ot(s, [0], [1], c, d, rng_sender=rs, rng_receiver=rr)

    _, warm, (q, t) = _timed(cot, repeat)
    assert np.array_equal(t, q ^ c[..., None] * d[:, None])
    out.update(cot_per_s=n / warm, cot_bits_per_ot=s.net.report()["total_bits"] / n)
    x0 = rs.bytes_array(16 * n).reshape(1, n, 16)
    x1 = rs.bytes_array(16 * n).reshape(1, n, 16)

    def chosen():
        s.net.reset()
        return chosen_ot(s, [0], [1], c, x0, x1, rng_sender=rs, rng_receiver=rr)

    _, warm, got = _timed(chosen, repeat)
    assert np.array_equal(got, np.where(c[..., None] == 1, x1, x0))
    out.update(chosen_ot_per_s=n / warm, chosen_bits_per_ot=s.net.report()["total_bits"] / n)
    return out


def bench_extension_only(n, repeat):
    """IKNP on precomputed base-OT keys: both parties' PRG, matrix, transposes, hashes."""
    rng = CSPRNG()
    k = rng.bytes_array(3 * KAPPA * 16).reshape(3, 1, KAPPA, 16)
    s_bits = rng.bits((1, KAPPA))
    ks = np.where(s_bits[0, :, None] == 1, k[1, 0], k[0, 0])[None]
    r = rng.bits(n)
    idx = np.arange(n, dtype=np.uint64)
    s_word = np.packbits(s_bits, axis=1, bitorder="little").view(np.uint64)

    def run():
        layout = Layout(np.array([n]))
        t_mat, u = receiver_matrix(k[0], k[1], r, layout)
        q = rows(sender_matrix(ks, s_bits, u, layout), layout)
        t = rows(t_mat, layout)
        qw = q.view(np.uint64)
        return hash_rows(qw, idx), hash_rows(qw, idx, offset=s_word), hash_rows(
            t.view(np.uint64), idx)

    _, warm, (h0, h1, hc) = _timed(run, repeat)
    assert np.array_equal(hc[r == 1], h1[r == 1]) and np.array_equal(hc[r == 0], h0[r == 0])
    return n / warm


def bench_base(n, repeat):
    out = {}
    for name in available_groups():
        m = n if name == "secp256k1" else max(16, n // 8)
        rs, rr = _streams("base", name)
        c = rr.bits((1, m))
        s = Session(2)
        _, warm, _ = _timed(functools.partial(base_ot, s, [0], [1], c, rng_sender=rs,
                                              rng_receiver=rr, group=name), repeat)
        out[name] = m / warm
        if name == available_groups()[0]:           # chosen 16-byte OTs, as otc does them
            x = rs.bytes_array(16 * m).reshape(1, m, 16)
            _, warm, _ = _timed(functools.partial(chosen_ot, s, [0], [1], c, x, x, rng_sender=rs,
                                                  rng_receiver=rr, method="base"), repeat)
            out["chosen_direct"] = m / warm
    return out


def bench_many_pairs(pairs, m, repeat):
    """Correlated OT between ``pairs`` distinct (sender, receiver) pairs, m OTs each."""
    n_parties = 2 * pairs
    snd = np.arange(pairs, dtype=np.int64)
    rcv = snd + pairs
    rs, rr = _streams("many")
    c = rr.bits((pairs, m))
    d = _delta(rs, pairs)
    s = Session(n_parties)

    def run():
        s.net.reset()
        return correlated_ot(s, snd, rcv, c, d, rng_sender=rs, rng_receiver=rr)

    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        q, tt = run()
        times.append(time.perf_counter() - t)
    assert np.array_equal(tt, q ^ c[..., None] * d[:, None])
    sec = statistics.median(times)
    rep = s.net.report()
    return {"pairs": pairs, "ots_per_pair": m, "seconds": sec, "ots_per_s": pairs * m / sec,
            "method": "base (Chou-Orlandi)" if m < DEFAULT_CROSSOVER else "iknp",
            "bits_per_ot": rep["total_bits"] / (pairs * m), "rounds": rep["online"]["rounds"]}


def bench_crossover(ms, pairs, repeat):
    """Seconds per pair for direct base OTs and for IKNP at each M in ``ms``."""
    base_t, iknp_t = [], []
    snd = np.arange(pairs, dtype=np.int64)
    for M in ms:
        rs, rr = _streams("cross", M)
        c = rr.bits((pairs, M))
        d = _delta(rs, pairs)
        for method, acc in (("base", base_t), ("iknp", iknp_t)):
            s = Session(2 * pairs)
            times = []
            for _ in range(repeat):
                t = time.perf_counter()
                correlated_ot(s, snd, snd + pairs, c, d, rng_sender=rs, rng_receiver=rr,
                              method=method)
                times.append(time.perf_counter() - t)
            acc.append(statistics.median(times) / pairs)
    first = next((M for M, b, i in zip(ms, base_t, iknp_t) if i <= b), None)
    # Straight lines through the points: base ~ a_b M + c_b, IKNP ~ a_i M + c_i.
    (a_b, c_b), (a_i, c_i) = np.polyfit(ms, base_t, 1), np.polyfit(ms, iknp_t, 1)
    fitted = (c_i - c_b) / (a_b - a_i) if a_b > a_i else None
    return {"ots_per_pair": list(ms), "base_s_per_pair": base_t, "iknp_s_per_pair": iknp_t,
            "first_m_where_iknp_is_faster": first, "fitted_crossover": fitted,
            "default_crossover": DEFAULT_CROSSOVER}


def bench_otc(n, repeat):
    """The PyPI ``otc`` package (CO over ristretto255): chosen OTs of 16 bytes, one per call."""
    try:
        import otc
    except ImportError:
        return None
    import importlib.metadata as md
    msgs = [(os.urandom(16), os.urandom(16)) for _ in range(n)]
    bits = [i & 1 for i in range(n)]

    def run():
        ok = 0
        for (x0, x1), b in zip(msgs, bits):
            snd, rcv = otc.send(), otc.receive()
            q = rcv.query(snd.public, b)
            got = rcv.elect(snd.public, b, *snd.reply(q, x0, x1))
            ok += got == (x1 if b else x0)
        return ok

    _, warm, ok = _timed(run, repeat)
    assert ok == n
    return {"chosen_ot_per_s": n / warm, "version": md.version("otc")}


def measure(quick: bool = False, *, repeat: int = 3, pairs: int | None = None) -> dict:
    """Run every measurement; returns one JSON-serializable dict (module docstring)."""
    repeat = max(3, int(repeat))
    n = 1 << 16 if quick else 10 ** 6
    pairs = pairs if pairs is not None else (500 if quick else 20_000)
    res = {"quick": quick, "repeat": repeat, "python": platform.python_version(),
           "machine": platform.machine(), "base_ot_group": available_groups()[0]}
    _log(f"single pair, {n} OTs ...")
    res.update(bench_single_pair(n, repeat))
    res["ot_ext_per_s_excl_base"] = bench_extension_only(n, repeat)
    _log("base OTs ...")
    base = bench_base(256 if quick else 2048, repeat)
    res["chosen_base_ot_per_s"] = base.pop("chosen_direct")
    res["base_ot_per_s"] = base[res["base_ot_group"]]
    res["base_ot_per_s_by_group"] = base
    _log("crossover ...")
    res["crossover"] = bench_crossover([64, 128, 192] if quick else [64, 96, 128, 160, 192, 256],
                                       2 if quick else 4, repeat)
    _log(f"many pairs: {pairs} x 40 ...")
    res["many_pairs"] = bench_many_pairs(pairs, 40, repeat)
    res["bits_per_ot"] = {"iknp_random": res.pop("random_bits_per_ot"),
                          "iknp_correlated": res.pop("cot_bits_per_ot"),
                          "iknp_chosen_16B": res.pop("chosen_bits_per_ot"),
                          "direct_correlated_40_per_pair": res["many_pairs"]["bits_per_ot"]}
    _log("peers ...")
    peer = bench_otc(200 if quick else 1000, repeat)
    res["peer_otc"] = peer
    res["ratio_chosen_base_ot_ours_over_otc"] = (
        res["chosen_base_ot_per_s"] / peer["chosen_ot_per_s"] if peer else None)
    res["published_emp_ot"] = PUBLISHED
    res["ratio_ot_ext_ours_over_emp_published"] = (res["ot_ext_per_s"]
                                                   / PUBLISHED["iknp_semi_honest_rcot_per_s"])
    return res


def main(argv=None):
    import argparse
    import json
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    ap.add_argument("--quick", action="store_true", help="small sizes: finish in seconds")
    ap.add_argument("--repeat", type=int, default=3, help="warm repeats (>= 3), median kept")
    ap.add_argument("--pairs", type=int, default=None, help="pairs in the many-pairs case")
    args = ap.parse_args(argv)
    res = measure(args.quick, repeat=args.repeat, pairs=args.pairs)
    if args.json:
        print(json.dumps(res, sort_keys=True))
    else:
        for k, v in res.items():
            print(f"{k:<36} {v}")


if __name__ == "__main__":
    main()
