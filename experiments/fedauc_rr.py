"""FedAUC (Sun et al.), Tables 3-6 and Fig. 1a: FedAUC_RR versus epsilon, debiased or not, 10x data.

The paper (Section 6.2.1, Appendices L-M) runs FedAUC_RR (label randomized
response, AUC from ranks, Algorithm 3 debiasing) 100 times per epsilon on
Criteo and reports: Table 5, the mean and standard deviation of the AUC on
the small set (M = 458,407); Table 6, the same on the 10x larger set
(M = 4,584,062), with the claim (Fig. 1a) that its standard deviation is
about 1/sqrt(10) of the small set's; Table 3, the noisy AUC without
debiasing (its mean), which "drops a lot" for small epsilon; Table 4, the
two sets' sizes. Epochs: the paper's models at epochs 1-3; we have one model
and compare with its epoch-1 column.

Ours (see :mod:`experiments._fedauc` for the data substitute): Diabetes,
M = 101,766 in the small set's role, a random tenth (M = 10,177) for the 10x
relation; every epsilon of Table 5 (0.1 .. 10 and inf), 100 runs each
(a Monte Carlo of the release on the ranks; one real protocol run per set
for the costs). Explanations are computed: the paper's eq. (7) standard
deviation at Criteo's and at our M and P beside both measurements, and the
shrinkage factor 1 - alpha - beta of Algorithm 3 that sets Table 3.

Quick mode: 3000 records (and a tenth), 3 epsilons, 3 runs.
"""

from __future__ import annotations

import itertools
import math
import os
import sys

import numpy as np

if __package__ in (None, ""):                       # run as a file: make the repo importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments import _common as C  # noqa: N812 - the codebase's short capital module alias
from experiments import _fedauc as F  # noqa: N812 - the codebase's short capital module alias

EPS = [0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, math.inf]
#: Table 5 (small set, epoch 1): epsilon -> (mean AUC, std over 100 runs); truth 0.749383.
PAPER_T5 = {0.1: (0.745667, 2.41e-2), 0.25: (0.749169, 8.69e-3), 0.5: (0.749206, 5.39e-3),
            1.0: (0.749495, 2.11e-3), 2.0: (0.749453, 9.43e-4), 3.0: (0.749295, 5.46e-4),
            4.0: (0.749207, 3.75e-4), 5.0: (0.749399, 2.05e-4), 10.0: (0.749383, 1.77e-5),
            math.inf: (0.749383, 0.0)}
#: Table 6 (large set, epoch 1); truth 0.750509.
PAPER_T6 = {0.1: (0.751439, 7.52e-3), 0.25: (0.750405, 2.90e-3), 0.5: (0.750589, 1.32e-3),
            1.0: (0.750345, 5.51e-4), 2.0: (0.750482, 3.03e-4), 3.0: (0.750480, 1.53e-4),
            4.0: (0.750509, 9.45e-5), 5.0: (0.750500, 5.87e-5), 10.0: (0.750509, 5.37e-6),
            math.inf: (0.750509, 0.0)}
#: Table 3 (noisy AUC without debiasing, epoch 1) and the truth.
PAPER_T3 = {0.1: 0.509429, 0.5: 0.546986, 1.0: 0.592421, 2.0: 0.667666, 4.0: 0.735230,
            10.0: 0.749343}
PAPER_TRUTH = {"small": 0.749383, "large": 0.750509}
SETS = {"main": "small", "tenth": "large"}       # ours -> the paper's set it is compared with


def shrinkage(pi: float, eps: float) -> float:
    """1 - alpha - beta of Algorithm 3 at base rate pi: noisy AUC - 1/2 = this x (AUC - 1/2)."""
    if not math.isfinite(eps):
        return 1.0
    rho = 1 / (1 + math.exp(eps))
    a = (1 - pi) * rho / (pi * (1 - rho) + (1 - pi) * rho)
    b = pi * rho / (pi * rho + (1 - pi) * (1 - rho))
    return 1 - a - b


