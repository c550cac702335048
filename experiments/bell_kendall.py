"""Bell et al. 2020 (Fig. 4): Kendall's tau, randomized response vs 2PC subsampling vs all pairs.

Bell, Bellet, Gascon, Kulkarni (AISTATS 2020), Section 6: Kendall's tau
between two ratings of TripAdvisor users (n > 246K, 6 x 6 = 36 cells, true
value 0.58), privately by (i) their randomized response protocol
(Algorithm 1, no quantization needed), (ii) their 2PC protocol on P
subsampled pairs per user (Theorem 5, pure epsilon) and (iii) the 2PC
protocol on all pairs with advanced composition (delta = 1e-8); mean and
std over 20 runs of the absolute error. The paper's supplement C.2 and the
figure's exact epsilon and P grids are not in our copy: we use
epsilon in {0.5, 1, 2, 5, 10} and P in {1, 2, 5} (and P = 10 at epsilon = 10,
for the paper's "an even larger P" at epsilon = 10).

Data (TripAdvisor is not in ../shared/data): UCI Diabetes 130-US hospitals,
n = 101766 encounters; y = days in hospital (1..14, top-coded at 6+, so
6 levels) and z = number of procedures (0..6, top-coded at 5+, 6 levels):
a 6 x 6 = 36-cell ordinal domain like the paper's and a large n (the
paper's n is 246K). Truth: Kendall's tau-a (the U-statistic of the kernel
sign(y_i - y_j) sign(z_i - z_j)) of these discretized records, exact.

Protocols through :func:`ustat.baselines.run_protocol` on the simulated
network, ``bins = 6`` (one bin per level): ``bell-ldp`` and ``bell-2pc``
with ``pairs = P`` or ``pairs = "all"`` (``delta = 1e-8``). The many-run
error curves use ``bell-2pc``'s ``engine = "plain"`` (the same pair circuit
on the same coins, evaluated in the clear, as the paper simulated its 2PC);
the garbled-circuit engine runs once per family (subsampling, all pairs)
with the seed of a plain run, and its estimate must be *identical* (the
module documents identical outputs on the same coins); its measured online
and offline bits, rounds and seconds are reported.

Panels: (A) a public random subset of n = 200 users, all three protocols
measured (all pairs costs n(n-1)/2 pair circuits, each of ~4e4-1.3e5 ANDs at
this n, so it cannot run on the full data); (B) all n = 101766 users:
randomized response and subsampling measured, all pairs drawn from its
exact error law (complete U-statistic + the mean of n(n-1)/2 discrete
Laplace noises at the advanced-composition eps_pair), checked against the
measurements in (A). Theory lines: Theorem 5 (subsampling, at the data's
zeta_1, zeta_2 and the implemented noise), the exact variance of the
randomized response estimate; both as the expected |error| of a normal
estimator, sqrt(2 MSE / pi).

Quick mode: n = 30 (A) and 3000 (B), epsilon in {1, 10}, P in {1, 2} (and 5 at
epsilon = 10), 3 runs.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

if __package__ in (None, ""):                       # run as a file: make the repo importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments import _common as C  # noqa: N812 - the codebase's short capital module alias

EPS = [0.5, 1.0, 2.0, 5.0, 10.0]
PAIRS = [1, 2, 5]
#: An extra, larger P run at the largest epsilon only (panel B): the paper's "even larger P".
LARGE_P = 10
DELTA = 1e-8
LEVELS = 6
N_SMALL = 200
N_GC_ALL = 40


def records():
    """(n, 2) records in [0, 1]: level k of 6 at (k + 0.5) / 6, so bins = 6 puts it in bin k."""
    F, _ = C.diabetes("any")
    days = F[:, C.DIABETES_FEATURES.index("time_in_hospital")]
    procs = F[:, C.DIABETES_FEATURES.index("num_procedures")]
    y = np.minimum(days, LEVELS) - 1                       # 1..5, 6+  -> 0..5
    z = np.minimum(procs, LEVELS - 1)                      # 0..4, 5+  -> 0..5
    return np.column_stack([(y + 0.5) / LEVELS, (z + 0.5) / LEVELS])


def variants(pairs_list):
    out = [("rr", "bell-ldp", None)]
    out += [(f"2pc-P{p}", "bell-2pc", p) for p in pairs_list]
    out.append(("2pc-all", "bell-2pc", "all"))
    return out


def call(proto, X, eps, pairs, seed, engine="plain", evaluate=False):
    from ustat.baselines import BaselineSpec, run_protocol

    if proto == "bell-ldp":
        spec = BaselineSpec.of(proto, "kendall", epsilon=eps, bins=LEVELS, seed=seed)
    else:
        spec = BaselineSpec.of(proto, "kendall", epsilon=eps, bins=LEVELS, seed=seed,
                               pairs=pairs, delta=DELTA, engine=engine)
    return run_protocol(X, spec, evaluate=evaluate)


def theory_mse(res) -> float:
    """The run's own formula: RR exact variance, Theorem 5, or all pairs' noise variance."""
    ev = res.evaluation or {}
    if res.protocol == "bell-ldp":
        return float(ev["variance_exact"])
    if res.params["pairs"] == "all":
        return float(res.theory["dp_variance"])             # complete U: noise only
    return float(ev["mse_thm5"])


def all_pairs_formula(eps, n, kernel_range, scale) -> dict:
    """All pairs at n users, by formula: mean of n(n-1)/2 ideal discrete Laplace noises."""
    from ustat.baselines.bell_2pc_noise import advanced_eps0

    eps0, rule = advanced_eps0(eps, n - 1, DELTA)
    alpha = math.exp(-eps0 / kernel_range)
    var = 2 * alpha / (1 - alpha) ** 2
    return {"eps_pair": eps0, "composition": rule,
            "mse": var / (scale ** 2 * (n * (n - 1) / 2))}


def summarize(rows, keys):
    """Per setting: mean/std of |error|, MSE, its standard error, theory MSE, costs."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    out = []
    for k, rs in groups.items():
        err = np.array([r["abs_error"] for r in rs])
        sq = err ** 2
        out.append({**dict(zip(keys, k)), "runs": len(rs), "mean_abs": float(err.mean()),
                    "std_abs": float(err.std(ddof=1)), "mse": float(sq.mean()),
                    "mse_se": float(sq.std(ddof=1) / math.sqrt(len(rs))),
                    "theory_mse": rs[0]["theory_mse"], "bias": float(np.mean(
                        [r["estimate"] - r["truth"] for r in rs])),
                    "online_bits": rs[0]["online_bits"], "rounds": rs[0]["rounds"],
                    "delta": rs[0]["delta"], "eps_pair": rs[0]["eps_pair"]})
    return out


