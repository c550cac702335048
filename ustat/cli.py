"""The ``ustat`` command line.

Subcommands:
  estimate   a differentially private U-statistic by the U-MPC protocol
             (Protocol 3.1 of Sinh and Ramon), on a CSV file or on the
             embedded synthetic default (n = 1000 uniform records).
  kernels    list the available kernels.
  demo       share, multiply and open a batch among simulated parties and
             print the network's communication report (the engine demo).

``--json`` prints one JSON object on stdout; progress and warnings go to
stderr. User mistakes exit with status 2 and a one-line message, never a
traceback.
"""

from __future__ import annotations

import argparse
import json
import sys

from . import __version__


class UsageError(Exception):
    """A user mistake: reported in one line, exit status 2."""


def _warn(msg: str):
    print(f"ustat: warning: {msg}", file=sys.stderr)


def _cmd_demo(args) -> dict:
    import numpy as np

    from mpc.beaver import multiply, open_shares
    from mpc.session import Session
    from mpc.sharing import additive_share

    if args.parties < 2:
        raise UsageError("--parties must be >= 2")
    if args.batch < 1:
        raise UsageError("--batch must be >= 1")
    s = Session(args.parties, seed=args.seed)
    if s.insecure:
        _warn("--seed given: randomness is reproducible and NOT secure; use only for testing")
    holders = np.arange(args.parties)
    xs = s.fp.encode(np.linspace(-1.0, 1.0, args.batch))
    ys = s.ring.from_signed(np.arange(args.batch, dtype=np.int64) % 7 - 3)
    with s.net.phase("sharing"):
        with s.net.round():
            # party 0 holds x, party 1 holds y; each shares among all parties
            x = additive_share(s.ring, xs, args.parties, s.party_rng(0))
            y = additive_share(s.ring, ys, args.parties, s.party_rng(1))
            for src, sh in ((0, x), (1, y)):
                others = holders[holders != src]
                s.net.send(np.full(others.size, src), others, sh[others], s.ring.bits)
    with s.net.phase("multiply"):
        z = multiply(s, x, y, holders)
    with s.net.phase("open"):
        out = open_shares(s, z, holders)
    expected = s.fp.decode(xs) * s.ring.to_signed(ys)
    got = s.fp.decode(out)
    return {
        "command": "demo",
        "parties": args.parties,
        "batch": args.batch,
        "ring_bits": s.ring.bits,
        "frac_bits": s.fp.frac_bits,
        "max_abs_error": float(np.max(np.abs(got - expected))),
        "insecure_seed": s.insecure,
        "communication": s.net.report(),
    }


def _print_demo(res: dict):
    rep = res["communication"]
    print(f"Engine demo: {res['parties']} parties multiply {res['batch']} shared "
          f"fixed-point pairs in Z_2^{res['ring_bits']} (c = {res['frac_bits']})")
    print(f"  max |error| vs plaintext: {res['max_abs_error']:.3g}")
    for label in ("online", "offline"):
        t = rep[label]
        print(f"  {label:7s}: {t['bits']:>12,} bits  {t['messages']:>6} messages  "
              f"{t['rounds']} rounds  max/party {t['max_party_bits']:,} bits")
    for name, ph in rep["phases"].items():
        for label, t in ph.items():
            print(f"    {name:<10s} {label:<7s} {t['bits']:>12,} bits  {t['rounds']} rounds")
    if res["insecure_seed"]:
        print("  WARNING: seeded run (insecure randomness)")


SYNTHETIC_N = 1000
#: number of categories of each categorical column in the synthetic default
SYNTHETIC_LEVELS = 5


