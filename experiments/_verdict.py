"""The criterion behind every 'agrees' cell that compares a number of ours with a paper's.

A measured mean ``ours`` (with standard error ``se``) agrees with the paper's
``paper`` when both tests pass:

* the ratio test: ``ours / paper`` lies within a factor :data:`RATIO_MAX`
  (2) either way;
* the standard-error test: ``|ours - paper| <= Z_MAX se`` (3 s.e.).

:func:`criterion` prints "yes" only when both pass, "partly" when the ratio
is within 2x but the difference exceeds 3 s.e. (close in size, distinguishable
by the runs), "no" when the ratio is beyond 2x, whatever the standard error
(a large s.e. never makes a 2x difference agree). :func:`combine` turns
several claims' verdicts into one: "yes" if all hold, "no" if none does,
else "partly". Pure functions of the numbers; cost O(1) per call.
"""

from __future__ import annotations

import math

#: The ratio test: ours / paper within this factor either way.
RATIO_MAX = 2.0
#: The standard-error test: |ours - paper| within this many of our standard errors.
Z_MAX = 3.0
#: The criterion in words, for the tables' texts.
CRITERION_TEXT = (f"agrees = ratio ours / paper within {RATIO_MAX:g}x either way and "
                  f"|ours - paper| <= {Z_MAX:g} s.e.; 'partly' = within {RATIO_MAX:g}x "
                  f"only; 'no' = beyond {RATIO_MAX:g}x")


def criterion(paper: float, ours: float, se: float | None) -> dict:
    """Both tests of ``ours`` (+- ``se``) against ``paper``: ratio, z and the verdict.

    Returns ``{"ratio", "z", "in_ratio", "in_se", "verdict"}``; ``z`` is inf when
    ``se`` is missing or 0 and the values differ (nothing is within 0 s.e.).
    """
    ratio = ours / paper if paper else math.inf
    if se is None or not math.isfinite(se) or se <= 0:
        z = 0.0 if ours == paper else math.inf
    else:
        z = (ours - paper) / se
    in_ratio = 1 / RATIO_MAX <= ratio <= RATIO_MAX
    in_se = abs(z) <= Z_MAX
    verdict = "yes" if in_ratio and in_se else ("partly" if in_ratio else "no")
    return {"ratio": ratio, "z": z, "in_ratio": in_ratio, "in_se": in_se, "verdict": verdict}


def criterion_words(c: dict) -> str:
    """``ratio 2.8x, 1.2 s.e.: no`` for a :func:`criterion` result."""
    r = c["ratio"]
    ratio = f"{r:.2g}x" if r >= 1 else f"1/{1 / r:.2g}x" if r > 0 else f"{r:.2g}x"
    z = "inf" if math.isinf(c["z"]) else f"{abs(c['z']):.1f}"
    return f"ratio {ratio}, {z} s.e.: {c['verdict']}"


def combine(verdicts) -> str:
    """One verdict for several claims: "yes" if all are "yes", "no" if none is, else "partly"."""
    vs = list(verdicts)
    if not vs:
        return "-"
    if all(v == "yes" for v in vs):
        return "yes"
    if all(v == "no" for v in vs):
        return "no"
    return "partly"


def suffix_verdict(hits: list, settings: list) -> str:
    """A claim "holds beyond some setting": "yes" if the hits are a non-empty tail of the
    (ordered) settings, "no" if there are none, else "partly" (holds somewhere, not as a tail)."""
    if not hits:
        return "no"
    return "yes" if list(hits) == list(settings)[len(settings) - len(hits):] else "partly"
