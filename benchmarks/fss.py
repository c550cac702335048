"""Throughput of the FSS layer: DCF key generation / evaluation, the AES bound, the gates.

Usage: ``python benchmarks/fss.py [--json] [--quick] [--batch-log2 K] [--repeat R]``

Measures in one run, on the same batch and domain (n = 32 input bits,
l = 40 output bits):
  - the AES-ECB rate of pycryptodome on large calls (2^20 blocks), sampled
    next to every timed operation (``aes_ecb_blocks_per_s``: the median), and
    the AES bound of DCF Gen / Eval = rate / AES blocks per operation (read
    from the code: 8 n per key pair, 2 n per point); our share of it, one
    worker (``dcf_*_aes_bound_share``); and the same share of the compiled
    kernels' own AES rate (``compiled_aes_blocks_per_s``, best of 16-64 blocks in flight,
    ``aes_vector_blocks`` blocks per instruction: 4 with VAES on 512-bit
    registers, which pycryptodome does not use, so the first share can exceed
    1; ``dcf_*_compiled_aes_bound_share``);
  - our DCF key generation and evaluation (keys/s, points/s): one worker
    (the ratios below) and all workers (``dcf_*_workers_speedup``), with the
    kernels in use (``fss_kernels``: compiled with AES on the CPU's AES
    instructions, compiled around pycryptodome, or numpy; see fss/kernels/)
    and, as the peer measured in the same run, the numpy kernels
    (``dcf_*_numpy_per_s``, ``dcf_*_speedup_vs_numpy``);
  - the PyPI package ``sycret`` (Rust, LeFactory, 1 thread) when installed:
    raw ratios ours / sycret, ratios with our keys serialized on both sides
    inside the timed calls as sycret's are (``*_ratio_serialized``: keys made
    by ``dcf.gen_bytes``, which writes them straight into the wire format,
    and read by ``from_bytes``; ``keygen_then_to_bytes_ratio``: ``gen``
    followed by ``to_bytes`` of both keys), and
    evaluation at 1 and 64 keys per call (``eval_ratio_batch1/64``);
  - the key sizes, and the less-than gate end to end (dealer + online, two
    parties, l = 40) with its online bits and rounds and its offline bits
    (serialized keys) from the network.
  - the same DCF and sycret figures again, in the same process, after
    ``mpc.machine.memory.retain_freed_memory()`` (what the ``ustat`` command line
    does; keys ending in ``_retained``, ``memory_policy``): fresh pages cost
    about 0.6 s per GB on a virtual machine, which the first set pays on
    every large call (measured last, since the setting is process-wide;
    ``--skip-retained`` skips it).
The machine may be shared: ``load_avg_start``/``load_avg_end`` (1-minute load
average) say how busy it was. Every timing is the median of ``--repeat`` (>= 3) warm runs;
the first, cold run (fresh arrays, thread pool start) is reported apart (``*_cold_*``).
``--json`` prints one JSON object on stdout; progress goes to stderr.
``--quick`` uses 2^14 instances and finishes in seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from benchmarks._common import cold_and_warm
from fss import _pool, dcf, dpf, gates, kernels, prg
from mpc.arith.rng import CSPRNG
from mpc.arith.sharing import additive_share
from mpc.session import Session

N_BITS, L_BITS = 32, 40
AES_SAMPLES: list = []


def _log(*a):
    print(*a, file=sys.stderr, flush=True)


def aes_rate(blocks: int = 1 << 20) -> float:
    """AES-ECB blocks per second of one large pycryptodome call (one sample, recorded)."""
    buf = np.zeros((blocks, 2), dtype=np.uint64)
    out = np.empty_like(buf)
    prg.PI.cipher.encrypt(memoryview(buf).cast("B"), output=memoryview(out).cast("B"))
    t = time.perf_counter()
    prg.PI.cipher.encrypt(memoryview(buf).cast("B"), output=memoryview(out).cast("B"))
    rate = blocks / (time.perf_counter() - t)
    AES_SAMPLES.append(rate)
    return rate


def compiled_aes_rate(repeat: int = 5) -> float | None:
    """Blocks per second of the compiled kernels' own AES (the best of 16, 32 and 64 blocks in
    flight, in cache, one core; medians of ``repeat``), or None without the compiled AES kernels.

    The shares ``dcf_*_aes_bound_share`` use pycryptodome's AES-ECB rate as the issue
    defines; the compiled kernels may use wider AES instructions (VAES) than pycryptodome,
    so ``dcf_*_compiled_aes_bound_share`` also reports the share of this faster bound.
    """
    if "aesni" not in kernels.available():
        return None
    from numba import njit

    from fss.kernels import aesni

    rk = prg.round_keys(prg.PI.key)
    best = 0.0
    for K in (16, 32, 64):                 # blocks in flight; the bound is the fastest
        mmo = aesni.make_mmo(K)

        @njit(nogil=True)
        def loop(rk, S, it, mmo=mmo):
            for _ in range(it):
                mmo(rk, S)

        S = np.arange(2 * K, dtype=np.uint64).reshape(K, 2).copy()
        loop(rk, S, 10)
        it, rates = (1 << 21) // K, []
        for _ in range(repeat):
            t = time.perf_counter()
            loop(rk, S, it)
            rates.append(K * it / (time.perf_counter() - t))
        best = max(best, statistics.median(rates))
    return best


def _aesni_width() -> int | None:
    """AES blocks per instruction of the compiled kernels (4: VAES on 512-bit registers)."""
    if "aesni" not in kernels.available():
        return None
    from fss.kernels import aesni

    return aesni.WIDTH


def _timed(fn, repeat):
    """(cold seconds, median warm seconds, result, AES rate around the runs)."""
    a0 = aes_rate()
    cold, warm, res = cold_and_warm(fn, repeat)
    return cold, warm, res, statistics.median([a0, aes_rate()])


def bench_dcf(B, repeat, rng, workers):
    p = dcf.DCFParams(N_BITS, L_BITS)
    alpha = rng.uint64(B) >> np.uint64(64 - N_BITS)
    x = rng.uint64(B) >> np.uint64(64 - N_BITS)
    gc, gw, (k0, k1), ga = _timed(lambda: dcf.gen(p, alpha, 1, rng, workers=workers), repeat)
    ec, ew, y0, ea = _timed(lambda: dcf.eval(p, 0, k0, x, workers=workers), repeat)
    y1 = dcf.eval(p, 1, k1, x, workers=workers)
    ok = bool(np.array_equal((y0 + y1) & np.uint64((1 << L_BITS) - 1),
                             (x < alpha).astype(np.uint64)))
    out = {"keygen_per_s": B / gw, "eval_per_s": B / ew, "keygen_cold_per_s": B / gc,
           "eval_cold_per_s": B / ec, "correct": ok,
           "keygen_share": (B / gw) / (ga / (8 * N_BITS)),
           "eval_share": (B / ew) / (ea / (2 * N_BITS))}
    # serialized on both sides (sycret returns and takes serialized keys): gen_bytes, what a
    # dealer that sends its keys calls, and (reported apart) gen followed by to_bytes
    _, sg, (b0, b1), _ = _timed(lambda: dcf.gen_bytes(p, alpha, 1, rng, workers=workers), repeat)
    _, st, bt, _ = _timed(lambda: [dcf.to_bytes(k) for k in dcf.gen(p, alpha, 1, rng,
                                                                      workers=workers)], repeat)
    _, se, _, _ = _timed(lambda: dcf.eval(p, 0, dcf.from_bytes(b0), x, workers=workers), repeat)
    same = _same_keys(p, alpha, b0, b1) and _same_keys(p, alpha, *bt)
    out.update(keygen_serialized_per_s=B / sg, keygen_then_to_bytes_per_s=B / st,
               eval_serialized_per_s=B / se, correct=ok and same)
    return out, (p, k0, x)


def _same_keys(p, alpha, b0, b1) -> bool:
    """Whether serialized keys parse and compute [x < alpha] on a sample of points."""
    k0, k1 = dcf.from_bytes(b0), dcf.from_bytes(b1)
    idx = np.arange(0, k0.batch, max(1, k0.batch // 4096))
    k0s, k1s = (k.take(idx) for k in (k0, k1))
    xs = alpha[idx] ^ np.uint64(1)                      # next to alpha: both sides of it
    y = (dcf.eval(p, 0, k0s, xs) + dcf.eval(p, 1, k1s, xs)) & np.uint64((1 << L_BITS) - 1)
    return bool(np.array_equal(y, (xs < alpha[idx]).astype(np.uint64)))


def bench_small(p, k0, x, size, calls, repeat):
    """Evaluations per second at ``size`` keys per call."""
    keys = [dcf.from_bytes(dcf.to_bytes(k0.take(slice(j * size, (j + 1) * size))))
            for j in range(calls)]
    xs = [x[j * size:(j + 1) * size] for j in range(calls)]

    def run():
        for k, xx in zip(keys, xs):
            dcf.eval(p, 0, k, xx)

    _, w, _ = cold_and_warm(run, repeat)
    return size * calls / w


def bench_sycret(B, repeat, small_calls):
    try:
        import sycret
    except ImportError:
        return None
    fac = sycret.LeFactory(n_threads=1)
    x = (np.frombuffer(os.urandom(4 * B), dtype=np.uint32)).astype(np.int64)
    _, tg, (ka, _kb) = cold_and_warm(lambda: fac.keygen(B), repeat)
    _, te, _ = cold_and_warm(lambda: fac.eval(0, x, ka, n_threads=1), repeat)
    out = {"keygen_per_s": B / tg, "eval_per_s": B / te, "key_bytes": int(fac.key_len),
           "version": getattr(sycret, "__version__", None)}
    for size, calls in ((1, small_calls), (64, max(1, small_calls // 16))):
        calls = min(calls, B // size)

        def run(calls=calls, size=size):
            for j in range(calls):
                fac.eval(0, x[j * size:(j + 1) * size], ka[j * size:(j + 1) * size], n_threads=1)

        _, w, _ = cold_and_warm(run, repeat)
        out[f"eval_batch{size}_per_s"] = size * calls / w
    return out


def bench_gate(name, B, l, repeat, fn):
    rates, rep, res = [], None, None
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
        f"{name}_per_s": statistics.median(rates),
        f"{name}_online_bits_per_party": online["max_party_sent_bits"] / B,
        f"{name}_online_sent_plus_received_bits_per_party": online["max_party_bits"] / B,
        f"{name}_online_rounds": online["rounds"],
        f"{name}_offline_bits_per_instance": offline["bits"] / B,
        f"{name}_offline_rounds": offline["rounds"],
    }, (xv, yv, res)


def retained_memory(B, repeat, small_calls) -> dict:
    """DCF and sycret again with freed memory kept for reuse (``mpc.machine.memory``, what the
    ``ustat`` command line does), both sides in the same process state: keys ending in
    ``_retained``."""
    from mpc.machine.memory import policy, retain_freed_memory

    _log("DCF and sycret with freed memory retained (mpc.machine.memory) ...")
    if not retain_freed_memory():
        return {"memory_retained": False, "memory_policy": policy()}
    ours, _ = bench_dcf(B, repeat, CSPRNG(), 1)
    sy = bench_sycret(B, repeat, small_calls)
    out = {"memory_retained": True, "memory_policy": policy(),
           "dcf_keygen_per_s_retained": ours["keygen_per_s"],
           "dcf_eval_per_s_retained": ours["eval_per_s"],
           "dcf_keygen_serialized_per_s_retained": ours["keygen_serialized_per_s"],
           "dcf_eval_serialized_per_s_retained": ours["eval_serialized_per_s"],
           "dcf_keygen_aes_bound_share_retained": ours["keygen_share"],
           "dcf_eval_aes_bound_share_retained": ours["eval_share"]}
    if sy:
        out.update(sycret_keygen_per_s_retained=sy["keygen_per_s"],
                   sycret_eval_per_s_retained=sy["eval_per_s"],
                   keygen_ratio_retained=ours["keygen_per_s"] / sy["keygen_per_s"],
                   eval_ratio_retained=ours["eval_per_s"] / sy["eval_per_s"],
                   keygen_ratio_serialized_retained=ours["keygen_serialized_per_s"]
                   / sy["keygen_per_s"],
                   eval_ratio_serialized_retained=ours["eval_serialized_per_s"] / sy["eval_per_s"])
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    ap.add_argument("--quick", action="store_true", help="small batch, finishes in seconds")
    ap.add_argument("--batch-log2", type=int, default=None,
                    help="batch = 2^K (default 20, quick 14)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="warm runs per timing, median (default 3)")
    ap.add_argument("--skip-retained", action="store_true",
                    help="skip the re-measurement with freed memory retained (the *_retained keys)")
    args = ap.parse_args(argv)
    k = args.batch_log2 if args.batch_log2 is not None else (14 if args.quick else 20)
    if not 1 <= k <= 24:
        ap.error("--batch-log2 must be in 1..24")
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    B = 1 << k
    rng = CSPRNG()
    cores = _pool.cpu_count()
    out = {"batch": B, "domain_bits": N_BITS, "out_bits": L_BITS, "threads": 1,
           "workers_all": cores, "repeat": args.repeat, "python": platform.python_version(),
           "numpy": np.__version__, "load_avg_start": os.getloadavg()[0]}

    _log(f"DCF n={N_BITS} l={L_BITS}, batch 2^{k}, 1 worker ...")
    ours, (p, k0, x) = bench_dcf(B, args.repeat, rng, 1)
    out.update(dcf_keygen_per_s=ours["keygen_per_s"], dcf_eval_per_s=ours["eval_per_s"],
               dcf_keygen_cold_per_s=ours["keygen_cold_per_s"],
               dcf_eval_cold_per_s=ours["eval_cold_per_s"],
               dcf_keygen_serialized_per_s=ours["keygen_serialized_per_s"],
               dcf_keygen_then_to_bytes_per_s=ours["keygen_then_to_bytes_per_s"],
               dcf_eval_serialized_per_s=ours["eval_serialized_per_s"], dcf_correct=ours["correct"],
               dcf_keygen_aes_bound_share=ours["keygen_share"],
               dcf_eval_aes_bound_share=ours["eval_share"],
               dcf_keygen_aes_blocks=8 * N_BITS, dcf_eval_aes_blocks=2 * N_BITS)
    used = kernels.choose("eval", B).name
    out["fss_kernels"] = {"aesni": "numba+aesni", "numba": "numba+pycryptodome"}.get(used, used)
    if used != "numpy":
        _log("DCF, numpy kernels (peer), 1 worker ...")
        with kernels.forced("numpy"):
            npy, _ = bench_dcf(B, args.repeat, rng, 1)
        out["dcf_keygen_numpy_per_s"] = npy["keygen_per_s"]
        out["dcf_eval_numpy_per_s"] = npy["eval_per_s"]
        out["dcf_keygen_speedup_vs_numpy"] = ours["keygen_per_s"] / npy["keygen_per_s"]
        out["dcf_eval_speedup_vs_numpy"] = ours["eval_per_s"] / npy["eval_per_s"]
    _log(f"DCF, {cores} workers ...")
    allw, _ = bench_dcf(B, args.repeat, rng, cores)
    out["dcf_keygen_workers_speedup"] = allw["keygen_per_s"] / ours["keygen_per_s"]
    out["dcf_eval_workers_speedup"] = allw["eval_per_s"] / ours["eval_per_s"]
    small_calls = 256 if args.quick else 2048
    out["dcf_eval_batch1_per_s"] = bench_small(p, k0, x, 1, min(small_calls, B), args.repeat)
    out["dcf_eval_batch64_per_s"] = bench_small(p, k0, x, 64,
                                                max(1, min(small_calls // 16, B // 64)),
                                                args.repeat)

    _log("sycret LeFactory (1 thread) ...")
    sy = bench_sycret(B, args.repeat, small_calls)
    out["sycret_keygen_per_s"] = sy["keygen_per_s"] if sy else None
    out["sycret_eval_per_s"] = sy["eval_per_s"] if sy else None
    out["sycret_key_bits"] = 8 * sy["key_bytes"] if sy else None

    def ratio(a, b):
        return a / b if sy else None

    out["keygen_ratio"] = ratio(ours["keygen_per_s"], sy and sy["keygen_per_s"])
    out["eval_ratio"] = ratio(ours["eval_per_s"], sy and sy["eval_per_s"])
    out["keygen_ratio_serialized"] = ratio(ours["keygen_serialized_per_s"],
                                           sy and sy["keygen_per_s"])
    out["keygen_then_to_bytes_ratio"] = ratio(ours["keygen_then_to_bytes_per_s"],
                                              sy and sy["keygen_per_s"])
    out["eval_ratio_serialized"] = ratio(ours["eval_serialized_per_s"], sy and sy["eval_per_s"])
    out["eval_ratio_batch1"] = ratio(out["dcf_eval_batch1_per_s"], sy and sy["eval_batch1_per_s"])
    out["eval_ratio_batch64"] = ratio(out["dcf_eval_batch64_per_s"],
                                      sy and sy["eval_batch64_per_s"])
    out["aes_ecb_blocks_per_s"] = statistics.median(AES_SAMPLES)
    peak = compiled_aes_rate()
    out["compiled_aes_blocks_per_s"] = peak
    out["aes_vector_blocks"] = _aesni_width()
    for op, blocks in (("keygen", 8 * N_BITS), ("eval", 2 * N_BITS)):
        out[f"dcf_{op}_compiled_aes_bound_share"] = (
            ours[f"{op}_per_s"] / (peak / blocks) if peak else None)

    out["dcf_key_bits"] = dcf.key_bits(dcf.DCFParams(N_BITS, 40))          # n = 32, l = 40
    out["dcf_key_bits_formula"] = "128 + n*(130 + l) + l"
    out["dcf_wire_bits"] = dcf.wire_bits(dcf.DCFParams(N_BITS, 40))
    out["dcf_key_bits_n40_l40"] = dcf.key_bits(dcf.DCFParams(40, 40))
    out["dpf_key_bits_n40_l40"] = dpf.key_bits(dpf.DPFParams(40, 40))

    _log("less-than gate, l=40, two parties, dealer + online ...")
    lt, (xv, yv, res) = bench_gate("lt_gate", B, 40, args.repeat, gates.less_than)
    out.update(lt)
    out["lt_gate_correct"] = bool(np.array_equal(res, (xv < yv).astype(np.uint64)))
    out["lt_gate_key_bits"] = dcf.wire_bits(dcf.DCFParams(39, 40))
    out["lt_gate_key_info_bits"] = dcf.key_bits(dcf.DCFParams(39, 40))
    out["lt_gate_l"] = 40
    Bs = max(B // 4, 1)
    _log("sign and equality gates ...")
    sg, _ = bench_gate("sign_gate", Bs, 40, args.repeat, lambda s, x, y, h: gates.sign(s, x, h))
    eq, _ = bench_gate("eq_gate", Bs, 40, args.repeat, gates.equal)
    out["sign_gate_per_s"] = sg["sign_gate_per_s"]
    out["eq_gate_per_s"] = eq["eq_gate_per_s"]

    if not args.skip_retained:
        out.update(retained_memory(B, args.repeat, small_calls))
    out["load_avg_end"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(out))
    else:
        for key, v in out.items():
            print(f"{key:48s} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
