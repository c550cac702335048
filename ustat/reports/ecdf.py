"""The release reports of the ECDF family: the JSON objects and texts of ``ustat ecdf``,
``quantile``, ``roc`` and ``hl``.

:func:`ecdf_output`, :func:`quantile_output`, :func:`roc_output` and :func:`hl_output`
turn a result of :mod:`ustat.ecdf` and the spec it ran (:mod:`ustat.specs.ecdf`) into the
dict the command prints with ``--json`` (every field is listed in docs/guides/cli.md); a
deployment's analyst builds the same dict (:mod:`ustat.deploy.runner`), so a seeded
deployment prints what the one-process command prints. ``meta`` names the data: the
column (``column``; ``score`` or ``prob`` and ``label`` for roc and hl), ``source`` and
``notes``. :func:`show` prints a report as text.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np

from ..specs.ecdf import ECDFSpec, HLSpec, QuantileSpec, ROCSpec
from .common import print_budget, processes_text, wire_totals

__all__ = [
    "COMMANDS",
    "comm_summary",
    "ecdf_output",
    "hl_output",
    "processes_summary",
    "quantile_output",
    "report",
    "roc_output",
    "show",
    "show_ecdf",
    "show_hl",
    "show_quantile",
    "show_roc",
]

#: the commands of the family, and their specs
COMMANDS = {"ecdf": ECDFSpec, "quantile": QuantileSpec, "roc": ROCSpec, "hl": HLSpec}


def _jsonable(v: Any) -> Any:
    return "inf" if isinstance(v, float) and math.isinf(v) else v


def _account(acc: dict) -> dict:
    return {k: _jsonable(v) for k, v in acc.items()}


def _bounds(spec: Any) -> list | None:
    b = spec.precision.bounds
    return None if b is None else list(b)


def comm_summary(rep: dict | None) -> dict | None:
    """The traffic fields of a report, from a network's communication report."""
    if rep is None:
        return None
    return {"online_bits": rep["online"]["bits"], "offline_bits": rep["offline"]["bits"],
            "online_rounds": rep["online"]["rounds"], "offline_rounds": rep["offline"]["rounds"],
            "max_party_bits": rep["online"]["max_party_bits"] + rep["offline"]["max_party_bits"],
            "phases": rep["phases"]}


def processes_summary(res: Any) -> dict:
    """The JSON fields of a run across processes (none for a run in one process)."""
    costs = getattr(res, "process_costs", None)
    if not costs:
        return {}
    return {"processes": len(costs), "process_costs": costs,
            "wire": wire_totals(costs, res.communication["total_bits"])}


def _ecdf_intervals_json(iv: dict) -> dict:
    keys = ("pointwise_lo", "pointwise_hi", "band_lo", "band_hi")
    out = {k: np.asarray(iv[k]).tolist() for k in keys}
    out.update({k: iv[k] for k in ("confidence", "noise_std", "noise_std_counts",
                                   "pointwise_halfwidth_counts", "band_halfwidth_counts",
                                   "band_halfwidth_counts_min",
                                   "method")})
    return out


def ecdf_output(spec: ECDFSpec, rel: Any, meta: dict) -> dict:
    """The report of ``ustat ecdf``: ``rel`` an :class:`~ustat.ecdf.release.ECDFRelease`
    of ``spec``; ``meta``: ``column``, ``source``, ``notes``."""
    sm = rel.smoothed
    out = {"command": "ecdf", "column": meta["column"], "source": meta["source"], "n": rel.n,
           "bounds": _bounds(spec), "thresholds": rel.thresholds.tolist(),
           "ecdf": rel.values.tolist(), "noisy_counts": rel.counts.tolist(),
           "smoothing": spec.smooth, "account": _account(rel.account), "backend": rel.backend,
           "communication": comm_summary(rel.communication),
           "insecure_seed": rel.insecure_seed, "notes": list(meta.get("notes", []))}
    out.update(processes_summary(rel))
    if sm is not None:
        out["ecdf_smoothed"] = sm.tolist()
    out["intervals"] = _ecdf_intervals_json(rel.intervals(spec.confidence))
    if rel.exact is not None:
        ex = rel.exact / rel.n
        best = sm if sm is not None else rel.values
        out["evaluation"] = {"ecdf": ex.tolist(), "max_abs_error": float(np.abs(best - ex).max()),
                             "mse": float(np.mean((best - ex) ** 2)),
                             "mse_theory_unsmoothed": rel.account["mse"]}
    out["spec"] = spec.to_dict()
    return out


