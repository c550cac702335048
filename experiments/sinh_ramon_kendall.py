"""Sinh & Ramon, Figs. 3 and 4: Kendall's tau on Bank versus the bins t, eps in {0.1, 1}.

The paper (Section 6.2.2; Bank Marketing bank.csv, n = 4521, age and
balance scaled to [0, 1]; |E| = 2n = 9042 for U-MPC in the captions; t in
{4, 8, 16, 32, 64} bins per column, i.e. T = t^2 cells, the "bins" column
16..4096 of the authors' results/kendall.txt) plots the online total
communication and the total computation (server + n times per party) versus
t (Fig. 3), and the MSE versus t and versus the communication (Fig. 4). Its
MSEs are simulations (5 runs per point), its costs formulas.

Here the protocols run for real (:mod:`experiments._sinh_ramon`): U-MPC in
the variants ``umpc`` (|E| = 2n, our committee noise), ``umpc-law`` (2n,
the paper's law) and ``umpc-002`` (|E| = 0.02 C(n, 2) = 204,349, the
paper's law: the authors' comparison.py when their results were written),
and ``bell-ldp``, ``ghazi``, ``ghazi-sm`` with ``bins=t``. U-MPC does not
discretize, so its error does not depend on t (a horizontal line). Its error
is reported against the complete U-statistic (the paper's MSE) and against
the incomplete one on the same edges (DP only). Why the baselines' MSEs
differ from the paper's is run in :mod:`experiments.authors_code` (their
code on these data).

Full mode: 60 U-MPC runs per epsilon (20 for |E| = 0.02 C(n, 2)), 10 runs
per (epsilon, t) for the baselines (about 4 minutes). Quick mode: the first
600 records, t in {4, 16}, 2 runs.
"""

from __future__ import annotations

import os
import sys

if __package__ in (None, ""):                       # run as a file: make the repo importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments import _common as C  # noqa: N812 - the codebase's short capital module alias
from experiments import _sinh_ramon as S  # noqa: N812 - the codebase's short capital module alias
from experiments import _verdict as V  # noqa: N812 - the codebase's short capital module alias
from experiments._sinh_ramon import BASELINES, LABELS, pick

EPSILONS = [0.1, 1.0]
VARIANTS = ["umpc", "umpc-law", "umpc-002"]
#: Means of the authors' per-run squared errors (results/kendall.txt at the pinned commit of
#: experiments/authors_code.py, 5 runs per point; their "bins" is T = t^2).
PAPER_MSE = {
    (0.1, 4): {"umpc": 2.17e-4, "bell-ldp": 1.81e5, "ghazi": 0.695, "ghazi-sm": 0.0308},
    (0.1, 8): {"umpc": 7.60e-5, "bell-ldp": 4.96e6, "ghazi": 344, "ghazi-sm": 0.0543},
    (0.1, 16): {"umpc": 4.87e-6, "bell-ldp": 1.17e9, "ghazi": 3.28e3, "ghazi-sm": 0.00184},
    (0.1, 32): {"umpc": 3.78e-5, "bell-ldp": 1.88e9, "ghazi": 3.98e4, "ghazi-sm": 0.00531},
    (0.1, 64): {"umpc": 2.49e-5, "bell-ldp": 3.22e10, "ghazi": 1.27e5, "ghazi-sm": 0.00292},
    (1.0, 4): {"umpc": 3.11e-6, "bell-ldp": 0.208, "ghazi": 0.0138, "ghazi-sm": 0.0169},
    (1.0, 8): {"umpc": 1.71e-6, "bell-ldp": 48.2, "ghazi": 0.29, "ghazi-sm": 0.00386},
    (1.0, 16): {"umpc": 2.87e-6, "bell-ldp": 1.40e3, "ghazi": 430, "ghazi-sm": 0.016},
    (1.0, 32): {"umpc": 1.34e-6, "bell-ldp": 2.63e4, "ghazi": 7.81e4, "ghazi-sm": 0.00554},
    (1.0, 64): {"umpc": 4.84e-6, "bell-ldp": 4.52e5, "ghazi": 3.96e6, "ghazi-sm": 0.00178},
}
#: U-MPC's paper MSE over all its 25 runs per epsilon (it does not depend on t).
PAPER_UMPC = {0.1: 7.21e-5, 1.0: 2.77e-6}


