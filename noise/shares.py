"""What every distributed noise protocol returns, and the calibration they share.

:class:`NoiseShares` holds additive shares in Z_2^l of one noise value with
its accounting (distribution, scale, the epsilon and delta it provides, the
collusion plan). :func:`dlap_params` turns a requested (epsilon,
sensitivity) into the rational discrete Laplace scale both noise methods
use, and :func:`noise_plan` gives the collusion plan of a threat model.
The protocols that produce these values sit above this module:
:mod:`noise.distributed` (Polya shares), :mod:`noise.gaussian_shares`
(binomial and discrete Gaussian) and :mod:`noise.mpc_noise` (sampled
inside MPC).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from . import accounting as acc
from .collusion import CollusionPlan, committee_plan, dis_plan
from .samplers import RealLike, as_fraction, round_scale_up

if TYPE_CHECKING:
    from mpc.session import Session

__all__ = ["THREAT_MODELS", "NoiseShares", "dlap_params", "noise_plan"]

THREAT_MODELS = ("dis", "hf", "local")


@dataclass(frozen=True)
class NoiseShares:
    """Additive shares of a DP noise value, with the accounting that goes with it.

    ``shares``: ``uint64 (len(parties), *shape)`` in ``Z_2^l`` (sum = noise).
    ``scale``: the noise parameter in ring units (discrete Laplace: t with
    a = exp(-1/t); binomial: the coin step; Gaussian: sigma^2 of the total).
    ``sensitivity``: in the caller's real units; ``sensitivity_ring`` in
    ring units. ``epsilon``/``delta``: the guarantee actually provided (for
    the rational parameters actually used). ``committee``: party ids of the
    M_HF committee, else None. ``exact``: whether every draw came from an exact
    integer sampler (always True for the protocols here). ``insecure_seed``: the session
    was seeded (debug). ``frac_bits``: the fixed-point scale of the shares (the noise is
    ``signed(sum) / 2^frac_bits`` in the caller's real units; None: not stated, ring
    integers). ``bound``: a public bound on |noise| in ring units (exact for noise sampled
    inside MPC; for Polya shares the tail bound that fails with ``wrap_probability``), None
    if not stated. :func:`mpc.values.from_shares` reads both.
    """

    shares: np.ndarray
    parties: np.ndarray
    distribution: str
    scale: Fraction | float
    epsilon: float
    sensitivity: float
    threat_model: str
    committee: np.ndarray | None = None
    delta: float = 0.0
    sensitivity_ring: float = 0.0
    exact: bool = True
    insecure_seed: bool = False
    wrap_probability: float = 0.0
    notes: str = ""
    collusion: CollusionPlan | None = None
    method: str = "polya"
    sampler: dict | None = None
    frac_bits: int | None = None
    bound: float | None = None

    @property
    def account(self) -> acc.MechanismAccount:
        return acc.MechanismAccount(self.distribution, float(self.scale), self.sensitivity_ring,
                                    self.epsilon, self.delta, self.notes)

    @property
    def variance_factor(self) -> float:
        """Variance of the total noise over that of DLap(a) (1 without a collusion plan)."""
        return 1.0 if self.collusion is None else self.collusion.variance_factor

    def epsilon_against(self, colluders: int) -> float:
        """Epsilon against the aggregator plus ``colluders`` noise contributors.

        ``epsilon`` while colluders <= ``collusion.max_colluders``; beyond, the
        exact loss of the honest contributors' Polya(j/h) - Polya(j/h) noise
        (:func:`noise.privacy_loss.polya_difference_epsilon`, numerically from
        the pmf). For M_HF ``colluders`` counts committee members, and the
        statement holds except with probability ``collusion.fail_probability``.
        """
        if self.collusion is None:
            raise ValueError(f"no collusion plan for {self.distribution!r} noise")
        return self.collusion.epsilon_against(colluders, self.epsilon, self.scale,
                                              self.sensitivity_ring)

    def guarantee(self) -> dict[str, Any]:
        """The plain statement: input privacy, and epsilon against each coalition that matters."""
        plan = self.collusion
        if plan is None:
            raise ValueError(f"no collusion plan for {self.distribution!r} noise")
        if plan.threat_model == "hf":
            inputs = ("inputs: hidden from any coalition allowed by M_HF (at most a 1 - f_H "
                      "fraction of the parties corrupted)")
        else:
            inputs = (f"inputs: no coalition of up to {plan.n - 1} of the {plan.n} parties "
                      "(with the aggregator) learns an honest party's input")
        worst = plan.contributors - 1
        return {
            "input_privacy": inputs,
            "method": self.method,
            "delta": self.delta,
            "epsilon_aggregator": self.epsilon,
            "max_colluders": plan.max_colluders,
            "epsilon_max_coalition": self.epsilon,
            "fail_probability": plan.fail_probability,
            "epsilon_all_but_one": self.epsilon_against(worst) if worst >= 0 else self.epsilon,
            "variance_factor": plan.variance_factor,
            "plan": plan.to_dict(),
            "summary": plan.describe(),
        }


def dlap_params(s: Session, epsilon: RealLike,
                sensitivity: RealLike) -> tuple[float, float, float, Fraction]:
    """One noise's discrete Laplace calibration: (epsilon used, sensitivity, ring units, scale).

    Returns the epsilon provided, the checked sensitivity (real units), the
    sensitivity in ring units and the scale t = sensitivity 2^c / epsilon in
    ring units (``s.fp``), computed exactly from the rationals of the floats
    and rounded UP to a dyadic rational (:func:`noise.samplers.round_scale_up`);
    the epsilon used is Delta_ring / t <= ``epsilon``
    (:func:`noise.accounting.discrete_laplace_epsilon`). ``epsilon = inf`` is
    refused (no noise: the caller skips the call).
    """
    if isinstance(epsilon, numbers.Real) and not isinstance(epsilon, bool) \
            and math.isinf(float(epsilon)):
        raise ValueError("epsilon must be finite (epsilon = inf means no noise: skip the call)")
    eps = acc.check_epsilon(epsilon)
    sens = acc.check_sensitivity(sensitivity)
    sens_ring = as_fraction(sens, "sensitivity") * s.fp.scale
    scale = round_scale_up(sens_ring / as_fraction(eps, "epsilon"))
    eps_used = acc.discrete_laplace_epsilon(sens_ring, scale)
    return eps_used, sens, float(sens_ring), scale


def noise_plan(threat_model: str, n: int, *, max_colluders: int | str | None = None,
               committee_size: int | None = None, fail: float | Fraction = 2.0 ** -40,
               f_h: float | Fraction = 0.5, method: str = "polya") -> CollusionPlan:
    """The collusion plan :func:`noise.distributed.shared_dlap_noise` uses for ``n`` parties.

    See :mod:`noise.collusion`. ``"dis"`` / ``"local"``: ``max_colluders`` t
    (int, ``"half"`` = floor(n/2) the default, or ``"all"`` = n - 1); ``"hf"``:
    ``committee_size`` (default rule in :func:`noise.collusion.committee_plan`),
    ``fail``, ``f_h``. ``method``: ``"polya"`` (Polya shares) or ``"mpc"`` (sampled inside MPC:
    one honest contributor suffices; not for ``"local"``).
    """
    if threat_model not in THREAT_MODELS:
        raise ValueError(f"threat_model must be one of {THREAT_MODELS}, got {threat_model!r}")
    if method == "mpc" and threat_model == "local":
        raise ValueError("noise method 'mpc' needs a secure computation; threat model 'local' "
                         "(Remark B.1) has no communication: use method 'polya'")
    if threat_model == "hf":
        if max_colluders is not None:
            raise ValueError("max_colluders applies to threat models 'dis' and 'local'; for 'hf' "
                             "the tolerated coalition follows from f_h, fail and committee_size")
        return committee_plan(fail, f_h, n=n, size=committee_size, method=method)
    if committee_size is not None:
        raise ValueError("committee_size applies to threat model 'hf' only")
    return dis_plan(n, max_colluders, threat_model, method)