def eq7_std(M: int, P: int, eps: float) -> float:
    """The paper's eq. (7): the std of FedAUC_RR's AUC with accurate P and N."""
    if not math.isfinite(eps):
        return 0.0
    v = math.exp(eps) / (1 + math.exp(eps)) ** 2 * M * (M - 1) * (2 * M - 1) / 6
    return math.sqrt(v) / (P * (M - P))


def measure(run, data, eps_list, runs):
    rel = {k: F.Release(*v) for k, v in data.items()}

    def one(st, r):
        out = rel[st["set"]].rr(st["epsilon"], run.seed_for(st["set"], st["epsilon"], r))
        return {"auc": out["auc"], "auc_noisy": out["auc_noisy"]}

    settings = [{"set": k, "M": rel[k].M, "epsilon": e} for k in data for e in eps_list]
    return C.repeat_runs(settings, runs, one, "FedAUC_RR runs")


def summarize(rows, data, eps_list) -> dict:
    out = {}
    for k, (_s, y) in data.items():
        M, P = y.size, int(y.sum())
        for e in eps_list:
            sel = [r for r in rows if r["set"] == k and r["epsilon"] == e]
            auc = np.array([r["auc"] for r in sel], dtype=np.float64)
            noisy = np.array([r["auc_noisy"] for r in sel], dtype=np.float64)
            sd, sd_se = C.std_se(auc) if math.isfinite(e) else (0.0, 0.0)
            out[(k, e)] = {"runs": len(sel), "undefined": int(np.sum(~np.isfinite(auc))),
                           "mean": float(np.nanmean(auc)), "std": sd, "std_se": sd_se,
                           "noisy_mean": float(np.nanmean(noisy)),
                           "noisy_se": C.mean_se(noisy[np.isfinite(noisy)])[1],
                           "eq7": eq7_std(M, P, e), "M": M, "P": P}
    return out


def explain_std(stats, eps_list) -> tuple[str, str]:
    """Paper / its eq. (7) at Criteo and ours / eq. (7) at our data, at every epsilon of both.

    Eq. (7) need not give either std (the paper's is about 10x it at small epsilon); what
    supports comparing the two data sets through it is that the two quotients track each
    other. Returns the sentence and the verdict: "yes" if the two quotients are within
    1.5x of each other at every epsilon, "no" if at none, else "partly".
    """
    pairs = []
    for e in eps_list:
        if e in PAPER_T5 and math.isfinite(e) and ("main", e) in stats:
            s = stats[("main", e)]
            pairs.append((e, PAPER_T5[e][1] / eq7_std(*F.CRITEO["small"], e), s["std"] / s["eq7"]))
    close = [e for e, p, o in pairs if abs(math.log(p / o)) < math.log(1.5)]
    text = ("std / eq. (7), the paper's (Criteo's M, P) vs ours (our M, P): "
            + ", ".join(f"{p:.3g} vs {o:.3g} (epsilon {C.fmt(e)})" for e, p, o in pairs)
            + f"; the two track each other (within 1.5x) at {len(close)} of {len(pairs)} "
            "epsilons: that, not eq. (7)'s value, is what supports rescaling by eq. (7)")
    verdict = "yes" if len(close) == len(pairs) else ("partly" if close else "no")
    return text, verdict