def _float_arg(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def _load_records(args, kern):
    """Records (n, d) for the kernel, normalized, and a list of warnings."""
    from mpc.rng import as_rng

    from . import data

    warnings, meta = [], {}
    numeric = [c for c in range(kern.columns) if c not in kern.categorical]
    levels = kern.extra.get("levels", {})
    if args.csv is None:
        if args.columns or args.bounds:
            raise UsageError("--columns and --bounds need --csv (the synthetic default has "
                             "public bounds [0, 1])")
        n = args.n
        if n < kern.degree:
            raise UsageError(f"--n must be >= {kern.degree} for kernel {kern.name!r}")
        g = as_rng(None if args.seed is None else f"synthetic:{args.seed}")
        X = data.synthetic_uniform(n, kern.columns, g)
        for c in kern.categorical:
            X[:, c] = g.integers(levels.get(c, SYNTHETIC_LEVELS), (n,))
        meta.update(source=f"synthetic: {n} uniform records", bounds=[[0.0, 1.0]] * len(numeric))
        return X, warnings, meta
    columns = None
    if args.columns:
        columns = [c.strip() for c in args.columns.split(",") if c.strip()]
        if len(columns) != kern.columns:
            raise UsageError(f"kernel {kern.name!r} needs {kern.columns} column(s) "
                             f"({','.join(kern.column_names)}), --columns gives {len(columns)}")
    cat_names = True
    if columns is not None:
        cat_names = [columns[c] for c in kern.categorical]
    raw, names = data.load_csv(args.csv, columns=columns, sep=args.sep,
                               categorical=cat_names if kern.categorical else False)
    if raw.shape[1] != kern.columns:
        raise UsageError(f"kernel {kern.name!r} needs {kern.columns} column(s) "
                         f"({','.join(kern.column_names)}); the file has {raw.shape[1]}: "
                         f"choose them with --columns")
    if raw.shape[0] < kern.degree:
        raise UsageError(f"kernel {kern.name!r} needs at least {kern.degree} records, "
                         f"the file has {raw.shape[0]}")
    for c, want in levels.items():
        got = int(raw[:, c].max()) + 1 if raw.shape[0] else 0
        if got != want:
            raise UsageError(f"column {names[c]!r} must have exactly {want} distinct values for "
                             f"kernel {kern.name!r}, found {got}")
    X = raw.copy()
    if numeric:
        bounds = None
        if args.bounds:
            bounds = data.parse_bounds(args.bounds, len(numeric))
        normed, warn = data.normalize(raw[:, numeric], bounds, clip=args.clip,
                                      names=[names[c] for c in numeric])
        if warn:
            warnings.append(warn)
        X[:, numeric] = normed
        if bounds is None:
            bounds = [[float(raw[:, c].min()), float(raw[:, c].max())] for c in numeric]
        meta["bounds"] = [list(map(float, b)) for b in bounds]
    meta.update(source=args.csv, columns=names)
    return X, warnings, meta


def _cmd_estimate(args) -> dict:
    import math

    from . import kernels, umpc

    try:
        kern = kernels.get(args.kernel)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if math.isnan(args.epsilon) or args.epsilon <= 0:
        raise UsageError(f"--epsilon must be > 0 (or inf), got {args.epsilon}")
    X, warnings, meta = _load_records(args, kern)
    for w in warnings:
        _warn(w)
    if math.isinf(args.epsilon):
        _warn("--epsilon inf: no noise is added; the release is NOT differentially private "
              "(evaluation only)")
    if args.seed is not None:
        _warn("--seed given: randomness is reproducible and NOT secure; use only for testing")
    edges = args.edges
    sampler = args.sampler
    if edges.strip().lower() == "all":
        sampler = "all"
    res = umpc.run_umpc(X, kern, epsilon=args.epsilon, edges=edges, sampler=sampler,
                        threat_model=args.threat_model, seed=args.seed,
                        aux_epsilon_fraction=args.aux_epsilon_fraction,
                        evaluate=args.evaluate, progress=not args.no_progress)
    out = {
        "kernel": res.kernel,
        "statistic": res.statistic,
        "estimate": res.estimate,
        "epsilon": res.epsilon if math.isfinite(res.epsilon) else "inf",
        "n": res.n,
        "edges": res.edges,
        "sampler": res.sampler,
        "max_degree": res.max_degree,
        "threat_model": res.threat_model,
        "noise_scale": res.noise_scale,
        "online_bits": res.online_bits,
        "offline_bits": res.offline_bits,
        "rounds": res.rounds,
        "max_party_bits": res.max_party_bits,
        "mean_party_bits": res.mean_party_bits,
        "seconds": res.seconds,
        "insecure_seed": res.insecure_seed,
        "data": meta,
        "phases": res.communication["phases"],
        "notes": res.notes + warnings,
    }
    unit_col = kern.extra.get("data_units")
    if unit_col is not None and "bounds" in meta:
        lo, hi = meta["bounds"][unit_col]
        out["estimate_data_units"] = res.estimate * (hi - lo)
    if res.aux["names"]:
        out["aux_noisy_sums"] = dict(zip(res.aux["names"], res.aux["noisy_sums"]))
        out["aux_epsilon"] = res.aux["epsilon"]
    if res.evaluation is not None:
        out["evaluation"] = res.evaluation
    return out


_THREAT_TEXT = {
    "dis": "M_Dis (up to n-1 colluding parties; noise by Pi_DLap)",
    "hf": "M_HF (honest fraction; noise by a random committee)",
}


def _print_estimate(res: dict):
    eps = res["epsilon"]
    print(f"{res['statistic']} ({res['kernel']}) = {res['estimate']:.6g}"
          + (f"   [{res['estimate_data_units']:.6g} in data units]"
             if "estimate_data_units" in res else ""))
    print(f"  privacy   : epsilon = {eps}, noise scale {res['noise_scale']:.3g} "
          f"(threat model {_THREAT_TEXT[res['threat_model']]})")
    print(f"  data      : n = {res['n']}, {res['data']['source']}")
    print(f"  edges     : {res['edges']} ({res['sampler']}), max degree {res['max_degree']}")
    print(f"  traffic   : online {res['online_bits'] / 8e6:.3f} MB in {res['rounds']} rounds, "
          f"offline {res['offline_bits'] / 8e6:.3f} MB, max per party "
          f"{res['max_party_bits'] / 8e3:.1f} kB")
    print(f"  time      : {res['seconds']:.2f} s")
    if "evaluation" in res:
        ev = res["evaluation"]
        print(f"  evaluation: incomplete U = {ev['u_incomplete']:.6g}, complete U = "
              f"{ev['u_complete'] if ev['u_complete'] is None else format(ev['u_complete'], '.6g')}")
    for note in res["notes"]:
        print(f"  note      : {note}")


def _cmd_kernels(args) -> dict:
    from . import kernels

    return {"kernels": [
        {"name": k.name, "degree": k.degree, "columns": list(k.column_names),
         "categorical": [k.column_names[c] for c in k.categorical],
         "range": list(k.output_range), "statistic": k.statistic, "description": k.description}
        for k in map(kernels.get, kernels.names())]}


def _print_kernels(res: dict):
    for k in res["kernels"]:
        print(f"{k['name']:<10} k={k['degree']}  columns={','.join(k['columns']):<12} "
              f"{k['description']}")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ustat", description=__doc__.splitlines()[0])
    ap.add_argument("--version", action="version", version=f"ustat {__version__}")
    sub = ap.add_subparsers(dest="command")
    e = sub.add_parser("estimate", help="a DP U-statistic by the U-MPC protocol",
                       description="Estimate a differentially private U-statistic with the "
                                   "U-MPC protocol among simulated parties (one per record).")
    e.add_argument("kernel", help="kernel name (see `ustat kernels`)")
    e.add_argument("--csv", help="CSV file with a header row (default: synthetic data)")
    e.add_argument("--sep", default=None, help="field separator (default: sniffed)")
    e.add_argument("--columns", help="comma-separated column names, one per kernel column")
    e.add_argument("--bounds", help="public bounds lo:hi,... of the numeric columns "
                                    "(default: the data's min/max, which leaks)")
    e.add_argument("--clip", action="store_true", help="clip values outside --bounds")
    e.add_argument("--epsilon", type=_float_arg, default=1.0, help="DP budget (inf: no noise)")
    e.add_argument("--edges", default="2n", help="number of edges: 2n (default), N, or all")
    e.add_argument("--sampler", default="balanced", choices=("balanced", "uniform", "bernoulli"))
    e.add_argument("--threat-model", default="dis", choices=("dis", "hf"),
                   help="dis: M_Dis (default), hf: M_HF (committee noise)")
    e.add_argument("--aux-epsilon-fraction", type=_float_arg, default=0.1,
                   help="share of epsilon for the class counts of auc/vus (default 0.1)")
    e.add_argument("--n", type=int, default=SYNTHETIC_N, help="records of the synthetic default")
    e.add_argument("--seed", default=None, help="reproducible, INSECURE randomness")
    e.add_argument("--evaluate", action="store_true",
                   help="also report the exact U-statistics (reads the data in the clear)")
    e.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    e.add_argument("--json", action="store_true", help="print one JSON object")
    kl = sub.add_parser("kernels", help="list the available kernels")
    kl.add_argument("--json", action="store_true")
    d = sub.add_parser("demo", help="engine demo: share, multiply, open; print the report")
    d.add_argument("--parties", type=int, default=3)
    d.add_argument("--batch", type=int, default=100_000)
    d.add_argument("--seed", default=None, help="reproducible, INSECURE randomness")
    d.add_argument("--json", action="store_true")
    for register in _extension_registrars():
        register(sub, _COMMANDS)
    return ap


#: Modules that add subcommands: each has ``register(subparsers, commands)``,
#: which adds its parsers and puts ``name -> (run, show)`` into ``commands``.
_EXTENSIONS = ("ustat.ecdf.cli",)


def _extension_registrars():
    import importlib

    out = []
    for name in _EXTENSIONS:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):
                continue            # not built yet
            raise
        out.append(mod.register)
    return out


_COMMANDS = {
    "estimate": (_cmd_estimate, _print_estimate),
    "kernels": (_cmd_kernels, _print_kernels),
    "demo": (_cmd_demo, _print_demo),
}


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.command is None:
        ap.print_help()
        return 0
    try:
        run, show = _COMMANDS[args.command]
        res = run(args)
        if args.json:
            print(json.dumps(res))
        else:
            show(res)
        return 0
    except (UsageError, ValueError, TypeError, OSError) as exc:
        print(f"ustat: error: {exc}", file=sys.stderr)
        return 2
