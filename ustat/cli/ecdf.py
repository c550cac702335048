"""Run and print functions of the ``ecdf``, ``quantile``, ``roc`` and ``hl`` subcommands.

Each ``run_*(args) -> dict`` returns the JSON object; ``show_*(dict)`` prints
the text form. Argument parsing and shared checks are in :mod:`ustat.cli.ecdf_options`.
"""

from __future__ import annotations

import math

import numpy as np

from .common import check_memory

from .ecdf_options import (_progress, _usage, _warn, check_epsilon, clock, comm_summary, data_bounds,
                  deploy_kwargs, make_thresholds, processes_summary, read_labels)

__all__ = ["run_ecdf", "show_ecdf", "run_quantile", "show_quantile", "run_roc", "show_roc",
           "run_hl", "show_hl"]


def _g(v) -> str:
    """A number of the account in 4 significant digits; "inf" (epsilon inf) as it is."""
    return v if isinstance(v, str) else format(v, ".4g")


#: Noise sets sampled inside MPC per release with --noise mpc (roc: two class trees; hl: the
#: tree and the group sums), each planned at delta <= 2^-40 (noise.mpc_sampler.plan_dlap).
_MPC_NOISE_SETS = {"roc": 2, "hl": 2}


def _charge(args, columns):
    """This release's epsilon (pure DP, delta 0; with --noise mpc the sampler's bound, 2^-40 per
    tree or set of sums) reserved in --budget-file, before computing."""
    delta = 0.0
    if getattr(args, "noise", None) == "mpc" and math.isfinite(args.epsilon):
        from noise.mpc_sampler import MAX_DELTA
        delta = _MPC_NOISE_SETS.get(args.command, 1) * MAX_DELTA
    args.charge.reserve(columns, epsilon=args.epsilon, delta=delta, label=args.command,
                        details={"backend": args.backend})


def _jsonable(v):
    return "inf" if isinstance(v, float) and math.isinf(v) else v


def _load_column(args):
    from mpc.arith.rng import as_rng
    from ustat.data import load_csv
    if getattr(args, "deployment", None) is not None:
        return args.deployment.column(args)
    if args.csv is None:
        if args.n < 1:
            raise _usage(f"--n must be >= 1, got {args.n}")
        check_memory(args.n, 32)
        g = as_rng(None if args.seed is None else f"synthetic:{args.seed}")
        return g.random(args.n), "x", f"synthetic: {args.n} uniform records in [0, 1)"
    cols = [args.column] if args.column else None
    raw, names = load_csv(args.csv, columns=cols, sep=args.sep, header=not args.no_header,
                          encoding=args.encoding)
    if raw.shape[1] != 1:
        raise _usage(f"choose the column with --column (the file has {raw.shape[1]} columns: "
                     f"{', '.join(names)})")
    return raw[:, 0], names[0], args.csv


def _bounds_for(args, x, column):
    if args.csv:
        return data_bounds(args, x, column)
    from ustat.data.records import bounds_option
    return (tuple(bounds_option(args.bounds, 1)[0]) if args.bounds else (0.0, 1.0)), None


def _release(args, x, tau, bounds):
    from ..ecdf.release import release
    kw = deploy_kwargs(args, tau.size)
    _progress(args, f"{args.backend}: {x.size} parties, {tau.size} thresholds; offline: keys / "
                    f"node noise, then {tau.size} queries" + _where(args))
    return _here(release(x, tau, args.epsilon, bounds=bounds, clip=args.clip,
                         evaluate=args.evaluate, **kw))


def _here(res):
    """``res`` if this process released it; in a deployment's other processes NotReleased."""
    if getattr(res, "released", True):
        return res
    from ustat.deploy.ecdf import NotReleased
    raise NotReleased


def _where(args) -> str:
    p = getattr(args, "processes", None)
    return "" if p is None else f"; {p} processes on loopback"


def _smoothed(args, rel):
    from ..ecdf.smoothing import MissingDependency, smooth
    from ..ecdf.tree import Tree
    if not args.smooth:
        return None
    _progress(args, f"smoothing ({args.smooth})")
    try:
        return smooth(rel.values, Tree(rel.thresholds.size, rel.account["branching"]), args.smooth)
    except MissingDependency as exc:
        raise _usage(str(exc)) from None


