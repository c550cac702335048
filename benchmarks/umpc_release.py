"""Release quality of U-MPC (issue 8): precision against raw-value references, DP audit.

Usage: python benchmarks/umpc_release.py [--json] [--quick]

Keys (all measured in this run):
- precision_max_abs_error: the largest |eps = inf release - independent
  reference on the raw values| over the kernels and data sets of the
  acceptance test (tests/ustat/test_precision.py: 8 kernels x Bank, Heart
  Disease, Diabetes; 200 records for k = 2, 50 for k = 3; all edges; plus the
  300-record Kendall Bank (age, balance) case); precision_cases: how many;
  precision_worst_case: which; precision_seconds: the wall time of those runs.
  None when ../shared/data is absent.
- dp_audit_eps_lower_bound / dp_audit_eps_claimed: the collusion audit
  (:func:`noise.audit.audit_epsilon_lower_bound`) at its defaults
  (noise.audit.DEFAULT_AUDIT: n = 4 contributors, the largest tolerated
  coalition, 10^5 runs, alpha = 1e-3); dp_audit_seconds. With --quick the
  audit uses 2 10^4 runs (dp_audit_runs says how many).
"""

from __future__ import annotations

import math
import time

import _common  # noqa: F401  (puts the repository on sys.path)
import numpy as np
from _common import emit, parse_args


def precision_metrics() -> dict:
    """Max |release - raw reference| over the acceptance test's cases (module docstring)."""
    import pytest

    from tests.ustat import test_precision as acc
    from ustat.executors import Simulator
    from ustat.specs import UMPCSpec
    from ustat.umpc import run_umpc

    t0 = time.perf_counter()
    worst, where, count = 0.0, None, 0
    try:
        cases = [(ds, name, *acc._cases(ds, name)) for name in acc.KERNELS
                 for ds in sorted(acc.DATASETS)]
        d = acc.bank()
        (age, ba), (bal, bb) = d["num"]["age"], d["num"]["balance"]
        cases.append(("bank-300", "kendall", np.column_stack([age[:300], bal[:300]]), [ba, bb],
                      acc.ref_tau_a(age[:300], bal[:300])))
    except pytest.skip.Exception as exc:
        return {"precision_max_abs_error": None, "precision_skipped": str(exc)}
    for ds, name, X, bounds, ref in cases:
        res = run_umpc(
            X,
            UMPCSpec.of(name, epsilon=math.inf, edges="all", sampler="all", seed=7, bounds=bounds),
            Simulator(workers=1))
        err = abs(res.estimate - ref)
        count += 1
        if err >= worst:
            worst, where = err, f"{name} on {ds}"
    return {"precision_max_abs_error": worst, "precision_cases": count,
            "precision_worst_case": where, "precision_seconds": time.perf_counter() - t0}


def audit_metrics(quick: bool = False) -> dict:
    """The collusion audit at noise.audit's default settings."""
    from noise.audit import DEFAULT_AUDIT, audit_epsilon_lower_bound

    kw = dict(DEFAULT_AUDIT)
    if quick:
        kw["runs"] = 20_000
    t0 = time.perf_counter()
    lower, details = audit_epsilon_lower_bound(**kw)
    return {"dp_audit_eps_lower_bound": lower, "dp_audit_eps_claimed": details["eps_claimed"],
            "dp_audit_eps_exact": details["eps_exact"], "dp_audit_runs": kw["runs"],
            "dp_audit_flagged": details["flagged"],
            "dp_audit_seconds": time.perf_counter() - t0}


def release_metrics(quick: bool = False) -> dict:
    """All keys of the module docstring (about 15 s on one core; --quick: a smaller audit)."""
    out = precision_metrics()
    out.update(audit_metrics(quick))
    return out


def main(argv=None):
    args = parse_args(__doc__.splitlines()[0], argv)
    emit(release_metrics(args.quick), args.json)


if __name__ == "__main__":
    main()
