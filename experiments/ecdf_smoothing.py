"""ECDF paper, Section 6.3 (Figs. 2 and 3): how much smoothing changes the DP error.

Barczewski, Mawass, Ramon, Section 6.3. On the synthetic X_pois(lambda)
(N = 2^15 thresholds 1..N, Pois(lambda) records at each), the ratio

    ||F - F'||^2 / ||F - F^||^2      (smoothed error / raw error, over all N points)

for the smoothings of problem (3): ``l1`` (LP, HiGHS), ``l2`` (QP, Clarabel),
and ``isotonic`` (PAVA, the L2 projection that ignores the tree; ours, not
in the paper). Fig. 2: versus epsilon at lambda = 3; Fig. 3: versus lambda
at epsilon = 1. One data set per lambda, ``runs`` noise draws per setting
(the paper: 100; here 20, see the README for the time budget).

Release: :func:`ustat.ecdf.release` with backend ``"central"``: exact counts
plus one exact discrete Laplace per tree node, the noise law of the paper's
Eq. (2) (and of the FSS servers in noise mode ``split``; smoothing is
post-processing, so the backend does not change this experiment;
``ecdf_inverse`` checks that the FSS servers release exactly counts + noise).
Node scale Delta / epsilon with the exact sensitivity Delta = L (the paper:
L + 1).

Quick mode: N = 2^10, 2 runs, 3 epsilons and 3 lambdas.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from experiments import _common as C

EPS = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 100.0]
LAMBDAS = [0.3, 1.0, 3.0, 10.0, 30.0, 100.0]
METHODS = ("isotonic", "l1", "l2")
COLORS = {"isotonic": "tab:green", "l1": "tab:orange", "l2": "tab:blue"}


def one_run(x, tau, eps, seed) -> dict:
    """One release and its three smoothings: the error ratios and the solver seconds."""
    from ustat.ecdf import Tree, release, smooth

    rel = release(x, tau, eps, backend="central", bounds=(tau[0], tau[-1]), seed=seed,
                  evaluate=True)
    F = rel.exact / rel.n
    raw = float(np.sum((F - rel.values) ** 2))
    tree = Tree(tau.size)
    out = {"raw_sse": raw, "raw_mse_per_point": raw / tau.size,
           "theory_mse_per_point": rel.account["mse"]}
    for m in METHODS:
        t = time.perf_counter()
        Fs = smooth(rel.values, tree, m)
        out[f"{m}_seconds"] = time.perf_counter() - t
        out[f"ratio_{m}"] = float(np.sum((F - Fs) ** 2)) / raw
    return out


def sweep(run, figure, settings, n_points, runs) -> list:
    """Per-run rows for the (lambda, epsilon) settings of one figure."""
    data = {lam: C.xpois(lam, n_points, run.seed_for("data", lam, n_points)) for lam, _ in settings}
    tau = np.arange(1, n_points + 1, dtype=np.float64)

    def one(st, r):
        lam, eps = st["lambda"], st["epsilon"]
        return one_run(data[lam], tau, eps, run.seed_for(figure, lam, eps, r))

    todo = [{"figure": figure, "lambda": lam, "epsilon": eps, "n": data[lam].size, "N": n_points}
            for lam, eps in settings]
    return C.repeat_runs(todo, runs, one, f"smoothing runs ({figure})")


def summary(rows, figure, key) -> list:
    """Per setting: (setting, n, mean and s.e. of each ratio)."""
    out = []
    for v in sorted({r[key] for r in rows if r["figure"] == figure}):
        sel = [r for r in rows if r["figure"] == figure and r[key] == v]
        stats = {m: C.mean_se([r[f"ratio_{m}"] for r in sel]) for m in METHODS}
        out.append((v, sel[0]["n"], stats))
    return out


def plot(path, fig2, fig3, n_points, runs):
    plt = C.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.3), sharey=True)
    for ax, data, xlabel, title in (
            (axes[0], fig2, "privacy budget epsilon (log scale)",
             f"Fig. 2: X_pois(3), N = {n_points}, vs epsilon"),
            (axes[1], fig3, "lambda (mean records per threshold, log scale)",
             f"Fig. 3: epsilon = 1, N = {n_points}, vs lambda")):
        xs = np.array([s[0] for s in data])
        for m in METHODS:
            mu = np.array([s[2][m][0] for s in data])
            se = np.array([s[2][m][1] for s in data])
            ax.errorbar(xs, mu, yerr=se, marker="o", ms=4, capsize=3, color=COLORS[m],
                        label=f"{m} smoothing" + (" (ours, not in the paper)"
                                                  if m == "isotonic" else ""))
        ax.axhline(1.0, color="grey", ls="--", lw=1, label="1 = smoothing changes nothing")
        C.eps_axis(ax, xs)
        ax.set_xlabel(xlabel)
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("||F - F'||^2 / ||F - F^||^2\n(smoothed / raw squared error, unitless)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Effect of smoothing on the DP error (mean +- s.e. over {runs} runs)",
                 fontsize=11)
    return C.save_png(fig, path)


def claims(fig2, fig3) -> list:
    """The paper's qualitative claims and what we measured."""
    l1 = {s[0]: s[2]["l1"][0] for s in fig2}
    l2 = {s[0]: s[2]["l2"][0] for s in fig2}
    eps = sorted(l2)
    better = [e for e in eps if l2[e] < l1[e]]
    below = [e for e in eps if l2[e] < 1]
    lam = {s[0]: s[2]["l2"][0] for s in fig3}
    lam_l1 = {s[0]: s[2]["l1"][0] for s in fig3}
    big = max(lam)
    return [
        ("l2 smoothing beats l1, especially for small epsilon",
         f"l2 < l1 at {len(better)} of {len(eps)} epsilons ({', '.join(C.fmt(e) for e in better)});"
         f" at epsilon = {C.fmt(eps[0])}: l1 {C.fmt(l1[eps[0]])}, l2 {C.fmt(l2[eps[0]])}",
         len(better) == len(eps)),
        ("l2 ratio < 1 for epsilon >= ~0.2 (and above 1 below)",
         f"l2 ratio < 1 at epsilon in {{{', '.join(C.fmt(e) for e in below)}}}",
         all(l2[e] < 1 for e in eps if e >= 0.2) and all(l2[e] >= 1 for e in eps if e < 0.2)),
        ("the effect of smoothing vanishes as epsilon grows (ratio -> 1)",
         f"l2 ratio at epsilon = {C.fmt(eps[-1])}: {C.fmt(l2[eps[-1]])}", l2[eps[-1]] > 0.9),
        ("for large lambda smoothing matters little (ratio ~ 1); for moderate lambda it helps",
         f"at lambda = {C.fmt(big)}: l1 {C.fmt(lam_l1[big])}, l2 {C.fmt(lam[big])}; smallest l2 "
         f"ratio {C.fmt(min(lam.values()))} at lambda = {C.fmt(min(lam, key=lam.get))}",
         lam[big] > 0.9 and min(lam.values()) < 0.9),
    ]


