"""U-MPC end to end: Kendall on UCI Bank, Gini at 10^6 and 10^7, scaling in n, workers and Dask.

Usage: python benchmarks/umpc.py [--json] [--quick] [--runs R] [--repeats N] [--skip-1e6]
       [--skip-1e7] [--skip-parallel] [--skip-release] [--skip-noise] [--repeats-1e7 N]
       [--gini-encoding default|paper] [--memory default|retained]

Every timing is the median of N (default 3) warm runs; the first run of a
process (imports, AES and numpy warm-up) is reported apart where it matters.
Configurations compared in one process (1 versus 2 workers) run their cold
runs first, then their warm runs interleaved, so that a load that drifts
during the measurement (the machine is shared) affects both sides alike.
Large runs execute in fresh subprocesses so that their peak resident memory
(``ru_maxrss`` of the process running the protocol) is theirs alone.

Keys (all measured in this run):
- bank_kendall_seconds: median of N warm runs of Kendall's tau on (age,
  balance) of ../shared/data/bank/bank.csv, n = 4521, |E| = 2n balanced
  edges, epsilon = 1, M_Dis with Polya noise (Pi_DLap: noise_method="polya",
  today's figures; the in-MPC noise's are in the noise keys below), offline
  (dealer) phase included, no
  evaluation; bank_kendall_median_seconds (the same figure, kept for older
  readers); bank_kendall_cold_seconds: the first run in the process;
  bank_kendall_online_bits / _offline_bits / _rounds.
- bank_kendall_mse: mean over R runs (default 100) of (released - complete
  U-statistic)^2: the *total* error, dominated by the incompleteness of 2n
  edges; bank_kendall_dp_mse: mean of (released - incomplete U-statistic on
  the same edges)^2 (DP noise alone); bank_kendall_dp_mse_theory:
  2 (delta_max Delta f / (epsilon |E|))^2; bank_kendall_inc_mse: mean of
  (incomplete - complete)^2.
- input_check_overhead_ratio_bank (issue 39; target <= 1.5): the online bits of
  the Bank Kendall run above with UMPCSpec check_inputs on over off (every
  input range-checked on its shares, ustat/umpc/input_check.py), same spec,
  interleaved warm runs (seeded). Its dis/Polya noise (n^2 l bits) dominates those bits, so
  _edges gives the same ratio over the edges' phases alone (input-check +
  sharing + computing over sharing + computing), _rounds the online rounds,
  _seconds the median wall time (offline dealing included: the simulator
  deals as it goes); input_check_{online,offline}_bits_bank and
  input_check_rounds_bank what the check adds; input_check_same_release_bank
  that the released value did not move.
- gini_1e6_seconds, gini_1e6_peak_mb (and _online_bits, _offline_bits,
  _rounds): Gini mean difference, n = 10^6 synthetic uniform records,
  |E| = 2n, M_HF (the default noise: sampled inside MPC by a committee of
  40), one worker. hf_noise_seconds_1e6: the noise step of those runs alone
  (median of the warm runs; it runs beside the chunks), hf_noise_share_of_run_1e6
  its share of gini_1e6_seconds, hf_noise_{online,offline}_{bits,rounds}_1e6 its
  traffic (with --quick: *_quick at 10^5).
- gini_1e7_seconds, gini_1e7_peak_mb: the same at n = 10^7 (targets 60 s, 3 GB);
  --repeats-1e7 N sets its warm runs (0: the cold run alone, gini_1e7_warm_runs
  says which), gini_1e7_load_avg_start/_end the load around it.
- gini_encoding: "default" (run_umpc's choice: for Gini a ring of 45 to 59
  bits with 32 fractional bits, wide enough that the sum over |E| edges
  cannot wrap; *_ring_bits says which) or "paper" (--gini-encoding paper:
  l = 40, c = 14, as Sinh and Ramon and the issue's targets).
- gini_scaling_exponent: least-squares slope of log(seconds) on log(n) over
  gini_scaling_n (10^5 .. 10^7), one worker; gini_scaling_seconds the medians.
- workers_speedup_2: one-worker time / two-worker time (worker processes) at
  n = 10^6, and workers_identical (same release and communication report);
  threads_speedup_2: the same with a thread pool (why processes are the default).
- dask_local_speedup_2: one-worker local time / time on a Dask LocalCluster of
  2 single-threaded worker processes (started once, dask_local_startup_seconds
  apart), dask_identical.
- parallel_seconds / parallel_cold_seconds: the medians (and cold first runs)
  behind those ratios. *_speedup_2_paired: the median of the ratios of
  adjacent runs (one worker, then two), less exposed to a drifting load.
- parallel_serial_seconds: median time of the one-worker run outside its
  computing stage (run_umpc's stage_seconds: drawing E, precision, encoding,
  aggregation, report), which no worker shares; workers_speedup_2_bound:
  what two workers would reach if they halved the computing stage and added
  nothing (Amdahl): the ceiling without overlap. The kept workers deal the
  first chunks' keys while the caller draws E (ustat/umpc/prefetch.py), which
  overlaps part of that serial time, so a run can now pass it.
  workers_speedup_2_no_prefetch: the same speedup with that overlap turned off
  (USTAT_PREFETCH=0 for the two-worker runs, interleaved with the others);
  prefetch_gain_2: the median ratio of adjacent two-worker runs without and
  with it.
- machine_ceiling_2: what two cores give this very job on this machine when
  nothing but the hardware is shared: 2 x (the one-worker run) / (two whole
  one-worker runs at once in two forked processes, the slower of the pair;
  parallel_seconds' pair_of_workers_1), interleaved with the other runs
  (machine_ceiling_2_paired: the median of the per-repeat ratios). 2 means
  the cores do not slow each other; the host's memory bandwidth and other
  tenants pull it down. workers_speedup_2_of_ceiling: workers_speedup_2 /
  machine_ceiling_2, the share of that ceiling the worker pool reaches (what
  is left is ours: the caller's work, chunks dealt beside the draw, pipes).
- parallel_cpu_seconds: median CPU seconds per warm run of each configuration
  (user + system of the calling process and all its descendant processes,
  from /proc; null elsewhere): the work each engine adds to the one-worker run.
- memory: "default" (glibc's malloc as a program calling the API gets it) or
  "retained" (--memory retained: each Gini process first calls
  mpc.machine.memory.retain_freed_memory(), as the ustat command does); worker
  processes and the local Dask cluster retain freed memory either way.
- precision_* and dp_audit_*: release quality (issue 8), from
  benchmarks/umpc_release.py (see its docstring); --skip-release skips them.
- noise_variance_ratio_{dis,hf}, bank_kendall_dp_mse_central_law,
  bank_noise_*, noise_chi2_*, dp_audit_mpc_*: the DP noise sampled inside MPC
  against Polya shares, from benchmarks/umpc_noise.py (see its docstring);
  --skip-noise skips them.
- load_avg_start / load_avg_end (1-minute load average) and cpu_count: the
  machine is shared, so read the speedups against them.
With --quick: R = 5, N = 1, the large sizes become 10^5 (key gini_quick_n),
the scaling fit runs over 2 * 10^4 .. 10^5 and the speedups at 10^5.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import _common  # noqa: F401  (puts the repository on sys.path)
import numpy as np
from _common import ROOT, emit

BANK = os.path.join(ROOT, "..", "shared", "data", "bank", "bank.csv")
BANK_BOUNDS = "18:95,-8019:102127"   # public bounds (the data's documented ranges)

# Runs `configs` (run_umpc keyword dicts) on Gini with |E| = 2n, M_HF: one cold run, then
# `repeats` warm runs of each; prints seconds per run, peak RSS and what identity checks need.
_RUNNER = r"""
import json, os, resource, sys, time
sys.path[:0] = [{root!r}, os.path.join({root!r}, "benchmarks")]
from mpc.arith.rng import CSPRNG
from ustat.data import synthetic_uniform
from ustat.executors import Dask, Simulator
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc
from umpc import JobPair, cpu_seconds
n, configs, repeats, scheduler = {n}, {configs!r}, {repeats}, {scheduler!r}
def gini(kw):                           # a config: spec fields and the executor's keywords
    kw = dict(kw)
    workers, pool = kw.pop("workers", None), kw.pop("pool", "processes")
    sched = kw.pop("scheduler", None)
    ex = Dask(sched, workers) if sched is not None else Simulator(workers, pool)
    spec = UMPCSpec.of("gini", epsilon=1.0, edges=2 * n, threat_model="hf", seed=7, **kw)
    return run_umpc(X, spec, ex)