def quantile_output(spec: QuantileSpec, res: Any, meta: dict) -> dict:
    """The report of ``ustat quantile``: ``res`` a
    :class:`~ustat.ecdf.quantiles.QuantileRelease` of ``spec``; ``meta`` as
    :func:`ecdf_output`."""
    from ..ecdf.quantiles import interpolated_quantiles
    from ..ecdf.smoothing import isotonic

    rel = res.ecdf
    levels, tau, n = np.asarray(res.q), rel.thresholds, rel.n
    qi = rel.quantile_intervals(levels, spec.confidence)
    F = res.smoothed if spec.smooth else np.clip(isotonic(rel.counts / n), 0.0, 1.0)
    out = {"command": "quantile", "column": meta["column"], "source": meta["source"], "n": n,
           "q": levels.tolist(), "quantiles": res.quantiles.tolist(),
           "quantile_ci": np.stack([qi["lo"], qi["hi"]], 1).tolist(),
           "quantiles_interpolated": interpolated_quantiles(F, levels, tau).tolist(),
           "quantile_interpolated_ci": np.stack([qi["interpolated_lo"],
                                                 qi["interpolated_hi"]], 1).tolist(),
           "confidence": qi["confidence"], "quantile_ci_method": qi["method"],
           "thresholds_count": int(tau.size), "bounds": _bounds(spec),
           "smoothing": spec.smooth, "backend": spec.execution.backend,
           "account": _account(rel.account), "communication": comm_summary(rel.communication),
           "notes": list(meta.get("notes", [])), "insecure_seed": spec.seed is not None,
           **processes_summary(res)}
    if res.exact is not None:
        out["evaluation"] = {k: np.asarray(v).tolist() for k, v in res.exact.items()}
    out["spec"] = spec.to_dict()
    return out


def roc_output(spec: ROCSpec, r: Any, meta: dict) -> dict:
    """The report of ``ustat roc``: ``r`` a :class:`~ustat.ecdf.roc.ROCRelease` of
    ``spec``; ``meta``: ``score``, ``label``, ``n``, ``notes``."""
    iv = r.intervals
    out = {"command": "roc", "score": meta["score"], "label": meta["label"], "n": meta["n"],
           "auc": r.auc, "auc_ci": iv["auc_ci"], "auc_noise_std": iv["auc_noise_std"],
           "auc_unsmoothed": iv["auc_unsmoothed"], "confidence": iv["confidence"],
           "roc_band": {k: np.asarray(iv[k]).tolist() for k in ("fpr_lo", "fpr_hi", "tpr_lo",
                                                               "tpr_hi")},
           "interval_method": iv["method"], "fpr": r.fpr.tolist(), "tpr": r.tpr.tolist(),
           "thresholds": r.thresholds.tolist(), "n_pos_noisy": r.n_pos, "n_neg_noisy": r.n_neg,
           "smoothing": spec.smooth, "backend": spec.execution.backend,
           "account": _account(r.account), "communication": comm_summary(r.communication),
           "notes": list(meta.get("notes", [])), "insecure_seed": spec.seed is not None,
           **processes_summary(r)}
    if r.exact is not None:
        out["evaluation"] = {"auc": r.exact["auc"], "fpr": r.exact["fpr"].tolist(),
                             "tpr": r.exact["tpr"].tolist(), "n_pos": r.exact["n_pos"],
                             "n_neg": r.exact["n_neg"]}
    out["spec"] = spec.to_dict()
    return out


