"""Shared pieces of the Sinh-Ramon scripts: U-MPC variants, measured runs, the paper's cost model.

U-MPC runs in four variants beside the baselines (``bell-ldp``, ``ghazi``,
``ghazi-sm``), all through :func:`ustat.umpc.run_umpc` with the paper's
encoding (l = 40, c = 14) unless said otherwise:

* ``umpc``: |E| = 2n (the captions), threat model M_HF with the toolkit's
  default noise (since issue 30 one discrete Laplace sampled inside MPC by
  the committee, so no coalition knows it; variance factor 1);
* ``umpc-law``: |E| = 2n at the paper's law: one discrete Laplace in total
  (``f_h=1.0, committee_size=40``: the paper's committee of 40 members, each
  drawing Polya(1/40) differences, variance factor 1);
* ``umpc-002``: |E| = int(0.02 C(n, 2)) at the paper's law: the edge count
  of the authors' comparison.py when their results files were written (see
  :mod:`experiments.authors_code`);
* ``umpc-default``: as ``umpc`` with the encoding the toolkit picks (Gini).

Measured per run: the network's counters and wall time split at the data
parties' last message (:class:`PartyServerClock`); errors against the
complete U-statistic (total) and, for U-MPC, the incomplete one on E (DP only).
"""

from __future__ import annotations

import math
import time

import numpy as np

from experiments import _common as C  # noqa: N812 - the codebase's short capital module alias

#: The paper's threat model for the comparisons (Sec. 6.1: M_HF) and its encoding.
THREAT_MODEL = "hf"
PAPER_BITS, PAPER_FRAC = 40, 14
#: The paper's noise law: one discrete Laplace in total, from its committee of 40.
PAPER_LAW = {"honest_fraction": 1.0, "committee_size": 40}
UMPC = ("umpc", "umpc-law", "umpc-002", "umpc-default")
BASELINES = ["bell-ldp", "ghazi", "ghazi-sm"]
LABELS = {"umpc": "U-MPC (2n, our noise)", "umpc-law": "U-MPC (2n, paper's law)",
          "umpc-002": "U-MPC (0.02 C(n,2), paper's law)",
          "umpc-default": "U-MPC (default precision)", "bell-ldp": "Bell", "ghazi": "Ghazi",
          "ghazi-sm": "GhaziSM"}
COLORS = {"umpc": "tab:orange", "umpc-law": "tab:brown", "umpc-002": "tab:pink",
          "umpc-default": "tab:olive", "bell-ldp": "tab:blue", "ghazi": "tab:green",
          "ghazi-sm": "tab:red"}
SHORT = {"umpc": "2n, our noise", "umpc-law": "2n, paper's law",
         "umpc-002": "0.02 C(n,2), paper's law"}
MARKERS = {"umpc": "o", "umpc-law": "h", "umpc-002": "*", "umpc-default": "P", "bell-ldp": "^",
           "ghazi": "s", "ghazi-sm": "x"}


def edges_of(variant: str, n: int):
    """|E| of a U-MPC variant."""
    return int(0.02 * math.comb(n, 2)) if variant == "umpc-002" else 2 * n


# -- the paper's cost model (what its figures plot), for lines beside the measurements ------
def paper_jl_dim(n: int, domain: int, eps: float) -> int:
    """The JL dimension of the authors' cost model (Dasgupta-Gupta with beta = 1/(eps sqrt n))."""
    b = 1.0 / (eps * math.sqrt(n))
    return int(4 * (b * b / 2 - b ** 3 / 3) ** -1 * math.log(domain))


def paper_shufflers(n: int, kappa: int = 80) -> int:
    """Messages per value of the authors' shuffle-model cost (Balle et al. 2020, Sect. 5)."""
    q = 2 * n * math.sqrt(n)
    return int(2.5 * math.log(q) + math.log(n - 1)
               + 0.25 * math.log(math.log(q) + math.log(n - 1))) + kappa