if {retain!r}:
    from mpc.machine.memory import retain_freed_memory
    retain_freed_memory()
X = synthetic_uniform(n, 1, CSPRNG(12))
pairs = [cfg.pop("pair", False) for cfg in configs]
pair = None
if any(pairs):                          # forked before any run: no threads, cold like the rest
    kw_pair = dict(configs[pairs.index(True)], workers=1)
    def job():
        t = time.perf_counter()
        gini(kw_pair)
        return time.perf_counter() - t
    pair = JobPair(job)
extra, startup = {{}}, 0.0
if scheduler:
    from ustat.umpc.dask_runner import connect
    t = time.perf_counter()
    cluster = connect("local", 2)             # the cluster scheduler="local" makes
    client = cluster.__enter__()
    startup = time.perf_counter() - t
    extra = {{"scheduler": client}}
out = {{"startup": startup, "configs": []}}
envs = [cfg.pop("env", {{}}) for cfg in configs]
kws = [dict(cfg, **extra) if cfg.pop("dask", False) else dict(cfg) for cfg in configs]
times = [[] for _ in kws]
noise = [[] for _ in kws]
stages = [[] for _ in kws]
cpus = [[] for _ in kws]
for rep in range(repeats + 1):          # rep 0: every config cold; then interleaved warm runs
    for kw, env, ts, st, cs, ns, is_pair in zip(kws, envs, times, stages, cpus, noise,
                                                pairs):  # (1, 2, 1, 2, ...: a drifting
        os.environ.update(env)                           # load hits both alike)
        c = cpu_seconds()
        if is_pair:                     # two whole one-worker jobs at once, in the two children
            secs = pair.run()
            ts.append(max(secs))
        else:
            t = time.perf_counter()
            r = gini(kw)
            ts.append(time.perf_counter() - t)
            ns.append(r.noise_seconds)
        cs.append(None if c is None else cpu_seconds() - c)
        for key in env:
            del os.environ[key]
        st.append({{}} if is_pair else r.stage_seconds)
        if rep == 0 and is_pair:
            out["configs"].append({{"pair": secs}})
        elif rep == 0:
            out["configs"].append({{"estimate": r.estimate, "communication": r.communication,
                                   "online_bits": r.online_bits,
                                   "offline_bits": r.offline_bits, "rounds": r.rounds,
                                   "ring_bits": r.precision["bits"]}})
