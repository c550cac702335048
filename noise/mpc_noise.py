"""Noise sampled inside MPC for the U-MPC layer: one discrete Laplace, no collusion margin.

:func:`mpc_dlap_noises` is what :func:`noise.distributed.shared_dlap_noises`
runs for ``method="mpc"``: the contributors sample every noise of a release
in one secure computation (:func:`noise.mpc_sampler.secure_dlap`) from coins
that each of them draws alone, and hold additive shares of each noise in
Z_2^l, which they add to their shares of the aggregate; only aggregate +
noise is opened.

Contributors:

* ``"dis"`` (M_Dis): all n parties. The release keeps its epsilon against
  the aggregator with any n - 1 of them (one honest contributor suffices).
  Cost: linear in n (openings through rotating kings, :mod:`mpc.protocols.gmw`): per
  noise about 3.9 x 10^3 AND gates at Bank's scale, 4 (n - 1) bits each
  online and 3 n offline, 14 online rounds; against Pi_DLap's n (n - 1) l.
* ``"hf"`` (M_HF): a committee drawn with public coins, the smallest with at
  least one honest member except with probability ``fail``
  (:func:`noise.collusion.committee_plan` with ``method="mpc"``: 40 members
  for f_H = 1/2 and 2^-40); the cost does not depend on n. The guarantee
  holds except with that probability.

Accounting: epsilon is the discrete Laplace's (sensitivity / scale, as for
the Polya method); delta is the sampler's truncation and rounding,
(1 + e^epsilon) times its total variation bound, at most 2^-40 per noise
(:func:`noise.mpc_sampler.plan_dlap`); the variance is that of one DLap.

Threat model: static semi-honest; ``triples="dealer"``: the session's
trusted dealer deals the triples and daBits (it learns nothing about the
noise); ``"ot"``: no dealer (oblivious transfer between every ordered pair
of contributors: O(m^2) OT setups, for small committees).
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ._contributions import _check_parties, _check_session, _stream
from .committee import _committee_positions
from .mpc_sampler import plan_dlap, secure_dlap
from .shares import NoiseShares, dlap_params, noise_plan

if TYPE_CHECKING:
    from mpc.session import Session

    from .samplers import RealLike

__all__ = ["MPC_DIS_MAX_PARTIES", "mpc_dlap_noises"]

#: The largest n for which threat model "dis" samples the noise among all n parties (the
#: simulator holds about 4 kB of GMW state per party; measured 3 s and 0.64 GB at 10^5).
MPC_DIS_MAX_PARTIES = 100_000


def mpc_dlap_noises(s: Session, specs: Iterable[tuple[RealLike, RealLike]], *,
                    threat_model: str = "dis", parties: ArrayLike | None = None,
                    fail: float | Fraction = 2.0 ** -40, f_h: float | Fraction = 0.5,
                    max_colluders: int | str | None = None, committee_size: int | None = None,
                    triples: str = "dealer") -> list[NoiseShares]:
    """One :class:`NoiseShares` per (epsilon, sensitivity) in ``specs``, all from one computation.

    Parameters as :func:`noise.distributed.shared_dlap_noise` (``max_colluders``
    must be None: the guarantee holds against all but one contributor).
    Every noise is DLap(a) for its own scale, within the reported delta.
    """
    s = _check_session(s)
    specs = list(specs)
    if not specs:
        raise ValueError("specs must name at least one (epsilon, sensitivity) pair")
    if threat_model == "local":
        raise ValueError("noise method 'mpc' needs a secure computation; threat model 'local' "
                         "(Remark B.1) has no communication: use method 'polya'")
    params = [dlap_params(s, eps, sens) for eps, sens in specs]
    P = _check_parties(s, parties)
    plan = noise_plan(threat_model, P.size, max_colluders=max_colluders,
                      committee_size=committee_size, fail=fail, f_h=f_h, method="mpc")
    splans = [plan_dlap(scale, epsilon=eps) for eps, _, _, scale in params]
    if threat_model == "hf":
        pos = _committee_positions(s.agreed(s.rng.derive("noise", "committee",
                                                         int(s.rng.uint64()))),
                                   P.size, plan.contributors)   # public coins, as committee_dlap
        committee = P[pos]
    else:
        pos, committee = np.arange(P.size), None
    draws = secure_dlap(s, splans, holders=P[pos], triples=triples,
                        rng=_stream(s, "mpc-sampler"))
    out = []
    for i, ((eps, sens, sens_ring, scale), sp) in enumerate(zip(params, splans)):
        shares = s.ring.zeros(P.size)
        shares[pos] = draws.shares[:, i]
        info = dict(sp.to_dict(), triples=triples, contributors=int(pos.size),
                    and_gates_all_noises=draws.and_gates, and_layers=draws.and_layers)
        out.append(NoiseShares(
            shares=shares, parties=P, distribution="discrete_laplace", scale=scale,
            epsilon=eps, sensitivity=sens, threat_model=threat_model, committee=committee,
            delta=sp.delta(eps), sensitivity_ring=sens_ring, exact=True,
            insecure_seed=bool(s.insecure), wrap_probability=0.0, collusion=plan,
            method="mpc", sampler=info, frac_bits=s.fp.frac_bits,
            bound=float(1 << sp.geometric_bits),
            notes=(f"discrete Laplace a = exp(-1/scale) in ring units sampled inside MPC by "
                   f"{pos.size} contributors (GMW, {triples} triples); total variation to DLap "
                   f"<= {sp.tv:.3g}, |noise| < 2^{sp.geometric_bits}")))
    return out
