"""Sinh & Ramon, Figs. 3 and 4: Kendall's tau on Bank versus the bins t, eps in {0.1, 1}.

The paper (Section 6.2.2; Bank Marketing bank.csv, n = 4521, age and
balance scaled to [0, 1]; |E| = 2n = 9042 for U-MPC; t in {4, 8, 16, 32, 64}
bins per column, i.e. T = t^2 cells, the "bins" column 16..4096 of the
authors' results/kendall.txt) plots the online total communication and the
total computation (server + n times per party) versus t (Fig. 3), and the
MSE versus t and versus the communication (Fig. 4). Its MSEs are
simulations (5 runs per point), its costs formulas.

Here the protocols run for real (see :mod:`experiments.sinh_ramon_gini` for
the measurement: network counters, wall time split at the parties' last
message): U-MPC (:func:`ustat.umpc.run_umpc`, threat model ``"hf"``, l = 40,
c = 14, which is also the toolkit's default encoding for Kendall) and
``bell-ldp``, ``ghazi``, ``ghazi-sm`` (:func:`ustat.baselines.registry.run_protocol`
with ``bins=t``). U-MPC does not discretize, so its error does not depend
on t (a horizontal line). Its error is reported two ways: against the
incomplete U-statistic on the same edges (DP only, ``evaluate="incomplete"``)
and against the complete U-statistic (DP + incompleteness of E). The
baselines estimate the complete (discretized) statistic: their error is
against the complete one.

Full mode: 60 U-MPC runs per epsilon, 10 runs per (epsilon, t) for the
baselines (70 to 110 s measured on a shared 2-core machine). Quick mode: the first 600 records,
t in {4, 16}, 2 runs.
"""

from __future__ import annotations

import sys

import numpy as np

from experiments import _common as C
from experiments.sinh_ramon_duplicates import bank_small
from experiments.sinh_ramon_gini import (COLORS, LABELS, MARKERS, UMPC_NOISE_TEXT, paper_comm,
                                         paper_noise_var, pick, run_one, summarize,
                                         umpc_error_table)

EPSILONS = [0.1, 1.0]
BASELINES = ["bell-ldp", "ghazi", "ghazi-sm"]
#: Means of the authors' per-run squared errors (results/kendall.txt of
#: github.com/anonguest1398/federated-U-statistics, 5 runs per point; their "bins" is T = t^2).
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
        return run_one(st["protocol"], X, "kendall", epsilon=st["epsilon"],
                       bins=st["bins"] or 64,
                       seed=run.seed_for(st["protocol"], st["epsilon"], st["bins"], r),
                       reference=ref)

    settings = [{"epsilon": e, "bins": None, "protocol": "umpc"} for e in EPSILONS]
    settings += [{"epsilon": e, "bins": t, "protocol": p}
                 for e in EPSILONS for t in ts for p in BASELINES]
    runs = lambda st: umpc_runs if st["protocol"] == "umpc" else base_runs   # noqa: E731
    return C.repeat_runs(settings, runs, one, "Kendall, 4 protocols"), ref