def run_ecdf(args) -> dict:
    t0 = clock()
    check_epsilon(args)
    x, column, source = _load_column(args)
    bounds, note = _bounds_for(args, x, column)
    tau = make_thresholds(args, bounds, grid=args.grid)
    _charge(args, [column])
    rel = _release(args, x, tau, bounds)
    sm = _smoothed(args, rel)
    out = {"command": "ecdf", "column": column, "source": source, "n": rel.n,
           "bounds": list(bounds), "thresholds": tau.tolist(), "ecdf": rel.values.tolist(),
           "noisy_counts": rel.counts.tolist(), "smoothing": args.smooth,
           "account": {k: _jsonable(v) for k, v in rel.account.items()},
           "backend": rel.backend, "communication": comm_summary(rel.communication),
           "insecure_seed": rel.insecure_seed, "notes": [note] if note else []}
    out.update(processes_summary(rel))
    if sm is not None:
        out["ecdf_smoothed"] = sm.tolist()
    out["intervals"] = _ecdf_intervals_json(rel.intervals(args.confidence))
    if rel.exact is not None:
        ex = rel.exact / rel.n
        best = sm if sm is not None else rel.values
        out["evaluation"] = {"ecdf": ex.tolist(), "max_abs_error": float(np.abs(best - ex).max()),
                             "mse": float(np.mean((best - ex) ** 2)),
                             "mse_theory_unsmoothed": rel.account["mse"]}
    if args.plot:
        from ..ecdf.plots import plot_ecdf
        _plot(lambda: plot_ecdf(args.plot, tau, rel.values, n=rel.n, epsilon=args.epsilon,
                                column=column, smoothed=sm, smoothing=args.smooth,
                                exact=None if rel.exact is None else rel.exact / rel.n,
                                bins=args.bins, backend=args.backend))
        out["plot"] = args.plot
    out["seconds"] = clock() - t0
    return out


def _ecdf_intervals_json(iv: dict) -> dict:
    keys = ("pointwise_lo", "pointwise_hi", "band_lo", "band_hi")
    out = {k: np.asarray(iv[k]).tolist() for k in keys}
    out.update({k: iv[k] for k in ("confidence", "noise_std", "noise_std_counts",
                                   "pointwise_halfwidth_counts", "band_halfwidth_counts",
                                   "method")})
    return out


def _plot(fn):
    from ..ecdf.smoothing import MissingDependency
    try:
        fn()
    except MissingDependency as exc:
        raise _usage(str(exc)) from None


def _wrap(label: str, text: str) -> str:
    import textwrap
    return textwrap.fill(text, width=100, initial_indent=f"  {label:<10}: ",
                         subsequent_indent=" " * 14)


def _head(res: dict):
    acc = res["account"]
    print(f"  privacy   : epsilon = {acc['epsilon']}, discrete Laplace per tree node "
          f"(scale {acc['node_scale']}, {acc['levels']} levels, branching {acc['branching']}, "
          f"sensitivity {acc['sensitivity_nodes']} nodes, noise {acc['noise_mode']})")
    mse = f"{acc['mse']:.3g}, " if "mse" in acc else ""
    print(f"  accuracy  : expected squared error per point {mse}{acc['mse_counts']:.3g} in counts")
    _tail(res)


def _tail(res: dict):
    from ustat.reports.common import print_budget
    c = res.get("communication")
    if c:
        print(f"  traffic   : offline {c['offline_bits'] / 8e3:.1f} kB, online "
              f"{c['online_bits'] / 8e3:.1f} kB in {c['online_rounds']} rounds")
    if res.get("processes"):
        from ustat.reports.common import processes_text
        print(f"  processes : {processes_text(res)}")
    for note in res.get("notes", []):
        print(f"  note      : {note}")
    if "plot" in res:
        print(f"  plot      : {res['plot']}")
    print_budget(res)
    if res.get("insecure_seed"):
        print("  WARNING: seeded run (insecure randomness)")


def show_ecdf(res: dict):
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


def _refuse_noisy_quantiles(args, n: int, n_points: int):
    """Refuse before computing when the noise hides every quantile (public parameters)."""
    from ..ecdf.intervals import quantile_noise_check
    from ..ecdf.tree import Tree, planned_law
    kw = deploy_kwargs(args, n_points)
    tree = Tree(n_points, kw["branching"])
    mode = "central" if args.backend == "central" else args.noise
    law = planned_law(tree, args.epsilon, mode=mode, servers=args.servers,
                      rule=args.sensitivity)
    quantile_noise_check(n, law, tree, args.confidence, n_points)