def hl_output(spec: HLSpec, r: Any, meta: dict) -> dict:
    """The report of ``ustat hl``: ``r`` an :class:`~ustat.ecdf.hosmer_lemeshow.HLResult`
    of ``spec``; ``meta``: ``prob``, ``label``, ``n``, ``notes``."""
    out = {"command": "hl", "prob": meta["prob"], "label": meta["label"], "n": meta["n"],
           "statistic": r.statistic, "p_value": r.p_value, "groups": r.groups, "df": r.df,
           "null": r.null, "p_value_method": r.method,
           "detectable_miscalibration": r.detectable_miscalibration,
           "noise_sd_per_group": r.noise_sd,
           "edges": r.edges.tolist(), "table": r.table, "clamped_expectations": r.clamped,
           "backend": spec.execution.backend, "account": _account(r.account),
           "communication": comm_summary(r.communication),
           "notes": list(meta.get("notes", [])), "insecure_seed": spec.seed is not None,
           **processes_summary(r)}
    if r.exact is not None:
        out["evaluation"] = r.exact
    out["spec"] = spec.to_dict()
    return out


_OUTPUTS: dict[str, Callable[..., dict]] = {"ecdf": ecdf_output, "quantile": quantile_output,
                                            "roc": roc_output, "hl": hl_output}


def report(command: str, spec: Any, result: Any, meta: dict) -> dict:
    """The report of ``command`` (``ecdf``, ``quantile``, ``roc`` or ``hl``)."""
    return _OUTPUTS[command](spec, result, meta)


# -- text ---------------------------------------------------------------------------------------
def _g(v: Any) -> str:
    """A number of the account in 4 significant digits; "inf" (epsilon inf) as it is."""
    return v if isinstance(v, str) else format(v, ".4g")


def _wrap(label: str, text: str) -> str:
    return textwrap.fill(text, width=100, initial_indent=f"  {label:<10}: ",
                         subsequent_indent=" " * 14)


def _head(res: dict) -> None:
    acc = res["account"]
    print(f"  privacy   : epsilon = {acc['epsilon']}, discrete Laplace per tree node "
          f"(scale {acc['node_scale']}, {acc['levels']} levels, branching {acc['branching']}, "
          f"sensitivity {acc['sensitivity_nodes']} nodes, noise {acc['noise_mode']})")
    mse = f"{acc['mse']:.3g}, " if "mse" in acc else ""
    print(f"  accuracy  : expected squared error per point {mse}{acc['mse_counts']:.3g} in counts")
    _tail(res)


def _tail(res: dict) -> None:
    c = res.get("communication")
    if c:
        print(f"  traffic   : offline {c['offline_bits'] / 8e3:.1f} kB, online "
              f"{c['online_bits'] / 8e3:.1f} kB in {c['online_rounds']} rounds")
    if res.get("processes"):
        print(f"  processes : {processes_text(res)}")
    for note in res.get("notes", []):
        print(f"  note      : {note}")
    if "plot" in res:
        print(f"  plot      : {res['plot']}")
    print_budget(res)
    if res.get("insecure_seed"):
        print("  WARNING: seeded run (insecure randomness)")


def show_ecdf(res: dict) -> None:
    """The text of ``ustat ecdf``."""
    print(f"Private ECDF of {res['column']} (n = {res['n']}, {len(res['thresholds'])} thresholds "
          f"in [{res['bounds'][0]:g}, {res['bounds'][1]:g}], backend {res['backend']})")
    _head(res)
    iv = res["intervals"]
    print(f"  interval  : noise std {iv['noise_std']:.3g} per point; {100 * iv['confidence']:g}% "
          f"pointwise +-{iv['pointwise_halfwidth_counts'] / res['n']:.3g}, simultaneous band "
          f"+-{iv['band_halfwidth_counts'] / res['n']:.3g} (ECDF units)")
    tau, F = np.asarray(res["thresholds"]), np.asarray(res.get("ecdf_smoothed", res["ecdf"]))
    pick = np.unique(np.linspace(0, tau.size - 1, min(11, tau.size)).round().astype(int))
    label = "smoothed" if "ecdf_smoothed" in res else "noisy"
    print(f"  {'threshold':>12}  {'F (' + label + ')':>14}  {'band':>15}" +
          ("  F (true)" if "evaluation" in res else ""))
    for i in pick:
        extra = f"  {res['evaluation']['ecdf'][i]:.4f}" if "evaluation" in res else ""
        band = f"[{iv['band_lo'][i]:.4f}, {iv['band_hi'][i]:.4f}]"
        print(f"  {tau[i]:>12.6g}  {F[i]:>14.4f}  {band:>15}{extra}")


