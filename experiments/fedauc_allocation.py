"""FedAUC (Sun et al.), Figs. 1b, 4, 5, 1c, 6 and 8: how FedAUC_Lap splits its budget.

The paper's figures (no numbers in its text; the claims are what we check):

* Fig. 1b (IID), Fig. 4 (non-IID), Fig. 5 (epsilon = 4, both): the std of
  the AUC of LocalLaplace versus the split alpha (eps_localSum = alpha eps),
  1,000 clients of about 458 records; "when alpha is in [0.5, 0.6] the std
  is the smallest", the same pattern in the other settings.
* Fig. 1c (non-IID) and Fig. 6 (IID), epsilon = 1, 1,000 records per client:
  "Naive" (LocalLaplace, alpha tuned), "Orthogonal" (the decomposition of
  Section 5.3 with one beta for every client, beta tuned) and "Adaptive"
  (each client's own beta, a horizontal line): orthogonal below naive,
  adaptive the smallest.
* Fig. 8: the distribution of the adaptive beta over the clients, IID and
  non-IID.

Ours (:mod:`experiments._fedauc`): Diabetes, M = 101,766, the same records
per client (K = 222 and K = 102), alpha and beta on 0.1 .. 0.9, epsilon in
{1, 2, 4, 8} for the alpha sweeps, 100 runs per point; beside the
measurements, the delta-method standard deviation of each allocation.

Quick mode: 3000 records, 3 alphas, 2 epsilons, 3 runs.
"""

from __future__ import annotations

import os
import sys

import numpy as np

if __package__ in (None, ""):                       # run as a file: make the repo importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments import _common as C  # noqa: N812 - the codebase's short capital module alias
from experiments import _fedauc as F  # noqa: N812 - the codebase's short capital module alias
from experiments import _verdict as V  # noqa: N812 - the codebase's short capital module alias

GRID = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
EPS = [1.0, 2.0, 4.0, 8.0]
SPC_ALPHA = 458.4           # Fig. 1b: 1,000 clients of Criteo, ~458 records each
SPC_METHODS = 1000.0        # Fig. 1c: 1,000 records per client
PARTS = ["iid", "noniid"]


def measure(run, rel, grid, eps_list, runs) -> list:
    M = rel.M
    k_a, k_m = F.our_clients(M, SPC_ALPHA), F.our_clients(M, SPC_METHODS)

    def one(st, r):
        seed = run.seed_for(st["figure"], st["method"], st["partition"], st["epsilon"],
                            st["param"], r)
        kw = {"naive": {"allocation": "fixed", "alpha": st["param"]},
              "orthogonal": {"allocation": "orthogonal", "beta": st["param"]},
              "adaptive": {"allocation": "adaptive"}}[st["method"]]
        out = rel.lap(st["epsilon"], st["K"], st["partition"], seed, **kw)
        return {"auc": out["auc"], "formula_std": out["variance_delta_method"] ** 0.5}

    settings = [{"figure": "alpha", "method": "naive", "partition": p, "K": k_a, "epsilon": e,
                 "param": a} for p in PARTS for e in eps_list for a in grid]
    settings += [{"figure": "methods", "method": m, "partition": p, "K": k_m, "epsilon": 1.0,
                  "param": a} for p in PARTS for m in ("naive", "orthogonal") for a in grid]
    settings += [{"figure": "methods", "method": "adaptive", "partition": p, "K": k_m,
                  "epsilon": 1.0, "param": None} for p in PARTS]
    return C.repeat_runs(settings, runs, one, "FedAUC allocations")


def summarize(rows) -> dict:
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["figure"], r["method"], r["partition"], r["epsilon"], r["param"]),
                          []).append(r)
    out = {}
    for key, sel in groups.items():
        sd, se = C.std_se([r["auc"] for r in sel])
        out[key] = {"runs": len(sel), "K": sel[0]["K"], "std": sd, "std_se": se,
                    "formula_std": float(np.mean([r["formula_std"] for r in sel]))}
    return out


def betas(rel, K, seed) -> dict:
    """The adaptive beta of every client (histogram on the 1/64 grid), IID and non-IID."""
    out = {}
    for p in PARTS:
        rep = rel.lap(1.0, K, p, seed, allocation="adaptive")
        out[p] = np.array(rep["beta_hist"], dtype=np.int64)
    return out


def argmin_param(stats, figure, method, part, eps, grid, key="std"):
    vals = [stats[(figure, method, part, eps, a)][key] for a in grid]
    return grid[int(np.argmin(vals))], min(vals)


