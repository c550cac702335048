"""The ``ustat`` command line.

Subcommands:
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


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ustat", description=__doc__.splitlines()[0])
    ap.add_argument("--version", action="version", version=f"ustat {__version__}")
    sub = ap.add_subparsers(dest="command")
    d = sub.add_parser("demo", help="engine demo: share, multiply, open; print the report")
    d.add_argument("--parties", type=int, default=3)
    d.add_argument("--batch", type=int, default=100_000)
    d.add_argument("--seed", default=None, help="reproducible, INSECURE randomness")
    d.add_argument("--json", action="store_true")
    return ap


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.command is None:
        ap.print_help()
        return 0
    try:
        if args.command == "demo":
            res = _cmd_demo(args)
            if args.json:
                print(json.dumps(res))
            else:
                _print_demo(res)
        return 0
    except (UsageError, ValueError, TypeError, OSError) as exc:
        print(f"ustat: error: {exc}", file=sys.stderr)
        return 2
