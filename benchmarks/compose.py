"""Protocols composed from secure values, in one process and in several, against MPyC.

Usage: python benchmarks/compose.py [--json] [--quick] [--repeats N] [--no-mpyc]

Two programs, each written once (SPMD) and run by the simulator (one
process holding every party and the dealer) and by separate processes on
loopback sockets (:mod:`mpc.run.launch`):

- a three-party argmax over N = 10^4 instances (:func:`argmax_program`:
  ``session.input``, ``argmax``, ``session.output``), with the three
  parties and the dealer in four processes (``_3proc``: three party
  processes; the dealer has its own, since a dealer in a party's process
  would see that party's masks);
- N = 10^6 comparisons of 32-bit values between two parties, with the
  dealer in a third process (:func:`lt_program`; FSS gates, one online round).

MPyC (if installed) runs the same two programs (``np_argmax`` and ``<`` on
``SecInt(32)`` arrays) with ``-M1`` and with ``-M3`` (three real processes
on loopback); its comparisons are timed on 10^4 values (10^6 would take
about ten minutes) and reported per second. Timings are medians over
``--repeats`` runs; ``*_cold`` is the first run in a fresh interpreter
state (numba loading, first allocations) and reported apart. The
multi-process figures are the slowest process's program time (start-up of
the processes apart: ``*_launch_seconds``, which include each process
loading its compiled kernels while it connects, :mod:`mpc.run.warmup`).

Trust models differ and are reported side by side: ours is semi-honest
with a trusted dealer for preprocessing (Beaver triples, FSS keys) and no
assumption on how many holders are honest (secure against all but one
holder; FSS: against either key holder alone); MPyC's is semi-honest with
an honest majority (Shamir, t = 1 of 3) and no dealer.

The protocols of ``examples/mpc_protocols.py`` (issue 40): the exact median of three
parties' 1,000 integers in three party processes (each party its own, the dealer a fourth;
binary search on the value, and Batcher's sort: ``median_sort_3x1000_seconds_3proc``),
MPyC's ``np_sort`` median with ``-M3``, a Batcher sort of 10^4 values in one process (two
parties, FSS gates), and the relative error of the secure mean and variance of 3,000 values
(64-bit ring, 20 fractional bits).

Keys: argmax_1e4_seconds_1proc (+ _cold), argmax_1e4_seconds_3proc (+ _launch_seconds),
mpyc_argmax_1e4_seconds_m1, mpyc_argmax_1e4_seconds_m3, argmax_program_lines (ours,
protocol lines only, and ``mpyc_argmax_program_lines``), lt_per_s_1proc, lt_per_s_3proc,
mpyc_lt_per_s_m1, mpyc_lt_per_s_m3, lt_ratio_3proc_vs_mpyc_m3 (target >= 100),
argmax_ratio_3proc_vs_mpyc_m3, trust (text), wire bytes of the 3-process runs;
median_3x1000_seconds_3proc, median_sort_3x1000_seconds_3proc,
mpyc_median_3x1000_seconds_m3, median_ratio_3proc_vs_mpyc_m3 (target >= 20),
sort_1e4_seconds_1proc, mean_var_rel_error (``--quick``: 3 x 100 values, a 10^3 sort).
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
from _common import ROOT, emit

import fss
from mpc.protocols.providers import CircuitComparisons
from mpc.run.launch import launch
from mpc.session import Session

#: FSS gates for two holders (one round), the p-party circuit for more
COMPARISONS = (fss.FSSGates(), CircuitComparisons())

GROUPS_ARGMAX = [[0], [1], [2], ["dealer"]]
GROUPS_LT = [[0], [1], ["dealer"]]

sys.path.insert(0, os.path.join(ROOT, "examples"))
import mpc_protocols  # noqa: E402


def argmax_program(rt, data):
    s = Session(3, runtime=rt, roles=("dealer",), comparisons=COMPARISONS)
    x = s.input(data, by=[0, 1, 2], bound=2**31)
    return s.output(x.argmax(axis=0), to=[0, 1, 2])


def lt_program(rt, data):
    s = Session(2, runtime=rt, roles=("dealer",), comparisons=COMPARISONS)
    x = s.input(data, by=[0, 1], bound=2**31)
    return s.output(x[0] < x[1], to=[0, 1])


MPYC_ARGMAX = """
    x = [mpc.input(secint.array(data[i]), senders=i % len(mpc.parties)) for i in range(3)]
    i = mpc.np_argmax(mpc.np_vstack([v.reshape(1, N) for v in x]), axis=0)
    out = await mpc.output(i)
"""

MPYC_MEDIAN = """
    x = [mpc.input(secint.array(data[i]), senders=i % len(mpc.parties)) for i in range(3)]
    y = mpc.np_sort(mpc.np_hstack(x))
    k = 3 * N // 2
    out = await mpc.output(y[k - 1] + y[k])
"""

MPYC_SCRIPT = """
import sys, time
import numpy as np
from mpyc.runtime import mpc

N = int(sys.argv[1]); WHAT = sys.argv[2]

