"""ECDF paper, Section 6.7 (Fig. 7) and Section 4.2: measured seconds and bits of the private ECDF.

Barczewski, Mawass, Ramon, Section 6.7 times the smoothing (problem (3)) as
a function of N (Fig. 7: "the quadratic program is solved more quickly");
Section 4.2 analyses the FSS servers' costs. Three measured panels:

(a) smoothing seconds versus N (X_pois(3), epsilon = 1): ``l1`` (LP,
    HiGHS), ``l2`` (QP, Clarabel; the paper used cvxopt for both),
    ``isotonic``; median of 3 warm calls after a cold one;
(b) FSS servers versus n (N = 1024 thresholds, l = 32): the offline phase
    (every party's DCF key generation and upload, one batched ``dcf.gen``,
    :func:`ustat.ecdf.deploy`), one party's key generation alone, one
    server's evaluation of all n keys at one threshold (``fss.dcf.eval`` on
    the server's keys), and a whole query (both servers one after the other,
    plus the analyst), per query in a batch of 32;
(c) bits versus the number of queries Q at n = 10^4: FSS (keys once, then
    2 (index bits + l) per query) against pointwise secure aggregation
    (every party for every query; the indices go to the two servers too),
    from the network counters, with the
    Section 4.2 formulas drawn as lines.

The machine is shared (2 cores, other jobs): timings are noisy.
Quick mode: small N and n.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from benchmarks._common import cold_and_warm

if __package__ in (None, ""):                       # run as a file: make the repo importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments import _common as C  # noqa: N812 - the codebase's short capital module alias
from experiments import _verdict as V  # noqa: N812 - the codebase's short capital module alias

SMOOTH_N = [2 ** 8, 2 ** 10, 2 ** 12, 2 ** 14, 2 ** 16]
FSS_N = [1000, 10000, 100000]
QUERIES = [1, 10, 100, 1000]
METHODS = ("isotonic", "l1", "l2")
BITS = 32
N_POINTS = 1024


def _panel_release(run, N: int):
    """Panel (a)'s release at size N: Poisson(3) data, thresholds 1..N, epsilon 1, central."""
    from ustat.ecdf import release
    from ustat.specs import ECDFSpec

    x = C.xpois(3.0, N, run.seed_for("data", N))
    tau = np.arange(1, N + 1, dtype=np.float64)
    return release(x, ECDFSpec.of(thresholds=tau, epsilon=1.0, backend="central",
                                  bounds=(1, N), seed=run.seed_for("rel", N)))


def smoothing_times(run, sizes) -> list:
    from ustat.ecdf import Tree, smooth

    rows = []
    for N in sizes:
        rel = _panel_release(run, N)
        tree = Tree(N)
        for m in METHODS:
            cold, warm, _ = cold_and_warm(lambda r=rel, t=tree, m=m: smooth(r.values, t, m),
                                          repeat=3)
            rows.append({"panel": "smoothing", "N": N, "method": m, "seconds": warm,
                         "cold_seconds": cold})
    return rows


#: Sizes at which cvxopt (the paper's solver) is timed on both problems: panel (a)'s.
CVXOPT_N = SMOOTH_N


def cvxopt_l1(G, h):
    """Problem (3) with p = 1 by cvxopt's LP (nu = u - v, u, v >= 0, min sum(u + v))."""
    import cvxopt
    import cvxopt.solvers
    import scipy.sparse as sp

    M = G.shape[1]
    Gi = sp.vstack([sp.hstack([-G, G]), -sp.identity(2 * M)]).tocoo()
    sol = cvxopt.solvers.lp(cvxopt.matrix(1.0, (2 * M, 1)),
                            cvxopt.spmatrix(Gi.data.astype(float), Gi.row.tolist(),
                                            Gi.col.tolist(), Gi.shape),
                            cvxopt.matrix(np.concatenate([-h, np.zeros(2 * M)])),
                            options={"show_progress": False})
    return sol["status"]


def cvxopt_times(run, sizes) -> list:
    """Fig. 7 with the paper's solver: cvxopt's LP (l1) and QP (l2) on the same releases as
    panel (a), seconds of one cold and the median of 3 warm calls; [] without cvxopt."""
    try:
        import cvxopt  # noqa: F401 - only whether it is installed
    except ImportError:
        return []
    from experiments.ecdf_smoothing import cvxopt_l2
    from ustat.ecdf import Tree
    from ustat.ecdf.smoothing import smooth_problem

    rows = []
    for N in sizes:
        rel = _panel_release(run, N)
        G, h, _, _ = smooth_problem(Tree(N), rel.values)
        for m, fn in (("cvxopt-l1", lambda G=G, h=h: cvxopt_l1(G, h)),
                      ("cvxopt-l2", lambda G=G, h=h: cvxopt_l2(G, h, 1.0, None, 100)[1])):
            cold, warm, status = cold_and_warm(fn, repeat=3)
            rows.append({"panel": "smoothing-cvxopt", "N": N, "method": m, "seconds": warm,
                         "cold_seconds": cold, "status": status})
    return rows


