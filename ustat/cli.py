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
import math
import os
import re
import sys

import numpy as np

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

#: What the CLI checks on the data in the clear, and what it does not (--help and README).
CLEAR_CHECKS = """\
What is checked in the clear: only facts about each record on its own
against public parameters, the checks every party could make on its own
record before joining: the file's format (encoding, header, field count),
that a numeric cell parses and is finite, that a label belongs to the
declared classes (--positive / --classes or a label whose meaning is fixed),
that a value lies within the public --bounds (an error unless --clip). An
error names the first such line. Nothing computed across records is checked
or printed outside the DP release: not the class counts (or whether a class
is empty), not the number of distinct labels, not the min/max (except
without --bounds, which is warned about as a leak). A class that is empty or
nearly so shows up in the released, noisy class counts (a note says so)."""


def _float_arg(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def _split_list(text: str | None) -> list | None:
    return None if text is None else [c.strip() for c in text.split(",") if c.strip()]


def _label_options(args, kern) -> tuple:
    """(positive, classes) for the kernel's ordered label column, checked against the kernel."""
    levels = kern.extra.get("levels", {})
    classes = _split_list(args.classes)
    if (args.positive is not None or classes is not None) and not levels:
        raise UsageError(f"--positive and --classes apply to kernels with class labels (auc, vus), "
                         f"not {kern.name!r}")
    if args.positive is not None and classes is not None:
        raise UsageError("give --positive or --classes, not both")
    want = next(iter(levels.values()), 0)
    if args.positive is not None and want != 2:
        raise UsageError(f"--positive applies to two-class labels; kernel {kern.name!r} needs "
                         f"--classes with {want} labels in order")
    if classes is not None and len(classes) != want:
        raise UsageError(f"--classes must name {want} labels in order for kernel {kern.name!r}, "
                         f"got {len(classes)}")
    return args.positive, classes


def _synthetic(args, kern):
    from mpc.rng import as_rng

    from . import data

    if args.columns or args.bounds or args.positive is not None or args.classes is not None:
        raise UsageError("--columns, --bounds, --positive and --classes need --csv (the synthetic "
                         "default has public bounds [0, 1] and class codes 0, 1, ...)")
    n = args.n
    if n < kern.degree:
        raise UsageError(f"--n must be >= {kern.degree} for kernel {kern.name!r}")
    g = as_rng(None if args.seed is None else f"synthetic:{args.seed}")
    X = data.synthetic_uniform(n, kern.columns, g)
    levels = kern.extra.get("levels", {})
    for c in kern.categorical:
        X[:, c] = g.integers(levels.get(c, SYNTHETIC_LEVELS), (n,))
    numeric = [c for c in range(kern.columns) if c not in kern.categorical]
    meta = {"source": f"synthetic: {n} uniform records", "bounds": [[0.0, 1.0]] * len(numeric)}
    for c, k in levels.items():
        meta["classes"] = {"column": kern.column_names[c], "rule": "synthetic codes",
                           "classes": [str(i) for i in range(k)]}
    return X, [], meta, None


def _chooser(args, kern, notes):
    """choose(header) -> the kernel's columns: --columns, else the whole file, else by name."""
    def choose(head):
        want = f"{kern.columns} column(s) ({','.join(kern.column_names)})"
        if args.columns:
            names = _split_list(args.columns)
            if len(names) != kern.columns:
                raise UsageError(f"kernel {kern.name!r} needs {want}, --columns gives {len(names)}")
            return names
        if len(head) == kern.columns:
            return list(head)
        if all(c in head for c in kern.column_names):
            notes.append(f"columns {','.join(kern.column_names)} chosen by name (--columns to change)")
            return list(kern.column_names)
        raise UsageError(f"kernel {kern.name!r} needs {want}; the file has {len(head)}: "
                         f"choose them with --columns")
    return choose


def _column_values(args, kern, table, c, name, by_default):
    """float64 values of kernel column c: labels, category codes or numbers."""
    from . import data

    col, lines = table.columns[name], table.lines
    levels = kern.extra.get("levels", {})
    if c in levels:
        positive, classes = _label_options(args, kern)
        return data.map_labels(col, name, lines, table.path, levels[c], positive=positive,
                               classes=classes)
    if c in kern.categorical:
        return data.category_codes(col)[0], None
    try:
        return data.parse_numeric(col, name, lines, table.path), None
    except data.DataError as exc:
        if exc.kind != "non-numeric":
            raise
        role = kern.column_names[c] if c < len(kern.column_names) else str(c)
        hint = (f"the column was picked by default; choose a numeric column for {role!r} with "
                f"--columns" if by_default else f"kernel {kern.name!r} needs a number for {role!r}")
        raise UsageError(exc.for_cli(hint)) from None


def _load_records(args, kern):
    """Records (n, d) for the kernel, normalized, a list of warnings, metadata, the table."""
    from . import data

    if args.csv is None:
        return _synthetic(args, kern)
    _label_options(args, kern)
    warnings: list = []
    table = data.read_table(args.csv, _chooser(args, kern, warnings), args.sep,
                            header=not args.no_header, encoding=args.encoding)
    warnings = [w.for_cli() for w in table.warnings] + warnings
    names = table.names
    if table.n_rows < kern.degree:
        raise UsageError(f"kernel {kern.name!r} needs at least {kern.degree} records, "
                         f"the file has {table.n_rows}")
    X = np.empty((table.n_rows, kern.columns))
    meta = {"source": args.csv, "columns": names, "rows": table.n_rows, "sha256": table.sha256}
    for c, name in enumerate(names):
        X[:, c], mapping = _column_values(args, kern, table, c, name, not args.columns)
        if mapping is not None:
            meta["classes"] = mapping
    numeric = [c for c in range(kern.columns) if c not in kern.categorical]
    if numeric:
        bounds = data.parse_bounds(args.bounds, len(numeric)) if args.bounds else None
        normed, warn = data.normalize(X[:, numeric], bounds, clip=args.clip,
                                      names=[names[c] for c in numeric])
        if warn:
            warnings.append(warn)
        if bounds is None:
            bounds = [[float(X[:, c].min()), float(X[:, c].max())] for c in numeric]
        X[:, numeric] = normed
        meta["bounds"] = [list(map(float, b)) for b in bounds]
    return X, warnings, meta, table


def _edges(args, n: int, k: int, notes: list) -> tuple:
    """(edges, sampler): a relative count like 2n is capped at C(n, k) with a note."""
    text = args.edges.strip().lower()
    if text == "all":
        return "all", "all"
    total = math.comb(n, k)
    if text.endswith("n"):
        try:
            want = float(text[:-1] or "1") * n
        except ValueError:
            return args.edges, args.sampler          # run_umpc names the mistake
        if math.isfinite(want) and round(want) > total:
            notes.append(f"--edges {args.edges} asks for {int(round(want))} edges but only "
                         f"C({n}, {k}) = {total} distinct ones exist: all {total} used")
            return "all", "all"
    return args.edges, args.sampler


def _collusion(args, res, n: int) -> dict | None:
    """The DP guarantee against coalitions (noise.collusion), in the release's terms."""
    from noise import collusion, distributed

    if "u" not in res.aux.get("noise", {}):
        return None
    tm = res.threat_model
    plan = distributed.noise_plan(tm, n, max_colluders=args.max_colluders if tm == "dis" else None,
                                  committee_size=args.committee_size if tm == "hf" else None,
                                  fail=args.fail, f_h=args.honest_fraction)
    parts = [(i["epsilon"], i["scale_ring_units"]) for i in res.aux["noise"].values()]
    return collusion.release_guarantee(plan, parts, args.honest_fraction)


def _run_kwargs(args) -> dict:
    """Collusion options for run_umpc, refused if this build's run_umpc cannot take them."""
    import inspect

    from . import umpc

    accepted = inspect.signature(umpc.run_umpc).parameters
    out = {"fail": args.fail, "f_h": args.honest_fraction}
    for flag, key, default in (("--max-colluders", "max_colluders", "half"),
                               ("--committee-size", "committee_size", None)):
        value = getattr(args, key)
        if value is None or value == default:         # the noise layer's default split
            continue
        if key not in accepted:
            raise UsageError(f"{flag} needs ustat.umpc.run_umpc({key}=...), which this build does "
                             f"not have yet; without it the default split applies "
                             f"(see `ustat estimate --help`)")
        out[key] = value
    return out


def _max_colluders_arg(text: str):
    if text in ("half", "all"):
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer, 'half' or 'all': {text!r}") from None


def _budget(args, meta, kern):
    """Reserve this run's epsilon in --budget-file (None without it)."""
    if not args.budget_file:
        if args.budget_total is not None:
            raise UsageError("--budget-total needs --budget-file")
        return None, None
    from noise.budget_file import BudgetFile

    if args.csv is None:
        raise UsageError("--budget-file needs --csv (a budget belongs to a data set)")
    if math.isinf(args.epsilon):
        raise UsageError("--epsilon inf is not private and cannot be charged to --budget-file")
    bf = BudgetFile(args.budget_file)
    key = f"sha256:{meta['sha256']}"
    desc = {"path": os.path.abspath(args.csv), "sha256": meta["sha256"], "rows": meta["rows"]}
    details = {"kernel": kern.name, "columns": meta["columns"], "path": os.path.abspath(args.csv)}
    return bf, bf.reserve(key, args.epsilon, total=args.budget_total, label=kern.name,
                          details=details, description=desc)


def _cmd_estimate(args) -> dict:
    from . import kernels, umpc

    try:
        kern = kernels.get(args.kernel)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if math.isnan(args.epsilon) or args.epsilon <= 0:
        raise UsageError(f"--epsilon must be > 0 (or inf), got {args.epsilon}")
    X, warnings, meta, _ = _load_records(args, kern)
    notes: list = []
    edges, sampler = _edges(args, X.shape[0], kern.degree, notes)
    kwargs = _run_kwargs(args)
    for w in warnings:
        _warn(w)
    if math.isinf(args.epsilon):
        _warn("--epsilon inf: no noise is added; the release is NOT differentially private "
              "(evaluation only)")
    if args.seed is not None:
        _warn("--seed given: randomness is reproducible and NOT secure; use only for testing")
    bf, reservation = _budget(args, meta, kern)
    try:
        res = umpc.run_umpc(X, kern, epsilon=args.epsilon, edges=edges, sampler=sampler,
                            threat_model=args.threat_model, seed=args.seed,
                            aux_epsilon_fraction=args.aux_epsilon_fraction,
                            evaluate=args.evaluate, progress=not args.no_progress, **kwargs)
    except BaseException:
        if reservation is not None:
            bf.cancel(reservation)          # nothing was released
        raise
    if reservation is not None:
        bf.confirm(reservation)
    return _estimate_output(args, kern, res, meta, warnings + notes, reservation)


def _estimate_output(args, kern, res, meta, notes, reservation) -> dict:
    out = {
        "kernel": res.kernel, "statistic": res.statistic, "estimate": res.estimate,
        "epsilon": res.epsilon if math.isfinite(res.epsilon) else "inf",
        "n": res.n, "degree": res.degree, "edges": res.edges, "sampler": res.sampler,
        "max_degree": res.max_degree,
        "threat_model": res.threat_model, "noise_scale": res.noise_scale, "u_hat": res.u_hat,
        "online_bits": res.online_bits, "offline_bits": res.offline_bits, "rounds": res.rounds,
        "max_party_bits": res.max_party_bits, "mean_party_bits": res.mean_party_bits,
        "seconds": res.seconds, "insecure_seed": res.insecure_seed, "data": meta,
        "phases": res.communication["phases"],
        "notes": res.notes + notes + kern.release_notes(res.u_hat, res.aux["noisy_sums"], res.n),
    }
    if "classes" in meta:
        out["classes"] = meta["classes"]
    if math.isfinite(res.epsilon):
        split = {"statistic": res.epsilon - res.aux["epsilon"]}
        split.update({name: res.aux["epsilon"] for name in res.aux["names"]})
        out["epsilon_split"] = split
        coll = _collusion(args, res, res.n)
        if coll is not None:
            out["collusion"] = coll
            # the total noise is a Polya(R) difference: variance 2 R b^2 (b: DLap scale)
            out["noise_std_u"] = math.sqrt(2 * coll["variance_factor"]) * res.noise_scale
    unit_col = kern.extra.get("data_units")
    if unit_col is not None and "bounds" in meta:
        lo, hi = meta["bounds"][unit_col]
        out["estimate_data_units"] = res.estimate * (hi - lo)
    if res.aux["names"]:
        out["aux_noisy_sums"] = dict(zip(res.aux["names"], res.aux["noisy_sums"]))
        out["aux_epsilon"] = res.aux["epsilon"]
    if res.evaluation is not None:
        out["evaluation"] = res.evaluation
    if reservation is not None:
        out["budget"] = {"file": args.budget_file, "total": reservation.total,
                         "spent": reservation.spent, "this_run": reservation.epsilon,
                         "remaining": reservation.remaining}
    return out


_THREAT_TEXT = {
    "dis": "M_Dis: noise by Pi_DLap among all parties",
    "hf": "M_HF: honest fraction, noise by a random committee",
}


def _fmt(v) -> str:
    return "n/a" if v is None else format(v, ".6g")


def _print_estimate(res: dict):
    eps = res["epsilon"]
    print(f"{res['statistic']} ({res['kernel']}) = {res['estimate']:.6g}"
          + (f"   [{res['estimate_data_units']:.6g} in data units]"
             if "estimate_data_units" in res else ""))
    split = res.get("epsilon_split", {})
    parts = ", ".join(f"{v:.4g} for {'the U-statistic' if k == 'statistic' else 'the count ' + k}"
                      for k, v in split.items()) if len(split) > 1 else ""
    noise = (f", noise std {res['noise_std_u']:.3g} in U units" if "noise_std_u" in res else "")
    print(f"  privacy   : epsilon = {eps}" + (f" ({parts})" if parts else "") + noise
          + f" (threat model {_THREAT_TEXT[res['threat_model']]})")
    coll = res.get("collusion")
    if coll:
        print(f"  inputs    : {coll['input_privacy'].removeprefix('inputs ')}")
        print(f"  collusion : {coll['summary']}")
        print(f"              with all but one contributor colluding: epsilon "
              f"{coll['epsilon_all_but_one']:.4g}")
    if "classes" in res:
        c = res["classes"]
        pairs = ", ".join(f"{lab} -> {i}" for i, lab in enumerate(c["classes"]))
        print(f"  classes   : {c['column']}: {pairs} ({c['rule']})")
    print(f"  data      : n = {res['n']}, {res['data']['source']}")
    print(f"  edges     : {res['edges']} ({res['sampler']}), max degree {res['max_degree']}")
    print(f"  traffic   : online {res['online_bits'] / 8e6:.3f} MB in {res['rounds']} rounds, "
          f"offline {res['offline_bits'] / 8e6:.3f} MB, max per party "
          f"{res['max_party_bits'] / 8e3:.1f} kB")
    print(f"  time      : {res['seconds']:.2f} s")
    if "budget" in res:
        b = res["budget"]
        print(f"  budget    : spent {b['spent']:g} of {b['total']:g} on this data set "
              f"(this run {b['this_run']:g}, remaining {b['remaining']:g}) in {b['file']}")
    if "evaluation" in res:
        ev = res["evaluation"]
        print(f"  evaluation: exact {res['statistic']} on the encoded inputs = "
              f"{_fmt(ev.get('statistic_complete'))} (all {res['degree']}-subsets), "
              f"{_fmt(ev.get('statistic_incomplete'))} (the {res['edges']} sampled edges); "
              "read in the clear")
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


_THREAT_HELP = """\
Who must collude. Input privacy: under dis (M_Dis) no coalition of up to
n - 1 parties with the aggregator learns an honest party's record (beyond
what the release says); under hf (M_HF) none allowed by the honest fraction.
The DP guarantee of the release is a separate, stated parameter: the noise is
split so that epsilon holds against the aggregator together with
--max-colluders parties (dis; default half of them: noise variance x2 at
most) or with all but the guaranteed honest members of the noise committee
(hf; committee sized by --honest-fraction and --committee-fail). Against a
larger coalition epsilon degrades; the output reports the epsilon against
the aggregator with all but one contributor."""


def _estimate_parser(sub):
    e = sub.add_parser(
        "estimate", help="a DP U-statistic by the U-MPC protocol",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Estimate a differentially private U-statistic with the U-MPC protocol among "
                    "simulated parties (one per record).",
        epilog=_THREAT_HELP + "\n\n" + CLEAR_CHECKS)
    e.add_argument("kernel", help="kernel name (see `ustat kernels`)")
    d = e.add_argument_group("data")
    d.add_argument("--csv", help="delimited text file, gzip read transparently "
                                 "(default: synthetic data, see --n)")
    d.add_argument("--sep", default=None, help="field separator (default: sniffed: , ; or TAB)")
    d.add_argument("--no-header", action="store_true",
                   help="the file has no header line: columns are 1, 2, ... (for --columns)")
    d.add_argument("--encoding", default="utf-8", help="text encoding of --csv (default utf-8)")
    d.add_argument("--columns", help="comma-separated column names, one per kernel column "
                                     "(default: the whole file if it has as many columns, else "
                                     "the columns named like the kernel's)")
    d.add_argument("--bounds", help="public bounds lo:hi,... of the numeric columns "
                                    "(default: the data's min/max, which leaks); -10:10 is "
                                    "accepted as a value")
    d.add_argument("--clip", action="store_true", help="clip values outside --bounds")
    d.add_argument("--positive", metavar="VALUE",
                   help="auc: the label of the positive class (every other label is negative); "
                        "default: labels 0/1, no/yes, false/true only")
    d.add_argument("--classes", metavar="A,B[,C]",
                   help="the class labels in order: vus (3 classes, default codes 0,1,2) or "
                        "auc (NEGATIVE,POSITIVE)")
    d.add_argument("--n", type=int, default=SYNTHETIC_N, help="records of the synthetic default")
    p = e.add_argument_group("privacy")
    p.add_argument("--epsilon", type=_float_arg, default=1.0, help="DP budget (inf: no noise)")
    p.add_argument("--aux-epsilon-fraction", type=_float_arg, default=0.1,
                   help="share of epsilon for the class counts of auc/vus (default 0.1)")
    p.add_argument("--budget-file", metavar="FILE",
                   help="JSON file keeping a privacy budget per data set across runs; a run "
                        "that would exceed it is refused")
    p.add_argument("--budget-total", type=_float_arg, metavar="EPS",
                   help="the data set's total epsilon, required when --budget-file first sees it")
    t = e.add_argument_group("threat model")
    t.add_argument("--threat-model", default="dis", choices=("dis", "hf"),
                   help="dis: M_Dis (default), hf: M_HF (committee noise)")
    t.add_argument("--max-colluders", type=_max_colluders_arg, default=None, metavar="T",
                   help="dis: parties that may collude with the aggregator while epsilon holds: "
                        "an integer, half (default) or all (n - 1; n times the noise variance)")
    t.add_argument("--committee-size", type=int, default=None, metavar="M",
                   help="hf: noise committee size (default: the smallest whose variance cost is "
                        "within 2x of the best, 188 members for f_H = 0.5)")
    t.add_argument("--honest-fraction", type=_float_arg, default=0.5, metavar="F",
                   help="hf: assumed fraction of honest parties f_H (default 0.5)")
    t.add_argument("--committee-fail", dest="fail", type=_float_arg, default=2.0 ** -40,
                   metavar="P", help="hf: allowed probability that the committee has fewer "
                                     "honest members than assumed (default 2^-40)")
    r = e.add_argument_group("run")
    r.add_argument("--edges", default="2n",
                   help="number of edges: 2n (default; capped at all for tiny data), N, or all")
    r.add_argument("--sampler", default="balanced", choices=("balanced", "uniform", "bernoulli"),
                   help="how edges are drawn: balanced (every party in about the same number of "
                        "edges, the smallest noise; default), uniform, bernoulli")
    r.add_argument("--seed", default=None, help="reproducible, INSECURE randomness")
    r.add_argument("--evaluate", action="store_true",
                   help="also report the exact statistic (reads the data in the clear)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    return e


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ustat", description=__doc__.splitlines()[0])
    ap.add_argument("--version", action="version", version=f"ustat {__version__}")
    sub = ap.add_subparsers(dest="command")
    _estimate_parser(sub)
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


#: Options whose value may start with "-" (a negative bound): "--bounds -10:10" is read as a value.
_DASH_VALUES = ("--bounds",)


def _join_dash_values(argv: list) -> list:
    out, i = [], 0
    while i < len(argv):
        tok, nxt = argv[i], argv[i + 1] if i + 1 < len(argv) else ""
        if tok in _DASH_VALUES and re.match(r"-[0-9.]", nxt):
            out.append(f"{tok}={nxt}")
            i += 2
        else:
            out.append(tok)
            i += 1
    return out


def _error_text(exc) -> str:
    from .data import DataError

    return exc.for_cli() if isinstance(exc, DataError) else str(exc)


def main(argv=None) -> int:
    argv = _join_dash_values(list(sys.argv[1:] if argv is None else argv))
    ap = build_parser()
    try:
        args = ap.parse_args(argv)
        if args.command is None:
            ap.print_help()
            return 0
        run, show = _COMMANDS[args.command]
        res = run(args)
        if args.json:
            print(json.dumps(res))
        else:
            show(res)
        sys.stdout.flush()
        return 0
    except (UsageError, ValueError, TypeError, OSError) as exc:
        if isinstance(exc, BrokenPipeError):
            return _broken_pipe()
        print(f"ustat: error: {_error_text(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ustat: interrupted", file=sys.stderr)
        return 130


def _broken_pipe() -> int:
    """The reader went away (``ustat kernels | head``): stop quietly, like other tools."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())       # Python's final flush must not fail again
    return 141