def claims(stats, grid, eps_list) -> list:
    best = {(p, e): argmin_param(stats, "alpha", "naive", p, e, grid)[0]
            for p in PARTS for e in eps_list}
    in_band = [k for k, a in best.items() if 0.5 <= a <= 0.6]
    # is alpha = 0.5 within two standard errors of the best point?
    near = [k for k in best if stats[("alpha", "naive", *k, 0.5)]["std"]
            <= argmin_param(stats, "alpha", "naive", *k, grid)[1]
            + 2 * stats[("alpha", "naive", *k, 0.5)]["std_se"]] if 0.5 in grid else []
    fbest = {(p, e): argmin_param(stats, "alpha", "naive", p, e, grid, "formula_std")[0]
             for p in PARTS for e in eps_list}
    rows = [("the std is smallest for alpha in [0.5, 0.6] (Figs. 1b, 4, 5)",
             f"measured argmin alpha in [0.5, 0.6] in {len(in_band)} of {len(best)} settings "
             f"(IID: {', '.join(C.fmt(best[('iid', e)]) for e in eps_list)}; non-IID: "
             f"{', '.join(C.fmt(best[('noniid', e)]) for e in eps_list)}); alpha = 0.5 within "
             f"2 s.e. of the minimum in {len(near)}; formula argmin: "
             f"{', '.join(C.fmt(v) for v in fbest.values())}",
             C.verdict(len(near) == len(best), "yes", "partly" if near else "no"))]
    for p, fig in (("noniid", "Fig. 1c"), ("iid", "Fig. 6")):
        nv = argmin_param(stats, "methods", "naive", p, 1.0, grid)[1]
        ov = argmin_param(stats, "methods", "orthogonal", p, 1.0, grid)[1]
        ad = stats[("methods", "adaptive", p, 1.0, None)]["std"]
        rows.append((f"{fig} ({'non-IID' if p == 'noniid' else 'IID'}): orthogonal below naive, "
                     "adaptive the smallest",
                     f"best naive {C.fmt(nv)}, best orthogonal {C.fmt(ov)}, adaptive {C.fmt(ad)}",
                     C.verdict(ov < nv and ad <= min(nv, ov), "yes",
                               "partly" if ad <= min(nv, ov) or ov < nv else "no")))
    return rows


def plot_alpha(run, stats, grid, eps_list):
    fig, axes = C.subplots(1, 3, figsize=(17, 4.8))
    cmap = C.pyplot().get_cmap("viridis")
    for ax, p, title in ((axes[0], "iid", "Fig. 1b: IID"), (axes[1], "noniid", "Fig. 4: non-IID")):
        for i, e in enumerate(eps_list):
            st = [stats[("alpha", "naive", p, e, a)] for a in grid]
            c = cmap(0.85 * i / max(len(eps_list) - 1, 1))
            ax.errorbar(grid, [s["std"] for s in st], yerr=[s["std_se"] for s in st],
                        marker="o", ms=4, capsize=2, color=c, label=f"epsilon = {C.fmt(e)}")
            ax.plot(grid, [s["formula_std"] for s in st], ls=":", color=c, lw=1)
        ax.plot([], [], ls=":", color="grey", label="delta-method std")
        ax.axvspan(0.5, 0.6, color="grey", alpha=0.15, label="paper: best alpha in [0.5, 0.6]")
        ax.set_title(f"{title}, {st[0]['K']} clients (~{SPC_ALPHA:g} records each)", fontsize=10)
    e5 = 4.0 if 4.0 in eps_list else eps_list[-1]
    for p, c in (("iid", "tab:blue"), ("noniid", "tab:orange")):
        st = [stats[("alpha", "naive", p, e5, a)] for a in grid]
        axes[2].errorbar(grid, [s["std"] for s in st], yerr=[s["std_se"] for s in st],
                         marker="o", ms=4, capsize=2, color=c,
                         label="IID" if p == "iid" else "non-IID")
    axes[2].axvspan(0.5, 0.6, color="grey", alpha=0.15, label="paper: best alpha in [0.5, 0.6]")
    axes[2].set_title(f"Fig. 5: epsilon = {C.fmt(e5)}, IID and non-IID", fontsize=10)
    for ax in axes:
        ax.set_yscale("log")
        ax.set_xlabel("alpha (share of epsilon on localSum)")
        ax.set_ylabel("standard deviation of the AUC over runs")
        ax.grid(alpha=0.3, which="both")
        C.legend_outside(ax)
    return C.save_png(run, fig)