def plot(path, stats, ts, n):
    plt = C.pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
    (a_comm, a_comp), (a_mse, a_mse_comm) = axes
    styles = {0.1: "--", 1.0: "-"}
    for e in EPSILONS:
        u = pick(stats, "umpc", epsilon=e)
        a_comm.plot(ts, [u["online_bits"]] * len(ts), ls=styles[e], color=COLORS["umpc"],
                    marker=MARKERS["umpc"], label=f"U-MPC, eps={e:g}")
        a_comp.plot(ts, [u["seconds"]] * len(ts), ls=styles[e],
                    color=COLORS["umpc"], marker=MARKERS["umpc"], label=f"U-MPC, eps={e:g}")
        a_mse.plot(ts, [u["mse_total"]] * len(ts), ls=styles[e], color=COLORS["umpc"],
                   marker=MARKERS["umpc"], label=f"U-MPC total, eps={e:g}")
        a_mse.plot(ts, [u["mse_dp"]] * len(ts), ls=styles[e], color=COLORS["umpc"],
                   marker="o", mfc="none", label=f"U-MPC DP only, eps={e:g}")
        a_mse_comm.plot([u["online_bits"]], [u["mse_total"]], ls="none", color=COLORS["umpc"],
                        marker=MARKERS["umpc"], mfc=None if e == 1 else "none",
                        label=f"U-MPC total, eps={e:g}")
        a_mse_comm.plot([u["online_bits"]], [u["mse_dp"]], ls="none", color=COLORS["umpc"],
                        marker="*", ms=10, mfc=None if e == 1 else "none",
                        label=f"U-MPC DP only, eps={e:g}")
        for p in BASELINES:
            st = [pick(stats, p, epsilon=e, bins=t) for t in ts]
            kw = dict(ls=styles[e], color=COLORS[p], marker=MARKERS[p],
                      label=f"{LABELS[p]}, eps={e:g}")
            a_comm.plot(ts, [s["online_bits"] for s in st], **kw)
            a_comp.plot(ts, [s["seconds"] for s in st], **kw)
            a_mse.plot(ts, [s["mse_total"] for s in st], **kw)
            a_mse_comm.plot([s["online_bits"] for s in st], [s["mse_total"] for s in st], **kw)
            a_mse.plot(ts, [PAPER_MSE[(e, t)][p] for t in ts], ls="none", marker="D",
                       mfc="none", ms=7, color=COLORS[p])
            if e == 1.0:
                a_comm.plot(ts, [paper_comm(p, n, t * t, e, "kendall") for t in ts], ls=":",
                            lw=1, color=COLORS[p])
        a_mse.plot(ts, [PAPER_MSE[(e, t)]["umpc"] for t in ts], ls="none", marker="D",
                   mfc="none", ms=7, color=COLORS["umpc"])
    a_comm.plot(ts, [paper_comm("umpc", n, 0, 1.0, "kendall")] * len(ts), ls=":", lw=1,
                color=COLORS["umpc"])
    a_comm.plot([], [], ls=":", color="grey", label="paper's cost model (eps=1)")
    a_mse.plot([], [], ls="none", marker="D", mfc="none", color="grey",
               label="paper (results/kendall.txt)")
    titles = ["online communication, total bits (measured)",
              "total computation: party + server, s (measured wall time)",
              "MSE vs complete U-statistic", "MSE vs online communication"]
    for ax, title in zip(axes.ravel(), titles):
        ax.set_yscale("log")
        ax.set_xscale("log", base=2 if ax is not a_mse_comm else 10)
        ax.set_xlabel("online bits" if ax is a_mse_comm else "t (bins per column)")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=6, ncol=2)
    fig.suptitle(f"Kendall's tau, Bank (age, balance), n = {n}, U-MPC |E| = 2n, "
                 "threat model M_HF", fontsize=10)
    return C.save_png(fig, path)