def cvxopt_text(crows, by) -> tuple[str, str]:
    """Fig. 7's claim with cvxopt, beside Clarabel/HiGHS at the same N: the sentence, verdict."""
    if not crows:
        return "cvxopt not installed: Fig. 7 timed with Clarabel (QP) and HiGHS (LP) only", "-"
    cv = {(r["N"], r["method"]): r for r in crows}
    ns = sorted({r["N"] for r in crows})
    faster = [N for N in ns if cv[(N, "cvxopt-l2")]["seconds"] < cv[(N, "cvxopt-l1")]["seconds"]]
    text = ("with the paper's solver (cvxopt; median of 3 warm calls): " + "; ".join(
        f"N = {N}: LP {C.fmt(cv[(N, 'cvxopt-l1')]['seconds'])} s "
        f"({cv[(N, 'cvxopt-l1')]['status']}), QP {C.fmt(cv[(N, 'cvxopt-l2')]['seconds'])} s "
        f"({cv[(N, 'cvxopt-l2')]['status']}); HiGHS LP {C.fmt(by[(N, 'l1')])} s, Clarabel QP "
        f"{C.fmt(by[(N, 'l2')])} s" for N in ns if (N, "l1") in by)
        + f"; cvxopt's QP faster than its LP at {len(faster)} of {len(ns)} N")
    return text, C.verdict(len(faster) == len(ns), "yes", "partly" if faster else "no")