def plot_methods(run, stats, grid, hist):
    fig, axes = C.subplots(1, 3, figsize=(17, 4.8))
    for ax, p, title in ((axes[0], "noniid", "Fig. 1c: non-IID"), (axes[1], "iid", "Fig. 6: IID")):
        for m, c in (("naive", "tab:blue"), ("orthogonal", "tab:orange")):
            st = [stats[("methods", m, p, 1.0, a)] for a in grid]
            ax.errorbar(grid, [s["std"] for s in st], yerr=[s["std_se"] for s in st],
                        marker="o", ms=4, capsize=2, color=c,
                        label=f"{m.capitalize()} ({'alpha' if m == 'naive' else 'beta'})")
        ad = stats[("methods", "adaptive", p, 1.0, None)]
        ax.axhline(ad["std"], color="tab:green", label="Adaptive (each client's beta)")
        ax.axhspan(ad["std"] - ad["std_se"], ad["std"] + ad["std_se"], color="tab:green",
                   alpha=0.15)
        C.dress(ax, f"{title}, epsilon = 1, {ad['K']} clients (~{SPC_METHODS:g} records)",
                "allocation parameter (alpha for Naive, beta for Orthogonal)",
                "standard deviation of the AUC over runs", logy=True)
    bx = axes[2]
    centers = np.arange(len(hist["iid"])) / 64
    for p, c in (("iid", "tab:blue"), ("noniid", "tab:orange")):
        h = hist[p]
        bx.bar(centers + (0.004 if p == "noniid" else -0.004), h / h.sum(), width=0.008, color=c,
               label="IID" if p == "iid" else "non-IID")
    bx.set_xlabel("adaptive beta of a client (share of epsilon on localP)")
    bx.set_ylabel("fraction of clients")
    bx.set_title("Fig. 8: distribution of the adaptive beta", fontsize=10)
    bx.grid(alpha=0.3)
    C.legend_outside(bx)
    return C.save_png(run, fig, "_methods.png")


def heuristic_vs_tuned(stats, grid, qs) -> str:
    """Why adaptive may lose to a tuned orthogonal split (Fig. 6): the heuristic's beta.

    Compares, per partition at epsilon 1, the adaptive release with the orthogonal release
    at one beta for every client equal to the adaptive betas' median (nearest grid point)
    and at the tuned beta (the grid's argmin): measured std +- s.e. and the delta-method std.
    """
    out = []
    for p in PARTS:
        ad = stats[("methods", "adaptive", p, 1.0, None)]
        b_med = min(grid, key=lambda b: abs(b - qs[p][1]))
        b_opt, _ = argmin_param(stats, "methods", "orthogonal", p, 1.0, grid)
        at_med, at_opt = (stats[("methods", "orthogonal", p, 1.0, b)] for b in (b_med, b_opt))
        z = (ad["std"] - at_med["std"]) / float(np.hypot(ad["std_se"], at_med["std_se"]))
        out.append(
            f"{'IID' if p == 'iid' else 'non-IID'}: the heuristic gives the clients beta "
            f"{C.fmt(qs[p][0])}..{C.fmt(qs[p][2])} (median {C.fmt(qs[p][1])}); adaptive "
            f"{C.pm(ad['std'], ad['std_se'])} (formula {C.fmt(ad['formula_std'])}) against "
            f"orthogonal at beta {C.fmt(b_med)} for every client "
            f"{C.pm(at_med['std'], at_med['std_se'])} (formula {C.fmt(at_med['formula_std'])}; "
            f"difference {z:+.1f} s.e.) and at the tuned beta {C.fmt(b_opt)} "
            f"{C.pm(at_opt['std'], at_opt['std_se'])} (formula {C.fmt(at_opt['formula_std'])})")
    return ("Adaptive against orthogonal at the heuristic's beta and at the tuned beta "
            "(epsilon 1): " + "; ".join(out) + ". Where adaptive is level with orthogonal at "
            "the heuristic's own beta and the tuned beta differs, what loses is the heuristic's "
            "choice of beta, not the per-client adaptivity")


