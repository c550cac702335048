"""The (epsilon, delta) a U-MPC run spends, known from its public parameters before it runs.

Under M_Dis (and the local variant) every noise draw is exact discrete Laplace noise from
Polya differences: pure epsilon-DP, delta = 0. Under M_HF each noisy sum (the U-statistic,
each auxiliary sum such as the AUC's positive count, each edge sum such as Kendall's
untied pairs) has its noise drawn by an
independent random committee, which has fewer honest members than the noise was sized for
with probability ``fail_probability`` (the exact hypergeometric tail of
:func:`noise.collusion.committee_plan`, 7.3e-13 at Bank's n = 4521 with the defaults). That
event does not depend on the data, so each draw is (epsilon_i, fail)-DP and the release,
by basic composition, (epsilon, draws x fail)-DP.

With the noise sampled inside MPC (``noise_method="mpc"``, :mod:`noise.mpc_noise`, the
default where it serves: :func:`resolve_noise_method`) each draw spends the sampler's
delta, at most 2^-40 (:data:`noise.mpc_sampler.MAX_DELTA`), and under M_HF one committee
with at least one honest member samples every draw, whose failure probability is charged
once: delta <= draws x 2^-40 (+ fail). The run reports the exact figure (``UMPCResult.delta``),
never above this bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from noise.shares import NoiseShares

    from ..kernels import Kernel
    from ..specs.umpc import UMPCSpec

__all__ = [
    "MPC_MAX_EPSILON",
    "UMPC_TRUST",
    "committee_note",
    "delta_spent",
    "noise_draws",
    "noise_guarantee",
    "planned_delta",
    "resolve_noise_method",
    "umpc_trust",
]

#: Above this epsilon the default noise is Polya: the in-MPC sampler's 64 coin bits would not
#: reach delta 2^-40 for the widest ring (1 + e^epsilon multiplies its total variation).
MPC_MAX_EPSILON = 12.0


def resolve_noise_method(method: str | None, backend: str = "dealer",
                         max_colluders: int | str | None = None,
                         epsilon: float = 1.0) -> tuple[str, str | None]:
    """``(method, note)``: the noise method of a run, and why when the default is not "mpc".

    ``method`` given: itself. None (the default): "mpc" (one discrete Laplace
    sampled inside MPC) except with backend "gc" (dealer-free triples need an
    OT extension between every pair of contributors), when ``max_colluders``
    is given (a Polya parameter) or when epsilon > :data:`MPC_MAX_EPSILON`.
    """
    if method is not None:
        if method not in ("mpc", "polya"):
            raise ValueError(f"noise_method must be 'mpc' or 'polya', got {method!r}")
        return method, None
    try:
        eps = float(epsilon)
    except (TypeError, ValueError):      # run_umpc names a bad epsilon itself
        eps = math.nan
    if backend == "gc" or max_colluders is not None:
        return "polya", None
    if math.isfinite(eps) and eps > MPC_MAX_EPSILON:
        return "polya", (f"noise: epsilon {eps:g} is above {MPC_MAX_EPSILON:g}, where the "
                         "in-MPC sampler's 64 coin bits cannot reach delta 2^-40: Polya shares "
                         "were used")
    return "mpc", None


def noise_draws(kernel: str | Kernel, ties: bool = False) -> int:
    """Noisy sums of a release: the U-statistic, each auxiliary sum and, with ``ties`` (the
    spec's), each edge sum of the kernel (Kendall's untied pairs). A bound: an edge sum whose
    share of epsilon is 0 (:func:`ustat.umpc.release.choose_edge_fraction`: the DP noise
    dominates) is not drawn."""
    from .. import kernels

    kern = kernels.get(kernel) if isinstance(kernel, str) else kernel
    edge = len(kern.edge_aux_names) if ties else 0
    return 1 + (len(kern.aux_names) if kern.aux is not None else 0) + edge


def delta_spent(kernel: str | Kernel, n: int, epsilon: float, *, threat_model: str = "dis",
                committee_size: int | None = None, fail: float = 2.0 ** -40, f_h: float = 0.5,
                noise_method: str | None = None, backend: str = "dealer",
                max_colluders: int | str | None = None, ties: bool = False, **_: Any) -> float:
    """The delta of a :func:`ustat.umpc.run_umpc` release with these arguments (a bound: the
    in-MPC sampler's delta is at most 2^-40 per draw; the run reports the exact one)."""
    if not math.isfinite(float(epsilon)):
        return 0.0
    method, _note = resolve_noise_method(noise_method, backend, max_colluders, epsilon)
    draws = noise_draws(kernel, ties)
    if method == "mpc":
        from noise.mpc_sampler import MAX_DELTA

        spent = draws * MAX_DELTA
        if threat_model == "hf":
            from noise.distributed import noise_plan

            spent += noise_plan("hf", int(n), committee_size=committee_size, fail=fail,
                                f_h=f_h, method="mpc").fail_probability
        return min(1.0, spent)
    if threat_model != "hf":
        return 0.0
    from noise.distributed import noise_plan

    plan = noise_plan("hf", int(n), committee_size=committee_size, fail=fail, f_h=f_h)
    return min(1.0, draws * plan.fail_probability)


def noise_guarantee(noises: Sequence[NoiseShares]) -> dict:
    """A release's (epsilon, delta) against its stated coalition, and its noise variance.

    ``noises``: the :class:`noise.distributed.NoiseShares` of the release (the
    U-statistic's, then the auxiliary sums').

    delta, as :func:`delta_spent` plans and charges it: the
    in-MPC sampler's bound 2^-40 per noise (``sampler_delta``: the exact
    figure, below it) plus the M_HF committee's failure probability, once
    for the one committee of the MPC noise, once per noisy sum for Polya's.
    """
    from noise.mpc_sampler import MAX_DELTA

    plan = noises[0].collusion
    assert plan is not None         # shared_dlap_noises plans every noise's collusion
    method = noises[0].method
    sampler = float(sum(nz.delta for nz in noises))
    hf = plan.threat_model == "hf"
    if method == "mpc":
        delta = len(noises) * MAX_DELTA + (plan.fail_probability if hf else 0.0)
    else:
        delta = len(noises) * plan.fail_probability if hf else 0.0
    return {"method": method,
            "epsilon": float(sum(nz.epsilon for nz in noises)),
            "delta": min(1.0, delta), "sampler_delta": sampler,
            "max_colluders": plan.max_colluders, "contributors": plan.contributors,
            "fail_probability": plan.fail_probability,
            "variance_ratio": plan.variance_factor, "coalition": plan.describe()}


def planned_delta(spec: UMPCSpec, n: int) -> float:
    """:func:`delta_spent` of a :class:`ustat.specs.UMPCSpec` run on ``n`` records."""
    pr = spec.privacy
    return delta_spent(spec.kern, n, pr.epsilon, threat_model=pr.threat_model,
                       committee_size=pr.committee_size, fail=pr.committee_fail,
                       f_h=pr.honest_fraction, noise_method=pr.noise_method,
                       backend=spec.execution.backend, max_colluders=pr.max_colluders,
                       ties=spec.tie_aware)


def committee_note(spec: UMPCSpec, n: int) -> str | None:
    """The note of a ``committee_size`` above the ``n`` parties (M_HF), else None: the
    committee is then every party (:func:`noise.collusion.committee_plan` caps it at n; the
    delta and the guarantee are those of n members), which the release says rather than
    keep silent. Public parameters only."""
    pr = spec.privacy
    if pr.threat_model != "hf" or pr.committee_size is None or pr.committee_size <= n:
        return None
    return (f"committee_size {pr.committee_size} is more than the n = {n} parties: the noise "
            f"committee is all {n} parties (capped at n)")


UMPC_TRUST = {
    "dis": ("central DP without a trusted curator (MPC): records are secret-shared inside "
            "edges, the noise is drawn jointly by all parties (Pi_DLap); inputs stay hidden "
            "from up to n-1 colluding semi-honest parties; a trusted dealer provides the "
            "preprocessing; the aggregator learns only the noisy sum"),
    "hf": ("central DP without a trusted curator (MPC): records are secret-shared inside "
           "edges, a random committee draws the noise; at most a 1 - f_H fraction of "
           "semi-honest parties are corrupted; a trusted dealer provides the preprocessing; "
           "the aggregator learns only the noisy sum"),
}

#: What the noise method "mpc" changes in :data:`UMPC_TRUST` (phrase -> replacement).
_MPC_NOISE_TRUST = {
    "dis": ("the noise is drawn jointly by all parties (Pi_DLap)",
            "one discrete Laplace noise is sampled inside MPC from all parties' coins"),
    "hf": ("a random committee draws the noise",
           "a random committee samples one discrete Laplace noise inside MPC"),
}


def umpc_trust(threat_model: str, noise_method: str | None = None) -> str:
    """The trust sentence of a U-MPC release under ``threat_model`` with this noise method."""
    tm = threat_model if threat_model in UMPC_TRUST else "dis"
    text = UMPC_TRUST[tm]
    if noise_method == "mpc":
        text = text.replace(*_MPC_NOISE_TRUST[tm])
    return text
