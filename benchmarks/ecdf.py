"""Private ECDF benchmark: FSS server queries, key upload, accuracy, traffic, smoothing.

Prints one JSON object with ``--json`` (``--quick``: small sizes, seconds).

* ``fss_query_seconds_1e5``: one query (one threshold) over 10^5 parties'
  DCF keys, one server's work (batched DCF eval + sum + its noise part), one
  thread; median of warm repeats, the cold first call apart;
  ``fss_queries_per_s_1e5``: queries per second per server in a batch of 32.
* ``key_upload_bits_per_party``: serialized bits a party uploads (one key to
  each of the 2 servers), N = 1024 thresholds, Z_2^32.
* ``mse_vs_theory_ratio``: mean squared noise per point over many releases
  (N = 1024, epsilon = 1) divided by (L + 1) 2a/(1-a)^2; ``_split`` for the
  servers' Polya halves.
* ``comm_{pointwise,fss}_bits_B{1,10,100,1000}``: total measured traffic
  (offline + online) to answer |B| queries with n parties, and the crossover
  |B| predicted by the formulas (FSS cheaper above it).
* ``smooth_{l1,l2,isotonic}_seconds``: problem (3) for N = 10^4 points.
* ``mpc_noise_seconds_N1024`` (median), ``mpc_noise_{offline_bits,offline_rounds}_N1024``,
  ``mpc_noise_delta_N1024``: noise mode "mpc", the two servers sampling the
  2047 node noises of N = 1024, epsilon = 1 inside a dealer-free GMW (OT);
  ``mse_vs_theory_ratio_mpc``: the mean squared path noise of R such trees
  (10 [2]) over the derived MSE (one DLap per node: half of mode "each").
* Coverage of the releases' intervals on Bank, Heart and Diabetes at
  epsilon 0.1, 0.5, 1, 5 (``benchmarks/ecdf_coverage.py``; 200 runs per
  setting): ``ecdf_pointwise_coverage``, ``ecdf_band_coverage``,
  ``quantile_ci_coverage`` (the interpolated quantile's interval),
  ``quantile_grid_ci_coverage`` (rounded up to the grid), ``roc_auc_ci_coverage``,
  ``roc_band_coverage``, ``hl_false_rejection_rate`` (alpha 0.05, calibrated
  labels), the settings each command refuses from public parameters
  (``quantile_refused_settings``, ``roc_refused_settings``,
  ``hl_refused_settings``), and ``ecdf_sensitivity_exact``; each with a
  ``*_by_setting`` breakdown. ``estimate`` (``benchmarks/estimate_coverage.py``):
  ``estimate_ci_coverage_{auc,kendall}`` (the protocol, Bank, eps 1),
  ``estimate_ci_coverage_kendall_ties`` (Kendall on tied synthetic data,
  n = 2000, 5-level columns, eps 1, 200 runs of the release law; target
  within [0.93, 0.99]),
  ``estimate_coverage_by_setting`` (its release law on the three data sets at
  the four epsilons), ``estimate_ci_halfwidth_over_noise_std`` (AUC, hf) and
  ``auc_noise_std_ratio_vs_default`` (the chosen class-count share's noise sd
  over the 0.1 share's, Bank, eps 1). ``--coverage-only`` skips the timings
  (``--coverage-only=releases`` or ``=estimate``: one of the two parts).
  ``--quick`` finishes in seconds: a subset of the sensitivity check (named in
  ``ecdf_sensitivity_checked``), Bank and Heart at epsilon 1 and 5 with a few
  runs: a smoke test, not a measurement.
* Verifiable keys (issue 39, :mod:`ustat.ecdf.keycheck`), N = 1024, Z_2^32:
  ``verify_keys_seconds_1e5``: both servers' check of 10^5 parties' keys
  (each evaluates its keys at the N thresholds and computes its sketch
  shares, then the opening arithmetic), one thread each, run one after the
  other, in one process; ``verify_overhead_ratio``: the two servers' work for
  a verified full-curve release (the check, whose pass also yields the sums
  at every threshold, plus the N answers) over the unverified one (N queries
  over every key), same run (target <= 2); ``verify_extra_rounds``: rounds
  between the servers counted by the network in phase ``ecdf key check``
  (target <= 2; the count sent to the analyst is phase ``ecdf key check
  report``, 1 round); ``malformed_detected_rate``: the share of the corpus of
  ``tests/ustat/ecdf/_keycorpus.py`` (9 kinds, 10 800 keys, N = 100) detected
  or neutralized (target 1.0; ``malformed_neutralized``: those whose values
  on the grid are an honest key's, ``malformed_missed``: target 0);
  ``honest_rejected``: honest keys rejected out of 10^6 (N = 16; target 0);
  ``verify_key_upload_bits_per_party``: a party's upload with the check
  (keys with 64-bit outputs and the triple; ``key_upload_bits_per_party``
  without it).
* Verified Hosmer-Lemeshow contributions (issue 39, :mod:`ustat.ecdf.hl_check`),
  Q = 10 groups, Z_2^48 (kappa = 7): ``hl_input_check_seconds_1e5``: both
  servers' check of 10^5 parties' (4, Q) vectors, one after the other, in one
  process; ``hl_input_check_upload_bits_per_party``: a party's upload to the
  two servers with the check (``hl_sums_upload_bits_per_party`` without it);
  ``hl_input_check_extra_rounds``: rounds between the servers in phase
  ``hl input check`` besides the upload (target <= 2).
Peer: the PyPI package ``sycret`` (Rust DCF, ``LeFactory``, 32-bit inputs, one
thread), when installed, evaluating 10^5 keys at one point each, against our
DCF on the same 32-bit domain (``dcf32_eval_seconds_1e5``, ratio ours/sycret;
the ECDF servers themselves use a log2(N + 2)-bit domain).
"""