for cfg, ts, st, cs, ns in zip(out["configs"], times, stages, cpus, noise):
    cfg["cold"], cfg["warm"], cfg["warm_stages"], cfg["warm_cpu"] = ts[0], ts[1:], st[1:], cs[1:]
    cfg["warm_noise"] = ns[1:] or ns
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
if pair is not None:
    pair.close()
print(json.dumps(out))
"""


#: run_umpc keywords added to every Gini run (``--gini-encoding paper``: the paper's l = 40,
#: c = 14).
GINI_ENCODING: dict = {}
#: ``--memory retained``: the Gini processes call mpc.machine.memory.retain_freed_memory() first.
RETAIN = [False]


def cpu_seconds():
    """User + system CPU seconds of this process (all its threads) and of every process
    descending from it that is alive now (kept workers, a local Dask cluster), read from
    /proc; None where there is no /proc. Take differences around a run: processes that
    end during it are not counted."""
    if not os.path.isdir("/proc/self/task"):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    me = os.getpid()
    total, todo = sum(os.times()[:2]), [me]
    while todo:
        pid = todo.pop()
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
            if pid != me:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / tick
        except (FileNotFoundError, ProcessLookupError):
            continue                        # a process that ended meanwhile
    return total


class JobPair:
    """Two forked processes that each run ``job()`` (which returns its seconds) at once, when
    told: what two cores give a job when nothing but the machine is shared (no pipes of
    chunks, no caller). Fork it before the calling process starts threads."""

    def __init__(self, job):
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        self._conns, self._procs = [], []
        for _ in range(2):
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=_pair_child, args=(theirs, job), daemon=True)
            proc.start()
            theirs.close()
            self._conns.append(mine)
            self._procs.append(proc)

    def run(self, timeout: float = 900.0) -> list:
        """Start both jobs; their seconds, once both are done."""
        for conn in self._conns:
            conn.send("run")
        secs = []
        for conn in self._conns:
            if not conn.poll(timeout):
                raise RuntimeError(f"a paired job did not finish in {timeout} s")
            answer = conn.recv()
            if isinstance(answer, str):
                raise RuntimeError(answer)
            secs.append(answer)
        return secs

    def close(self) -> None:
        for conn in self._conns:
            conn.send("quit")
        for proc in self._procs:
            proc.join(30)


def _pair_child(conn, job) -> None:
    while conn.recv() == "run":
        try:
            conn.send(float(job()))
        except BaseException as exc:    # reported to the parent, which raises it
            conn.send(f"paired job failed: {exc!r}")


def gini_runs(n: int, configs: list, repeats: int, dask: bool = False) -> dict:
    """Run ``configs`` in one fresh subprocess (warm runs after a cold one)."""
    configs = [dict(GINI_ENCODING, **cfg) for cfg in configs]
    code = _RUNNER.format(root=ROOT, n=n, configs=configs, repeats=repeats,
                          scheduler="local" if dask else "", retain=RETAIN[0])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(cfg: dict) -> float:
    return float(np.median(cfg["warm"] or [cfg["cold"]]))


def _same(a: dict, b: dict) -> bool:
    return a["estimate"] == b["estimate"] and a["communication"] == b["communication"]


def gini_one_worker(n: int, repeats: int) -> dict:
    res = gini_runs(n, [{"workers": 1}], repeats)
    cfg = res["configs"][0]
    return {"seconds": _median(cfg), "cold": cfg["cold"], "peak_mb": res["peak_mb"],
            "online_bits": cfg["online_bits"], "offline_bits": cfg["offline_bits"],
            "rounds": cfg["rounds"], "ring_bits": cfg["ring_bits"],
            "noise_seconds": float(np.median(cfg["warm_noise"])) if cfg["warm_noise"] else None,
            "noise": cfg["communication"]["phases"].get("noise", {})}


def scaling(sizes, repeats: int, known: dict) -> dict:
    """Slope of log(seconds) on log(n), one worker (``known``: medians already measured)."""
    secs = {n: known[n] if n in known else gini_one_worker(n, repeats)["seconds"]
            for n in sizes}
    x = np.log(np.array(sizes, float))
    y = np.log(np.array([secs[n] for n in sizes]))
    slope = float(np.polyfit(x, y, 1)[0])
    return {"gini_scaling_exponent": slope, "gini_scaling_n": list(sizes),
            "gini_scaling_seconds": [secs[n] for n in sizes]}


def _paired(one: dict, two: dict) -> float:
    """Median over the warm repeats of (one's run) / (two's run right after it): the ratio of
    two runs a few seconds apart, less exposed to a load that drifts over the benchmark."""
    if not one["warm"]:
        return one["cold"] / two["cold"]
    return float(np.median(np.array(one["warm"]) / np.array(two["warm"])))


def _serial(one: dict) -> float:
    """Median seconds a one-worker run spends outside its ``computing`` stage (run_umpc's
    stage_seconds): drawing E, precision, aggregation, the report. No worker shares it."""
    return float(np.median([sum(v for k, v in st.items() if k != "computing")
                            for st in one["warm_stages"]] or [0.0]))


def _cpu(cfg: dict):
    """Median CPU seconds of a config's warm runs, the calling process and its descendants."""
    cpu = [c for c in cfg.get("warm_cpu", []) if c is not None]
    return float(np.median(cpu)) if cpu else None