def run_quantile(args) -> dict:
    from ..ecdf.quantiles import check_levels, private_quantiles, quantiles
    from ..ecdf.release import check_values
    t0 = clock()
    check_epsilon(args)
    try:
        levels = check_levels([float(v) for v in args.q.split(",") if v.strip()])
    except ValueError as exc:
        raise _usage(f"--q: {exc}") from None
    x, column, source = _load_column(args)
    bounds, note = _bounds_for(args, x, column)
    tau = make_thresholds(args, bounds, grid=args.grid)
    _refuse_noisy_quantiles(args, x.size, tau.size)
    _charge(args, [column])
    if args.smooth:
        rel = _release(args, x, tau, bounds)
        smoothed = _smoothed(args, rel)
        qs = quantiles(smoothed, levels, thresholds=tau)
        extra = processes_summary(rel)
    else:
        _progress(args, f"{args.backend}: binary search with {levels.size} levels, "
                        f"ceil(log2 {tau.size}) query rounds, then all {tau.size} points for "
                        "the intervals" + _where(args))
        res = _here(private_quantiles(x, tau, levels, args.epsilon, bounds=bounds,
                                      clip=args.clip, **deploy_kwargs(args, tau.size)))
        qs, rel, extra = res.quantiles, res.ecdf, processes_summary(res)
    acc, comm, n = rel.account, rel.communication, rel.n
    counts, law, tree = rel.counts, rel.noise_law, rel.tree
    from ..ecdf.intervals import quantile_intervals
    from ..ecdf.quantiles import interpolated_quantiles
    from ..ecdf.smoothing import isotonic
    qi = quantile_intervals(counts, tau, n, law, tree, levels, args.confidence)
    F = smoothed if args.smooth else np.clip(isotonic(counts / n), 0.0, 1.0)
    out = {"command": "quantile", "column": column, "source": source, "n": n, "q": levels.tolist(),
           "quantiles": qs.tolist(), "quantile_ci": np.stack([qi["lo"], qi["hi"]], 1).tolist(),
           "quantiles_interpolated": interpolated_quantiles(F, levels, tau).tolist(),
           "quantile_interpolated_ci": np.stack([qi["interpolated_lo"],
                                                 qi["interpolated_hi"]], 1).tolist(),
           "confidence": qi["confidence"], "quantile_ci_method": qi["method"],
           "thresholds_count": int(tau.size), "bounds": list(bounds),
           "smoothing": args.smooth, "backend": args.backend,
           "account": {k: _jsonable(v) for k, v in acc.items()},
           "communication": comm_summary(comm), "notes": [note] if note else [],
           "insecure_seed": args.seed is not None, **extra}
    if args.evaluate:
        xv = check_values(x, bounds, args.clip)
        from ..ecdf.release import exact_counts
        from ..ecdf.thresholds import grid_rank
        exact = exact_counts(grid_rank(xv, tau), tau.size) / xv.size
        out["evaluation"] = {"quantiles": np.quantile(xv, levels, method="inverted_cdf").tolist(),
                             "quantiles_interpolated":
                                 interpolated_quantiles(exact, levels, tau).tolist()}
    out["seconds"] = clock() - t0
    return out


def show_quantile(res: dict):
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


def _labelled(args, value_col: str, no_csv: str):
    """(values, 0/1 labels, notes) of ``roc`` / ``hl``: from ``--csv``, or in a deployment
    this host's rows (the lower bound and label 0 elsewhere; a role reads nothing)."""
    deployed = getattr(args, "deployment", None)
    if deployed is not None:
        from ustat.data.records import bounds_option
        b = getattr(args, "bounds", None)            # hl: probabilities, no bounds
        lo = float(bounds_option(b, 1)[0][0]) if b else 0.0
        return deployed.labelled(args, value_col, lo)
    if args.csv is None:
        raise _usage(no_csv)
    return read_labels(args.csv, args.sep, value_col, args.label, args.positive,
                       header=not args.no_header, encoding=args.encoding)