def main(argv=None) -> int:
    run = C.start("sinh_ramon_kendall", __doc__.splitlines()[0], argv)
    X = bank_small(600 if run.quick else None)
    n = X.shape[0]
    ts = [4, 16] if run.quick else [4, 8, 16, 32, 64]
    rows, ref = measure(run, X, ts, run.repeats(2, 60), run.repeats(2, 10))
    stats = summarize(rows, ["epsilon", "bins"])
    C.write_csv(run.path(".csv"), rows)
    plot(run.path(".png"), stats, ts, n)
    body = []
    for e in EPSILONS:
        u = pick(stats, "umpc", epsilon=e)
        body.append((e, "-", LABELS["umpc"], u["runs"], u["mse_total"], u["mse_dp"],
                     PAPER_UMPC[e], u["online_bits"], paper_comm("umpc", n, 0, e, "kendall"),
                     u["mean_party_bits"], u["max_party_bits"], u["per_party_seconds"],
                     u["server_seconds"], u["seconds"]))
        for t in ts:
            for p in BASELINES:
                s = pick(stats, p, epsilon=e, bins=t)
                body.append((e, t, LABELS[p], s["runs"], s["mse_total"], None,
                             PAPER_MSE[(e, t)][p], s["online_bits"],
                             paper_comm(p, n, t * t, e, "kendall"), s["mean_party_bits"],
                             s["max_party_bits"], s["per_party_seconds"], s["server_seconds"],
                             s["seconds"]))
    table = C.md_table(
        ["epsilon", "t", "protocol", "runs", "MSE vs complete U", "MSE vs incomplete U (DP only)",
         "paper MSE", "online bits (measured)", "paper's bits (cost model)", "bits/party mean",
         "bits/party max", "per-party s", "server s", "total computation s"], body)
    u1, u01 = pick(stats, "umpc", epsilon=1.0), pick(stats, "umpc", epsilon=0.1)
    best_ldp = min(s["mse_total"] for s in stats
                   if s["protocol"] in ("bell-ldp", "ghazi") and s["epsilon"] == 1.0)
    text = (
        f"Kendall's tau of (age, balance) on bank.csv, n = {n}, each column scaled to [0, 1] "
        f"by its min and max; complete U-statistic tau = {ref:.5f}. U-MPC: |E| = 2n = {2 * n} "
        "edges (balanced sampler), threat model M_HF (`threat_model=\"hf\"`), l = 40, c = 14 "
        "(the toolkit's default for Kendall too); baselines with t bins per column "
        "(T = t^2 cells). Costs are measured (network counters; wall time split at the "
        "parties' last message, see sinh_ramon_gini.md); 'paper's bits' is the authors' cost "
        "model (formulas), 'paper MSE' the mean of their 5 simulated runs.\n\n"
        "Known finding, checked: the paper's U-MPC MSE at epsilon = 1 "
        f"({PAPER_UMPC[1.0]:.2e}, mean of its 25 runs) is of the order of the DP error alone: "
        f"ours against the incomplete U-statistic on the same edges is {u1['mse_dp']:.2e} "
        f"(the release's noise variance {u1['noise_var']:.2e} is {u1['variance_factor']:g} "
        "times one discrete Laplace, the collusion margin of the committee noise; the "
        f"authors' simulation drew Laplace(2/(epsilon n)), variance "
        f"{paper_noise_var(n, 1.0):.2e}), while against the complete U-statistic it is "
        f"{u1['mse_total']:.2e}: the incompleteness of E adds "
        f"{u1['mse_total'] - u1['mse_dp']:.2e} (about Var(f)/|E|), more than 10 times the "
        "paper's number, which therefore leaves it out. At epsilon = 0.1 the DP noise "
        f"dominates both: DP only {u01['mse_dp']:.2e}, total {u01['mse_total']:.2e} (paper "
        f"{PAPER_UMPC[0.1]:.2e}; its simulated noise {paper_noise_var(n, 0.1):.2e}, our "
        f"release's {u01['noise_var']:.2e}: 4 for the collusion margin times 4 for Kendall's "
        "range 2). Even the total error is far "
        f"below the best LDP baseline at epsilon = 1 ({best_ldp:.2e}): U-MPC has the lowest "
        "MSE, as the paper reports; Bell has the lowest communication (it sends one cell "
        "index, ceil(log2 t^2) bits, where the paper's cost model counts a one-hot of t^2 "
        "l-bit words), and Ghazi sends more than U-MPC from t = 16 on (our Ghazi factorizes "
        "the T x T kernel matrix exactly, d = T, where the paper's cost model uses a JL "
        "dimension growing with n epsilon^2). Total computation (Fig. 3 right, measured wall "
        "time of all parties and the server): U-MPC's is below Ghazi's and GhaziSM's at "
        "large t but above Bell's at every t, because our Bell estimates from the histogram "
        "in O(n + T^2) rather than the O(n^2 T^2) pair loop of the paper's cost model. "
        "GhaziSM's time falls where its simulation shortcut starts (n m 2d > 2^22 values: "
        "the parties' shares are not materialized, their sum is drawn after the shuffle "
        "round; per-party and server times '-'): from there on its time is the shortcut's "
        "and underestimates the protocol's, while its bits are counted in full.")
    errs = umpc_error_table(stats, ["epsilon"], lambda st: PAPER_UMPC[st["epsilon"]],
                            lambda st: (n, st["epsilon"]))
    C.write_markdown(run.path(".md"), "Sinh & Ramon Figs. 3 and 4: Kendall's tau on Bank", run,
                     [text, table, "## U-MPC: DP error and noise\n\n" + UMPC_NOISE_TEXT, errs])
    print(f"[sinh_ramon_kendall] done in {run.elapsed():.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