def show_quantile(res: dict) -> None:
    """The text of ``ustat quantile``."""
    print(f"Private quantiles of {res['column']} (n = {res['n']}, grid of "
          f"{res['thresholds_count']} thresholds, backend {res['backend']})")
    _head(res)
    ev = res.get("evaluation")
    print(_wrap("interval", res["quantile_ci_method"]))
    level = f"{100 * res['confidence']:g}% CI"
    for i, (p, v) in enumerate(zip(res["q"], res["quantiles"])):
        extra = f"   (true {ev['quantiles'][i]:.6g})" if ev else ""
        lo, hi = res["quantile_ci"][i]
        print(f"  q = {p:<6g} -> {v:.6g}   {level} [{lo:.6g}, {hi:.6g}]{extra}")
        extra = f"   (true {ev['quantiles_interpolated'][i]:.6g})" if ev else ""
        lo, hi = res["quantile_interpolated_ci"][i]
        print(f"  {'':10}interpolated {res['quantiles_interpolated'][i]:.6g}   {level} "
              f"[{lo:.6g}, {hi:.6g}]{extra}")


def show_roc(res: dict) -> None:
    """The text of ``ustat roc``."""
    ev = res.get("evaluation")
    lo, hi = res["auc_ci"]
    print(f"Private ROC of {res['score']} for {res['label']}: AUC = {res['auc']:.4f}, "
          f"{100 * res['confidence']:g}% CI [{lo:.4f}, {hi:.4f}], noise std "
          f"{res['auc_noise_std']:.3g}" + (f"   (true {ev['auc']:.4f})" if ev else ""))
    print(_wrap("interval", res["interval_method"] + "; the ROC band is in 'roc_band' (--json)"))
    print(f"  data      : n = {res['n']}, noisy class sizes n+ ~ {res['n_pos_noisy']:.0f}, "
          f"n- ~ {res['n_neg_noisy']:.0f}"
          + (f" (true {ev['n_pos']}, {ev['n_neg']})" if ev else ""))
    _head(res)


def show_hl(res: dict) -> None:
    """The text of ``ustat hl``."""
    ev = res.get("evaluation")
    print(f"Private Hosmer-Lemeshow test of {res['prob']} against {res['label']}: "
          f"H = {res['statistic']:.4g}, df = {res['df']}, p = {res['p_value']:.4g}"
          + (f"   (true H = {ev['statistic']:.4g}, p = {ev['p_value']:.4g})" if ev else ""))
    acc = res["account"]
    print(f"  privacy   : epsilon = {acc['epsilon']} = tree {_g(acc['tree_epsilon'])} + sums "
          f"{_g(acc['sums_epsilon'])} (epsilon' = {_g(acc['epsilon_prime'])}, noise "
          f"{acc['noise_mode']})")
    print(f"  groups    : edges {', '.join(f'{e:.3g}' for e in res['edges'])}")
    print(_wrap("test", f"{res['p_value_method']}; detects a miscalibration of "
                        f"{res['detectable_miscalibration']:.3g} (probability units) half the "
                        "time at level 0.05"))
    _tail(res)


_SHOW = {"ecdf": show_ecdf, "quantile": show_quantile, "roc": show_roc, "hl": show_hl}


def show(res: dict) -> None:
    """Print a report of the family as text (its ``command`` says which)."""
    _SHOW[res["command"]](res)