def plot(run, stats, formula_b, eps_list, names, n_a, n_b, truth_a, truth_b, runs):
    fig, axes = C.subplots(1, 2, figsize=(17, 5.2))
    colors = {"rr": "tab:red", "2pc-all": "tab:purple"}
    cmap = C.pyplot().get_cmap("Blues")
    subs = sorted({s["variant"] for s in stats if s["variant"].startswith("2pc-P")},
                  key=lambda v: int(v[5:]))
    for i, v in enumerate(subs):
        colors[v] = cmap(0.4 + 0.55 * i / max(len(subs) - 1, 1))
    label = {"rr": "randomized response (Alg. 1)", "2pc-all": "2PC all pairs (adv. comp.)"}
    for ax, panel, n, truth in ((axes[0], "A", n_a, truth_a), (axes[1], "B", n_b, truth_b)):
        for v in names + [v for v in subs if v not in names]:
            st = sorted((s for s in stats if s["panel"] == panel and s["variant"] == v),
                        key=lambda s: s["epsilon"])
            lab = label.get(v, f"2PC subsampling P = {v[5:]}")
            if st:
                ax.errorbar([s["epsilon"] for s in st], [s["mean_abs"] for s in st],
                            yerr=[s["std_abs"] for s in st], marker="o", ms=4, capsize=3,
                            color=colors[v], label=lab + " (measured)")
                ax.plot([s["epsilon"] for s in st],
                        [math.sqrt(2 * s["theory_mse"] / math.pi) for s in st], ls=":",
                        color=colors[v], lw=1.2)
        if panel == "B":
            ax.plot(eps_list, [math.sqrt(2 * formula_b[e]["mse"] / math.pi) for e in eps_list],
                    ls="--", marker="x", color=colors["2pc-all"],
                    label="2PC all pairs (formula: n(n-1)/2 pairs not run)")
        C.eps_axis(ax, eps_list)
        ax.set_yscale("log")
        ax.set_xlabel("privacy budget epsilon (log scale)")
        ax.set_ylabel("|private tau - exact tau| (mean +- std over runs, log scale)")
        ax.set_title(f"({panel}) n = {n} users, exact tau-a = {truth:.4f}", fontsize=10)
        ax.grid(alpha=0.3, which="both")
        ax.plot([], [], ls="none", label="(the paper's Fig. 4 gives no numbers)")
        C.legend_outside(ax)
    fig.suptitle("Bell et al. Fig. 4 on Diabetes (days in hospital x procedures, 6 x 6 cells), "
                 f"{runs} runs; dotted: each protocol's theory, sqrt(2 MSE / pi)", fontsize=10)
    return C.save_png(run, fig)