def claims(stats, eps_list, pis) -> list:
    fin = [e for e in eps_list if math.isfinite(e)]
    # a tenth of the data at a large epsilon may flip no label in a few runs: std 0 (nan)
    ratios = [stats[("main", e)]["std"] / stats[("tenth", e)]["std"]
              if stats[("tenth", e)]["std"] > 0 else math.nan for e in fin]
    paper_ratios = [PAPER_T6[e][1] / PAPER_T5[e][1] for e in fin if e in PAPER_T5]
    mono = all(stats[("main", a)]["std"] > stats[("main", b)]["std"]
               for a, b in itertools.pairwise(fin))
    t3 = [e for e in fin if e in PAPER_T3]
    drop = all(stats[("main", a)]["noisy_mean"] <= stats[("main", b)]["noisy_mean"] + 1e-9
               for a, b in itertools.pairwise(t3))
    bias = max(abs(stats[("main", e)]["mean"] - stats[("main", math.inf)]["mean"])
               / max(stats[("main", e)]["std"], 1e-12) * math.sqrt(stats[("main", e)]["runs"])
               for e in fin)
    return [
        ("the std of the debiased AUC falls as epsilon grows (Table 5)",
         f"falls monotonically over epsilon {C.fmt(fin[0])}..{C.fmt(fin[-1])}: "
         f"{C.verdict(mono)}", C.verdict(mono)),
        ("10x more data: std about 1/sqrt(10) = 0.316 of the small set's (Fig. 1a, Table 6)",
         f"ours (M = {stats[('main', fin[0])]['M']} vs {stats[('tenth', fin[0])]['M']}): "
         f"{', '.join(C.fmt(q) for q in ratios)}; paper: "
         f"{', '.join(C.fmt(q) for q in paper_ratios)}",
         C.verdict(all(0.2 < q < 0.5 for q in ratios))),
        ("without debiasing the AUC drops towards 1/2 for small epsilon (Table 3)",
         f"noisy AUC rises with epsilon: {C.verdict(drop)}; shrinkage 1 - alpha - beta at our "
         f"base rate {pis['main']:.3f} vs Criteo's "
         f"{F.CRITEO['small'][1] / F.CRITEO['small'][0]:.3f}"
         f" at epsilon 1: {shrinkage(pis['main'], 1.0):.3f} vs "
         f"{shrinkage(F.CRITEO['small'][1] / F.CRITEO['small'][0], 1.0):.3f}", C.verdict(drop)),
        ("the debiased mean is close to the truth (footnote 8)",
         f"largest |mean - truth| / (std / sqrt(runs)) over epsilon: {bias:.2f}",
         C.verdict(bias < 4)),
    ]


def plot(run, stats, eps_list, truth):
    fig, (ax, bx) = C.subplots(1, 2, figsize=(14, 4.8))
    fin = [e for e in eps_list if math.isfinite(e)]
    pe = [e for e in fin if e in PAPER_T5]
    for k, color, paper, lab in (("main", "tab:blue", PAPER_T5, "small"),
                                 ("tenth", "tab:orange", PAPER_T6, "large (10x)")):
        st = [stats[(k, e)] for e in fin]
        ax.errorbar(fin, [s["std"] for s in st], yerr=[s["std_se"] for s in st], marker="o",
                    ms=4, capsize=3, color=color,
                    label=f"ours, M = {st[0]['M']} ({'all' if k == 'main' else 'a tenth'})")
        ax.plot(pe, [paper[e][1] for e in pe], ls="--", marker="D", mfc="none", color=color,
                label=f"paper, Criteo {lab} set (Table {5 if k == 'main' else 6})")
        ax.plot(fin, [s["eq7"] for s in st], ls=":", color=color, lw=1,
                label=f"eq. (7) at our M = {st[0]['M']}")
    C.dress(ax, "Fig. 1a / Tables 5-6: FedAUC_RR spread vs data size", "epsilon (log scale)",
            "standard deviation of the AUC over runs", eps=fin, logy=True)
    t3 = [e for e in fin if e in PAPER_T3]
    st = [stats[("main", e)] for e in fin]
    bx.errorbar(fin, [s["noisy_mean"] for s in st], yerr=[s["noisy_se"] for s in st],
                marker="o", ms=4, capsize=3, color="tab:blue", label="ours: noisy AUC (mean)")
    bx.plot(fin, [s["mean"] for s in st], marker="s", ms=4, color="tab:green",
            label="ours: debiased AUC (mean)")
    bx.axhline(truth, color="tab:blue", ls=":", lw=1, label=f"ours: true AUC {truth:.4f}")
    bx.plot(t3, [PAPER_T3[e] for e in t3], ls="--", marker="D", mfc="none", color="black",
            label="paper (Table 3): noisy AUC, Criteo")
    bx.axhline(PAPER_TRUTH["small"], color="black", ls=":", lw=1,
               label=f"paper: true AUC {PAPER_TRUTH['small']}")
    bx.axhline(0.5, color="grey", lw=0.8)
    C.dress(bx, "Table 3: the AUC from flipped labels, without debiasing", "epsilon (log scale)",
            "AUC", eps=fin, grid="major")
    return C.save_png(run, fig)


