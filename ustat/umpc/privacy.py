"""The (epsilon, delta) a U-MPC run spends, known from its public parameters before it runs.

Under M_Dis (and the local variant) every noise draw is exact discrete Laplace noise from
Polya differences: pure epsilon-DP, delta = 0. Under M_HF each noisy sum (the U-statistic,
and each auxiliary sum such as the AUC's positive count) has its noise drawn by an
independent random committee, which has fewer honest members than the noise was sized for
with probability ``fail_probability`` (the exact hypergeometric tail of
:func:`noise.collusion.committee_plan`, 7.3e-13 at Bank's n = 4521 with the defaults). That
event does not depend on the data, so each draw is (epsilon_i, fail)-DP and the release,
by basic composition, (epsilon, draws x fail)-DP.
"""

from __future__ import annotations

import math

__all__ = ["noise_draws", "delta_spent"]


def noise_draws(kernel) -> int:
    """Noisy sums of a release: the U-statistic and each auxiliary sum of the kernel."""
    from .. import kernels

    kern = kernels.get(kernel) if isinstance(kernel, str) else kernel
    return 1 + (len(kern.aux_names) if kern.aux is not None else 0)


def delta_spent(kernel, n: int, epsilon, *, threat_model: str = "dis", committee_size=None,
                fail=2.0 ** -40, f_h=0.5, **_) -> float:
    """The delta of a :func:`ustat.umpc.run_umpc` release with these arguments."""
    if threat_model != "hf" or not math.isfinite(float(epsilon)):
        return 0.0
    from noise.distributed import noise_plan

    plan = noise_plan("hf", int(n), committee_size=committee_size, fail=fail, f_h=f_h)
    return min(1.0, noise_draws(kernel) * plan.fail_probability)