def fss_times(run, n: int, n_points: int) -> dict:
    from fss import dcf
    from mpc.arith.rng import CSPRNG
    from ustat.ecdf import deploy
    from ustat.ecdf.servers import domain_bits, index_bits, key_upload_bits
    from ustat.specs import ECDFSpec

    g = CSPRNG(run.seed_for("values", n))
    x = g.random(n)
    spec = ECDFSpec.of(thresholds=n_points, bounds=(0.0, 1.0), epsilon=1.0, backend="fss",
                       bits=BITS, seed=run.seed_for("dep", n))
    _, deploy_s, dep = cold_and_warm(lambda: deploy(x, spec), repeat=3)
    offline = dep.communication()["offline"]["bits"]
    params = dcf.DCFParams(domain_bits(n_points), BITS)
    _, one_key_s, _ = cold_and_warm(lambda: dcf.gen(params, np.zeros(1, np.uint64), 1, g), repeat=3)
    srv = dep.answerer
    point = np.full((1, n), (1 << params.n_bits) - 2 - n_points // 2, dtype=np.uint64)
    _, server_s, _ = cold_and_warm(lambda: dcf.eval(srv.params, 0, srv.keys[0], point), repeat=3)
    before = dep.communication()["online"]["bits"]
    batch = np.arange(32) * (n_points // 32)
    _, query_s, _ = cold_and_warm(lambda: dep.query(batch), repeat=3)
    per_query_bits = (dep.communication()["online"]["bits"] - before) / (4 * batch.size)
    return {"panel": "fss", "n": n, "N": n_points, "deploy_seconds": deploy_s,
            "one_party_keygen_seconds": one_key_s, "server_eval_one_query_seconds": server_s,
            "query_seconds_per_query_batch32": query_s / batch.size,
            "offline_bits_per_party": offline / n,
            "offline_bits_per_party_formula": 2 * key_upload_bits(n_points, BITS),
            "online_bits_per_query": per_query_bits,
            "online_bits_per_query_formula": 2 * (index_bits(n_points) + BITS)}


def traffic(run, n: int, n_points: int, queries) -> list:
    from mpc.arith.rng import CSPRNG
    from ustat.ecdf import deploy
    from ustat.ecdf.servers import index_bits, key_upload_bits
    from ustat.specs import ECDFSpec

    x = CSPRNG(run.seed_for("traffic-data", n)).random(n)
    rows = []
    ib, K = index_bits(n_points), key_upload_bits(n_points, BITS)
    for backend in ("fss", "pointwise"):
        for Q in queries:
            dep = deploy(x, ECDFSpec.of(thresholds=n_points, bounds=(0.0, 1.0), epsilon=1.0,
                                        backend=backend, bits=BITS,
                                        seed=run.seed_for("traffic", backend, Q)))
            dep.query(np.arange(Q) % n_points)
            rep = dep.communication()
            total = rep["offline"]["bits"] + rep["online"]["bits"]
            formula = (2 * x.size * K + Q * 2 * (ib + BITS) if backend == "fss"
                       else (x.size + 2) * Q * ib + 2 * x.size * Q * BITS + 2 * Q * BITS)
            rows.append({"panel": "traffic", "backend": backend, "n": x.size, "N": n_points,
                         "queries": Q, "total_bits": total, "formula_bits": formula,
                         "online_rounds": rep["online"]["rounds"]})
    return rows


def plot(run, smooth_rows, fss_rows, traffic_rows):
    fig, (ax, bx, cx) = C.subplots(1, 3, figsize=(20, 4.8))
    colors = {"isotonic": "tab:green", "l1": "tab:orange", "l2": "tab:blue"}
    for m in METHODS:
        sel = [r for r in smooth_rows if r["method"] == m]
        ax.plot([r["N"] for r in sel], [r["seconds"] for r in sel], marker="o", color=colors[m],
                label={"l1": "l1 (LP, HiGHS)", "l2": "l2 (QP, Clarabel)",
                       "isotonic": "isotonic (PAVA)"}[m])
    ax.set_title("(a) Fig. 7: smoothing time (median of 3)", fontsize=10)
    ax.set_xlabel("number of thresholds N (log scale)")
    ax.set_ylabel("seconds (wall clock, log scale)")
    n = np.array([r["n"] for r in fss_rows], dtype=float)
    for key, label, color in (
            ("deploy_seconds", "offline: all n parties' key gen + upload", "tab:purple"),
            ("server_eval_one_query_seconds", "one server, one query (n DCF evals)", "tab:blue"),
            ("query_seconds_per_query_batch32", "one query, both servers + analyst (batch 32)",
             "tab:red"),
            ("one_party_keygen_seconds", "one party's key generation", "tab:grey")):
        bx.plot(n, [r[key] for r in fss_rows], marker="o", color=color, label=label)
    top = fss_rows[-1]["server_eval_one_query_seconds"]
    bx.plot(n, top * n / n[-1], color="black", lw=0.8, ls=":", label="linear in n (through last)")
    bx.set_title(f"(b) FSS servers, N = {fss_rows[0]['N']}, l = {BITS} (median of 3)",
                 fontsize=10)
    bx.set_xlabel("number of parties n (log scale)")
    bx.set_ylabel("seconds (wall clock, log scale)")
    for backend, color in (("fss", "tab:blue"), ("pointwise", "tab:orange")):
        sel = [r for r in traffic_rows if r["backend"] == backend]
        q = [r["queries"] for r in sel]
        cx.plot(q, [r["total_bits"] for r in sel], marker="o", ms=9, lw=4, alpha=0.5,
                color=color, label=f"{backend}: measured (network counters)")
        cx.plot(q, [r["formula_bits"] for r in sel], color="black", ls="--", lw=1, marker="x",
                zorder=3, label=f"{backend}: Sec. 4.2 formula")
    cx.set_title(f"(c) total bits, n = {traffic_rows[0]['n']}, N = {traffic_rows[0]['N']}",
                 fontsize=10)
    cx.set_xlabel("number of ECDF queries |B| (log scale)")
    cx.set_ylabel("bits, offline + online (log scale)")
    for a in (ax, bx, cx):
        a.set_xscale("log")
        a.set_yscale("log")
        a.grid(alpha=0.3, which="both")
    ax.plot([], [], ls="none", label="(the paper's Fig. 7 gives no numbers)")
    for a in (ax, bx, cx):
        C.legend_outside(a)
    return C.save_png(run, fig)


def main(argv=None) -> int:
    run = C.start("ecdf_runtime", __doc__.splitlines()[0], argv)
    sizes = [2 ** 6, 2 ** 8, 2 ** 10] if run.quick else SMOOTH_N
    ns = [200, 1000] if run.quick else FSS_N
    n_points = 256 if run.quick else N_POINTS
    queries = [1, 10, 100] if run.quick else QUERIES
    n_traffic = 500 if run.quick else 10000
    with C.Progress(4, "runtime panels") as bar:
        srows = smoothing_times(run, sizes)
        bar.advance()
        crows = cvxopt_times(run, [N for N in CVXOPT_N if N in sizes] or sizes[:2])
        bar.advance()
        frows = [fss_times(run, n, n_points) for n in ns]
        bar.advance()
        trows = traffic(run, n_traffic, n_points, queries)
        bar.advance()
    C.write_csv(run, srows + crows + frows + trows)
    plot(run, srows, frows, trows)
    by = {(r["N"], r["method"]): r["seconds"] for r in srows}
    t1 = C.md_table(["N"] + [f"{m} seconds" for m in METHODS] + ["l1 / l2"],
                    [[N] + [by[(N, m)] for m in METHODS] + [by[(N, "l1")] / by[(N, "l2")]]
                     for N in sizes])
    t2 = C.md_table(["n", "offline s (all parties)", "one party keygen s",
                     "one server, one query s",
                     "query s (batch 32, per query)", "offline bits / party (formula)",
                     "online bits / query (formula)"],
                    [[r["n"], r["deploy_seconds"], r["one_party_keygen_seconds"],
                      r["server_eval_one_query_seconds"], r["query_seconds_per_query_batch32"],
                      f"{C.fmt(r['offline_bits_per_party'])} "
                      f"({C.fmt(r['offline_bits_per_party_formula'])})",
                      f"{C.fmt(r['online_bits_per_query'])} "
                      f"({C.fmt(r['online_bits_per_query_formula'])})"] for r in frows])
    t3 = C.md_table(["backend", "queries", "total bits (measured)", "formula", "online rounds"],
                    [[r["backend"], r["queries"], r["total_bits"], r["formula_bits"],
                      r["online_rounds"]] for r in trows])
    faster = [N for N in sizes if by[(N, "l2")] < by[(N, "l1")]]
    a, b = frows[-2], frows[-1]
    slope = (np.log(b["server_eval_one_query_seconds"] / a["server_eval_one_query_seconds"])
             / np.log(b["n"] / a["n"]))
    exact = all(r["total_bits"] == r["formula_bits"] for r in trows)
    cl = [
        ("Fig. 7: the quadratic program (l2) is solved more quickly than the LP (l1)",
         f"l2 faster at {len(faster)} of {len(sizes)} sizes (l1 / l2 at N = {sizes[-1]}: "
         f"{C.fmt(by[(sizes[-1], 'l1')] / by[(sizes[-1], 'l2')])})",
         C.verdict(len(faster) == len(sizes))),
        ("Sec. 4.2: FSS costs O(n + m B) bits for B queries, pointwise O(n B)",
         "measured totals equal the formulas: " + C.verdict(exact), C.verdict(exact)),
        ("Sec. 4.2: server work per query is linear in the key count n",
         "one-server seconds per query: " + ", ".join(
             f"n = {r['n']}: {C.fmt(r['server_eval_one_query_seconds'])}" for r in frows)
         + f"; log-log slope over the last two sizes {C.fmt(slope)}",
         C.verdict(0.7 < slope < 1.3))]
    cvx, cvx_verdict = cvxopt_text(crows, by)
    cl.insert(1, ("Fig. 7 with the paper's solver: cvxopt's QP faster than its LP", cvx,
                  cvx_verdict))
    claims = C.md_table(["paper's claim", "ours", "agrees"], cl)
    C.write_markdown(run.path(".md"), "ECDF paper, Sec. 6.7 and 4.2: runtime and traffic", run, [
        "All seconds are wall-clock medians of 3 warm calls on a shared 2-core machine; bits "
        "are the network's counters.",
        "## (a) Smoothing time versus N (the paper's Fig. 7)\n\n" + t1,
        f"## (b) FSS servers versus n (N = {n_points}, l = {BITS})\n\n" + t2,
        f"## (c) Traffic versus queries (n = {trows[0]['n']}, N = {trows[0]['N']})\n\n" + t3,
        "## Claims\n\n" + claims,
        f"Figure: `{run.name}.png`; data: `{run.name}.csv`."])
    C.write_json(run, [
        C.item("ECDF", "Fig. 7 (smoothing runtime)", f"N = {sizes[0]}..{sizes[-1]}, median of 3",
               "QP faster than LP (figure; cvxopt)", cl[0][1],
               "Clarabel (QP) and HiGHS (LP): " + cl[0][1] + "; " + cvx,
               "`ecdf_runtime.md`, (a) and Claims", V.combine([cl[0][2], cvx_verdict])),
        C.item("ECDF", "Section 4.2 (FSS costs)", f"n = {ns[0]}..{ns[-1]}, N = {n_points}",
               "O(n + m B) bits; linear server work", f"{cl[2][1]}; {cl[3][1]}",
               "bits from the network's counters against the section's formulas",
               "`ecdf_runtime.md`, (b) and (c)",
               V.combine([cl[2][2], cl[3][2]]))], {})
    print(f"[{run.name}] done in {run.elapsed():.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