async def main():
    await mpc.start()
    secint = mpc.SecInt(32)
    rng = np.random.default_rng(1)
    data = rng.integers(-2**31, 2**31, size=(3, N))
    t = time.perf_counter()
    if WHAT == "argmax":
{argmax}
        ok = np.array_equal(np.asarray(out).ravel(), np.argmax(data, axis=0))
    elif WHAT == "median":
        data = rng.integers(-10**4, 10**4, size=(3, N))
{median}
        ok = int(out) / 2 == np.median(data)
    else:
        a = mpc.input(secint.array(data[0]), senders=0)
        b = mpc.input(secint.array(data[1]), senders=min(1, len(mpc.parties) - 1))
        out = await mpc.output(a < b)
        ok = np.array_equal(np.asarray(out).ravel().astype(bool), data[0] < data[1])
    dt = time.perf_counter() - t
    if mpc.pid == 0:
        print(f"RESULT {{dt}} {{ok}}", flush=True)
    await mpc.shutdown()

mpc.run(main())
"""


def program_lines(fn) -> int:
    """Lines of a program's body, its session included (MPyC's count leaves out its
    ``mpc.start()``, ``SecInt`` and ``shutdown``)."""
    body = inspect.getsource(fn).splitlines()[1:]
    return len([ln for ln in body if ln.strip()])


def _ours_1proc(program, data, repeats):
    t = time.perf_counter()
    out = program(None, data)
    cold = time.perf_counter() - t
    warm = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = program(None, data)
        warm.append(time.perf_counter() - t)
    return cold, statistics.median(warm), out


def _ours_procs(program, data, groups, repeats):
    runs, launches, wire = [], [], None
    for _ in range(repeats):
        t = time.perf_counter()
        res = launch(program, data, groups=groups, warm_up=[fss.warm_up])
        launches.append(time.perf_counter() - t)
        runs.append(max(r.seconds for r in res))
        wire = {"payload_bytes": sum(r.wire["payload_bytes_sent"] for r in res),
                "header_bytes": sum(r.wire["header_bytes_sent"] for r in res),
                "frames": sum(r.wire["frames_sent"] for r in res)}
        out = next(r.value for r in res if r.value is not None)
    return statistics.median(runs), statistics.median(launches), wire, out


def _mpyc(what, n, parties, repeats, script, *, extra=(), cwd=None, expect=None):
    """Median program time of MPyC with ``parties`` real processes (-M), each given ``extra``
    options, run in ``cwd``; ``expect``: a text party 0 must print (stdout or log), else
    RuntimeError."""
    times = []
    for _ in range(repeats):
        if parties == 1:
            cmds = [[sys.executable, script, str(n), what, "-M1", *extra]]
        else:
            cmds = [[sys.executable, script, str(n), what, f"-M{parties}", f"-I{i}", *extra]
                    for i in range(parties)]
        procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, cwd=cwd) for c in cmds]
        outs = []
        try:
            for p in procs:
                outs.append(p.communicate(timeout=1800))
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
        out, err = outs[0]
        m = re.search(r"RESULT (\S+) (\S+)", out)
        if not m or m.group(2) != "True":
            raise RuntimeError(f"MPyC {what} -M{parties} failed: {(out + err)[-500:]}")
        if expect is not None and expect not in out + err:       # MPyC logs to stdout
            raise RuntimeError(f"MPyC did not print {expect!r}")
        times.append(float(m.group(1)))
    return statistics.median(times)


def _median_3proc(program, data, repeats):
    runs = []
    for _ in range(repeats):
        res = launch(program, data, groups=mpc_protocols.GROUPS_3, warm_up=[fss.warm_up])
        runs.append(max(r.seconds for r in res))
        assert res[0].value == np.median(data)
    return statistics.median(runs)


def sort_program(rt, data):
    """Two parties' secret 10^4 values, summed and sorted (FSS gates, Batcher's network)."""
    s = Session(2, runtime=rt, roles=("dealer",), comparisons=COMPARISONS)
    x = s.input(data, by=[0, 1], bound=2**20).sum(axis=0).assume_bound(2**21)
    return s.output(x.sort(), to=[0, 1])


def bench_issue40(n_med, n_sort, repeats, rng) -> dict:
    """The keys of issue 40: the exact median in three processes (search and sort), a sort of
    ``n_sort`` values in one process, the mean and variance's relative error."""
    ints = rng.integers(-10**4, 10**4, size=(3, n_med))
    out = {"groups_median_3proc": "parties 0, 1, 2 and the dealer in 4 processes",
           "median_3x1000_seconds_3proc": _median_3proc(mpc_protocols.median_search, ints,
                                                        repeats),
           "median_sort_3x1000_seconds_3proc": _median_3proc(mpc_protocols.median_sort, ints,
                                                             repeats)}
    data = rng.integers(-2**20, 2**20, size=(2, n_sort))
    _, warm, got = _ours_1proc(sort_program, data, repeats)
    assert np.array_equal(got, np.sort(data.sum(axis=0)))
    vals = rng.normal(50, 10, size=(3, 1000))
    m, v = mpc_protocols.mean_var(None, vals)
    return dict(out, sort_1e4_seconds_1proc=warm, sort_values=n_sort,
                mean_var_rel_error=max(abs(m / vals.mean() - 1), abs(v / vals.var() - 1)))


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--quick", action="store_true", help="10^3 argmax, 10^4 comparisons")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-mpyc", action="store_true")
    args = ap.parse_args(argv)
    n_arg = 10**3 if args.quick else 10**4
    n_lt = 10**4 if args.quick else 10**6
    n_mpyc_lt = 10**3 if args.quick else 10**4
    reps = 1 if args.quick else args.repeats
    rng = np.random.default_rng(20261127)
    data_arg = rng.integers(-2**31, 2**31, size=(3, n_arg))
    data_lt = rng.integers(-2**31, 2**31, size=(2, n_lt))
    res = {"argmax_instances": n_arg, "lt_comparisons": n_lt,
           "argmax_program_lines": program_lines(argmax_program),
           "mpyc_argmax_program_lines": len(textwrap.dedent(MPYC_ARGMAX).strip().splitlines()),
           "groups_argmax_3proc": "parties 0, 1, 2 and the dealer in 4 processes",
           "groups_lt_3proc": "parties 0, 1 and the dealer in 3 processes",
           "trust": {"ours": "semi-honest; trusted dealer for preprocessing (Beaver triples, "
                             "FSS keys, masks); secure against any coalition missing one "
                             "holder (p-party circuit), FSS against either key holder alone; "
                             "no honest majority needed",
                     "mpyc": "semi-honest; honest majority (Shamir, t = 1 of 3); no dealer "
                             "(pseudorandom secret sharing)"}}
    cold, warm, out = _ours_1proc(argmax_program, data_arg, reps)
    assert np.array_equal(out, np.argmax(data_arg, axis=0))
    res.update(argmax_1e4_seconds_1proc=warm, argmax_1e4_seconds_1proc_cold=cold)
    run, launch_s, wire, out = _ours_procs(argmax_program, data_arg, GROUPS_ARGMAX, reps)
    assert np.array_equal(out, np.argmax(data_arg, axis=0))
    res.update(argmax_1e4_seconds_3proc=run, argmax_1e4_launch_seconds_3proc=launch_s,
               argmax_wire_3proc=wire)
    cold, warm, out = _ours_1proc(lt_program, data_lt, reps)
    assert np.array_equal(out.astype(bool), data_lt[0] < data_lt[1])
    res.update(lt_per_s_1proc=n_lt / warm, lt_seconds_1proc_cold=cold)
    run, launch_s, wire, out = _ours_procs(lt_program, data_lt, GROUPS_LT, reps)
    assert np.array_equal(out.astype(bool), data_lt[0] < data_lt[1])
    res.update(lt_per_s_3proc=n_lt / run, lt_launch_seconds_3proc=launch_s, lt_wire_3proc=wire)
    n_med = 100 if args.quick else 1000
    res.update(median_values_per_party=n_med, **bench_issue40(n_med, 10**3 if args.quick
                                                               else 10**4, reps, rng))
    if not args.no_mpyc:
        try:
            import mpyc
        except ImportError:
            res["mpyc"] = "not installed (pip install mpyc)"
        else:
            res["mpyc_version"] = mpyc.__version__
            res["mpyc_gmpy2"] = importlib.util.find_spec("gmpy2") is not None   # MPyC's fast path
            with tempfile.TemporaryDirectory() as tmp:
                script = os.path.join(tmp, "mpyc_bench.py")
                with open(script, "w") as f:
                    f.write(MPYC_SCRIPT.format(
                        argmax=textwrap.indent(textwrap.dedent(MPYC_ARGMAX).strip(), " " * 8),
                        median=textwrap.indent(textwrap.dedent(MPYC_MEDIAN).strip(), " " * 8)))
                for p in (1, 3):
                    res[f"mpyc_argmax_1e4_seconds_m{p}"] = _mpyc("argmax", n_arg, p, reps,
                                                                  script)
                    res[f"mpyc_lt_per_s_m{p}"] = n_mpyc_lt / _mpyc("lt", n_mpyc_lt, p, reps,
                                                                   script)
                res["mpyc_median_3x1000_seconds_m3"] = _mpyc("median", n_med, 3, reps, script)
            res["mpyc_lt_comparisons"] = n_mpyc_lt
            res["median_ratio_3proc_vs_mpyc_m3"] = (res["mpyc_median_3x1000_seconds_m3"]
                                                    / res["median_3x1000_seconds_3proc"])
            res["lt_ratio_3proc_vs_mpyc_m3"] = res["lt_per_s_3proc"] / res["mpyc_lt_per_s_m3"]
            res["argmax_ratio_3proc_vs_mpyc_m3"] = (res["mpyc_argmax_1e4_seconds_m3"]
                                                    / res["argmax_1e4_seconds_3proc"])
    res["load_avg"] = os.getloadavg()[0]
    emit(res, args.json)


if __name__ == "__main__":
    main()