def main(argv=None) -> int:
    run = C.start("fedauc_allocation", __doc__.splitlines()[0], argv)
    s, y = F.dataset(run)
    rel = F.Release(s, y)
    grid = [0.3, 0.5, 0.7] if run.quick else GRID
    eps_list = [1.0, 4.0] if run.quick else EPS
    runs = run.repeats(3, 100)
    rows = measure(run, rel, grid, eps_list, runs)
    C.write_csv(run, rows)
    stats = summarize(rows)
    k_m = F.our_clients(rel.M, SPC_METHODS)
    hist = betas(rel, k_m, run.seed_for("betas"))
    plot_alpha(run, stats, grid, eps_list)
    plot_methods(run, stats, grid, hist)
    cl = claims(stats, grid, eps_list)
    ta = C.md_table(["partition", "epsilon", "clients", *[f"alpha {a}" for a in grid],
                     "argmin (measured)", "argmin (formula)"],
                    [[p, e, stats[("alpha", "naive", p, e, grid[0])]["K"],
                      *[C.pm(stats[("alpha", "naive", p, e, a)]["std"],
                             stats[("alpha", "naive", p, e, a)]["std_se"]) for a in grid],
                      argmin_param(stats, "alpha", "naive", p, e, grid)[0],
                      argmin_param(stats, "alpha", "naive", p, e, grid, "formula_std")[0]]
                     for p in PARTS for e in eps_list])
    tm = C.md_table(["partition", "method", *[str(a) for a in grid], "adaptive"],
                    [[p, m, *[C.pm(stats[("methods", m, p, 1.0, a)]["std"],
                                   stats[("methods", m, p, 1.0, a)]["std_se"]) for a in grid],
                      "-"] for p in PARTS for m in ("naive", "orthogonal")]
                    + [[p, "adaptive", *["-"] * len(grid),
                        C.pm(stats[("methods", "adaptive", p, 1.0, None)]["std"],
                             stats[("methods", "adaptive", p, 1.0, None)]["std_se"])]
                       for p in PARTS])
    qs = {}
    for p in PARTS:
        h = hist[p]
        cdf = np.cumsum(h) / h.sum()
        qs[p] = [float(np.searchsorted(cdf, q) / 64) for q in (0.1, 0.5, 0.9)]
    tb = C.md_table(["partition", "clients", "beta 10%", "median", "90%", "share with beta = 1"],
                    [[p, k_m, *qs[p], hist[p][-1] / hist[p].sum()] for p in PARTS])
    why6 = heuristic_vs_tuned(stats, grid, qs)
    C.write_markdown(run.path(".md"), "FedAUC (Sun et al.) Figs. 1b, 4, 5, 1c, 6, 8: allocation",
                     run, [
        f"Diabetes, M = {rel.M} (see `experiments/_fedauc.py`); {runs} runs per point; cells: "
        "std of the AUC +- its s.e. The paper's figures give no numbers: the claims below are "
        "its text's.",
        "## Claims\n\n" + C.md_table(["paper's claim", "ours", "agrees"], cl),
        "## Figs. 1b, 4, 5: LocalLaplace versus alpha\n\n" + ta,
        "## Figs. 1c and 6: Naive, Orthogonal, Adaptive (epsilon = 1)\n\n" + tm,
        "## Fig. 8: the adaptive beta over the clients\n\n" + tb,
        "## Fig. 6: the heuristic's beta against the tuned one\n\n" + why6 + ".",
        f"Figures: `{run.name}.png` (alpha sweeps), `{run.name}_methods.png` (methods, beta)."])
    items = [
        C.item("FedAUC", "Figs. 1b, 4, 5 (alpha sweeps)",
               f"Diabetes M = {rel.M}, {F.our_clients(rel.M, SPC_ALPHA)} clients (~458 records), "
               f"alpha {grid[0]}..{grid[-1]}, epsilon {', '.join(C.fmt(e) for e in eps_list)}, "
               f"IID and non-IID, {runs} runs", "best alpha in [0.5, 0.6] (figure, no numbers)",
               cl[0][1].split(";")[0], cl[0][1], "`fedauc_allocation.md`, alpha table", cl[0][2]),
        C.item("FedAUC", "Figs. 1c and 6 (naive / orthogonal / adaptive)",
               f"Diabetes M = {rel.M}, {k_m} clients (~1000 records), epsilon 1, {runs} runs",
               "orthogonal < naive, adaptive smallest (figure, no numbers)",
               f"non-IID: {cl[1][1]}; IID: {cl[2][1]}",
               f"non-IID: {cl[1][2]}, IID: {cl[2][2]} (computed from the table). " + why6,
               "`fedauc_allocation.md`, methods table and 'Fig. 6: the heuristic's beta'",
               V.combine([cl[1][2], cl[2][2]])),
        C.item("FedAUC", "Fig. 8 (distribution of beta)", f"Diabetes M = {rel.M}, {k_m} clients",
               "a histogram (no numbers)",
               f"median beta IID {C.fmt(qs['iid'][1])}, non-IID {C.fmt(qs['noniid'][1])}",
               "drawn in `fedauc_allocation_methods.png`; the paper's figure has no numbers "
               "to compare", "`fedauc_allocation.md`, beta table", "-"),
    ]
    C.write_json(run, items, {"stats": {":".join(map(str, k)): v for k, v in stats.items()},
                              "beta_hist": {p: hist[p].tolist() for p in PARTS}})
    print(f"[{run.name}] done in {run.elapsed():.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