from __future__ import annotations

import inspect
import os
import time

import _common  # noqa: F401  (puts the repo on sys.path)
import numpy as np
from _common import emit, parse_args

from fss import dcf
from mpc.arith.rng import CSPRNG
from noise.samplers import discrete_laplace
from ustat.ecdf import Tree, deploy, draw_noise, smooth
from ustat.ecdf.servers import FSSServers, key_upload_bits, make_session, noise_share_ring
from ustat.specs import ECDFSpec

N_GRID = 1024


def _times(fn, repeat):
    """(cold seconds, median warm seconds) of ``fn``."""
    t = time.perf_counter()
    fn()
    cold = time.perf_counter() - t
    warm = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        warm.append(time.perf_counter() - t)
    return cold, sorted(warm)[len(warm) // 2]


def bench_fss(n, repeat):
    g = CSPRNG()
    s = make_session(n, 2, bits=32)
    s.workers = 1
    tree = Tree(N_GRID)
    noise = draw_noise(tree, 1.0, [g, g], mode="each")
    ranks = g.integers(N_GRID + 1, (n,))
    t = time.perf_counter()
    srv = FSSServers.setup(s, ranks, tree, noise)
    keygen = time.perf_counter() - t
    one = np.array([N_GRID // 3])

    def server0(idx):
        return s.ring.add(srv._local_sums(0, idx), noise_share_ring(s, noise, 0, idx))

    cold, warm = _times(lambda: server0(one), repeat)
    batch = np.arange(0, N_GRID, N_GRID // 32)[:32]
    _, wb = _times(lambda: server0(batch), repeat)
    return {"fss_query_seconds_1e5": warm, "fss_query_seconds_1e5_cold": cold,
            "fss_queries_per_s_1e5": batch.size / wb, "fss_keygen_seconds_all_parties": keygen,
            "fss_parties": n}


def bench_verify(n, n_grid):
    """The key check's keys (module docstring): both servers' check and the overhead."""
    from ustat.ecdf import keycheck

    g = CSPRNG()
    tree = Tree(n_grid)
    noise = draw_noise(tree, 1.0, [g, g], mode="each")
    ranks = g.integers(n_grid + 1, (n,))
    everything = np.arange(n_grid)
    secs = {}
    for verify in (False, True):
        s = make_session(n, 2, bits=32)
        s.workers = 1
        srv = FSSServers.setup(s, ranks, tree, noise, verify=verify)
        t = time.perf_counter()
        for b in (0, 1):                              # what the two servers answer
            srv._local_sums(b, everything)
        secs[verify] = time.perf_counter() - t
        if verify:
            rounds = s.net.report()["phases"]["ecdf key check"]["offline"]["rounds"]
            p = srv.params
            kappa = keycheck.sketches(32)
    k = dcf.gen(p, (np.uint64((1 << p.n_bits) - 1) - ranks.astype(np.uint64)), 1, g)
    trip = keycheck.triples(n, kappa, g)
    t = time.perf_counter()
    ok = keycheck.check_pairs(p, k, trip, n_grid, g.uint64((2, 2)), workers=1)
    check = time.perf_counter() - t
    assert ok.all()
    upload = 2 * (key_upload_bits(n_grid, keycheck.OUT_BITS) + 128 * kappa)
    return {"verify_keys_seconds_1e5": check, "verify_parties": n, "verify_grid": n_grid,
            "verify_key_upload_bits_per_party": upload,
            "verify_overhead_ratio": (check + secs[True]) / secs[False],
            "verify_extra_rounds": rounds}


def bench_hl_check(n, groups=10, bits=48):
    """The HL input check (module docstring): both servers' check of n vectors, the upload."""
    from mpc.arith.ring import ring
    from mpc.arith.sharing import additive_share
    from ustat.ecdf import hl_check, keycheck
    from ustat.ecdf.hosmer_lemeshow import FRAC_BITS, _contributions

    g, kappa, secs, step = CSPRNG(), keycheck.sketches(bits), 0.0, min(n, 10_000)
    for _ in range(n // step):                      # batches of 10^4 parties (memory)
        p = g.integers(1 << FRAC_BITS, (step,)) / float(1 << FRAC_BITS)
        contrib, pe = _contributions(p, g.integers(2, (step,)), g.integers(groups, (step,)),
                                     groups)
        up = hl_check.party_upload(contrib, pe, FRAC_BITS, kappa, g)
        shares = additive_share(ring(64), up, 2, g)
        t = time.perf_counter()
        assert hl_check.check_vectors(shares, g.uint64((2, 2)), groups, FRAC_BITS, kappa).all()
        secs += time.perf_counter() - t
    s = make_session(200, 2, bits=bits)
    hl_check.verified_shares(s, contrib[:200], pe[:200], FRAC_BITS, g)
    rounds = s.net.report()["phases"]["hl input check"]["online"]["rounds"] - 1
    return {"hl_input_check_seconds_1e5": secs * 1e5 / (n // step * step),
            "hl_input_check_parties": n // step * step,
            "hl_input_check_upload_bits_per_party": 2 * 64 * shares.shape[2],
            "hl_sums_upload_bits_per_party": 2 * bits * 4 * groups,
            "hl_input_check_extra_rounds": rounds}


def bench_corpus(per_kind, honest_batches):
    """malformed_detected_rate over the corpus, honest_rejected over batches of 250 000."""
    from tests.ustat.ecdf import _keycorpus as kc
    from ustat.ecdf import keycheck

    g = CSPRNG()
    total = caught = neutral = missed = 0
    for rows, trip in kc.corpus(per_kind, 100, 32, g).values():
        v = kc.judge(rows, trip, 100, 32, g)
        total += rows.shape[1]
        caught += int((v["detected"] | v["neutralized"]).sum())
        neutral += int(v["neutralized"].sum())
        missed += int(v["missed"].sum())
    p = kc.params_for(16)
    rejected = 0
    for _ in range(honest_batches):                   # batches of 250 000 honest parties
        ranks = g.integers(17, (250_000,)).astype(np.uint64)
        k = dcf.gen(p, (np.uint64((1 << p.n_bits) - 1) - ranks), 1, g)
        trip = keycheck.triples(250_000, keycheck.sketches(32), g)
        rejected += int((~keycheck.check_pairs(p, k, trip, 16, g.uint64((2, 2)))).sum())
    return {"malformed_detected_rate": caught / total, "malformed_keys": total,
            "malformed_neutralized": neutral, "malformed_missed": missed,
            "honest_rejected": rejected, "honest_checked": 250_000 * honest_batches}


def bench_dcf32(n, repeat):
    """Our DCF eval of n keys at one point each on sycret's 32-bit domain (like for like)."""
    params = dcf.DCFParams(32, 32)
    g = CSPRNG()
    k0, _ = dcf.gen(params, g.integers(1 << 32, (n,)).astype(np.uint64), 1, g)
    x = g.integers(1 << 32, (n,)).astype(np.uint64)
    opts = {"workers": 1} if "workers" in inspect.signature(dcf.eval).parameters else {}
    _, w = _times(lambda: dcf.eval(params, 0, k0, x, **opts), repeat)
    return {"dcf32_eval_seconds_1e5": w}


def bench_sycret(n, repeat):
    try:
        import sycret
    except ImportError:
        return {"peer_sycret_eval_seconds_1e5": None}
    fac = sycret.LeFactory(n_threads=1)
    ka, _ = fac.keygen(n)
    x = np.frombuffer(os.urandom(4 * n), dtype=np.uint32).astype(np.int64)
    _, w = _times(lambda: fac.eval(0, x, ka, n_threads=1), repeat)
    return {"peer_sycret_eval_seconds_1e5": w}


def bench_mse(runs):
    """Mean squared path noise per point over ``runs`` releases (central DLap) and a quarter as
    many with the servers' Polya halves, divided by the derived MSE."""
    t = Tree(N_GRID)
    g = CSPRNG()
    P = t.path(np.arange(N_GRID))
    out = {}
    for mode, R in (("central", runs), ("split", max(1, runs // 4))):
        acc = 0.0
        for done in range(0, R, 100):           # chunks of releases
            k = min(100, R - done)
            if mode == "central":
                nz = draw_noise(t, 1.0, g, mode="central")
                eta = discrete_laplace(nz.scale, (k, t.n_nodes), g)
            else:
                draws = [draw_noise(t, 1.0, [g, g], mode="split") for _ in range(k)]
                nz = draws[0]
                eta = np.stack([d.total for d in draws])
            acc += float(np.sum(eta[:, P].sum(axis=2).astype(np.float64) ** 2))
        key = "mse_vs_theory_ratio" + ("" if mode == "central" else "_split")
        out[key] = acc / (R * N_GRID) / nz.mse_counts
    out["mse_theory_counts_N1024_eps1"] = nz.mse_counts
    out["mse_paper_formula_counts_N1024_eps1"] = 2.0 * (t.levels + 1) ** 3
    out["mse_runs"] = runs
    return out


def bench_mpc_noise(runs):
    from ustat.ecdf.node_noise import draw_noise_mpc

    t = Tree(N_GRID)
    P = t.path(np.arange(N_GRID))
    acc, secs = 0.0, []
    for _ in range(runs):
        s = make_session(2)
        start = time.perf_counter()
        nz = draw_noise_mpc(s, t, 1.0)
        secs.append(time.perf_counter() - start)
        acc += float(np.sum(nz.total[P].sum(axis=1).astype(np.float64) ** 2))
    off = s.net.report()["phases"]["ecdf noise"]["offline"]
    return {"mpc_noise_seconds_N1024": float(np.median(secs)),
            "mpc_noise_offline_bits_N1024": off["bits"],
            "mpc_noise_offline_rounds_N1024": off["rounds"],
            "mpc_noise_delta_N1024": nz.delta,
            "mse_vs_theory_ratio_mpc": acc / (runs * N_GRID) / nz.mse_counts,
            "mse_mpc_runs": runs}


def bench_comm(n, sizes):
    g = CSPRNG()
    x = g.random(n)
    tau = np.linspace(0, 1, N_GRID)
    out = {"comm_parties": n}
    for backend in ("pointwise", "fss"):
        spec = ECDFSpec.of(thresholds=tau, epsilon=1.0, backend=backend)
        for B in sizes:
            dep = deploy(x, spec)
            dep.query(g.integers(N_GRID, (B,)))
            out[f"comm_{backend}_bits_B{B}"] = dep.communication()["total_bits"]
    K = key_upload_bits(N_GRID, 32)
    ib = max(1, (N_GRID - 1).bit_length())
    per_q_pw = n * ib + 2 * n * 32 + 2 * 32
    per_q_fss = 2 * (ib + 32)
    out["comm_crossover_queries"] = 2 * n * K / (per_q_pw - per_q_fss)
    return out


def bench_smooth(N, repeat):
    g = CSPRNG()
    t = Tree(N)
    x = np.sort(g.random(5 * N))
    nz = draw_noise(t, 1.0, g, mode="central")
    F = (np.searchsorted(x, np.linspace(0, 1, N), side="right") + nz.at(np.arange(N))) / x.size
    out = {"smooth_points": N}
    for m in ("l1", "l2", "isotonic"):
        _, w = _times(lambda m=m: smooth(F, t, m), max(1, repeat - 2))
        out[f"smooth_{m}_seconds"] = w
    return out


def main(argv=None):
    import sys

    from ecdf_coverage import coverage_metrics
    argv = list(sys.argv[1:] if argv is None else argv)
    only = [a for a in argv if a.startswith("--coverage-only")]
    args = parse_args(__doc__.splitlines()[0], [a for a in argv if a not in only])
    q = args.quick
    if only:
        part = only[-1].partition("=")[2]
        parts = (part,) if part else ("releases", "estimate")
        if not set(parts) <= {"releases", "estimate"}:
            raise SystemExit("--coverage-only[=releases|=estimate]")
        emit(dict(coverage_metrics(q, parts), quick=q), args.json)
        return
    res = {"quick": q, "grid_thresholds": N_GRID, "ring_bits": 32}
    res.update(bench_fss(100_000, 3 if q else 5))
    res.update(bench_dcf32(100_000, 3))
    res.update(bench_sycret(100_000, 3))
    peer = res["peer_sycret_eval_seconds_1e5"]
    res["peer_sycret_ratio_dcf32"] = res["dcf32_eval_seconds_1e5"] / peer if peer else None
    res["fss_query_target_seconds"] = 0.1
    res["key_upload_bits_per_party"] = 2 * key_upload_bits(N_GRID, 32)
    res.update(bench_verify(10_000 if q else 100_000, N_GRID))
    res.update(bench_corpus(1200, 1 if q else 4))
    res.update(bench_hl_check(10_000 if q else 100_000))
    res.update(bench_mse(200 if q else 2000))
    res.update(bench_comm(1000 if q else 10_000, (1, 10, 100, 1000)))
    res.update(bench_smooth(2000 if q else 10_000, 3))
    res.update(bench_mpc_noise(2 if q else 10))
    res.update(coverage_metrics(q))
    emit(res, args.json)


if __name__ == "__main__":
    main()