def main(argv=None) -> int:
    run = C.start("fedauc_rr", __doc__.splitlines()[0], argv)
    s, y = F.dataset(run)
    data = {"main": (s, y), "tenth": F.tenth(run, s, y)}
    eps_list = [0.5, 1.0, math.inf] if run.quick else EPS
    runs = run.repeats(3, 100)
    rows = measure(run, data, eps_list, runs)
    C.write_csv(run, rows)
    stats = summarize(rows, data, eps_list)
    truth = {k: F.auc_truth(*v) for k, v in data.items()}
    pis = {k: float(v[1].mean()) for k, v in data.items()}
    costs = {k: F.protocol_run(*data[k], "fedauc-rr", 1.0, run.seed_for("cost", k))
             for k in data}
    plot(run, stats, eps_list, truth["main"])
    t4 = C.md_table(["set", "M", "P", "N", "positive fraction", "true AUC"], [
        ["paper: Criteo small", *F.CRITEO["small"], F.CRITEO["small"][0] - F.CRITEO["small"][1],
         F.CRITEO["small"][1] / F.CRITEO["small"][0], PAPER_TRUTH["small"]],
        ["paper: Criteo large", *F.CRITEO["large"], F.CRITEO["large"][0] - F.CRITEO["large"][1],
         F.CRITEO["large"][1] / F.CRITEO["large"][0], PAPER_TRUTH["large"]],
        *[[f"ours: Diabetes ({'all' if k == 'main' else 'a random tenth'})", v[1].size,
           int(v[1].sum()), int(v[1].size - v[1].sum()), pis[k], truth[k]]
          for k, v in data.items()]])

    def table(key, paper):
        body = []
        for e in eps_list:
            st, pm_ = stats[(key, e)], paper.get(e)
            body.append([e, 1 / (1 + math.exp(e)) if math.isfinite(e) else 0.0,
                         None if pm_ is None else f"{pm_[0]:.6f} +- {C.fmt(pm_[1])}",
                         st["runs"], f"{st['mean']:.6f}", C.pm(st["std"], st["std_se"]),
                         st["eq7"], None if pm_ is None or not st["eq7"] else
                         pm_[1] / eq7_std(*F.CRITEO[SETS[key]], e),
                         None if not st["eq7"] else st["std"] / st["eq7"], st["undefined"]])
        return C.md_table(["epsilon", "rho", "paper: mean +- std (epoch 1)", "runs",
                           "ours: mean", "ours: std +- s.e.", "eq. (7) std at our M, P",
                           "paper std / eq. (7) at Criteo", "ours std / eq. (7)",
                           "undefined runs"], body)

    t3 = C.md_table(["epsilon", "paper: noisy AUC", "paper: shrinkage (noisy-1/2)/(truth-1/2)",
                     "formula 1-alpha-beta at Criteo's base rate", "ours: noisy AUC (mean)",
                     "ours: shrinkage", "formula at our base rate"], [
        [e, PAPER_T3.get(e), None if e not in PAPER_T3 else
         (PAPER_T3[e] - 0.5) / (PAPER_TRUTH["small"] - 0.5),
         shrinkage(F.CRITEO["small"][1] / F.CRITEO["small"][0], e),
         stats[("main", e)]["noisy_mean"],
         (stats[("main", e)]["noisy_mean"] - 0.5) / (truth["main"] - 0.5),
         shrinkage(pis["main"], e)] for e in eps_list])
    e1 = 1.0 if 1.0 in eps_list else eps_list[0]
    why, why_verdict = explain_std(stats, eps_list)
    ratio = stats[("main", e1)]["std"] / stats[("tenth", e1)]["std"]
    cl = claims(stats, eps_list, pis)
    ctab = C.md_table(["paper's claim", "ours", "agrees"], cl)
    cost = C.md_table(["set", "online bits / record", "rounds", "seconds"], [
        [k, costs[k].online_bits / data[k][1].size, costs[k].rounds, costs[k].seconds]
        for k in data])
    C.write_markdown(run.path(".md"), "FedAUC (Sun et al.) Tables 3-6, Fig. 1a: FedAUC_RR", run, [
        f"Diabetes, cross-fitted logistic regression scores (the Criteo substitute, see "
        f"`experiments/_fedauc.py`); {runs} runs per epsilon; std = the paper's metric (standard "
        "deviation of the AUC over runs), its s.e. s / sqrt(2 (runs - 1)).",
        "## Table 4: data\n\n" + t4,
        "## Table 5 (ours: all of Diabetes)\n\n" + table("main", PAPER_T5),
        "## Table 6 (ours: a random tenth; the paper's 10x larger set)\n\n"
        + table("tenth", PAPER_T6),
        "## Table 3: without debiasing\n\n" + t3,
        f"## Claims\n\n{ctab}\n\n{why}. At epsilon {C.fmt(e1)}, the std of the small set over "
        f"that of the 10x larger one is {ratio:.3f} (1/sqrt(10) = 0.316).",
        "## Measured costs (epsilon = 1, one protocol run)\n\n" + cost])
    st1 = stats[("main", e1)]
    items = [
        C.item("FedAUC", "Table 4 (data)", "Criteo is not available: Diabetes, M = "
               f"{y.size}, {pis['main']:.1%} positive (Criteo {F.CRITEO['small'][0]}, 25.6%)",
               "M = 458,407 / 4,584,062", f"M = {data['main'][1].size} / {data['tenth'][1].size}",
               "disclosed substitute (Criteo not in the data directory); the 10x relation is "
               "kept", "`fedauc_rr.md`, Table 4"),
        C.item("FedAUC", "Table 5 (FedAUC_RR std vs epsilon)",
               f"Diabetes M = {y.size}, epsilon 0.1..10, {runs} runs",
               f"{C.fmt(PAPER_T5.get(e1, (0, math.nan))[1])} at epsilon {C.fmt(e1)}",
               C.pm(st1["std"], st1["std_se"]) + f" at epsilon {C.fmt(e1)}", why,
               "`fedauc_rr.md`, Table 5, row epsilon 1",
               why_verdict),
        C.item("FedAUC", "Table 6 / Fig. 1a (10x data)",
               f"Diabetes all ({y.size}) vs a tenth ({data['tenth'][1].size}), {runs} runs",
               f"std ratio large/small {PAPER_T6[1.0][1] / PAPER_T5[1.0][1]:.3f} at epsilon 1",
               f"std ratio all/tenth {ratio:.3f}",
               "std scales as sqrt(M^3)/(P N), i.e. 1/sqrt(10) for 10x data, in both",
               "`fedauc_rr.md`, Claims row 2", cl[1][2]),
        C.item("FedAUC", "Table 3 (no debiasing)", f"Diabetes M = {y.size}, {runs} runs",
               f"noisy AUC {PAPER_T3[1.0]} at epsilon 1 (truth {PAPER_TRUTH['small']})",
               f"{st1['noisy_mean']:.4f} at epsilon {C.fmt(e1)} (truth {truth['main']:.4f})",
               f"the noisy AUC is 1/2 + (1 - alpha - beta)(AUC - 1/2): the factor is "
               f"{shrinkage(F.CRITEO['small'][1] / F.CRITEO['small'][0], 1.0):.3f} at Criteo's "
               f"base rate, {shrinkage(pis['main'], 1.0):.3f} at ours; both tables follow it "
               "(Table 3 columns 'shrinkage')", "`fedauc_rr.md`, Table 3", cl[2][2]),
    ]
    C.write_json(run, items, {"stats": {f"{k}:{e}": v for (k, e), v in stats.items()}})
    print(f"[{run.name}] done in {run.elapsed():.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