def parallel(n: int, repeats: int) -> dict:
    local = gini_runs(n, [{"workers": 1}, {"workers": 2}, {"workers": 2, "pool": "threads"},
                          {"workers": 2, "env": {"USTAT_PREFETCH": "0"}}, {"pair": True}],
                      repeats)
    one, two, threads, plain, pair = local["configs"]
    dask = gini_runs(n, [{"workers": 1}, {"dask": True}], repeats, dask=True)
    d_one, d_two = dask["configs"]
    t1, serial = _median(one), _serial(one)
    ceiling = 2 * _median(one) / _median(pair)
    return {
        "machine_ceiling_2": ceiling,
        "machine_ceiling_2_paired": 2 * _paired(one, pair),
        "workers_speedup_2_of_ceiling": _median(one) / _median(two) / ceiling,
        "parallel_cpu_seconds": {"workers_1": _cpu(one), "workers_2": _cpu(two),
                                 "workers_2_no_prefetch": _cpu(plain), "threads_2": _cpu(threads),
                                 "dask_side_workers_1": _cpu(d_one), "dask_2": _cpu(d_two),
                                 "pair_of_workers_1": _cpu(pair)},
        "parallel_n": n,
        "workers_speedup_2": _median(one) / _median(two),
        "workers_speedup_2_paired": _paired(one, two),
        # Amdahl: the one-worker run with its computing stage halved and nothing else
        "workers_speedup_2_bound": t1 / (serial + (t1 - serial) / 2),
        "parallel_serial_seconds": serial,
        "workers_speedup_2_no_prefetch": _median(one) / _median(plain),
        "prefetch_gain_2": _paired(plain, two),
        "workers_identical": _same(one, two) and _same(one, threads) and _same(one, plain),
        "threads_speedup_2": _median(one) / _median(threads),
        "dask_local_speedup_2": _median(d_one) / _median(d_two),
        "dask_local_speedup_2_paired": _paired(d_one, d_two),
        "dask_local_startup_seconds": dask["startup"],
        "dask_identical": _same(d_one, d_two) and _same(one, d_one),
        "parallel_seconds": {"workers_1": _median(one), "workers_2": _median(two),
                             "workers_2_no_prefetch": _median(plain),
                             "threads_2": _median(threads), "dask_side_workers_1": _median(d_one),
                             "dask_2": _median(d_two), "pair_of_workers_1": _median(pair)},
        "parallel_cold_seconds": {"workers_1": one["cold"], "workers_2": two["cold"],
                                  "threads_2": threads["cold"], "dask_2": d_two["cold"]},
    }


