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
:mod:`experiments._sinh_ramon` (network counters; wall time split at the
parties' last message), U-MPC in its three variants (|E| = 2n with our
noise and at the paper's law; |E| = 0.02 C(n, 2) at the paper's law, the
authors' setting when these results were written). The authors'
kendall_bell on the same subsets: :mod:`experiments.authors_code`.

Full mode: 20 runs per n for U-MPC and for the duplicate ratio, 7 per n for
the Kendall baselines at t = 64 and at t = 8 (the 4096-cell kernel matrix
dominates the time); about 2 minutes. Quick mode: n in {41, 83}, t = 16
and 4 for Kendall, 2 runs.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

if __package__ in (None, ""):                       # run as a file: make the repo importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments import _common as C  # noqa: N812 - the codebase's short capital module alias
from experiments import _sinh_ramon as S  # noqa: N812 - the codebase's short capital module alias
from experiments import _verdict as V  # noqa: N812 - the codebase's short capital module alias
from experiments._sinh_ramon import BASELINES, COLORS, LABELS, MARKERS, pick

VARIANTS = ["umpc", "umpc-law", "umpc-002"]
PROTOCOLS = VARIANTS + BASELINES

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


def fig56_conflict(stats, n: int) -> str:
    """Figs. 5 and 6 against the 0.02 C(n, 2) variant at n: the two files, one commit."""
    out = []
    for k, fig in (("kendall", "Fig. 5"), ("duplicate", "Fig. 6")):
        s = pick(stats, "umpc-002", kernel=k, n=n, bins=None)
        paper = PAPER_MSE[k].get(n, {}).get("umpc")
        if s is None or paper is None:
            return ""
        c = V.criterion(paper, s["mse_total"], s["mse_total_se"])
        out.append((fig, c))
    (f5, c5), (f6, c6) = out
    same = c5["verdict"] == c6["verdict"]
    return (f"{f5} against 0.02 C(n,2) at n = {n}: {V.criterion_words(c5)}; {f6}: "
            f"{V.criterion_words(c6)}" + ("" if same else
                                          ": the two files, written at the same commit, "
                                          "disagree on |E| (one matches 0.02 C(n,2), the "
                                          "other rules it out)"))


def variant_counts(stats, kern: str, ns) -> str:
    """For each U-MPC variant, at how many of the paper's n it passes the criterion."""
    parts = []
    for v in VARIANTS:
        ok = [n for n in ns if (s := pick(stats, v, kernel=kern, n=n, bins=None)) is not None
              and V.criterion(PAPER_MSE[kern][n]["umpc"], s["mse_total"],
                              s["mse_total_se"])["verdict"] == "yes"]
        parts.append(f"{S.SHORT[v]} at {len(ok)} of {len(ns)} n")
    return ", ".join(parts)


def heart_columns():
    """(X, codes): trestbps and chol scaled to [0, 1] (min-max), and num (0..4), 834 rows."""
    raw = C.heart_table(["trestbps", "chol", "num"])
    raw = raw[np.all(np.isfinite(raw[:, :2]), axis=1)]
    X = (raw[:, :2] - raw[:, :2].min(axis=0)) / (raw[:, :2].max(axis=0) - raw[:, :2].min(axis=0))
    return X, raw[:, 2:3].astype(np.int64)


def paper_value(kern, n, p, t=None, t_paper=None):
    """The authors' MSE for protocol p (U-MPC variants share the file's U-MPC column)."""
    if t not in (None, t_paper):
        return None
    return PAPER_MSE[kern].get(n, {}).get("umpc" if p in S.UMPC else p)


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
        extra = {"levels": LEVELS} if (kern == "duplicate" and p not in S.UMPC) else {}
        return S.run_one(p, D, kern, epsilon=EPSILON, bins=st["bins"] or tbins[0],
                         seed=run.seed_for(kern, p, st["bins"], n, r), reference=ref, **extra)

    settings = [{"kernel": kern, "bins": t, "n": n, "protocol": p}
                for kern in PANELS for n in sizes for p, t in variants(kern, tbins)]
    return C.repeat_runs(settings, runs_of, one, "Heart, 2 kernels x 4")


def variants(kern, tbins):
    """(protocol, bins) pairs of a panel: the U-MPC variants, the baselines at each t (Kendall)."""
    out = [(v, None) for v in VARIANTS]
    for t in (tbins if kern == "kendall" else [None]):
        out += [(p, t) for p in BASELINES]
    return out


def plot(run, stats, sizes, tbins):
    fig, axes = C.subplots(2, 4, figsize=(22, 9))
    for row, kern in zip(axes, PANELS):
        a_comm, a_mse, a_party, a_server = row
        for p, t in variants(kern, tbins):
            st = [pick(stats, p, kernel=kern, n=n, bins=t) for n in sizes]
            extra = t is not None and t != tbins[0]
            kw = dict(color=COLORS[p], marker=MARKERS[p], ls="--" if extra else "-",
                      mfc="none" if extra else None,
                      label=LABELS[p] + (f" (t = {t})" if t is not None else ""))
            a_mse.errorbar(sizes, [s["mse_total"] for s in st],
                           yerr=[s["mse_total_se"] for s in st], capsize=2, **kw)
            if p in ("umpc-law", "umpc-002"):
                continue
            a_comm.plot(sizes, [s["online_bits"] for s in st], **kw)
            a_party.plot(sizes, [S.nan(s["per_party_seconds"]) for s in st], **kw)
            a_server.plot(sizes, [S.nan(s["server_seconds"]) for s in st], **kw)
            if extra:
                continue
            domain = t * t if kern == "kendall" and t else LEVELS
            a_comm.plot(sizes, [S.paper_comm(p, n, domain, EPSILON, kern) for n in sizes],
                        ls=":", lw=1, color=COLORS[p])
            pn = [n for n in sizes if n in PAPER_MSE[kern]]
            a_mse.plot(pn, [paper_value(kern, n, p) for n in pn], ls="none", marker="D",
                       mfc="none", mew=1.4, ms=8, color=COLORS[p])
        a_comm.plot([], [], ls=":", color="grey", label="paper's cost model")
        a_mse.plot([], [], ls="none", marker="D", mfc="none", color="grey",
                   label="paper (authors' results file), epsilon = 1")
        ylabels = ["online bits (all parties)", f"MSE of the {PANELS[kern].split(' (')[0]}",
                   "seconds per party", "seconds (server)"]
        for ax, title, yl in zip(row, ["online bits (measured)", "MSE vs complete U",
                                       "per-party computation (measured)",
                                       "server computation (measured)"], ylabels):
            C.eps_axis(ax, sizes)                    # log x, one plain label per n
            ax.set_yscale("log")
            ax.set_xlabel("n (records drawn without replacement)")
            ax.set_ylabel(yl)
            ax.set_title(f"{'Fig. 5' if kern == 'kendall' else 'Fig. 6'}: {PANELS[kern]}: "
                         f"{title}", fontsize=8)
            ax.grid(alpha=0.3, which="both")
            C.legend_outside(ax, fontsize=6)
    fig.suptitle(f"Heart Disease, epsilon = {EPSILON:g}, t = {tbins[0]} (Kendall; dashed: t = "
                 f"{tbins[1]}), threat model M_HF", fontsize=10)
    return C.save_png(run, fig)


def main(argv=None) -> int:
    run = C.start("sinh_ramon_heart", __doc__.splitlines()[0], argv)
    X, codes = heart_columns()
    data = {"kendall": X, "duplicate": codes}
    sizes = [41, 83] if run.quick else SIZES
    tbins = [16, 4] if run.quick else [BINS, BINS_SMALL]

    def runs_of(st):
        if run.runs is not None or run.quick:
            return run.repeats(2, 0)
        return 7 if (st["kernel"] == "kendall" and st["protocol"] in BASELINES) else 20

    rows = measure(run, data, sizes, tbins, runs_of)
    stats = S.summarize(rows, ["kernel", "bins", "n"])
    C.write_csv(run, rows)
    plot(run, stats, sizes, tbins)
    sections = []
    for kern in PANELS:
        body = []
        for n in sizes:
            for p, t in variants(kern, tbins):
                s = pick(stats, p, kernel=kern, n=n, bins=t)
                domain = t * t if (kern == "kendall" and t) else LEVELS
                body.append((n, LABELS[p], "-" if t is None else t, s["runs"],
                             C.pm(s["mse_total"], s["mse_total_se"]),
                             None if s["mse_dp"] is None else C.pm(s["mse_dp"], s["mse_dp_se"]),
                             paper_value(kern, n, p, t, tbins[0]), s["online_bits"],
                             S.paper_comm(p, n, domain, EPSILON, kern), s["mean_party_bits"],
                             s["max_party_bits"], s["per_party_seconds"], s["server_seconds"]))
        sections.append(f"## {'Fig. 5' if kern == 'kendall' else 'Fig. 6'}: {PANELS[kern]}\n\n"
                        + C.md_table(["n", "protocol", "t", "runs", "MSE vs complete U",
                                      "MSE vs incomplete U (DP only)", "paper MSE",
                                      "online bits (measured)", "paper's bits (cost model)",
                                      "bits/party mean", "bits/party max", "per-party s",
                                      "server s"], body))
    nmax = sizes[-1]
    every = {k: {n: S.umpc_reading(stats, {"kernel": k, "n": n},
                                   PAPER_MSE[k].get(n, {}).get("umpc"), n, EPSILON)
                 for n in sizes if n in PAPER_MSE[k]} for k in PANELS}
    readings = {k: every[k].get(nmax, ("", {})) for k in PANELS}
    def mse(k, n, p):
        return pick(stats, p, kernel=k, n=n, bins=None if (k == "duplicate" or p in S.UMPC)
                    else tbins[0])["mse_total"]
    central = {k: [n for n in sizes if max(mse(k, n, "umpc"), mse(k, n, "ghazi-sm"))
                   < min(mse(k, n, "bell-ldp"), mse(k, n, "ghazi"))] for k in PANELS}
    sm_wins = [n for n in sizes if pick(stats, "ghazi-sm", kernel="duplicate", n=n, bins=None)
               ["mse_total"] < pick(stats, "umpc", kernel="duplicate", n=n, bins=None)["mse_total"]]
    bell = {t: [pick(stats, "bell-ldp", kernel="kendall", n=n, bins=t)["mse_total"]
                for n in sizes] for t in tbins}
    paper_bell = [PAPER_MSE["kendall"][n]["bell-ldp"] for n in sizes if n in PAPER_MSE["kendall"]]

    def slope(v, ns):
        return float(np.polyfit(np.log(ns), np.log(v), 1)[0])
    pn = [n for n in sizes if n in PAPER_MSE["kendall"]]
    slopes = {t: slope(bell[t], sizes) for t in tbins}
    paper_slope = slope(paper_bell, pn) if len(pn) > 1 else math.nan
    claims = [
        ("central DP (U-MPC, GhaziSM) below LDP (Bell, Ghazi), both kernels (Figs. 5, 6)",
         "; ".join(f"{k}: at {len(central[k])} of {len(sizes)} n" for k in PANELS),
         C.verdict(all(len(v) == len(sizes) for v in central.values()))),
        ("U-MPC below GhaziSM on the duplicate ratio (Fig. 6)",
         f"GhaziSM below U-MPC at n in {sm_wins or 'none'}", C.verdict(not sm_wins)),
        ("Bell's Kendall MSE about flat in n (the authors' file: slope "
         f"{paper_slope:.2f} in log-log)",
         "; ".join(f"ours at t = {t}: slope {slopes[t]:.2f}" for t in tbins),
         C.verdict(any(abs(v) < 0.3 for v in slopes.values()))),
    ]
    text = (
        f"Heart Disease ({X.shape[0]} rows after dropping missing trestbps or chol, as the "
        f"paper), epsilon = {EPSILON:g}; Kendall's baselines with t = {tbins[0]} bins per "
        f"column (the caption's t; T = t^2 cells) and t = {tbins[1]} (the authors' file labels "
        f"the setting '64', which their Bank file uses for T = t^2 cells, i.e. t = 8); the "
        "duplicate ratio on categorical codes (5 cells). Each run draws a subset of n rows "
        "without replacement (the same subset for every protocol); errors against that "
        "subset's complete U-statistic (U-MPC also against the incomplete one: DP only). "
        "U-MPC variants: `experiments/_sinh_ramon.py`; which |E| the authors' appendix "
        "results used is read from the numbers below (their two appendix files come from one "
        "commit of their repository).")
    conflict = fig56_conflict(stats, nmax)
    reading = (V.CRITERION_TEXT + "; 0.02 C(n,2) is a variant tested against the appendix "
               "files, not an attribution (only Bank's kendall.txt carries the header of their "
               "comparison.py).\n\n"
               + "\n".join(f"- {k}, n = {n}: {t}" for k in PANELS
                           for n, (t, _) in every[k].items()) + "\n\n" + conflict)
    errs = S.umpc_error_table(stats, ["kernel", "n"],
                              lambda st: PAPER_MSE[st["kernel"]].get(st["n"], {}).get("umpc"),
                              lambda st: (st["n"], EPSILON))
    C.write_markdown(run.path(".md"), "Sinh & Ramon Figs. 5 and 6: Heart Disease", run,
                     [text, "## Claims\n\n" + C.md_table(["paper's observation", "ours",
                                                             "agrees"], claims),
                      "## Which U-MPC the paper's MSE is\n\n" + reading] + sections
                     + ["## U-MPC: DP error and noise\n\n" + S.noise_text(stats), errs])
    items = []
    for kern, fig in (("kendall", "Fig. 5 (Heart, Kendall)"),
                      ("duplicate", "Fig. 6 (Heart, duplicate ratio)")):
        t, r = readings[kern]
        per_n = [rn for _, rn in every[kern].values()]
        by_variant = variant_counts(stats, kern, every[kern])
        t = ("; ".join(f"n = {n}: {V.criterion_words(rn)} ({S.SHORT[rn['best']]})"
                       for n, (_, rn) in every[kern].items() if rn)
             + f". Per variant over every n: {by_variant}. At n = {nmax}: {t}; {conflict}")
        u = pick(stats, "umpc", kernel=kern, n=nmax, bins=None)
        best = pick(stats, r["best"], kernel=kern, n=nmax, bins=None) if r else u
        items.append(C.item(
            "Sinh-Ramon", fig,
            f"Heart, subsets n = {sizes[0]}..{nmax}, epsilon 1, "
            + (f"t = {tbins[0]} and {tbins[1]}, " if kern == "kendall" else "")
            + f"{u['runs']} runs (U-MPC)",
            f"U-MPC {C.fmt(PAPER_MSE[kern].get(nmax, {}).get('umpc'))} at n = {nmax}",
            f"{LABELS['umpc']} {C.pm(u['mse_total'], u['mse_total_se'])}; {LABELS[r['best']]} "
            f"{C.pm(best['mse_total'], best['mse_total_se'])}" if r else "-",
            t + "; " + "; ".join(f"{c[0]}: {c[1]}" for c in claims
                                 if (kern == "kendall") == ("Kendall" in c[0] or "both" in c[0])),
            "`sinh_ramon_heart.md`, 'Which U-MPC' and Claims", S.reading_verdict(per_n)))
    items[0]["see"] = ["authors_code:heart-bell"]
    C.write_json(run, items, {"stats": stats, "slopes": {str(k): v for k, v in slopes.items()},
                              "paper_bell_slope": paper_slope})
    print(f"[sinh_ramon_heart] done in {run.elapsed():.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