def paper_comm(protocol: str, n: int, domain: int, eps: float, kernel: str, l: int = 40) -> float:
    """Online total bits in the paper's figures (the authors' costs/communication.py).

    ``domain``: the number of cells T (t for one column, t^2 for Kendall's pair).
    U-MPC with |E| = 2n (2 edges per party in their count), FSS keys of 128 l bits
    per comparison (offline material that their model counts online).
    """
    if protocol in UMPC:
        p, fss = 2, 128 * l * n * 2
        base = (p * n + n) * l + l * n
        opens, comps = {"gini": (3, 1), "kendall": (4, 2), "duplicate": (1, 1)}[kernel]
        return float(opens * n * p * l + comps * fss + base)
    if protocol == "bell-ldp":
        return float(domain * n * l)
    if protocol == "ghazi":
        return float(paper_jl_dim(n, domain, eps) * 2 * l * n)
    if protocol == "ghazi-sm":
        return float(paper_jl_dim(n, domain, eps) * 2 * paper_shufflers(n) * l * n)
    raise ValueError(f"no cost model for {protocol!r}")


def noise_words(factor: float) -> str:
    """How a release's noise compares with one discrete Laplace, from its measured factor."""
    if abs(factor - 1) < 0.05:
        return f"{factor:g} x one discrete Laplace (sampled inside MPC: no coalition knows it)"
    return (f"{factor:g} x one discrete Laplace (Polya shares sized so that epsilon holds "
            "against colluders)")


def paper_noise_var(n: int, eps: float) -> float:
    """Variance of the noise of the authors' U-MPC code: Laplace(2 / (eps n)) on the mean.

    (protocols/our.py at the commit of their results files; the same as
    delta_max / (eps |E|) for a balanced E, i.e. a kernel sensitivity of 1, also for
    Kendall's tau whose kernel has range 2.)
    """
    return 2 * (2 / (eps * n)) ** 2


# -- measured runs --------------------------------------------------------------------------
class PartyServerClock:
    """Wall time of a run split at the data parties' last message.

    Inside the block every :class:`mpc.comm.network.Network` records the time at
    which a call that sends from a data party (id < n_parties) returns;
    ``ustat.umpc.protocol.evaluate_run`` (the experiment's exact evaluation) is
    timed so that it can be excluded. Restores everything on exit. If the
    network does not have these methods (a different runtime), the clock
    records nothing and :func:`run_one` reports the total time only.
    """

    SENDERS = ("send", "send_bits", "send_all_to_all")

    def __init__(self):
        self.last_party = None
        self.eval_seconds = 0.0
        self.active = False
        self._saved = []

    def __enter__(self):
        from mpc.comm.network import Network
        from ustat.umpc import protocol as umpc_protocol

        names = self.SENDERS + ("absorb",)
        if not all(hasattr(Network, n) for n in names) or not hasattr(umpc_protocol,
                                                                      "evaluate_run"):
            return self
        clock = self

        def wrap_send(orig):
            def send(net, senders, *a, **kw):
                out = orig(net, senders, *a, **kw)
                if np.any(np.asarray(senders) < net.n_parties):
                    clock.last_party = time.perf_counter()
                return out
            return send

        def absorb(net, *a, **kw):          # a chunk's traffic: sent by data parties
            out = orig_absorb(net, *a, **kw)
            clock.last_party = time.perf_counter()
            return out

        def evaluate_run(*a, **kw):
            t = time.perf_counter()
            try:
                return orig_eval(*a, **kw)
            finally:
                clock.eval_seconds += time.perf_counter() - t

        for name in self.SENDERS:
            orig = getattr(Network, name)
            self._saved.append((Network, name, orig))
            setattr(Network, name, wrap_send(orig))
        orig_absorb = Network.absorb
        self._saved.append((Network, "absorb", orig_absorb))
        Network.absorb = absorb
        orig_eval = umpc_protocol.evaluate_run
        self._saved.append((umpc_protocol, "evaluate_run", orig_eval))
        umpc_protocol.evaluate_run = evaluate_run
        self.active = True
        return self

    def __exit__(self, *exc):
        for obj, name, orig in reversed(self._saved):
            setattr(obj, name, orig)
        self._saved = []
        return False


