"""ECDF paper, Section 6.4 (Fig. 4): error of the private ECDF and of its inverse versus epsilon.

Barczewski, Mawass, Ramon, Section 6.4. On X_pois(3) (N = 2^15 thresholds),
versus epsilon, the mean squared errors of

* the noisy ECDF F^ at points x uniform over the domain (here: all N
  thresholds, the exact average over a uniform x);
* the inverse ECDF by Algorithm 1 (binary search) on F^ and on the
  smoothed F' (``l2``), at levels p uniform in (0, 1) (a grid of 999 levels),
  in units of the domain width (threshold index / N), so that the three
  errors share one axis as in the paper's figure;

beside the formula lines: ours, (L + 1) Var DLap(Delta / eps) / n^2 (exact
sensitivity Delta = L, discrete Laplace), and the paper's Theorem 3.1,
2 (L + 1)^3 / eps^2, which is in counts^2 and is divided by n^2 here.

Backend ``"central"`` for the Monte Carlo (the paper's noise law). The FSS
servers are run once (N = 2^10, epsilon = 1, noise mode ``split``, whose
law is the same): their release must equal exact counts + node noise
exactly, and Algorithm 1 is run on the live servers (one query batch per
step); the measured bits and rounds go in the Markdown.

Quick mode: N = 2^10, 3 epsilons, 3 runs.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

if __package__ in (None, ""):                       # run as a file: make the repo importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments import _common as C  # noqa: N812 - the codebase's short capital module alias

EPS = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
LEVELS = (np.arange(1, 1000) / 1000.0)


def one_run(x, tau, eps, seed) -> dict:
    from ustat.ecdf import Tree, quantiles, release, smooth
    from ustat.ecdf.quantiles import search
    from ustat.specs import ECDFSpec

    N = tau.size
    rel = release(x, ECDFSpec.of(thresholds=tau, epsilon=eps, backend="central",
                                 bounds=(tau[0], tau[-1]), seed=seed), evaluate=True)
    F = rel.exact / rel.n
    Fs = smooth(rel.values, Tree(N), "l2")
    true_idx = search(lambda i: rel.exact[i], N, rel.n * LEVELS)
    raw_q = quantiles(rel, LEVELS)                       # Algorithm 1 on the noisy counts
    smooth_q = quantiles(Fs, LEVELS, thresholds=tau)     # Algorithm 1 on F'
    truth = tau[true_idx]
    return {"mse_ecdf": float(np.mean((F - rel.values) ** 2)),
            "mse_ecdf_smoothed": float(np.mean((F - Fs) ** 2)),
            "mse_inverse": float(np.mean(((raw_q - truth) / N) ** 2)),
            "mse_inverse_smoothed": float(np.mean(((smooth_q - truth) / N) ** 2)),
            "theory_mse_ecdf": rel.account["mse"],
            "paper_theorem31_mse": 2 * (Tree(N).levels + 1) ** 3 / eps ** 2 / rel.n ** 2}


def fss_check(run, n_points: int) -> dict:
    """One FSS release (split noise): counts == exact + noise, and Algorithm 1 by live queries."""
    from ustat.ecdf import deploy, quantiles
    from ustat.ecdf.release import exact_counts
    from ustat.ecdf.thresholds import grid_rank
    from ustat.specs import ECDFSpec

    x = C.xpois(3.0, n_points, run.seed_for("fss-data", n_points))
    tau = np.arange(1, n_points + 1, dtype=np.float64)
    dep = deploy(x, ECDFSpec.of(thresholds=tau, epsilon=1.0, backend="fss", noise_mode="split",
                                bounds=(1, n_points), seed=run.seed_for("fss")))
    after_keys = dep.communication()
    idx = np.arange(n_points)
    counts = dep.query(idx)
    exact = exact_counts(grid_rank(x, tau), n_points)
    equal = bool(np.array_equal(counts, exact + dep.noise.at(idx)))
    before = dep.communication()["online"]
    q = quantiles(dep, [0.1, 0.5, 0.9])
    after = dep.communication()["online"]
    return {"n": x.size, "N": n_points, "fss_equals_exact_plus_noise": equal,
            "offline_bits": after_keys["offline"]["bits"],
            "offline_bits_per_party": after_keys["offline"]["bits"] / x.size,
            "curve_online_bits": before["bits"], "curve_rounds": before["rounds"],
            "quantile_online_bits": after["bits"] - before["bits"],
            "quantile_rounds": after["rounds"] - before["rounds"],
            "quantiles": [float(v) for v in q],
            "true_quantiles": [float(np.quantile(x, p, method="inverted_cdf"))
                               for p in (0.1, 0.5, 0.9)]}


def plot(run, stats, n_points, n, runs):
    fig, ax = C.subplots(figsize=(10, 5))
    eps = np.array([s["epsilon"] for s in stats])
    for key, label, color, marker in (
            ("mse_ecdf", "ECDF F^ (noisy), measured", "tab:blue", "o"),
            ("mse_ecdf_smoothed", "ECDF F' (l2-smoothed), measured", "tab:cyan", "v"),
            ("mse_inverse", "inverse of F^ (Algorithm 1), measured", "tab:red", "s"),
            ("mse_inverse_smoothed", "inverse of F' (Algorithm 1), measured", "tab:orange",
             "^")):
        ax.errorbar(eps, [s[key][0] for s in stats], yerr=[s[key][1] for s in stats],
                    marker=marker, ms=5, capsize=3, color=color, label=label)
    ax.plot(eps, [s["theory_mse_ecdf"] for s in stats], color="black", lw=1,
            label="formula: (L+1) Var DLap(L/eps) / n^2 (ours)")
    ax.plot(eps, [s["paper_theorem31_mse"] for s in stats], color="grey", lw=1, ls="--",
            label="paper Thm 3.1: 2 (L+1)^3 / eps^2 / n^2")
    C.eps_axis(ax, eps)
    ax.set_yscale("log")
    ax.set_xlabel("privacy budget epsilon (log scale)")
    ax.set_ylabel("mean squared error (ECDF units; inverse: (index / N)^2)")
    ax.set_title(f"Fig. 4: X_pois(3), n = {n}, N = {n_points}, mean +- s.e. over {runs} runs",
                 fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.plot([], [], ls="none", label="(the paper's Fig. 4 gives no numbers)")
    C.legend_outside(ax)
    return C.save_png(run, fig)


def main(argv=None) -> int:
    run = C.start("ecdf_inverse", __doc__.splitlines()[0], argv)
    n_points = 2 ** 10 if run.quick else 2 ** 15
    runs = run.repeats(3, 100)
    eps_list = [0.1, 1.0, 10.0] if run.quick else EPS
    x = C.xpois(3.0, n_points, run.seed_for("data", n_points))
    tau = np.arange(1, n_points + 1, dtype=np.float64)
    rows = C.repeat_runs(
        [{"epsilon": e, "n": x.size, "N": n_points} for e in eps_list], runs,
        lambda st, r: one_run(x, tau, st["epsilon"], run.seed_for(st["epsilon"], r)),
        "ECDF / inverse runs")
    C.write_csv(run, rows)
    keys = ("mse_ecdf", "mse_ecdf_smoothed", "mse_inverse", "mse_inverse_smoothed")
    stats = []
    for eps in eps_list:
        sel = [r for r in rows if r["epsilon"] == eps]
        stats.append({"epsilon": eps, **{k: C.mean_se([r[k] for r in sel]) for k in keys},
                      "theory_mse_ecdf": sel[0]["theory_mse_ecdf"],
                      "paper_theorem31_mse": sel[0]["paper_theorem31_mse"]})
    plot(run, stats, n_points, x.size, runs)
    print(f"[{run.name}] FSS check", file=sys.stderr)
    chk = fss_check(run, 2 ** 10 if not run.quick else 2 ** 8)
    ratio = [s["mse_ecdf"][0] / s["theory_mse_ecdf"] for s in stats]
    orders = [max(abs(math.log10(s[k][0] / s["mse_ecdf"][0])) for k in keys[2:]) for s in stats]
    table = C.md_table(
        ["epsilon", "F^ MSE", "formula (ours)", "paper Thm 3.1 / n^2", "F' MSE",
         "inverse of F^", "inverse of F'"],
        [[s["epsilon"], s["mse_ecdf"][0], s["theory_mse_ecdf"], s["paper_theorem31_mse"],
          s["mse_ecdf_smoothed"][0], s["mse_inverse"][0], s["mse_inverse_smoothed"][0]]
         for s in stats])
    paper_over = [s["paper_theorem31_mse"] / s["theory_mse_ecdf"] for s in stats]
    rows_cl = [
        ("the MSEs of F^ and of the inverses of F^ and F' are of the same order of magnitude",
         f"largest abs(log10(inverse MSE / F^ MSE)) over epsilons: {C.fmt(max(orders))}",
         C.verdict(max(orders) < 1.0)),
        ("a non-monotone F^ does not hurt the binary search much",
         "inverse of F^ / inverse of F' MSE: " + ", ".join(
             C.fmt(s["mse_inverse"][0] / s["mse_inverse_smoothed"][0]) for s in stats),
         C.verdict(all(s["mse_inverse"][0] < 10 * s["mse_inverse_smoothed"][0] for s in stats))),
        ("the error of F^ is the formula of Theorem 3.1 (ours: exact sensitivity, DLap)",
         f"measured / our formula (sensitivity L, discrete Laplace): {C.fmt(min(ratio))} .. "
         f"{C.fmt(max(ratio))}; Thm 3.1 / n^2 (sensitivity L + 1, Laplace) over our formula: "
         f"{C.fmt(min(paper_over))} .. {C.fmt(max(paper_over))}",
         C.verdict(all(0.8 < q < 1.25 for q in ratio)))]
    claims = C.md_table(["paper's claim (Sec. 6.4; figure only)", "ours", "agrees"], rows_cl)
    fss = C.md_table(["quantity", "value"], [
        ("n, N", f"{chk['n']}, {chk['N']}"),
        ("FSS release == exact counts + node noise (all N points)",
         chk["fss_equals_exact_plus_noise"]),
        ("offline bits per party (DCF keys to 2 servers, network counter)",
         chk["offline_bits_per_party"]),
        ("online bits / rounds, whole curve (N queries)",
         f"{chk['curve_online_bits']} / {chk['curve_rounds']}"),
        ("online bits / rounds, 3 quantiles by live binary search",
         f"{chk['quantile_online_bits']} / {chk['quantile_rounds']}"),
        ("quantiles 0.1, 0.5, 0.9: private / true",
         f"{chk['quantiles']} / {chk['true_quantiles']}")])
    C.write_markdown(run.path(".md"), "ECDF paper, Sec. 6.4: ECDF and inverse-ECDF error (Fig. 4)",
                     run, [
        f"X_pois(3): n = {x.size} records, N = {n_points} thresholds; backend `central` (the "
        f"paper's noise law, exact sensitivity); {runs} runs per epsilon; means (the s.e. are in "
        "the figure). Inverse errors in (threshold index / N)^2.",
        table, "## Claims\n\n" + claims,
        "## FSS servers (one run, epsilon = 1, noise mode split)\n\n" + fss,
        f"Figure: `{run.name}.png`; per-run data: `{run.name}.csv`."])
    e1 = next((s for s in stats if s["epsilon"] == 1.0), stats[0])
    C.write_json(run, [
        C.item("ECDF", "Fig. 4 (ECDF and inverse-ECDF error)",
               f"X_pois(3), n = {x.size}, N = {n_points}, {len(stats)} epsilons, {runs} runs",
               "same order of magnitude (figure, no numbers)",
               f"epsilon {C.fmt(e1['epsilon'])}: F^ {C.pm(*e1['mse_ecdf'])}, inverse of F^ "
               f"{C.pm(*e1['mse_inverse'])}",
               rows_cl[0][1] + "; " + C.ecdf_noise_words(C.ecdf_levels(n_points)),
               "`ecdf_inverse.md`, Claims", rows_cl[0][2]),
        C.item("ECDF", "Theorem 3.1 (expected squared error)",
               "as Fig. 4", "2 (L+1)^3 / eps^2 (counts^2)",
               f"measured / our formula {C.fmt(min(ratio))}..{C.fmt(max(ratio))}",
               f"our sensitivity is L and the noise discrete Laplace: Thm 3.1 / n^2 lies "
               f"{C.fmt(min(paper_over))}..{C.fmt(max(paper_over))} times our formula",
               "`ecdf_inverse.md`, Claims row 3", rows_cl[2][2]),
        C.item("ECDF", "FSS servers (Section 4.2)", f"n = {chk['n']}, N = {chk['N']}",
               "release = counts + noise", f"FSS release == exact counts + node noise: "
               f"{C.fmt(chk['fss_equals_exact_plus_noise'])}", "checked on all N points",
               "`ecdf_inverse.md`, FSS servers",
               C.verdict(bool(chk["fss_equals_exact_plus_noise"])))],
        {"stats": stats})
    print(f"[{run.name}] done in {run.elapsed():.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
