"""``ustat kernels``, ``ustat protocols`` (what can be run) and ``ustat demo`` (the engine demo)."""

from __future__ import annotations

import argparse

from .common import UsageError, warn

__all__ = [
    "cmd_demo",
    "cmd_kernels",
    "cmd_protocols",
    "print_demo",
    "print_kernels",
    "print_protocols",
]


def cmd_demo(args: argparse.Namespace) -> dict:
    import numpy as np

    from mpc.arith.sharing import additive_share
    from mpc.protocols.beaver import multiply, open_shares
    from mpc.session import Session

    if args.parties < 2:
        raise UsageError("--parties must be >= 2")
    if args.batch < 1:
        raise UsageError("--batch must be >= 1")
    s = Session(args.parties, seed=args.seed)
    if s.insecure:
        warn("--seed given: randomness is reproducible and NOT secure; use only for testing")
    holders = np.arange(args.parties)
    xs = s.fp.encode(np.linspace(-1.0, 1.0, args.batch))
    ys = s.ring.from_signed(np.arange(args.batch, dtype=np.int64) % 7 - 3)
    with s.net.phase("sharing"), s.net.round():
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
        "command": "demo", "parties": args.parties, "batch": args.batch,
        "ring_bits": s.ring.bits, "frac_bits": s.fp.frac_bits,
        "max_abs_error": float(np.max(np.abs(got - expected))),
        "insecure_seed": s.insecure, "communication": s.net.report(),
    }


def print_demo(res: dict) -> None:
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


def cmd_kernels(args: argparse.Namespace) -> dict:
    from .. import kernels

    return {"kernels": [
        {"name": k.name, "degree": k.degree, "columns": list(k.column_names),
         "categorical": [k.column_names[c] for c in k.categorical],
         "range": list(k.output_range), "statistic": k.statistic, "description": k.description}
        for k in map(kernels.get, kernels.names())]}


def print_kernels(res: dict) -> None:
    for k in res["kernels"]:
        print(f"{k['name']:<10} k={k['degree']}  columns={','.join(k['columns']):<12} "
              f"{k['description']}")


def cmd_protocols(args: argparse.Namespace) -> dict:
    from ..baselines.registry import PROTOCOLS

    return {"protocols": [
        {"name": p.name, "kernels": p.kernels, "dp_model": p.dp_model, "uses_bins": p.uses_bins,
         "description": p.description, "trust": p.trust, "paper": p.paper}
        for p in PROTOCOLS.values()]}


def print_protocols(res: dict) -> None:
    for p in res["protocols"]:
        print(f"{p['name']:<11} {p['dp_model']:<12} {p['kernels']:<9} {p['description']}")