def decoded_inputs(X, kern):
    """The fixed-point values the protocol computes on (what the U-statistics use)."""
    from mpc.session import Session
    from ustat.umpc import decode_records, encode_records

    s = Session(X.shape[0])
    return decode_records(s, encode_records(s, X, kern), kern)


def bank_kendall(runs: int, repeats: int):
    from ustat.data import load_csv, normalize, parse_bounds
    from ustat.kernels import complete_u, get
    from ustat.specs import UMPCSpec
    from ustat.umpc import run_umpc

    raw, _ = load_csv(BANK, columns=["age", "balance"])
    X, _ = normalize(raw, parse_bounds(BANK_BOUNDS, 2))
    spec = UMPCSpec.of("kendall", epsilon=1.0, edges="2n", threat_model="dis",
                       noise_method="polya")
    timed = []
    for _ in range(repeats + 1):                # the protocol only: no evaluation
        t = time.perf_counter()
        first = run_umpc(X, spec)
        timed.append(time.perf_counter() - t)
    kern = get("kendall")
    u_complete = complete_u(kern, decoded_inputs(X, kern))
    theory = 2 * (first.max_degree * kern.sensitivity / (first.epsilon * first.edges)) ** 2
    released, incomplete = [], []
    for _ in range(runs):
        r = run_umpc(X, spec, evaluate="incomplete")
        released.append(r.estimate)
        incomplete.append(r.evaluation["u_incomplete"])
    released, incomplete = np.array(released), np.array(incomplete)
    warm = float(np.median(timed[1:])) if repeats else timed[0]
    return {
        "bank_n": first.n,
        "bank_edges": first.edges,
        "bank_max_degree": first.max_degree,
        "bank_kendall_seconds": warm,
        "bank_kendall_median_seconds": warm,
        "bank_kendall_cold_seconds": timed[0],
        "bank_kendall_warm_runs": repeats,
        "bank_kendall_online_bits": first.online_bits,
        "bank_kendall_offline_bits": first.offline_bits,
        "bank_kendall_rounds": first.rounds,
        "bank_kendall_complete_u": u_complete,
        "bank_kendall_runs": int(runs),
        "bank_kendall_mse": float(np.mean((released - u_complete) ** 2)),
        "bank_kendall_dp_mse": float(np.mean((released - incomplete) ** 2)),
        "bank_kendall_inc_mse": float(np.mean((incomplete - u_complete) ** 2)),
        "bank_kendall_dp_mse_theory": theory,
    }