def main(argv=None) -> int:
    run = C.start("bell_kendall", __doc__.splitlines()[0], argv)
    runs = run.repeats(3, 20)
    eps_list = [1.0, 10.0] if run.quick else EPS
    pairs_list = [1, 2] if run.quick else PAIRS
    large_p = 5 if run.quick else LARGE_P
    n_a = 30 if run.quick else N_SMALL
    n_gc_all = 12 if run.quick else N_GC_ALL
    X_all = records()
    N = X_all.shape[0]
    X_b = X_all
    if run.quick:
        _, keep = C.split(N, run.seed_for("subset-B"), 3000)
        X_b = X_all[keep]
    _, keep_a = C.split(N, run.seed_for("subset-A"), n_a)
    X_a = X_all[keep_a]
    data = {"A": X_a, "B": X_b}
    truth = {p: call("bell-ldp", X, 1.0, None, run.seed_for("truth", p),
                     evaluate=True).evaluation["statistic_discretized"] for p, X in data.items()}
    names = [v for v, _, _ in variants(pairs_list)]
    first: dict = {}

    def one(st, r):
        panel, v, eps = st["panel"], st["variant"], st["epsilon"]
        proto, pairs = st["protocol"], st["pairs"]
        res = call(proto, data[panel], eps, None if pairs == "" else pairs,
                   run.seed_for(panel, v, eps, r), evaluate=r == 0)
        if r == 0:
            first[(panel, v, eps)] = res
        f = first[(panel, v, eps)]
        return {"n": res.n, "engine": res.params.get("engine", "-"),
                "estimate": C.raw_estimate(res), "truth": truth[panel],
                "abs_error": abs(C.raw_estimate(res) - truth[panel]), "theory_mse": theory_mse(f),
                "online_bits": res.online_bits, "max_party_bits": res.max_party_bits,
                "rounds": res.rounds, "seconds": res.seconds, "delta": res.delta,
                "eps_pair": res.params.get("eps_pair")}

    todo = [{"panel": panel, "variant": v, "protocol": proto,
             "pairs": "" if pairs is None else pairs, "epsilon": e}
            for panel in ("A", "B") for v, proto, pairs in variants(pairs_list)
            if not (panel == "B" and pairs == "all") for e in eps_list]
    todo.append({"panel": "B", "variant": f"2pc-P{large_p}", "protocol": "bell-2pc",
                 "pairs": large_p, "epsilon": eps_list[-1]})
    rows = C.repeat_runs(todo, runs, one, "Kendall runs")

    # the garbled-circuit engine: once per family, with the seed of a plain run -> same estimate
    gc_rows = []
    gc_todo = [("A", v, p, X_a, run.seed_for("A", v, 1.0, 0)) for v, _, p in
               variants(pairs_list) if isinstance(p, int)]
    _, keep_g = C.split(N, run.seed_for("subset-gc"), n_gc_all)
    gc_todo.append(("gc-all", "2pc-all", "all", X_all[keep_g], run.seed_for("gc-all", 1.0)))
    with C.Progress(len(gc_todo), "garbled-circuit runs") as bar:
        for _panel, v, p, X, seed in gc_todo:
            g = call("bell-2pc", X, 1.0, p, seed, engine="gc")
            pl = call("bell-2pc", X, 1.0, p, seed, engine="plain")
            gc_rows.append({"panel": "gc", "variant": v, "protocol": "bell-2pc", "pairs": p,
                            "epsilon": 1.0, "run": 0, "n": g.n, "engine": "gc",
                            "estimate": C.raw_estimate(g), "plain_estimate": C.raw_estimate(pl),
                            "same_as_plain": C.raw_estimate(g) == C.raw_estimate(pl),
                            "n_pairs": g.params["n_pairs"], "n_and": g.params["n_and"],
                            "online_bits": g.online_bits, "offline_bits": g.offline_bits,
                            "max_party_bits": g.max_party_bits, "rounds": g.rounds,
                            "offline_rounds": g.offline_rounds, "seconds": g.seconds,
                            "plain_seconds": pl.seconds, "delta": g.delta,
                            "eps_pair": g.params["eps_pair"]})
            bar.advance()
    rr_cost = call("bell-ldp", X_b, 1.0, None, run.seed_for("B", "rr", 1.0, 0))
    rr_bits = rr_cost.online_bits / rr_cost.n
    rr_formula = math.ceil(math.log2(LEVELS * LEVELS))
    C.write_csv(run, rows + gc_rows)

    stats = summarize(rows, ["panel", "variant", "epsilon"])
    ref = first[("A", "2pc-all", eps_list[0])]
    lo, hi = ref.params["kernel_int_range"]
    formula_b = {e: all_pairs_formula(e, X_b.shape[0], hi - lo, ref.params["kernel_scale"])
                 for e in eps_list}
    plot(run, stats, formula_b, eps_list, names, n_a, X_b.shape[0], truth["A"],
         truth["B"], runs)
    S = {(s["panel"], s["variant"], s["epsilon"]): s for s in stats}

    table_a = C.md_table(
        ["panel", "n", "protocol", "epsilon", "mean abs error", "std", "MSE", "theory MSE",
         "eps per pair", "delta (reported)", "online bits (plain run)", "rounds"],
        [[s["panel"], data[s["panel"]].shape[0], s["variant"], s["epsilon"], s["mean_abs"],
          s["std_abs"], s["mse"], s["theory_mse"], s["eps_pair"], s["delta"], s["online_bits"],
          s["rounds"]] for s in stats])
    table_f = C.md_table(
        ["epsilon", "eps per pair (advanced comp.)", "formula MSE at n = " + str(X_b.shape[0]),
         "pair circuits not run"],
        [[e, f["eps_pair"], f["mse"], X_b.shape[0] * (X_b.shape[0] - 1) // 2]
         for e, f in formula_b.items()])
    table_gc = C.md_table(
        ["family", "n", "pairs", "pair circuits", "ANDs / pair", "gc estimate", "plain estimate",
         "identical", "online bits", "offline bits", "max bits / party", "online rounds",
         "offline rounds", "gc seconds", "plain seconds"],
        [[g["variant"], g["n"], g["pairs"], g["n_pairs"], g["n_and"], g["estimate"],
          g["plain_estimate"], g["same_as_plain"], g["online_bits"], g["offline_bits"],
          g["max_party_bits"], g["rounds"], g["offline_rounds"], g["seconds"],
          g["plain_seconds"]] for g in gc_rows] +
        [["rr (bell-ldp)", rr_cost.n, "-", "-", "-", rr_cost.estimate, "-", "-",
          rr_cost.online_bits, rr_cost.offline_bits, rr_cost.max_party_bits, rr_cost.rounds,
          rr_cost.offline_rounds, rr_cost.seconds, "-"]])

    # claims
    hi_eps = [e for e in eps_list if e <= 2] or eps_list[:1]
    e_top = eps_list[-1]
    subs = [v for v in names if v.startswith("2pc-P")] + [f"2pc-P{large_p}"]

    def best_sub(panel, e):
        return min((v for v in subs if (panel, v, e) in S), key=lambda v: S[(panel, v, e)]["mse"])

    worst_a = [max(names, key=lambda v: S[("A", v, e)]["mse"]) for e in eps_list]
    all_worst_a = sum(w == "2pc-all" for w in worst_a)
    all_worst_b = "yes" if all(formula_b[e]["mse"] > max(
        S[("B", v, e)]["mse"] for v in names if v != "2pc-all") for e in eps_list) else "no"
    rr_vs_all_b = {e: S[("B", "rr", e)]["mse"] / formula_b[e]["mse"] for e in eps_list}
    rr_vs_all_a = {e: S[("A", "rr", e)]["mse"] / S[("A", "2pc-all", e)]["mse"] for e in eps_list}
    gain = {e: min(S[("B", "rr", e)]["mse"], formula_b[e]["mse"])
            / S[("B", best_sub("B", e), e)]["mse"] for e in eps_list}
    gain_mae = {e: min(S[("B", "rr", e)]["mean_abs"],
                       math.sqrt(2 * formula_b[e]["mse"] / math.pi))
                / S[("B", best_sub("B", e), e)]["mean_abs"] for e in eps_list}
    p1_best = [e for e in hi_eps if best_sub("B", e) == "2pc-P1"]
    top_best = best_sub("B", e_top)
    top_gain = S[("B", "2pc-P1", e_top)]["mse"] / S[("B", top_best, e_top)]["mse"]
    # Theorem 5 at the data's zeta's: which P would match RR at the top epsilon?
    ev_b = first[("B", "2pc-P1", e_top)].evaluation
    nb = X_b.shape[0]
    lo_hi = hi - lo

    def thm5(P, e):
        alpha = math.exp(-(e / P) / lo_hi)
        nv = 2 * alpha / (1 - alpha) ** 2
        sub = 2 / (P * nb) * (2 * (P - 1) * (1 - 1 / (nb - 1)) * ev_b["zeta1"]
                              + (1 + (P - 1) / (nb - 1)) * ev_b["zeta2"])
        return sub + 2 * nv / (P * nb)

    p_grid = range(1, 201)
    p_star = min(p_grid, key=lambda P: thm5(P, e_top))
    rr_top = S[("B", "rr", e_top)]["mse"]
    big = S[("B", f"2pc-P{large_p}", e_top)]
    gc_same = all(g["same_as_plain"] for g in gc_rows)
    per_pair = [g["online_bits"] / g["n_pairs"] for g in gc_rows]
    agree_theory = [abs(s["mse"] - s["theory_mse"]) / s["theory_mse"] for s in stats
                    if s["theory_mse"] > 0]
    cl = [
        ("TripAdvisor (room, cleanliness), 6 x 6 = 36 values, n > 246K, true KTC 0.58",
         f"Diabetes (days in hospital 6+, procedures 5+), 6 x 6 = 36 values, n = {nb}, "
         f"exact tau-a {truth['B']:.4f}", "different data"),
        ("the 2PC protocol with all pairs performs worst, due to composition",
         f"(B) n = {nb}: all pairs (formula) has the largest MSE at every epsilon: "
         f"{all_worst_b}; (A) n = {n_a}: all pairs has the largest MSE at {all_worst_a} of "
         f"{len(eps_list)} "
         "epsilons (worst per epsilon: " + ", ".join(
             f"{C.fmt(e)}: {w}" for e, w in zip(eps_list, worst_a)) + "); (B) "
         "all pairs / best subsampling MSE = "
         + ", ".join(f"{C.fmt(formula_b[e]['mse'] / S[('B', best_sub('B', e), e)]['mse'])}"
                     for e in eps_list),
         all(formula_b[e]["mse"] > max(S[("B", v, e)]["mse"] for v in names if v != "2pc-all")
             for e in eps_list)),
        ("randomized response performs slightly better than all pairs, thanks to the small "
         "domain",
         "MSE(RR) / MSE(all pairs), by epsilon: (A) " + ", ".join(
             f"{C.fmt(e)}: {C.fmt(v)}" for e, v in rr_vs_all_a.items()) + "; (B, formula) "
         + ", ".join(f"{C.fmt(e)}: {C.fmt(v)}" for e, v in rr_vs_all_b.items()),
         all(v < 1 for v in rr_vs_all_b.values())),
        ("subsampling has the lowest error, by roughly an order of magnitude for epsilon <= 2",
         "(B) min(MSE of RR, all pairs) / MSE of the best P: " + ", ".join(
             f"{C.fmt(e)}: {C.fmt(gain[e])}" for e in hi_eps) + "; in mean abs error: "
         + ", ".join(f"{C.fmt(e)}: {C.fmt(gain_mae[e])}" for e in hi_eps),
         "yes" if all(gain_mae[e] >= 3 for e in hi_eps) else
         ("partly" if all(gain[e] > 1 for e in hi_eps) and max(gain_mae.values()) >= 3
          else "no")),
        ("P = 1 is best in high privacy regimes (privacy error dominates)",
         "(B) best P at epsilon <= 2: " + ", ".join(
             f"{C.fmt(e)}: {best_sub('B', e)}" for e in hi_eps), len(p1_best) == len(hi_eps)),
        ("P > 1 reduces the overall error in low privacy regimes (epsilon = 10)",
         f"(B) at epsilon = {C.fmt(e_top)}: best {top_best}, MSE(P = 1) / MSE(best) = "
         f"{C.fmt(top_gain)}", top_best != "2pc-P1" and top_gain > 1),
        ("at epsilon = 10 an even larger P would match randomized response",
         f"(B) Theorem 5 at the data's zeta_1, zeta_2: best P = {p_star} gives MSE "
         f"{C.fmt(thm5(p_star, e_top))}; RR measured {C.fmt(rr_top)} (ratio "
         f"{C.fmt(thm5(p_star, e_top) / rr_top)}); measured P = {large_p}: MSE "
         f"{C.fmt(big['mse'])} (Theorem 5: {C.fmt(big['theory_mse'])})",
         thm5(p_star, e_top) <= 1.5 * rr_top or big["mse"] <= 1.5 * rr_top),
        (f"all pairs with delta = {DELTA:g} (the paper's Laplace noise simulated)",
         "reported total delta at n = " + str(n_a) + " (advanced-composition delta + (n - 1) "
         "delta_pair of the bounded in-circuit noise): " + ", ".join(
             f"{C.fmt(e)}: {C.fmt(S[('A', '2pc-all', e)]['delta'])}" for e in eps_list),
         all(S[("A", "2pc-all", e)]["delta"] <= 1.01 * DELTA for e in eps_list)),
        ("subsampling: communication linear in n (P n / 2 pair circuits), all pairs quadratic",
         "measured gc online bits per pair circuit: " + ", ".join(
             f"{g['variant']}: {C.fmt(g['online_bits'] / g['n_pairs'])}" for g in gc_rows),
         max(per_pair) / min(per_pair) < 1.2),
    ]
    claims = C.md_table(["paper's claim (Sec. 6, Fig. 4)", "ours", "agrees"], cl)
    checks = C.md_table(["check", "result"], [
        ("garbled-circuit engine == plain engine on the same seed (documented: same circuit, "
         "same coins)", "yes" if gc_same else "NO"),
        (f"bell-ldp measured bits per party == ceil(log2 36) = {rr_formula}",
         f"{C.fmt(rr_bits)} ({'yes' if rr_bits == rr_formula else 'NO'})"),
        ("measured MSE vs the theory MSE (RR exact variance, Theorem 5, all-pairs noise): "
         "median / max relative difference",
         f"{C.fmt(float(np.median(agree_theory)))} / {C.fmt(float(np.max(agree_theory)))} "
         f"over {len(agree_theory)} settings of {runs} runs")])
    C.write_markdown(run.path(".md"), "Bell et al. Fig. 4: Kendall's tau, RR vs 2PC", run, [
        f"UCI Diabetes (TripAdvisor, the paper's set, is not available): y = days in hospital "
        f"(top-coded 6+), z = number of procedures (top-coded 5+), 6 x 6 = 36 cells, "
        f"bins = 6 (one per level). Panel A: a public random subset of n = {n_a} users "
        f"(exact tau-a {truth['A']:.4f}), every protocol run; panel B: n = {nb} users "
        f"(exact tau-a {truth['B']:.4f}), all pairs by formula only "
        f"({nb * (nb - 1) // 2:.3g} pair circuits per run). {runs} runs per setting, "
        f"error against the exact tau-a of the discretized records. P in {pairs_list} "
        f"(and P = {large_p} at epsilon = {C.fmt(eps_list[-1])}, panel B), "
        f"delta = {DELTA:g} for all pairs (the reported delta adds the in-circuit noise's "
        "(n - 1) delta_pair). Plain engine for the error curves; costs of the 2PC below "
        "are from the garbled-circuit runs.",
        "## Claims\n\n" + claims, "## Checks\n\n" + checks,
        "## Error by protocol and epsilon\n\n" + table_a,
        "## All pairs at the full n (formula, not run)\n\n" + table_f,
        "## Measured costs (garbled circuits at epsilon = 1; randomized response at n = "
        f"{rr_cost.n})\n\n" + table_gc,
        f"Figure: `{run.name}.png`; per-run data: `{run.name}.csv`."])
    agree = [c[2] if isinstance(c[2], str) else C.verdict(bool(c[2])) for c in cl[1:]]
    e1 = 1.0 if 1.0 in eps_list else eps_list[0]
    C.write_json(run, [C.item(
        "Bell", "Fig. 4 (Kendall's tau: RR, 2PC all pairs, 2PC subsampling)",
        f"Diabetes 6 x 6 cells (TripAdvisor not available), n = {nb} (B) and {n_a} (A, every "
        f"protocol run), epsilon {', '.join(C.fmt(e) for e in eps_list)}, {runs} runs "
        "(paper: 20)", "orderings only (figure, no numbers)",
        f"(B) epsilon {C.fmt(e1)}: RR {C.fmt(S[('B', 'rr', e1)]['mean_abs'])}, P = 1 "
        f"{C.fmt(S[('B', '2pc-P1', e1)]['mean_abs'])} mean abs error",
        "; ".join(f"{c[0]}: {a}" for c, a in zip(cl[1:], agree)),
        "`bell_kendall.md`, Claims",
        "yes" if all(a == "yes" for a in agree) else "partly")],
        {"stats": stats})
    print(f"[{run.name}] done in {run.elapsed():.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