def measure(run, X, ts, umpc_runs, base_runs) -> tuple[list, float]:
    from ustat import kernels
    from ustat.baselines._common import evaluation

    ref = float(evaluation(kernels.get("kendall"), X)["statistic_complete"])

    def one(st, r):
        return S.run_one(st["protocol"], X, "kendall", epsilon=st["epsilon"],
                         bins=st["bins"] or 64,
                         seed=run.seed_for(st["protocol"], st["epsilon"], st["bins"], r),
                         reference=ref)

    settings = [{"epsilon": e, "bins": None, "protocol": v} for e in EPSILONS for v in VARIANTS]
    settings += [{"epsilon": e, "bins": t, "protocol": p}
                 for e in EPSILONS for t in ts for p in BASELINES]

    def runs(st):
        if st["protocol"] == "umpc-002":
            return min(umpc_runs, max(2, umpc_runs // 3))
        return umpc_runs if st["protocol"] in VARIANTS else base_runs
    return C.repeat_runs(settings, runs, one, "Kendall, 4 protocols"), ref


def plot(run, stats, ts, n):
    fig, axes = C.subplots(2, 2, figsize=(15, 10))
    (a_comm, a_comp), (a_mse, a_mse_comm) = axes
    styles = {0.1: "--", 1.0: "-"}
    for e in EPSILONS:
        for v in VARIANTS:
            u = pick(stats, v, epsilon=e)
            kw = dict(ls=styles[e], color=S.COLORS[v], marker=S.MARKERS[v])
            a_mse.plot(ts, [u["mse_total"]] * len(ts), label=f"{LABELS[v]}, eps={e:g}", **kw)
            a_mse_comm.plot([u["online_bits"]], [u["mse_total"]], ls="none",
                            color=S.COLORS[v], marker=S.MARKERS[v],
                            mfc=None if e == 1 else "none", label=f"{LABELS[v]}, eps={e:g}")
            if v == "umpc":
                a_comm.plot(ts, [u["online_bits"]] * len(ts), label=f"{LABELS[v]}, eps={e:g}",
                            **kw)
                a_comp.plot(ts, [u["seconds"]] * len(ts), label=f"{LABELS[v]}, eps={e:g}", **kw)
                a_mse.plot(ts, [u["mse_dp"]] * len(ts), ls=styles[e], color=S.COLORS[v],
                           marker="o", mfc="none", label=f"{LABELS[v]} DP only, eps={e:g}")
        for p in BASELINES:
            st = [pick(stats, p, epsilon=e, bins=t) for t in ts]
            kw = dict(ls=styles[e], color=S.COLORS[p], marker=S.MARKERS[p],
                      label=f"{LABELS[p]}, eps={e:g}")
            a_comm.plot(ts, [s["online_bits"] for s in st], **kw)
            a_comp.plot(ts, [s["seconds"] for s in st], **kw)
            a_mse.plot(ts, [s["mse_total"] for s in st], **kw)
            a_mse_comm.plot([s["online_bits"] for s in st], [s["mse_total"] for s in st], **kw)
            a_mse.plot(ts, [PAPER_MSE[(e, t)][p] for t in ts],
                       **C.paper_style(e, EPSILONS, S.COLORS[p]))
            if e == 1.0:
                a_comm.plot(ts, [S.paper_comm(p, n, t * t, e, "kendall") for t in ts], ls=":",
                            lw=1, color=S.COLORS[p])
        a_mse.plot(ts, [PAPER_MSE[(e, t)]["umpc"] for t in ts],
                   **C.paper_style(e, EPSILONS, S.COLORS["umpc"]))
    a_comm.plot(ts, [S.paper_comm("umpc", n, 0, 1.0, "kendall")] * len(ts), ls=":", lw=1,
                color=S.COLORS["umpc"])
    a_comm.plot([], [], ls=":", color="grey", label="paper's cost model (formulas, eps=1)")
    C.paper_legend(a_mse, EPSILONS, "results/kendall.txt")
    titles = ["Fig. 3 left: online communication (measured)",
              "Fig. 3 right: total computation, party + server (measured)",
              "Fig. 4 left: MSE vs complete U-statistic", "Fig. 4 right: MSE vs communication"]
    ylabels = ["online bits (all parties)", "seconds (all parties and the server)",
               "MSE of Kendall's tau", "MSE of Kendall's tau"]
    for ax, title, yl in zip(axes.ravel(), titles, ylabels):
        ax.set_yscale("log")
        ax.set_xscale("log", base=2 if ax is not a_mse_comm else 10)
        ax.set_xlabel("online bits (measured)" if ax is a_mse_comm else "t (bins per column)")
        ax.set_ylabel(yl)
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3, which="both")
        C.legend_outside(ax, fontsize=6)
    fig.suptitle(f"Kendall's tau, Bank (age, balance), n = {n}, threat model M_HF; dashed: "
                 "epsilon = 0.1, solid: epsilon = 1", fontsize=10)
    return C.save_png(run, fig)


def claims(stats, ts) -> list:
    umpc_low = [(e, t) for e in EPSILONS for t in ts
                if min(pick(stats, v, epsilon=e)["mse_total"] for v in VARIANTS)
                < min(pick(stats, p, epsilon=e, bins=t)["mse_total"] for p in BASELINES)]
    bell_cheap = [(e, t) for e in EPSILONS for t in ts
                  if pick(stats, "bell-ldp", epsilon=e, bins=t)["online_bits"]
                  == min([pick(stats, p, epsilon=e, bins=t)["online_bits"] for p in BASELINES]
                         + [pick(stats, "umpc", epsilon=e)["online_bits"]])]
    g_above = [t for t in ts if pick(stats, "ghazi", epsilon=1.0, bins=t)["online_bits"]
               > pick(stats, "umpc", epsilon=1.0)["online_bits"]]
    comp = [t for t in ts if pick(stats, "umpc", epsilon=1.0)["seconds"]
            < min(pick(stats, p, epsilon=1.0, bins=t)["seconds"] for p in BASELINES)]
    cells = len(EPSILONS) * len(ts)
    return [
        ("U-MPC achieves the lowest MSE (Fig. 4)", f"at {len(umpc_low)} of {cells} (epsilon, t)",
         C.verdict(len(umpc_low) == cells)),
        ("Bell requires the lowest communication (Fig. 4)",
         f"at {len(bell_cheap)} of {cells} (epsilon, t)", C.verdict(len(bell_cheap) == cells)),
        ("for epsilon >= 1 Ghazi sends more than U-MPC (Fig. 3)",
         f"at t in {g_above or 'none'}", C.verdict(len(g_above) == len(ts), "yes",
                                                   "partly" if g_above else "no")),
        ("U-MPC has the lowest total computation beyond some t (Fig. 3)",
         f"lowest at t in {comp or 'none'}",
         V.suffix_verdict(comp, ts)),
    ]


def baselines_agreement(stats, ts) -> tuple[str, dict]:
    """The baselines' MSEs (Bell, Ghazi, GhaziSM at every (epsilon, t)) against the paper's.

    Each cell by :func:`experiments._verdict.criterion` (ratio within 2x and 3 s.e.), as
    every other row. Returns the sentence and the counts ``{"yes", "partly", "no"}``.
    """
    counts = {"yes": 0, "partly": 0, "no": 0}
    for e in EPSILONS:
        for t in ts:
            for p in BASELINES:
                s = pick(stats, p, epsilon=e, bins=t)
                counts[V.criterion(PAPER_MSE[(e, t)][p], s["mse_total"],
                                   s["mse_total_se"])["verdict"]] += 1
    cells = sum(counts.values())
    return (f"{V.CRITERION_TEXT}; ours agree with the paper's in {counts['yes']} of {cells} "
            f"cells ({counts['partly']} more within {V.RATIO_MAX:g}x only, {counts['no']} "
            f"beyond {V.RATIO_MAX:g}x)"), counts


def fig3_verdict(cl) -> str:
    """The Fig. 3 row: every cost claim (communication and computation), not only one."""
    return V.combine(c[2] for c in cl[1:])


def main(argv=None) -> int:
    run = C.start("sinh_ramon_kendall", __doc__.splitlines()[0], argv)
    X = C.bank_small(limit=600 if run.quick else None)
    n = X.shape[0]
    ts = [4, 16] if run.quick else [4, 8, 16, 32, 64]
    rows, ref = measure(run, X, ts, run.repeats(2, 60), run.repeats(2, 10))
    stats = S.summarize(rows, ["epsilon", "bins"])
    C.write_csv(run, rows)
    plot(run, stats, ts, n)
    body = []
    for e in EPSILONS:
        for v in VARIANTS:
            u = pick(stats, v, epsilon=e)
            body.append((e, "-", LABELS[v], u["runs"], C.pm(u["mse_total"], u["mse_total_se"]),
                         C.pm(u["mse_dp"], u["mse_dp_se"]), PAPER_UMPC[e], u["online_bits"],
                         S.paper_comm("umpc", n, 0, e, "kendall"), u["mean_party_bits"],
                         u["max_party_bits"], u["per_party_seconds"], u["server_seconds"],
                         u["seconds"]))
        for t in ts:
            for p in BASELINES:
                s = pick(stats, p, epsilon=e, bins=t)
                body.append((e, t, LABELS[p], s["runs"], C.pm(s["mse_total"], s["mse_total_se"]),
                             None, PAPER_MSE[(e, t)][p], s["online_bits"],
                             S.paper_comm(p, n, t * t, e, "kendall"), s["mean_party_bits"],
                             s["max_party_bits"], s["per_party_seconds"], s["server_seconds"],
                             s["seconds"]))
    table = C.md_table(
        ["epsilon", "t", "protocol", "runs", "MSE vs complete U", "MSE vs incomplete U (DP only)",
         "paper MSE", "online bits (measured)", "paper's bits (cost model)", "bits/party mean",
         "bits/party max", "per-party s", "server s", "total computation s"], body)
    readings = {e: S.umpc_reading(stats, {"epsilon": e}, PAPER_UMPC[e], n, e) for e in EPSILONS}
    cl = claims(stats, ts)
    u1, ul = pick(stats, "umpc", epsilon=1.0), pick(stats, "umpc-law", epsilon=1.0)
    text = (
        f"Kendall's tau of (age, balance) on bank.csv, n = {n}, min-max scaled; complete "
        f"U-statistic tau = {ref:.5f}. Baselines with t bins per column (T = t^2 cells). "
        "Costs are measured; 'paper's bits' is the authors' cost model, 'paper MSE' the mean "
        "of their 5 simulated runs (U-MPC: of all 25 runs per epsilon).\n\n"
        f"Our noise at epsilon = 1 (2n): variance {C.fmt(u1['noise_var'])} = "
        f"{S.noise_words(u1['variance_factor'])}; at the paper's "
        f"law {C.fmt(ul['noise_var'])} ({ul['variance_factor']:g} x), which is "
        f"{ul['noise_var'] / S.paper_noise_var(n, 1.0):.2f} times the authors' code's noise "
        f"{C.fmt(S.paper_noise_var(n, 1.0))} (their sensitivity 1 for a kernel of range 2). "
        f"The incompleteness of |E| = 2n adds {C.fmt(u1['mse_total'] - u1['mse_dp'])} to "
        "the MSE against the complete U-statistic.")
    reading = "\n".join(f"- epsilon {C.fmt(e)}: {t}" for e, (t, _) in readings.items())
    errs = S.umpc_error_table(stats, ["epsilon"], lambda st: PAPER_UMPC[st["epsilon"]],
                              lambda st: (n, st["epsilon"]))
    C.write_markdown(run.path(".md"), "Sinh & Ramon Figs. 3 and 4: Kendall's tau on Bank", run, [
        text, "## Claims\n\n" + C.md_table(["paper's observation", "ours", "agrees"], cl),
        "## Which U-MPC the paper's MSE is\n\n" + V.CRITERION_TEXT + "; "
        + S.attribution_words("kendall") + ".\n\n" + reading, table,
        "## U-MPC: DP error and noise\n\n" + S.noise_text(stats), errs,
        "The baselines' MSEs against the paper's: `authors_code.md` runs the authors' "
        "kendall_bell, kendall_ghazi and kendall_ghazi_shuffle on these data."])
    r1 = readings[1.0][1]
    best1 = pick(stats, r1["best"], epsilon=1.0)
    b4 = pick(stats, "bell-ldp", epsilon=1.0, bins=ts[0])
    base_text, base = baselines_agreement(stats, ts)
    cells = sum(base.values())
    g64 = {p: pick(stats, p, epsilon=1.0, bins=ts[-1]) for p in ("ghazi", "ghazi-sm")}
    items = [
        C.item("Sinh-Ramon", "Fig. 3 (Kendall communication and computation)",
               f"bank.csv (age, balance), n = {n}, t = {ts[0]}..{ts[-1]}, epsilon 0.1 and 1",
               "cost model (formulas)",
               f"U-MPC {C.fmt(u1['online_bits'])} bits; Bell {C.fmt(b4['online_bits'])} (t = "
               f"{ts[0]})", "; ".join(f"{c[0]}: {c[1]}" for c in cl[1:]),
               "`sinh_ramon_kendall.md`, Claims", fig3_verdict(cl)),
        C.item("Sinh-Ramon", "Fig. 4 (Kendall MSE vs t): U-MPC",
               f"as above; U-MPC |E| = 2n ({u1['runs']} runs, our noise and the paper's law) "
               f"and 0.02 C(n, 2) (paper's law, "
               f"{pick(stats, 'umpc-002', epsilon=1.0)['runs']} runs)",
               f"{C.fmt(PAPER_UMPC[1.0])} (epsilon 1), {C.fmt(PAPER_UMPC[0.1])} (0.1)",
               f"2n, our noise: {C.pm(u1['mse_total'], u1['mse_total_se'])}; "
               f"{LABELS[r1['best']]}: {C.pm(best1['mse_total'], best1['mse_total_se'])}"
               " (epsilon 1)", V.CRITERION_TEXT + "; " + S.attribution_words("kendall") + "; "
               + "; ".join(f"epsilon {C.fmt(e)}: {t}" for e, (t, _) in readings.items()),
               "`sinh_ramon_kendall.md`, 'Which U-MPC'",
               S.reading_verdict(r for _, r in readings.values())),
        C.item("Sinh-Ramon", "Fig. 4 (Kendall MSE vs t): baselines",
               f"as above, {pick(stats, 'bell-ldp', epsilon=1.0, bins=ts[0])['runs']} runs per t",
               f"epsilon 1, t = {ts[-1]}: Ghazi {C.fmt(PAPER_MSE[(1.0, ts[-1])]['ghazi'])}, "
               f"GhaziSM {C.fmt(PAPER_MSE[(1.0, ts[-1])]['ghazi-sm'])}; t = {ts[0]}: Bell "
               f"{C.fmt(PAPER_MSE[(1.0, ts[0])]['bell-ldp'])}",
               f"Ghazi {C.pm(g64['ghazi']['mse_total'], g64['ghazi']['mse_total_se'])}, GhaziSM "
               f"{C.pm(g64['ghazi-sm']['mse_total'], g64['ghazi-sm']['mse_total_se'])}; Bell "
               f"{C.pm(b4['mse_total'], b4['mse_total_se'])}",
               base_text + "; code reading (not isolated by a run): their kendall_bell fills "
               "A[i+j, k+v] (cells collide) and draws a cell with probability beta/(2t) instead of "
               "beta/t^2; their kendall_ghazi draws its sign with weights (100 p, 1 - 100 p) "
               "and its one-hot at i+j; their kendall_ghazi_shuffle's DLap noise ignores the "
               "sensitivity of L x; U-MPC is lowest " + cl[0][1],
               "`sinh_ramon_kendall.md`, main table; `authors_code.md`, Bell and Ghazi tables",
               C.verdict(base["yes"] == cells and cl[0][2] == "yes", "yes",
                         f"numbers {base['yes']} of {cells}; ordering {cl[0][2]}")),
    ]
    items[1]["see"] = ["authors_code:kendall-umpc"]
    items[2]["see"] = ["authors_code:bank-bell", "authors_code:bank-ghazi"]
    C.write_json(run, items, {"stats": stats, "readings": {str(e): r for e, (_, r) in
                                                           readings.items()}})
    print(f"[{run.name}] done in {run.elapsed():.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