def run_one(protocol: str, X, kernel: str, *, epsilon: float, bins: int, seed: str,
            reference: float, **baseline_kw) -> dict:
    """One measured run: the release, its errors, the network's counters and the time split.

    ``protocol``: a U-MPC variant of :data:`UMPC` or a baseline; ``baseline_kw``: more
    fields of the baselines' :class:`ustat.specs.BaselineSpec` (e.g. ``levels`` of a
    categorical column).
    """
    from ustat.baselines import BaselineSpec, run_protocol
    from ustat.executors import Simulator
    from ustat.specs import UMPCSpec
    from ustat.umpc import run_umpc

    n = X.shape[0]
    umpc = protocol in UMPC
    with PartyServerClock() as clock:
        t0 = time.perf_counter()
        if umpc:
            kw = {} if protocol == "umpc-default" else {"bits": PAPER_BITS,
                                                       "frac_bits": PAPER_FRAC}
            if protocol in ("umpc-law", "umpc-002"):
                kw.update(PAPER_LAW)
            spec = UMPCSpec.of(kernel, epsilon=epsilon, edges=edges_of(protocol, n),
                               threat_model=THREAT_MODEL, seed=seed, **kw)
            res = run_umpc(X, spec, Simulator(workers=1), evaluate="incomplete")
        else:
            res = run_protocol(X, BaselineSpec.of(protocol, kernel, epsilon=epsilon, bins=bins,
                                                  seed=seed, **baseline_kw))
        t1 = time.perf_counter()
    party = server = None
    if clock.active and clock.last_party is not None:
        party = clock.last_party - t0
        server = max(t1 - clock.last_party - clock.eval_seconds, 0.0)
    if not umpc and res.params.get("materialized", True) is False:
        # GhaziSM's simulation shortcut at large n (ustat.baselines.ghazi_shuffle): the parties'
        # encoded shares are not materialized, their sums are drawn after the shuffle round,
        # so party and server time cannot be told apart (only the total is measured)
        party = server = None
    est = C.raw_estimate(res)
    row = {"protocol": protocol, "estimate": est, "reference": reference,
           "total_error": est - reference,
           "online_bits": int(res.online_bits), "max_party_bits": int(res.max_party_bits),
           "mean_party_bits": float(res.mean_party_bits), "rounds": int(res.rounds),
           "offline_bits": int(res.offline_bits),
           "seconds": t1 - t0 - clock.eval_seconds, "party_seconds": party,
           "per_party_seconds": None if party is None else party / n, "server_seconds": server}
    phases = res.communication["phases"]
    if umpc:
        inc = float(res.evaluation["statistic_incomplete"])
        row.update({"incomplete": inc, "dp_error": est - inc,
                    "ring_bits": int(res.precision["bits"]),
                    "frac_bits": int(res.precision["frac_bits"]),
                    "edges": int(res.edges), "max_degree": int(res.max_degree),
                    "threat_model": res.threat_model,
                    "setup_seconds": float(res.stage_seconds["setup"]),
                    # the release's DP noise variance (formula, for comparison with dp_error^2):
                    # the release's noise variance is variance_factor times one discrete
                    # Laplace (1 for noise sampled inside MPC; above 1 for Polya shares
                    # sized for colluders), and 2 noise_scale^2 is that one Laplace
                    "noise_var": float(res.noise_std) ** 2,
                    "single_laplace_var": 2 * float(res.noise_scale) ** 2,
                    "variance_factor": float(res.aux["noise"]["u"]["variance_factor"]),
                    "sharing_bits": int(phases["sharing"]["online"]["bits"]),
                    "aggregation_bits": int(phases["aggregation"]["online"]["bits"]),
                    "formula_party_bits": None})
    else:
        row.update({"ring_bits": int(res.params.get("message_bits", PAPER_BITS)),
                    "domain": int(res.params["domain"]), "dim": res.params.get("dim"),
                    "formula_party_bits": int(res.theory["bits_per_party"])})
    return row