def main(argv=None) -> int:
    run = C.start("ecdf_smoothing", __doc__.splitlines()[0], argv)
    n_points = 2 ** 10 if run.quick else 2 ** 15
    runs = run.repeats(2, 20)
    eps_list = [0.1, 1.0, 10.0] if run.quick else EPS
    lam_list = [1.0, 3.0, 30.0] if run.quick else LAMBDAS
    rows = sweep(run, "fig2", [(3.0, e) for e in eps_list], n_points, runs)
    rows += sweep(run, "fig3", [(lam, 1.0) for lam in lam_list], n_points, runs)
    C.write_csv(run.path(".csv"), rows)
    fig2, fig3 = summary(rows, "fig2", "epsilon"), summary(rows, "fig3", "lambda")
    plot(run.path(".png"), fig2, fig3, n_points, runs)
    secs = {m: float(np.median([r[f"{m}_seconds"] for r in rows])) for m in METHODS}

    def cells(st):
        return [f"{C.fmt(st[m][0])} +- {C.fmt(st[m][1], 2)}" for m in METHODS]

    t2 = C.md_table(["epsilon", "n", "isotonic", "l1", "l2"],
                    [[s[0], s[1], *cells(s[2])] for s in fig2])
    t3 = C.md_table(["lambda", "n", "isotonic", "l1", "l2"],
                    [[s[0], s[1], *cells(s[2])] for s in fig3])
    tc = C.md_table(["paper's claim (Sec. 6.3; figure only, no numbers)", "ours", "agrees"],
                    claims(fig2, fig3))
    C.write_markdown(run.path(".md"), "ECDF paper, Sec. 6.3: smoothing (Figs. 2, 3)", run, [
        f"X_pois(lambda), N = {n_points} thresholds, backend `central` (the paper's noise law), "
        f"exact sensitivity; {runs} noise draws per setting. Cells: ||F - F'||^2 / ||F - F^||^2, "
        "mean +- standard error (below 1: smoothing reduces the error).",
        "## Fig. 2 (lambda = 3, versus epsilon)\n\n" + t2,
        "## Fig. 3 (epsilon = 1, versus lambda)\n\n" + t3,
        "## Claims\n\n" + tc,
        f"Median solver seconds per smoothing (N = {n_points}): "
        + ", ".join(f"{m} {C.fmt(secs[m])}" for m in METHODS) + ".",
        f"Figure: `{run.name}.png`; per-run data: `{run.name}.csv`."])
    print(f"[{run.name}] done in {run.elapsed():.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
