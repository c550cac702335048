"""Shared helpers for the benchmark scripts (timing, JSON output, CLI flags)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def parse_args(description: str, argv=None):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    ap.add_argument("--quick", action="store_true", help="small sizes: finish in seconds")
    return ap.parse_args(argv)


def best_of(fn, repeat: int = 3) -> float:
    """Smallest wall time of ``repeat`` calls of ``fn`` (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def emit(result: dict, as_json: bool):
    if as_json:
        print(json.dumps(result, sort_keys=True))
    else:
        width = max(len(k) for k in result)
        for k, v in result.items():
            print(f"{k:<{width}}  {v}")


def cold_and_warm(fn, repeat: int = 3):
    """Wall times of one cold call and ``repeat`` warm calls of ``fn``: (cold, median warm, result).

    ``repeat = 0`` (runs too long to repeat): the cold time stands for the warm one too.
    """
    t = time.perf_counter()
    res = fn()
    cold = time.perf_counter() - t
    warm = []
    for _ in range(repeat):
        t = time.perf_counter()
        res = fn()
        warm.append(time.perf_counter() - t)
    warm.sort()
    return cold, (warm[len(warm) // 2] if warm else cold), res