def summarize(rows: list, keys: list) -> list:
    """Per (keys..., protocol): MSEs with s.e. (total; DP only for U-MPC), medians of costs."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in keys) + (r["protocol"],), []).append(r)
    out = []
    for key, sel in groups.items():
        tot = C.mse_se([r["total_error"] for r in sel])
        dp = [r["dp_error"] for r in sel if r.get("dp_error") is not None]
        dps = C.mse_se(dp) if dp else (None, None)
        med = {}
        for f in ("online_bits", "max_party_bits", "mean_party_bits", "rounds", "seconds",
                  "per_party_seconds", "server_seconds", "party_seconds", "setup_seconds",
                  "edges", "max_degree"):
            vals = [r[f] for r in sel if r.get(f) is not None]  # None: time split unavailable
            med[f] = float(np.median(vals)) if vals else None
        expect = {f: (float(np.mean([r[f] for r in sel])) if sel[0].get(f) is not None else None)
                  for f in ("noise_var", "single_laplace_var", "variance_factor")}
        out.append({**dict(zip(keys + ["protocol"], key)), "runs": len(sel),
                    "mse_total": tot[0], "mse_total_se": tot[1], "mse_dp": dps[0],
                    "mse_dp_se": dps[1], **expect, "ring_bits": sel[0].get("ring_bits"), **med})
    return out


def nan(x):
    return math.nan if x is None else x


def pick(stats, protocol, **where):
    """The summary row of ``protocol`` at the given keys (or None)."""
    for s in stats:
        if s["protocol"] == protocol and all(s.get(k) == v for k, v in where.items()):
            return s
    return None


def umpc_error_table(stats, keys: list, paper, n_eps) -> str:
    """Every U-MPC variant's errors beside the noise they should have: a Markdown table.

    ``paper(stat)``: the paper's MSE at that setting (or None); ``n_eps(stat)``: (n, epsilon).
    """
    body = []
    for s in stats:
        if s["protocol"] not in UMPC or s["protocol"] == "umpc-default":
            continue
        body.append(tuple(s[k] for k in keys) + (
            LABELS[s["protocol"]], s["runs"], C.fmt(s["edges"]), C.pm(s["mse_dp"], s["mse_dp_se"]),
            s["noise_var"], s["variance_factor"], paper_noise_var(*n_eps(s)), paper(s),
            C.pm(s["mse_total"], s["mse_total_se"]), s["mse_total"] - s["mse_dp"]))
    return C.md_table(keys + ["variant", "runs", "|E|", "DP-only MSE (measured)",
                              "noise variance of the release", "variance factor",
                              "noise of the authors' code", "paper MSE",
                              "MSE vs complete U (measured)", "total - DP only"], body)


def noise_text(stats) -> str:
    """What the U-MPC noise columns mean, with the variance factors measured in ``stats``."""
    def factors(v):
        fs = sorted({round(s["variance_factor"], 3) for s in stats
                     if s["protocol"] == v and s.get("variance_factor") is not None})
        return " / ".join(f"{f:g}" for f in fs) or "-"
    return (
        "U-MPC's noise: the toolkit's default (variant *our noise*) samples one discrete "
        "Laplace inside MPC (`noise_method=\"mpc\"`), so no party or coalition knows it; its "
        "variance is the *variance factor* times that of one discrete Laplace of the same "
        f"scale, measured here: {factors('umpc')}. The variants *paper's law* draw one "
        "discrete Laplace in total as Polya(1/40) differences of the paper's committee of 40 "
        f"(no collusion margin), variance factor {factors('umpc-law')}. The authors' code adds "
        "one Laplace of scale 2/(epsilon n) to the mean: the same scale as ours for a kernel "
        "of range 1, half ours for Kendall's range 2 (our sensitivity is the kernel's range). "
        "'total - DP only' is the part of the error due to the incompleteness of E.")


#: Which of the authors' results files carry the header their comparison.py writes
#: (|E| = int(0.02 C(n, 2))): only Bank's kendall.txt; elsewhere 0.02 C(n, 2) is a variant
#: tested against the file, not an attribution.
ATTRIBUTED_002 = ("kendall",)


def attribution_words(kernel: str) -> str:
    """Whether the 0.02 C(n, 2) variant is the authors' setting for this kernel's file."""
    if kernel in ATTRIBUTED_002:
        return ("0.02 C(n,2) is the authors' setting for this file (their kendall.txt carries "
                "the header of their comparison.py)")
    return (f"the 0.02 C(n,2) variant is a hypothesis here, not an attribution: only "
            f"kendall.txt carries their comparison.py's header; their {kernel} file matches "
            "no committed version of it")


def reading_verdict(readings) -> str:
    """The 'agrees' cell of a U-MPC row from the per-setting criteria (:mod:`experiments._verdict`).

    "yes, at <variant>" when every setting passes both tests (ratio within 2x and 3 s.e.);
    "k of m settings (at ...)" when some do; "no" when none does.
    """
    rs = [r for r in readings if r]
    if not rs:
        return "-"
    ok = [r for r in rs if r["verdict"] == "yes"]
    at = " / ".join(sorted({SHORT[r["best"]] for r in ok}))
    if len(ok) == len(rs):
        return "yes, at " + at
    return f"{len(ok)} of {len(rs)} settings (at {at})" if ok else "no"


def umpc_reading(stats, where: dict, paper_mse, n: int, eps: float) -> tuple[str, dict]:
    """Which U-MPC variant the paper's MSE matches, by :func:`experiments._verdict.criterion`.

    ``paper_mse``: the paper's (or the authors' file's) U-MPC MSE at this setting. The best
    variant is one passing both tests (ratio within 2x, 3 s.e.) if any, the nearest in ratio
    otherwise; every variant's ratio and z are printed.
    """
    from experiments import _verdict as V  # noqa: N812 - the codebase's short capital alias

    rows = {v: pick(stats, v, **where) for v in ("umpc", "umpc-law", "umpc-002")}
    rows = {v: s for v, s in rows.items() if s is not None}
    if paper_mse is None or not rows:
        return "", {}
    crit = {v: V.criterion(paper_mse, s["mse_total"], s["mse_total_se"]) for v, s in rows.items()}
    rank = {"yes": 0, "partly": 1, "no": 2}
    best = min(crit, key=lambda v: (rank[crit[v]["verdict"]], abs(math.log(crit[v]["ratio"]))))
    law = paper_noise_var(n, eps)
    text = (f"the paper's {C.fmt(paper_mse)} against {LABELS[best]}: "
            f"{C.pm(rows[best]['mse_total'], rows[best]['mse_total_se'])} "
            f"({V.criterion_words(crit[best])}); "
            + "; ".join(f"{LABELS[v]} {C.pm(r['mse_total'], r['mse_total_se'])} "
                        f"({V.criterion_words(crit[v])})" for v, r in rows.items() if v != best)
            + f"; the authors' noise alone {C.fmt(law)} (the paper's value is "
            f"{paper_mse / law:.2g} times it)")
    return text, {"best": best, "verdict": crit[best]["verdict"],
                  "within": crit[best]["verdict"] == "yes", "ratio": crit[best]["ratio"],
                  "z": crit[best]["z"], "ratios": {v: paper_mse / r["mse_total"]
                                                   for v, r in rows.items()}}