def run_roc(args) -> dict:
    from ..ecdf.roc import private_roc
    t0 = clock()
    check_epsilon(args)
    s, y, notes = _labelled(args, args.score, "roc needs --csv (a file with the score and "
                                              "label columns)")
    bounds, note = data_bounds(args, s, args.score)
    notes += [note] if note else []
    tau = make_thresholds(args, bounds)
    _progress(args, f"{args.backend}: ECDFs of positive and negative scores, {s.size} parties, "
                    f"{tau.size} thresholds" + _where(args))
    kw = deploy_kwargs(args, tau.size)
    seed = kw.pop("seed")
    _charge(args, [args.score, args.label])
    r = _here(private_roc(s, y, tau, args.epsilon, bounds=bounds, clip=args.clip,
                          smooth=args.smooth, evaluate=args.evaluate, seed=seed,
                          confidence=args.confidence, **kw))
    iv = r.intervals
    out = {"command": "roc", "score": args.score, "label": args.label, "n": int(s.size),
           "auc": r.auc, "auc_ci": iv["auc_ci"], "auc_noise_std": iv["auc_noise_std"],
           "auc_unsmoothed": iv["auc_unsmoothed"], "confidence": iv["confidence"],
           "roc_band": {k: np.asarray(iv[k]).tolist() for k in ("fpr_lo", "fpr_hi", "tpr_lo",
                                                               "tpr_hi")},
           "interval_method": iv["method"], "fpr": r.fpr.tolist(), "tpr": r.tpr.tolist(),
           "thresholds": r.thresholds.tolist(), "n_pos_noisy": r.n_pos, "n_neg_noisy": r.n_neg,
           "smoothing": args.smooth, "backend": args.backend,
           "account": {k: _jsonable(v) for k, v in r.account.items()},
           "communication": comm_summary(r.communication), "notes": notes,
           "insecure_seed": seed is not None, **processes_summary(r)}
    if r.exact is not None:
        out["evaluation"] = {"auc": r.exact["auc"], "fpr": r.exact["fpr"].tolist(),
                             "tpr": r.exact["tpr"].tolist(), "n_pos": r.exact["n_pos"],
                             "n_neg": r.exact["n_neg"]}
    if args.plot:
        from ..ecdf.plots import plot_roc
        _plot(lambda: plot_roc(args.plot, r, score=args.score, label=args.label,
                               positive=args.positive))
        out["plot"] = args.plot
    out["seconds"] = clock() - t0
    return out


def show_roc(res: dict):
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


def run_hl(args) -> dict:
    from ..ecdf.hosmer_lemeshow import private_hosmer_lemeshow
    t0 = clock()
    check_epsilon(args)
    p, y, notes = _labelled(args, args.prob, "hl needs --csv (a file with the probability and "
                                             "label columns)")
    out_of = (p < 0) | (p > 1)
    if out_of.any():
        raise _usage(f"--prob {args.prob!r}: {int(out_of.sum())} probabilities outside [0, 1] "
                     f"(first: row {int(np.flatnonzero(out_of)[0]) + 1}, value {p[out_of][0]:g})")
    try:
        N = int(args.thresholds)
    except ValueError:
        raise _usage(f"--thresholds for hl must be a number N, got {args.thresholds!r}") from None
    if N < 1:
        raise _usage(f"--thresholds must be >= 1, got {N}")
    kw = deploy_kwargs(args, N)
    kw.pop("branching")
    _charge(args, [args.prob, args.label])
    _progress(args, f"{args.backend}: group edges from the private ECDF of {args.prob}, "
                    f"then {args.groups} x 4 noisy sums" + _where(args))
    r = _here(private_hosmer_lemeshow(p, y, args.groups, args.epsilon, n_thresholds=N,
                                      evaluate=args.evaluate, null=args.null, **kw))
    out = {"command": "hl", "prob": args.prob, "label": args.label, "n": int(p.size),
           "statistic": r.statistic, "p_value": r.p_value, "groups": r.groups, "df": r.df,
           "null": r.null, "p_value_method": r.method,
           "detectable_miscalibration": r.detectable_miscalibration,
           "noise_sd_per_group": r.noise_sd,
           "edges": r.edges.tolist(), "table": r.table, "clamped_expectations": r.clamped,
           "backend": args.backend, "account": {k: _jsonable(v) for k, v in r.account.items()},
           "communication": comm_summary(r.communication), "notes": notes,
           "insecure_seed": args.seed is not None, **processes_summary(r)}
    if r.exact is not None:
        out["evaluation"] = r.exact
    if args.plot:
        from ..ecdf.plots import plot_hl
        _plot(lambda: plot_hl(args.plot, r, prob=args.prob))
        out["plot"] = args.plot
    if r.clamped:
        _warn(f"{r.clamped} noisy expected count(s) below 0 were taken as 0 in the variances")
    out["seconds"] = clock() - t0
    return out


def show_hl(res: dict):
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
