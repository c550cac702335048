"""Step 3 of Protocol 3.1: shares of the DP noise, and the aux values' masking.

:func:`_noise` draws, in one call of :func:`noise.distributed.shared_dlap_noises`
(by the run's noise method and threat model), a discrete Laplace for the
U-statistic's sum, one per aux sum (class counts) and one per edge sum, and adds
each party's noise share to its running sums in place; :func:`_mask_aux` 2-of-2
shares each party's aux values with its successor on a public random cycle (one
round, n a l bits). :func:`_survivors_noise` is step 3 of a run whose hosts may
vanish: after the roll call, drawn among the survivors (again if a host vanishes
within it, :func:`ustat.umpc.dropouts.noise_among_survivors`).

The noise does not depend on the kernel's shares, so it runs while the workers
compute the chunks (the paper's "possibly in parallel"); its randomness comes
from the session's stream. Cost and threat model: :mod:`noise.distributed`
(Pi_DLap n^2 l bits for ``"dis"`` with Polya noise, O(n l) with a committee,
in-MPC sampling from shared coins for ``"mpc"``). The function names stay those
of the protocol module they came from: a round's frames carry the name of the
function that opened it (:func:`mpc.comm.rounds.caller_op`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from mpc.session import Session

from .dropouts import noise_among_survivors
from .last_round import reshare, step4_rows
from .privacy import noise_guarantee
from .progress import at_step
from .setup import Run


@dataclass
class _Noise:
    """What step 3 leaves for aggregation and the result."""

    aux_values: np.ndarray          # (n, a) per-record aux values (class counts)
    aux_z: np.ndarray               # (n, a) each party's masked, noisy aux shares
    info: dict                      # accounting of every noise draw
    eps_u: float                    # epsilon spent on the U-statistic
    eps_aux: float                  # epsilon spent on each aux sum
    guarantee: dict = field(default_factory=dict)   # _noise_guarantee ({} without noise)
    seconds: float = 0.0                            # the noise draws' wall time
    notes: list = field(default_factory=list)       # why the default method was not "mpc"
    eps_edge: float = 0.0                           # epsilon spent on each edge sum
    last_round: object = None       # the reshare's LastRound (ustat.umpc.last_round) or None


def _noise(run: Run, z, aux_fraction, noise_kw, z_edge=None, masks=None):
    """Step 3: shares of the DP noise added to z and the rows of ``z_edge`` (the edge sums)
    in place (and the masked, noisy aux values).

    Independent of the kernel's shares, so it runs while the chunks compute
    (the paper's "possibly in parallel"); its randomness comes from the
    session's stream, not the chunks'. With ``noise_kw["parties"]`` (the survivors' ids in
    z, after a roll call; ``run`` is then the survivors' run, a record per survivor) only
    they mask their aux values and contribute noise; ``masks``: the stream of the aux masks
    (default the run's; a draw after a discarded one takes a fresh one).

    Returns a :class:`_Noise` (aux values and shares with a row per party of z, accounting,
    epsilons).
    """
    from noise.distributed import shared_dlap_noises

    kern, session, eps = run.kern, run.session, run.eps
    ring, net = session.ring, session.net
    aux_values = kern.aux(run.X) if kern.aux is not None else np.zeros((run.n, 0))
    n_aux = aux_values.shape[1]
    eps_u, eps_aux, eps_edge = eps, 0.0, 0.0
    n_edge = len(kern.edge_aux_names)
    if n_aux and math.isfinite(eps):
        eps_aux = eps * aux_fraction
        eps_u = eps - eps_aux
    if n_edge and math.isfinite(eps) and run.edge_fraction > 0:
        eps_edge = eps * run.edge_fraction / n_edge
        eps_u -= eps * run.edge_fraction
    ids = noise_kw.get("parties")
    ids = np.arange(run.n) if ids is None else np.asarray(ids, dtype=np.int64)
    aux_z = np.zeros((z.size, n_aux), dtype=np.uint64)
    if n_aux:
        aux_z[ids] = _mask_aux(session, session.fp.encode(aux_values),
                               run.rng if masks is None else masks, ids)
    info, guarantee, seconds = {}, {}, 0.0
    if math.isfinite(eps):
        specs = ([(eps_u, run.delta_max * kern.sensitivity)]
                 + [(eps_aux, kern.aux_sensitivity)] * n_aux
                 + ([(eps_edge, float(run.delta_max))] * n_edge if eps_edge > 0 else []))
        t0 = time.perf_counter()
        with net.phase("noise"):
            noises = shared_dlap_noises(session, specs, **noise_kw)
        seconds = time.perf_counter() - t0
        z[noises[0].parties] = ring.add(z[noises[0].parties], noises[0].shares)
        info["u"] = _noise_summary(noises[0])
        for a, nz in enumerate(noises[1:1 + n_aux]):
            aux_z[nz.parties, a] = ring.add(aux_z[nz.parties, a], nz.shares)
            info[kern.aux_names[a]] = _noise_summary(nz)
        for a, nz in enumerate(noises[1 + n_aux:]):      # edge sums: values in [0, 1]
            assert z_edge is not None
            z_edge[a, nz.parties] = ring.add(z_edge[a, nz.parties], nz.shares)
            info[kern.edge_aux_names[a]] = _noise_summary(nz)
        guarantee = noise_guarantee(noises)
    return _Noise(aux_values, aux_z, info, eps_u, eps_aux, guarantee, seconds, eps_edge=eps_edge)


def _survivors_noise(run: Run, runtime, kept, sums, noise, noise_kw, dropouts, partner,
                     last=None):
    """After steps 1-2 of a run whose hosts may vanish: the roll call, the lost edges out of
    the running ``sums`` (z, z_edge), then step 3 among the survivors, drawn again if a host
    vanishes within it (:func:`ustat.umpc.dropouts.noise_among_survivors`). ``last``: the
    last round's plan (:func:`ustat.umpc.last_round.plan`) or None; with one, each draw is
    followed by the hosts' reshare (:func:`ustat.umpc.last_round.reshare`), inside the roll
    call that closes the draw, so a host lost during the reshare is a loss during the noise.
    (the survivors' run, their ids or None, the release's dropouts)."""
    z, z_edge = sums
    count = [0]

    def draw(survivors: Run, senders):
        kw = dict(noise_kw) if senders is None else dict(noise_kw, parties=senders)
        count[0] += 1           # a draw after a discarded one: fresh aux masks
        masks = None if count[0] == 1 else run.rng.derive("aux-redraw", count[0])
        drawn = _noise(survivors, z, survivors.aux_fraction, kw, z_edge, masks)
        if last is not None:
            at_step(runtime.transport, "reshare")
            drawn.last_round = reshare(survivors, runtime, last,
                                       step4_rows(z, z_edge, drawn.aux_z), senders,
                                       run.rng.derive("last-round", count[0]))
        return drawn

    run, senders, dropouts, drawn, draws = noise_among_survivors(
        run, runtime, kept, z, draw, dropouts, keep=(z_edge,), partner=partner)
    if draws > 1:
        drawn.notes.append(f"a party host vanished during the noise step: the noise drawn "
                           f"then was discarded unopened and drawn again among the "
                           f"survivors ({draws} draws"
                           + ("; the committee drawn again each time)" if
                              noise_kw["threat_model"] == "hf" else ")"))
    noise.append(drawn)
    return run, senders, dropouts


def _mask_aux(session: Session, values: np.ndarray, rng, ids: np.ndarray) -> np.ndarray:
    """2-of-2 share each party's aux values with its successor on a random cycle.

    Row j of ``values`` is party ``ids[j]``'s (every party, or the survivors after a roll
    call: the cycle runs through them only). Party i keeps v_i - r_i and sends r_i to its
    successor (one round in the sharing phase, n * a * l bits), so the value each party
    sends to the aggregator is uniform unless it colludes with its predecessor. The cycle
    is public (drawn from the run's randomness).
    """
    n = values.shape[0]
    ring, net = session.ring, session.net
    order = session.agreed(rng.derive("aux-cycle")).permutation(n)     # public: every process
    succ = np.empty(n, dtype=np.int64)
    succ[order] = np.roll(order, -1)
    r = rng.derive("aux-masks").ring_elements(ring, values.shape)
    with net.phase("sharing"):
        net.send(ids, ids[succ], r, ring.bits)
    out = ring.sub(values, r)
    np.add.at(out, succ, r)
    return out & ring.mask


def _noise_summary(noise) -> dict:
    """The accounting of one noise draw, as JSON-friendly values."""
    out = {"distribution": noise.distribution, "scale_ring_units": float(noise.scale),
           "epsilon": float(noise.epsilon), "sensitivity": float(noise.sensitivity),
           "threat_model": noise.threat_model, "exact": bool(noise.exact),
           "variance_factor": float(getattr(noise, "variance_factor", 1.0)),
           "method": noise.method, "delta": float(noise.delta)}
    if noise.sampler is not None:
        out["sampler"] = dict(noise.sampler)
    if noise.committee is not None:
        out["committee_size"] = int(np.size(noise.committee))
    return out
