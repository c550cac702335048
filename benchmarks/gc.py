"""Throughput of the garbled-circuit layer: half-gates garbling, evaluation, Yao 2PC.

Usage: ``python benchmarks/gc.py [--json] [--quick] [--repeat R] [--batch P] [--workers W]
[--memory default|retained]``

Measures in one run (one process, one core unless said):
  - garbling and evaluation of a batch of P = 1000 AES-128 circuits (6400 AND
    gates each): AND gates per second (``and_garbled_per_s``,
    ``and_evaluated_per_s``), cold (first call) and warm (median of R);
  - the same batch on both cores (``--workers``, default 2): garbling and
    evaluation on that many threads (``garble_threads_speedup``,
    ``evaluate_threads_speedup``) and garbling on that many forked processes
    that each garble a share of the instances and send its tables back
    (``garble_processes_speedup``), interleaved with the one-thread runs
    (medians of R, and ``*_paired``: the median of per-repeat ratios), with
    ``garble_workers_identical`` (the same tables and decoding bits from all
    three);
  - one AES-128 evaluation by Yao's protocol end to end, OT included, between
    two simulated parties (``aes128_2pc_seconds``, cold and warm), with its
    measured bits and rounds;
  - 10^6 random OTs by ``mpc.ot.random_ot`` between one pair
    (``ot_ext_per_s``; null if the OT module is missing);
  - 40-bit signed comparisons by Yao end to end, batch 10^5 (``gc_lt40_per_s``);
  - ``bits_per_and`` measured from the tables the network carried;
  - U-MPC k = 2 Gini (``run_umpc``, epsilon 1, M_HF noise, edges 2n,
    workers 1) with ``backend="gc"`` next to ``backend="dealer"`` on the same
    records and seed (``umpc_gini_gc_*`` / ``umpc_gini_dealer_*``): seconds
    (cold, median warm), online/offline bits (and per edge in the computing
    phase), rounds, the gc/dealer ratios, the base OTs' share of the gc time
    and a linear extrapolation to ``--umpc-target`` parties (10^5; measured
    at ``--umpc-n``, 3000 by default, because the base OTs make 10^5 take
    a quarter of an hour or more per run on one core; ``--umpc-widths``
    forces the ring widths, e.g. ``40,14,14``; ``--umpc-n 100000
    --umpc-gc-repeat 0`` measures 10^5 itself, the gc side by its cold run).
``--memory retained`` first calls ``mpc.machine.memory.retain_freed_memory()`` (as the
``ustat`` command does): garbling writes 256 bits of tables per AND gate and
instance (205 MB for the AES batch) on fresh pages otherwise, and two threads
faulting pages in at once slow each other (``memory`` in the JSON says which).
Rates are from wall-clock medians; the ``*_cpu_s`` variants divide by this
process's CPU time (it is single-threaded), which a shared, loaded machine
does not distort; the load average is recorded at start and end.
No garbled-circuit library with native Python bindings installs from PyPI
(``gabes`` 0.1.5 and ``pysecurecircuit`` 0.0.4 are pure-Python per-gate
teaching code driven over sockets), so the published figure for fixed-key
half-gates garbling (Gueron, Lindell, Nof, Pinkas, CCS 2015: 10^6 AND gates
in 0.46 s, AES-128 in 16 ms, C++ with AES-NI) is put beside ours with the
ratios. ``--quick`` uses small batches and finishes in seconds. Progress goes
to stderr; ``--json`` prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from concurrent.futures import ProcessPoolExecutor

from _common import cold_and_warm, emit  # adds the repo root to sys.path

from mpc.arith.rng import CSPRNG
from mpc.gc import (
    EVALUATOR,
    GARBLER,
    CircuitBuilder,
    bits_to_int,
    bytes_to_bits,
    decode,
    evaluate_garbled,
    read_bristol,
)
from mpc.gc.garble import garble
from mpc.gc.yao import yao
from mpc.session import Session

CIRCUITS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                         "shared", "data", "circuits"))
PUBLISHED = {"source": "Gueron, Lindell, Nof, Pinkas, CCS 2015 (fixed-key half-gates Yao)",
             "and_gates_per_s": 1e6 / 0.46, "aes128_seconds": 0.016}


def _log(*a):
    print(*a, file=sys.stderr, flush=True)


def _timed(fn, repeat):
    """(cold wall s, median warm wall s, result, median warm CPU s of this process)."""
    cpu = []

    def timed():
        t = time.process_time()
        res = fn()
        cpu.append(time.process_time() - t)
        return res

    cold, warm, res = cold_and_warm(timed, repeat)
    return cold, warm, res, statistics.median(cpu[1:] or cpu)


def _aes_circuit():
    path = os.path.join(CIRCUITS, "aes_128.txt")
    if os.path.exists(path):
        t = time.perf_counter()
        c = read_bristol(path)
        parse = time.perf_counter() - t
        t = time.perf_counter()
        _ = c.schedule              # a cached property: computed (and timed) here
        return c, parse, time.perf_counter() - t
    return None, None, None


def bench_garbling(c, P, repeat, rng):
    keys_b = rng.bytes_array(16 * P).reshape(P, 16)
    pts_b = rng.bytes_array(16 * P).reshape(P, 16)
    kb, pb = bytes_to_bits(keys_b), bytes_to_bits(pts_b)
    g_cold, g_warm, (gc, keys), g_cpu = _timed(lambda: garble(c, P, rng=rng, workers=1),
                                               repeat)
    labels = [keys.encode(0, kb), keys.encode(1, pb)]
    e_cold, e_warm, out, e_cpu = _timed(lambda: evaluate_garbled(gc, labels, workers=1),
                                    repeat)
    from Crypto.Cipher import AES
    ok = all(AES.new(keys_b[i].tobytes(), AES.MODE_ECB).encrypt(pts_b[i].tobytes())
             == bytes(np.packbits(decode(out, keys.decode_bits)[i][::-1]))
             for i in range(min(P, 8)))
    n = c.schedule.n_and * P
    return {"and_garbled_per_s": n / g_warm, "and_garbled_per_s_cold": n / g_cold,
            "and_garbled_per_cpu_s": n / g_cpu,
            "and_evaluated_per_s": n / e_warm, "and_evaluated_per_s_cold": n / e_cold,
            "and_evaluated_per_cpu_s": n / e_cpu,
            "aes_batch": P, "aes_batch_correct": bool(ok)}


_SHARED = {}        # the batch a forked garbling process reads (inherited at fork)


def _garble_span(p0, p1):
    """In a forked process: garble instances p0..p1 of the shared batch on one thread."""
    c, D, zero, tw = (_SHARED[k] for k in ("circuit", "delta", "zero", "tweaks"))
    gc, keys = garble(c, D[p0:p1], input_zero=_groups(c, zero[p0:p1]), tweaks=tw[p0:p1],
                      workers=1)
    return gc.tables, keys.decode_bits


def _groups(c, zero):
    cut = np.cumsum(c.input_widths)[:-1]
    return dict(enumerate(np.split(zero, cut, axis=1)))


def bench_garbling_cores(c, P, repeat, rng, workers):
    """One thread against ``workers`` threads and ``workers`` processes (module docstring)."""
    from mpc.gc.garble import random_delta

    D, zero = random_delta(rng, P), rng.uint64((P, c.n_input_bits, 2))
    tw = np.arange(P, dtype=np.uint64)
    _SHARED.update(circuit=c, delta=D, zero=zero, tweaks=tw)
    bounds = [(i * P // workers, (i + 1) * P // workers) for i in range(workers)]
    labels = list(_groups(c, zero).values())           # evaluate all-zero inputs
    times = {k: [] for k in ("garble_1", "garble_threads", "garble_processes",
                             "evaluate_1", "evaluate_threads")}
    results = {}
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as ex:
        list(ex.map(_garble_span, [0] * workers, [min(P, 8)] * workers))    # start them
        for rep in range(repeat + 1):                                       # rep 0: warm-up
            for name, run in (
                    ("garble_1", lambda: garble(c, D, input_zero=_groups(c, zero), workers=1)),
                    ("garble_threads", lambda: garble(c, D, input_zero=_groups(c, zero),
                                                      workers=workers)),
                    ("garble_processes", lambda: [f.result() for f in [
                        ex.submit(_garble_span, a, b) for a, b in bounds]])):
                t = time.perf_counter()
                results[name] = run()
                if rep:
                    times[name].append(time.perf_counter() - t)
            gc = results["garble_1"][0]
            for name, w in (("evaluate_1", 1), ("evaluate_threads", workers)):
                t = time.perf_counter()
                results[name] = evaluate_garbled(gc, labels, workers=w)
                if rep:
                    times[name].append(time.perf_counter() - t)
    _SHARED.clear()
    parts = results["garble_processes"]
    g1, gt = results["garble_1"], results["garble_threads"]
    identical = (np.array_equal(g1[0].tables, gt[0].tables)
                 and np.array_equal(g1[1].decode_bits, gt[1].decode_bits)
                 and np.array_equal(g1[0].tables, np.concatenate([t for t, _ in parts], axis=2))
                 and np.array_equal(g1[1].decode_bits, np.concatenate([d for _, d in parts]))
                 and np.array_equal(results["evaluate_1"], results["evaluate_threads"]))
    med = {k: statistics.median(v) for k, v in times.items()}
    n = c.schedule.n_and * P
    out = {"garble_workers": workers, "garble_workers_identical": bool(identical),
           "and_garbled_per_s_threads": n / med["garble_threads"],
           "and_garbled_per_s_processes": n / med["garble_processes"],
           "and_evaluated_per_s_threads": n / med["evaluate_threads"],
           "garble_workers_seconds": med}
    for what, one, many in (("garble_threads_speedup", "garble_1", "garble_threads"),
                            ("garble_processes_speedup", "garble_1", "garble_processes"),
                            ("evaluate_threads_speedup", "evaluate_1", "evaluate_threads")):
        out[what] = med[one] / med[many]
        out[f"{what}_paired"] = statistics.median(
            a / b for a, b in zip(times[one], times[many]))
    return out


def bench_aes_2pc(c, repeat):
    key = bytes_to_bits(bytes(range(16)))
    pt = bytes_to_bits(bytes.fromhex("00112233445566778899aabbccddeeff"))
    runs = []

    def one():
        s = Session(2)
        s.workers = 1
        r = yao(s, c, [0], [1], [key], [pt])
        runs.append(r)
        return r

    cold, warm, r, cpu = _timed(one, repeat)
    ct = bytes(np.packbits(r.evaluator[0][0][::-1])).hex()
    m = r.costs["measured"]
    n_and = c.schedule.n_and
    tables = m["offline"]["bits"] - m["ot"]["bits"] - c.n_output_bits
    return {"aes128_2pc_seconds": warm, "aes128_2pc_seconds_cold": cold,
            "aes128_2pc_cpu_seconds": cpu,
            "aes128_2pc_correct": ct == "69c4e0d86a7b0430d8cdb78070b4c55a",
            "aes128_2pc_online_bits": m["online"]["bits"],
            "aes128_2pc_online_rounds": m["online"]["rounds"],
            "aes128_2pc_offline_bits": m["offline"]["bits"],
            "aes128_2pc_offline_rounds": m["offline"]["rounds"],
            "aes128_2pc_ot_bits": m["ot"]["bits"],
            "bits_per_and": tables / n_and}


def bench_ot(n, repeat):
    try:
        from mpc.ot import random_ot
    except ImportError:
        return {"ot_ext_per_s": None, "ot_ext_per_s_cold": None}
    s_rng = CSPRNG()

    def one():
        s = Session(2)
        ch = s_rng.bits((1, n))
        return random_ot(s, [0], [1], ch, rng_sender=s.rng.derive("s"),
                         rng_receiver=s.rng.derive("r"))

    cold, warm, _, cpu = _timed(one, repeat)
    return {"ot_ext_per_s": n / warm, "ot_ext_per_s_cold": n / cold, "ot_ext_per_cpu_s": n / cpu,
            "ot_count": n}


def bench_lt40(P, repeat, rng):
    b = CircuitBuilder("lt40")
    x = b.input(40, party=GARBLER)
    y = b.input(40, party=EVALUATOR)
    b.output(x.lt(y, signed=True))
    c = b.build()
    half = 1 << 39
    xs = rng.integers(2 * half, (P,)) - half
    ys = rng.integers(2 * half, (P,)) - half
    g, e = np.zeros(P, np.int64), np.ones(P, np.int64)
    def one():
        s = Session(2)
        s.workers = 1
        return yao(s, c, g, e, [xs], [ys])

    cold, warm, r, cpu = _timed(one, repeat)
    ok = bool(np.array_equal(bits_to_int(r.evaluator[0]), (xs < ys).astype(np.uint64)))
    m = r.costs["measured"]
    return {"gc_lt40_per_s": P / warm, "gc_lt40_per_s_cold": P / cold,
            "gc_lt40_per_cpu_s": P / cpu, "gc_lt40_batch": P,
            "gc_lt40_correct": ok, "gc_lt40_and_gates": c.schedule.n_and,
            "gc_lt40_online_bits_per_instance": m["online"]["bits"] / P,
            "gc_lt40_offline_bits_per_instance": m["offline"]["bits"] / P,
            "gc_lt40_online_rounds": m["online"]["rounds"]}


def bench_umpc_gini(n, repeat, target, widths=None, gc_repeat=None):
    """U-MPC Gini, backend "gc" versus "dealer" in the same run (module docstring)."""
    from types import SimpleNamespace

    import ustat.kernels as K  # noqa: N812 - the codebase's short capital module alias
    from mpc.ot import base_ot
    from ustat.executors import Simulator
    from ustat.specs import UMPCSpec
    from ustat.umpc import run_umpc
    from ustat.umpc.gc_backend import edge_costs

    X = np.random.default_rng(2026).random((n, 1))
    out, runs = {"umpc_gini_n": n, "umpc_gini_target_n": target}, {}
    for backend in ("dealer", "gc"):
        _log(f"U-MPC Gini, n = {n}, backend {backend} ...")
        spec = UMPCSpec.of("gini", epsilon=1.0, edges="2n", threat_model="hf", seed=11,
                           backend=backend, **(widths or {}))
        cold, warm, res, cpu = _timed(lambda spec=spec: run_umpc(X, spec, Simulator(workers=1)),
            repeat if backend == "dealer" or gc_repeat is None else gc_repeat)
        runs[backend] = res
        comp = res.communication["phases"]["computing"]
        key = f"umpc_gini_{backend}"
        out.update({
            f"{key}_seconds": warm, f"{key}_seconds_cold": cold, f"{key}_cpu_seconds": cpu,
            f"{key}_seconds_per_edge": warm / res.edges,
            f"{key}_online_bits": res.online_bits, f"{key}_offline_bits": res.offline_bits,
            f"{key}_online_rounds": res.rounds,
            f"{key}_offline_rounds": res.communication["offline"]["rounds"],
            f"{key}_computing_online_bits_per_edge": comp["online"]["bits"] / res.edges,
            f"{key}_computing_offline_bits_per_edge": comp["offline"]["bits"] / res.edges,
            f"{key}_computing_online_rounds": comp["online"]["rounds"],
            f"{key}_computing_offline_rounds": comp["offline"]["rounds"],
            f"{key}_max_party_bits": res.max_party_bits,
            f"{key}_trust": res.backend_trust})
    g, d = runs["gc"], runs["dealer"]
    prec = getattr(g, "precision", None) or {"bits": 40, "frac_bits": 14, "input_frac_bits": 14}
    widths = {k: prec[k] for k in ("bits", "frac_bits", "input_frac_bits")}
    out["umpc_gini_precision"] = widths
    out["umpc_gini_edges"] = g.edges
    out["umpc_gini_estimates_equal"] = g.estimate == d.estimate
    for what in ("seconds", "online_bits", "offline_bits", "computing_online_bits_per_edge",
                 "computing_offline_bits_per_edge"):
        out[f"umpc_gini_gc_ratio_{what}"] = (out[f"umpc_gini_gc_{what}"]
                                             / out[f"umpc_gini_dealer_{what}"])
    f = edge_costs(K.get("gini"), SimpleNamespace(**widths))
    out["umpc_gini_gc_and_gates_per_edge"] = f["and_gates"]
    out["umpc_gini_gc_base_ots_per_edge"] = f["base_ots"]
    # base OTs alone: 2000 between one pair (same per-OT cost as one per edge)
    s = Session(2)
    ch = CSPRNG().bits((1, 2000))
    t = time.perf_counter()
    base_ot(s, [0], [1], ch, rng_sender=s.rng.derive("s"), rng_receiver=s.rng.derive("r"))
    rate = 2000 / (time.perf_counter() - t)
    out["umpc_gini_base_ot_per_s"] = rate
    out["umpc_gini_gc_base_ot_share_of_seconds"] = (g.edges * f["base_ots"] / rate
                                                   / out["umpc_gini_gc_seconds"])
    scale = target / n
    out["umpc_gini_gc_extrapolated_seconds_target"] = out["umpc_gini_gc_seconds"] * scale
    out["umpc_gini_dealer_extrapolated_seconds_target"] = out["umpc_gini_dealer_seconds"] * scale
    out["umpc_gini_gc_extrapolated_cpu_seconds_target"] = out["umpc_gini_gc_cpu_seconds"] * scale
    out["umpc_gini_dealer_extrapolated_cpu_seconds_target"] = (out["umpc_gini_dealer_cpu_seconds"]
                                                               * scale)
    out["umpc_gini_gc_ratio_cpu_seconds"] = (out["umpc_gini_gc_cpu_seconds"]
                                             / out["umpc_gini_dealer_cpu_seconds"])
    out["umpc_gini_extrapolation"] = (f"linear in edges (2n) from n = {n} to n = {target}: the "
                                      "gc backend's time is per edge (base OTs), not measured "
                                      "at the target size")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    ap.add_argument("--quick", action="store_true", help="small batches, finishes in seconds")
    ap.add_argument("--repeat", type=int, default=3, help="warm repeats, median (default 3)")
    ap.add_argument("--batch", type=int, default=None, help="AES batch (default 1000, quick 50)")
    ap.add_argument("--umpc-n", type=int, default=None,
                    help="parties of the U-MPC Gini gc-vs-dealer run (default 3000, quick 300)")
    ap.add_argument("--umpc-target", type=int, default=10 ** 5,
                    help="parties the U-MPC figures are extrapolated to (default 10^5)")
    ap.add_argument("--only-umpc", action="store_true", help="only the U-MPC comparison")
    ap.add_argument("--memory", choices=("default", "retained"), default="default",
                    help="glibc's default malloc (as the API gets it) or freed memory retained "
                         "(mpc.machine.memory; what the ustat command does)")
    ap.add_argument("--workers", type=int, default=2,
                    help="threads and processes of the garbling-on-cores figures (default 2)")
    ap.add_argument("--umpc-widths", default=None, metavar="BITS,FRAC,IN_FRAC",
                    help="force the U-MPC ring widths (default: run_umpc's choice per kernel)")
    ap.add_argument("--umpc-gc-repeat", type=int, default=None, metavar="N",
                    help="warm repeats of the gc side (default --repeat; 0: the cold run alone, "
                         "for --umpc-n 100000, which takes a quarter of an hour per run)")
    args = ap.parse_args(argv)
    if args.umpc_gc_repeat is not None and args.umpc_gc_repeat < 0:
        ap.error("--umpc-gc-repeat must be >= 0")
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    if args.workers < 2:
        ap.error("--workers must be >= 2")
    P = args.batch or (50 if args.quick else 1000)
    n_ot = 10 ** 5 if args.quick else 10 ** 6
    n_lt = 10 ** 4 if args.quick else 10 ** 5
    if args.memory == "retained":
        from mpc.machine.memory import retain_freed_memory
        retain_freed_memory()
    rng = CSPRNG()
    out = {"threads": 1, "memory": args.memory, "repeat": args.repeat,
           "python": platform.python_version(),
           "numpy": np.__version__, "published": PUBLISHED, "cpus": os.cpu_count(),
           "load_average_1min_at_start": os.getloadavg()[0]}
    n_umpc = args.umpc_n or (300 if args.quick else 3000)
    widths = None
    if args.umpc_widths:
        try:
            b, f, fi = (int(v) for v in args.umpc_widths.split(","))
        except ValueError:
            ap.error("--umpc-widths must be three integers BITS,FRAC,IN_FRAC")
        widths = {"bits": b, "frac_bits": f, "input_frac_bits": fi}
    if args.only_umpc:
        out.update(bench_umpc_gini(n_umpc, args.repeat, args.umpc_target, widths,
                                   args.umpc_gc_repeat))
        out["load_average_1min_at_end"] = os.getloadavg()[0]
        emit(out, args.json)
        return 0
    c, parse, compile_s = _aes_circuit()
    out["aes128_parse_seconds"], out["aes128_schedule_seconds"] = parse, compile_s
    if c is None:
        _log(f"aes_128.txt not found under {CIRCUITS}: AES figures are null")
    else:
        _log(f"garbling / evaluating {P} AES-128 circuits ...")
        out.update(bench_garbling(c, P, args.repeat, rng))
        _log(f"the same batch on {args.workers} threads and {args.workers} processes ...")
        out.update(bench_garbling_cores(c, P, args.repeat, rng, args.workers))
        _log("AES-128 by Yao end to end (OT included) ...")
        out.update(bench_aes_2pc(c, args.repeat))
        out["ratio_garbled_vs_published"] = out["and_garbled_per_s"] / PUBLISHED["and_gates_per_s"]
        out["ratio_evaluated_vs_published"] = (out["and_evaluated_per_s"]
                                               / PUBLISHED["and_gates_per_s"])
        out["ratio_aes128_time_vs_published"] = (out["aes128_2pc_seconds"]
                                                 / PUBLISHED["aes128_seconds"])
    _log(f"{n_ot} random OTs ...")
    out.update(bench_ot(n_ot, args.repeat))
    _log(f"{n_lt} 40-bit comparisons by Yao ...")
    out.update(bench_lt40(n_lt, args.repeat, rng))
    out.update(bench_umpc_gini(n_umpc, args.repeat, args.umpc_target, widths,
                                   args.umpc_gc_repeat))
    out["load_average_1min_at_end"] = os.getloadavg()[0]
    emit(out, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