def _online(res, phases=None) -> tuple:
    """(online bits, online rounds) of a result, over ``phases`` (None: every phase)."""
    cells = [v.get("online", {}) for k, v in res.communication["phases"].items()
             if phases is None or k in phases]
    return sum(c.get("bits", 0) for c in cells), sum(c.get("rounds", 0) for c in cells)


def input_check_overhead(repeats: int) -> dict:
    """Bank Kendall with ``check_inputs`` on / off, the same spec otherwise, interleaved runs."""
    from ustat.data import load_csv, normalize, parse_bounds
    from ustat.specs import UMPCSpec
    from ustat.umpc import run_umpc

    raw, _ = load_csv(BANK, columns=["age", "balance"])
    X, _ = normalize(raw, parse_bounds(BANK_BOUNDS, 2))
    specs = {on: UMPCSpec.of("kendall", epsilon=1.0, edges="2n", threat_model="dis",
                             noise_method="polya", check_inputs=on, seed="input-check")
             for on in (False, True)}         # seeded: the same noise, so the same release
    seconds: dict = {False: [], True: []}
    last = {on: run_umpc(X, specs[on]) for on in (False, True)}     # warm-up, not timed
    for _ in range(max(1, repeats)):
        for on in (False, True):
            t = time.perf_counter()
            last[on] = run_umpc(X, specs[on])
            seconds[on].append(time.perf_counter() - t)
    (b_off, r_off), (b_on, r_on) = _online(last[False]), _online(last[True])
    edges = ("sharing", "computing")
    (e_off, _), (e_on, _) = _online(last[False], edges), _online(last[True], edges + (
        "input-check",))
    med = {on: float(np.median(v)) for on, v in seconds.items()}
    return {
        "input_check_overhead_ratio_bank": b_on / b_off,
        "input_check_overhead_ratio_bank_edges": e_on / e_off,
        "input_check_overhead_ratio_bank_rounds": r_on / r_off,
        "input_check_overhead_ratio_bank_seconds": med[True] / med[False],
        "input_check_online_bits_bank": b_on - b_off,
        "input_check_offline_bits_bank": last[True].offline_bits - last[False].offline_bits,
        "input_check_rounds_bank": r_on - r_off,
        "input_check_same_release_bank": last[True].u_hat == last[False].u_hat,
    }


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=None, help="warm runs per timing (default 3)")
    ap.add_argument("--skip-1e6", action="store_true", help="skip the 10^6-party runs")
    ap.add_argument("--skip-1e7", action="store_true", help="skip the 10^7-party run and fit")
    ap.add_argument("--skip-parallel", action="store_true", help="skip workers and Dask")
    ap.add_argument("--gini-encoding", choices=("default", "paper"), default="default",
                    help="Gini runs: run_umpc's per-kernel encoding (default; the ring widens "
                         "with |E| so the sum cannot wrap) or the paper's l = 40, c = 14")
    ap.add_argument("--memory", choices=("default", "retained"), default="default",
                    help="Gini runs with glibc's default malloc (what an API call gets) or with "
                         "freed memory retained (mpc.machine.memory; what the ustat command does)")
    ap.add_argument("--skip-release", action="store_true",
                    help="skip the precision and DP-audit keys (benchmarks/umpc_release.py)")
    ap.add_argument("--skip-noise", action="store_true",
                    help="skip the noise keys (benchmarks/umpc_noise.py)")
    ap.add_argument("--repeats-1e7", type=int, default=None,
                    help="warm runs at n = 10^7 (default: --repeats; 0: the cold run alone)")
    args = ap.parse_args(argv)
    runs = args.runs or (5 if args.quick else 100)
    repeats = args.repeats if args.repeats is not None else (1 if args.quick else 3)
    if args.gini_encoding == "paper":
        GINI_ENCODING.update(bits=40, frac_bits=14)
    RETAIN[0] = args.memory == "retained"
    result = {"load_avg_start": os.getloadavg()[0], "cpu_count": os.cpu_count(),
              "gini_encoding": args.gini_encoding, "memory": args.memory}
    if os.path.exists(BANK):
        result.update(bank_kendall(runs, repeats))
        result.update(input_check_overhead(repeats))
    else:
        result["bank_skipped"] = f"{BANK} not found"
    big = 10**5 if args.quick else 10**6
    known = {}
    if not args.skip_1e6:
        g = gini_one_worker(big, repeats)
        known[big] = g["seconds"]
        key = "gini_1e6" if big == 10**6 else "gini_quick"
        for name in ("seconds", "peak_mb", "online_bits", "offline_bits", "rounds", "ring_bits"):
            result[f"{key}_{name}"] = g[name]
        result[f"{key}_cold_seconds"] = g["cold"]
        tag = "1e6" if big == 10**6 else "quick"        # the in-MPC noise step of those runs
        result[f"hf_noise_seconds_{tag}"] = g["noise_seconds"]
        result[f"hf_noise_share_of_run_{tag}"] = g["noise_seconds"] / g["seconds"]
        for cell in ("online", "offline"):
            result[f"hf_noise_{cell}_bits_{tag}"] = g["noise"].get(cell, {}).get("bits", 0)
            result[f"hf_noise_{cell}_rounds_{tag}"] = g["noise"].get(cell, {}).get("rounds", 0)
        if args.quick:
            result["gini_quick_n"] = big
    if not args.quick and not args.skip_1e7:
        r7 = repeats if args.repeats_1e7 is None else args.repeats_1e7
        result["gini_1e7_load_avg_start"] = os.getloadavg()[0]
        g = gini_one_worker(10**7, r7)
        known[10**7] = g["seconds"]
        result["gini_1e7_seconds"], result["gini_1e7_peak_mb"] = g["seconds"], g["peak_mb"]
        result["gini_1e7_cold_seconds"], result["gini_1e7_warm_runs"] = g["cold"], r7
        result["gini_1e7_ring_bits"] = g["ring_bits"]
        result["gini_1e7_load_avg_end"] = os.getloadavg()[0]
    if not args.skip_1e7:
        sizes = [2 * 10**4, 5 * 10**4, 10**5] if args.quick else \
            [10**5, 3 * 10**5, 10**6, 3 * 10**6, 10**7]
        result.update(scaling(sizes, repeats, known))
    if not args.skip_parallel:
        result.update(parallel(big, repeats))
    if not args.skip_release:
        from umpc_release import release_metrics

        result.update(release_metrics(args.quick))
    if not args.skip_noise:
        from umpc_noise import noise_metrics

        result.update(noise_metrics(args.quick))
    result["load_avg_end"] = os.getloadavg()[0]
    emit(result, args.json)


if __name__ == "__main__":
    main()
