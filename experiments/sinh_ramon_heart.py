"""Sinh & Ramon, Figs. 5 and 6 (App. E.2): Heart Disease, Kendall's tau and duplicate ratio vs n.

The paper (Appendix E.2; UCI Heart Disease, the 4 processed files, 920
rows, 834 after dropping the rows with a missing resting blood pressure or
serum cholesterol; epsilon = 1, t = 64, |E| = 2n for U-MPC) compares U-MPC,
Bell, Ghazi and GhaziSM on subsets of n records drawn uniformly without
replacement (the authors' n: 41, 83, 208, 417, 625, 834, i.e. 5% to 100%):

- Fig. 5: Kendall's tau of (trestbps, chol), each scaled to [0, 1] by its
  min and max over the 834 rows (their load_data.py; the Switzerland file
  codes a missing cholesterol as 0, kept as the authors did);
- Fig. 6: the duplicate pair ratio U_f with f(x, y) = 1[x = y] of the
  diagnosis ``num`` in {0, ..., 4} (categorical codes; t does not apply).

Both panels: online total communication, MSE, per-party and server
computation. The paper's MSEs are the means of 7 simulated runs (the
authors' results/kendall_appendix.txt and duplicate_appendix.txt), its
costs formulas. Here every protocol runs for real, measured as in
:mod:`experiments.sinh_ramon_gini` (network counters; wall time split at the
parties' last message). The columns and the kernels are the paper's; the
loader reads them here because :func:`experiments._common.heart` keeps other
features (it drops chol and replaces num by num > 0).

Full mode: 20 runs per n for U-MPC and for the duplicate ratio, 7 per n for
the Kendall baselines at t = 64 and at t = 8 (the 4096-cell kernel matrix
dominates the time); about 50 s on a shared 2-core machine. Quick mode: n in
{41, 208}, t = 16 and 4 for Kendall, 2 runs.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from experiments import _common as C
from experiments.sinh_ramon_gini import (COLORS, LABELS, MARKERS, PROTOCOLS, UMPC_NOISE_TEXT,
                                         _nan, paper_comm, pick, run_one, summarize,
                                         umpc_error_table)

SIZES = [41, 83, 208, 417, 625, 834]
EPSILON, BINS = 1.0, 64
#: A second t for Kendall's baselines (see the Markdown: the authors' '64' may be T = t^2).
BINS_SMALL = 8
#: The diagnosis num takes the values 0..4 (public domain; the paper's X = {0, ..., 4}).
LEVELS = 5
#: Means of the authors' per-run squared errors (7 runs per n; github.com/anonguest1398/
#: federated-U-statistics, results/kendall_appendix.txt and duplicate_appendix.txt).
PAPER_MSE = {
    "kendall": {41: {"umpc": 0.0338, "bell-ldp": 68.0, "ghazi": 7.97e3, "ghazi-sm": 0.0026},
                83: {"umpc": 0.0126, "bell-ldp": 68.5, "ghazi": 1.06e4, "ghazi-sm": 0.0133},
                208: {"umpc": 8.42e-4, "bell-ldp": 64.4, "ghazi": 1.41e3, "ghazi-sm": 0.05},
                417: {"umpc": 1.82e-4, "bell-ldp": 63.0, "ghazi": 56.0, "ghazi-sm": 0.0279},
                625: {"umpc": 1.45e-4, "bell-ldp": 63.4, "ghazi": 68.9, "ghazi-sm": 0.0497},
                834: {"umpc": 1.23e-4, "bell-ldp": 62.9, "ghazi": 103, "ghazi-sm": 0.0269}},
    "duplicate": {41: {"umpc": 0.0116, "bell-ldp": 8.52, "ghazi": 1.54e4, "ghazi-sm": 0.00395},
                  83: {"umpc": 0.004, "bell-ldp": 24.1, "ghazi": 420, "ghazi-sm": 0.00152},
                  208: {"umpc": 0.00128, "bell-ldp": 0.896, "ghazi": 60.2, "ghazi-sm": 0.00114},
                  417: {"umpc": 5.39e-4, "bell-ldp": 0.462, "ghazi": 29.5,
                        "ghazi-sm": 7.03e-4},
                  625: {"umpc": 1.82e-4, "bell-ldp": 0.283, "ghazi": 21.7,
                        "ghazi-sm": 0.00244},
                  834: {"umpc": 1.1e-4, "bell-ldp": 0.159, "ghazi": 21.1, "ghazi-sm": 0.00169}},
}
PANELS = {"kendall": "Kendall's tau (trestbps, chol)", "duplicate": "duplicate pair ratio (num)"}


def heart_columns():
    """(X, codes): trestbps and chol scaled to [0, 1] (min-max), and num (0..4), 834 rows."""
    from ustat.data import read_table

    idx = [C.HEART_COLUMNS.index(c) for c in ("trestbps", "chol", "num")]
    blocks = []
    for f in C.HEART_FILES:
        t = C.data_file("heart-disease", f)
        tab = read_table(t, header=False)
        blocks.append(np.column_stack([
            np.array([np.nan if v == "?" else float(v) for v in tab.columns[str(i + 1)]])
            for i in idx]))
    raw = np.vstack(blocks)
    raw = raw[np.all(np.isfinite(raw[:, :2]), axis=1)]
    X = (raw[:, :2] - raw[:, :2].min(axis=0)) / (raw[:, :2].max(axis=0) - raw[:, :2].min(axis=0))
    return X, raw[:, 2:3].astype(np.int64)


def measure(run, data, sizes, tbins, runs_of) -> list:
    """Rows of every run; ``tbins``: the t values of the Kendall baselines (first: the paper's)."""
    from ustat import kernels
    from ustat.baselines._common import evaluation

    n_all = data["kendall"].shape[0]

    def one(st, r):
        kern, n, p = st["kernel"], st["n"], st["protocol"]
        _, keep = C.split(n_all, run.seed_for("subset", n, r), n)   # the same subset for all
        D = data[kern][keep]
        ref = float(evaluation(kernels.get(kern), D)["statistic_complete"])
        extra = {"levels": LEVELS} if (kern == "duplicate" and p != "umpc") else {}
        return run_one(p, D, kern, epsilon=EPSILON, bins=st["bins"] or tbins[0],
                       seed=run.seed_for(kern, p, st["bins"], n, r), reference=ref, **extra)

    settings = []
    for kern in PANELS:
        for n in sizes:
            for p in PROTOCOLS:
                for t in (tbins if (kern == "kendall" and p != "umpc") else [None]):
                    settings.append({"kernel": kern, "bins": t, "n": n, "protocol": p})
    return C.repeat_runs(settings, runs_of, one, "Heart, 2 kernels x 4")


def _variants(kern, tbins):
    """(protocol, bins) pairs of a panel: U-MPC, then the baselines at each t (Kendall)."""
    out = [("umpc", None)]
    for t in (tbins if kern == "kendall" else [None]):
        out += [(p, t) for p in PROTOCOLS if p != "umpc"]
    return out


def plot(path, stats, sizes, tbins):
    plt = C.pyplot()
    fig, axes = plt.subplots(2, 4, figsize=(16, 8))
    for row, kern in zip(axes, PANELS):
        a_comm, a_mse, a_party, a_server = row
        for p, t in _variants(kern, tbins):
            st = [pick(stats, p, kernel=kern, n=n, bins=t) for n in sizes]
            extra = t is not None and t != tbins[0]
            kw = dict(color=COLORS[p], marker=MARKERS[p], ls="--" if extra else "-",
                      mfc="none" if extra else None,
                      label=LABELS[p] + (f" (t = {t})" if t is not None else ""))
            a_comm.plot(sizes, [s["online_bits"] for s in st], **kw)
            a_mse.plot(sizes, [s["mse_total"] for s in st], **kw)
            a_party.plot(sizes, [_nan(s["per_party_seconds"]) for s in st], **kw)
            a_server.plot(sizes, [_nan(s["server_seconds"]) for s in st], **kw)
            if extra:
                continue
            domain = t * t if kern == "kendall" and t else 5
            a_comm.plot(sizes, [paper_comm(p, n, domain, EPSILON, kern) for n in sizes], ls=":",
                        lw=1, color=COLORS[p])
            if p == "umpc":
                a_mse.plot(sizes, [s["mse_dp"] for s in st], ls="--", color=COLORS[p],
                           marker="o", mfc="none", label="U-MPC, DP error only")
            pn = [n for n in sizes if n in PAPER_MSE[kern]]
            a_mse.plot(pn, [PAPER_MSE[kern][n][p] for n in pn], ls="none", marker="D",
                       mfc="none", ms=7, color=COLORS[p])
        a_comm.plot([], [], ls=":", color="grey", label="paper's cost model")
        a_mse.plot([], [], ls="none", marker="D", mfc="none", color="grey", label="paper")
        for ax, title in zip(row, ["online bits (measured)", "MSE vs complete U",
                                   "per-party s (measured)", "server s (measured)"]):
            C.eps_axis(ax, sizes)                    # log x, one plain label per n
            ax.set_yscale("log")
            ax.set_xlabel("n (records drawn without replacement)")
            ax.set_title(f"{PANELS[kern]}: {title}", fontsize=8)
            ax.grid(alpha=0.3, which="both")
            ax.legend(fontsize=6)
    fig.suptitle(f"Heart Disease, epsilon = {EPSILON:g}, t = {tbins[0]} (Kendall; dashed: t = "
                 f"{tbins[1]}), U-MPC |E| = 2n, threat model M_HF", fontsize=10)
    return C.save_png(fig, path)


def main(argv=None) -> int:
    run = C.start("sinh_ramon_heart", __doc__.splitlines()[0], argv)
    X, codes = heart_columns()
    data = {"kendall": X, "duplicate": codes}
    sizes = [41, 208] if run.quick else SIZES
    tbins = [16, 4] if run.quick else [BINS, BINS_SMALL]

    def runs_of(st):
        if run.runs is not None or run.quick:
            return run.repeats(2, 0)
        return 7 if (st["kernel"] == "kendall" and st["protocol"] != "umpc") else 20

    rows = measure(run, data, sizes, tbins, runs_of)
    stats = summarize(rows, ["kernel", "bins", "n"])
    C.write_csv(run.path(".csv"), rows)
    plot(run.path(".png"), stats, sizes, tbins)
    sections = []
    for kern in PANELS:
        body = []
        for n in sizes:
            for p, t in _variants(kern, tbins):
                s = pick(stats, p, kernel=kern, n=n, bins=t)
                domain = t * t if (kern == "kendall" and t) else 5
                paper = PAPER_MSE[kern].get(n, {}).get(p) if t in (None, tbins[0]) else None
                body.append((n, LABELS[p], "-" if t is None else t, s["runs"], s["mse_total"],
                             s["mse_dp"], paper, s["online_bits"],
                             paper_comm(p, n, domain, EPSILON, kern), s["mean_party_bits"],
                             s["max_party_bits"], s["per_party_seconds"], s["server_seconds"]))
        sections.append(f"## {'Fig. 5' if kern == 'kendall' else 'Fig. 6'}: {PANELS[kern]}\n\n"
                        + C.md_table(["n", "protocol", "t", "runs", "MSE vs complete U",
                                      "MSE vs incomplete U (DP only)", "paper MSE",
                                      "online bits (measured)", "paper's bits (cost model)",
                                      "bits/party mean", "bits/party max", "per-party s",
                                      "server s"], body))
    nmax = sizes[-1]
    g = {(k, p, t): pick(stats, p, kernel=k, n=nmax, bins=t) for k in PANELS
         for p, t in _variants(k, tbins)}
    uk, ud = g[("kendall", "umpc", None)], g[("duplicate", "umpc", None)]
    sm_d = g[("duplicate", "ghazi-sm", None)]
    bell_small = g[("kendall", "bell-ldp", tbins[1])]
    bell_big = g[("kendall", "bell-ldp", tbins[0])]
    sm_wins = [n for n in sizes if pick(stats, "ghazi-sm", kernel="duplicate", n=n, bins=None)
               ["mse_total"] < pick(stats, "umpc", kernel="duplicate", n=n, bins=None)["mse_total"]]

    def keep(T):                    # T-ary randomized response: P(report = true cell) - 1/T
        return math.expm1(EPSILON) / (T + math.expm1(EPSILON))
    text = (
        f"Heart Disease ({X.shape[0]} rows after dropping missing trestbps or chol, as the "
        f"paper), epsilon = {EPSILON:g}; Kendall's baselines with t = {tbins[0]} bins per "
        f"column (the caption's t; T = t^2 cells) and also t = {tbins[1]}; the duplicate ratio "
        f"is on categorical codes (5 cells, `levels=5`; t does not apply). For each run a "
        "fresh subset of n rows drawn without replacement (the same subset for the 4 "
        "protocols), errors against that subset's complete U-statistic (and for U-MPC also "
        "against the incomplete one on its edges: DP only). U-MPC: |E| = 2n, threat model "
        "M_HF, l = 40, c = 14. Costs measured (see sinh_ramon_gini.md); 'paper's bits' is the "
        "authors' cost model, 'paper MSE' the mean of their 7 simulated runs.\n\n"
        f"At n = {nmax}: U-MPC's MSE is {uk['mse_total']:.2e} on Kendall (DP only "
        f"{uk['mse_dp']:.2e}; paper {PAPER_MSE['kendall'].get(nmax, {}).get('umpc', '-')}) and "
        f"{ud['mse_total']:.2e} on the duplicate ratio (DP only {ud['mse_dp']:.2e}; paper "
        f"{PAPER_MSE['duplicate'].get(nmax, {}).get('umpc', '-')}). At these small n the "
        "incompleteness of E and the DP noise are of the same order, and the paper's U-MPC "
        "MSEs are of the order of ours (see the last table). U-MPC is below Bell and Ghazi (LDP) "
        "by orders of magnitude on both kernels, as the paper shows. On the duplicate ratio "
        f"our GhaziSM ({sm_d['mse_total']:.2e} at n = {nmax}) beats U-MPC at n in "
        f"{sm_wins or 'none of the sizes'}: with 5 cells its exact factorization has d = 5 and "
        "the shuffle model adds central-DP noise to 5 sums only (the authors' simulated "
        "GhaziSM, with a JL projection, reported "
        f"{PAPER_MSE['duplicate'].get(nmax, {}).get('ghazi-sm', '-')}); "
        f"it sends {sm_d['online_bits'] / ud['online_bits']:.1f} times U-MPC's bits. Bell on "
        f"Kendall: the paper's MSE (about 63, flat in n) is far from ours at t = {tbins[0]} "
        f"({bell_big['mse_total']:.2e}: randomized response over {tbins[0] ** 2} cells keeps "
        f"the true cell with probability {keep(tbins[0] ** 2):.1e}); ours at t = {tbins[1]} "
        f"({bell_small['mse_total']:.2e}) is of its order but falls like 1/n where the paper's "
        "stays flat. The authors' appendix code is not published; their results file labels "
        "the setting '64', which in their Bank file is the number of cells T = t^2, so t = 8 "
        "per column is a plausible reading, not a certain one. Our Bell and Ghazi errors on "
        "the duplicate ratio are 1 to 3 orders of magnitude below the paper's (its baselines "
        "were simulated by the authors' own code).")

    errs = umpc_error_table(stats, ["kernel", "n"],
                            lambda st: PAPER_MSE[st["kernel"]].get(st["n"], {}).get("umpc"),
                            lambda st: (st["n"], EPSILON))
    C.write_markdown(run.path(".md"), "Sinh & Ramon Figs. 5 and 6: Heart Disease", run,
                     [text] + sections + ["## U-MPC: DP error and noise\n\n" + UMPC_NOISE_TEXT,
                                          errs])
    print(f"[sinh_ramon_heart] done in {run.elapsed():.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
