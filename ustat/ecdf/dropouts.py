"""Dropouts in a deployed ECDF family run: the parties whose keys both servers hold.

Issue 36, item 5 (the ECDF family part; the design is in
:mod:`ustat.umpc.dropouts`). Each party uploads one DCF key to each of the two
servers in one round (:class:`~ustat.ecdf.servers.FSSServers`, phase ``ecdf
keys``). A party host that vanishes before its keys reached both servers (it
never joined: step ``start``; it was lost at the upload, before or between its
two sends: step ``upload``) is left out:

1. after the upload, each server notes the parties whose keys it received
   (its transport names the party hosts it lost; what they owed reads as
   zeros: :class:`mpc.wire.transport.SocketMesh`);
2. the servers agree K = the parties whose keys *both* servers hold. With the
   key check (``verify_keys``, the deployed default) this rides on the check's
   own exchanges, at no extra round or bit: each server's first message to the
   other already carries a flag word per party (its malformed records), whose
   bit 1 now says "I lack this party's keys"; server0's report to the analyst
   (the count of dropped keys) carries the count lost above bit 32. Without
   the check, one round of its own (phase ``ecdf keys held``, :func:`agree_kept`):
   each server sends its set (one bit per party) to the other server and to
   the analyst;
3. the keys of the parties outside K are discarded unopened: unverified, before
   anything is evaluated; verified, as a failing key is (what its record added
   to the sums is taken off; its check values u, z are masked by the party's
   triple shares, and the lost party is the only one they concern). The run
   continues with the |K| parties kept: the sums and the analyst's denominator
   ``n`` are those of K (less the keys that fail the check).

A loss of more than the deployment's ``max_dropouts`` parties
(``deploy.toml``, :attr:`ustat.deploy.config.Config.dropout_bound`) ends the
run with no release (:class:`DropoutBoundError`). A party host that vanishes
*after* its keys reached both servers changes nothing: it has no later step,
and the release is for every party. A server or the analyst that vanishes
ends the run (two-server model: the transport's fault, naming it).

Privacy. The tree noise is drawn per node by the servers before any key
arrives and does not depend on n: one party still moves each node's count
by at most one, so the sensitivity and the noise are those of the run
without dropouts, and the release is epsilon-DP for every party, the
vanished included (a vanished party's key enters no sum). No kept party's
key is opened: the servers exchange only which parties they hold, a fact the
transport already shows to everyone (a host's connection closed). The
analyst learns |K| (it is the ECDF's denominator) and which parties were
lost (whole hosts' ranges, public).

Cost: verified, nothing more than the key check; unverified, one round, 2 n
bits from each server (to the other server and to the analyst), offline. With
no party lost the release, its counted traffic included, is the run's without
dropouts (verified). A ROC curve uploads twice (one class each): a host lost
between the two is left out of both (:meth:`~ustat.ecdf.servers.FSSServers.keep_only`).
``hl`` and the pointwise backend do not tolerate dropouts yet (their hosts may
not vanish: a loss there is a fault, as before). Threat model: the protocol's
(semi-honest non-colluding servers; malicious parties with the key check).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from mpc.session import Session

__all__ = ["DropoutBoundError", "agree_kept", "may_vanish", "outcome", "reached"]


class DropoutBoundError(ValueError):
    """More parties lost than the deployment's ``max_dropouts`` allows: no release."""


def may_vanish(session: Session) -> bool:
    """Whether this run tolerates party hosts that vanish (a deployment whose transport was
    told which hosts may: :attr:`mpc.wire.transport.SocketMesh.may_vanish`)."""
    runtime = session.runtime
    return runtime is not None and bool(getattr(runtime.transport, "may_vanish", ()))


def reached(session: Session) -> np.ndarray:
    """bool (n,): the parties whose host this process has not lost (so far: what the
    transport saw), every party's in the simulator."""
    n = session.n_parties
    runtime = session.runtime
    if runtime is None:
        return np.ones(n, dtype=bool)
    gone = sorted(set(runtime.transport.gone) | set(runtime.gone))
    owner = np.asarray(session.placement.owner[:n])
    return ~np.isin(owner, gone)


def agree_kept(session: Session, sid: np.ndarray, held: list) -> tuple[np.ndarray, dict]:
    """Step 2 of the module docstring, for unverified keys: ``held[b]`` (bool (n,), in the
    process of server b: the parties whose keys it received) goes to the other server and to
    the analyst in one round; returns (K as bool (n,), the release's ``dropouts``:
    :func:`outcome`), the same in the servers' and the analyst's processes (every party in a
    party host's, which has no later step). With the key check (the deployed default) the
    check's first round carries the same bit and its report the count, with no round of
    their own (:meth:`ustat.ecdf.servers.FSSServers._verify`)."""
    net, n = session.net, session.n_parties
    masks = [np.asarray(h, dtype=bool).copy() for h in held]
    analyst = net.role("analyst")
    with net.phase("ecdf keys held", offline=True), net.round():
        for b in (0, 1):
            net.send(int(sid[b]), int(sid[1 - b]), masks[b], 1)
            net.send(int(sid[b]), analyst, masks[b], 1)
    if not any(net.is_local(int(r)) for r in (*sid, analyst)):
        return np.ones(n, dtype=bool), outcome(session, 0)      # a party host
    kept = masks[0] & masks[1]
    return kept, outcome(session, int(n - kept.sum()))


def outcome(session: Session, lost: int) -> dict:
    """The release's ``dropouts`` for ``lost`` parties left out: ``{"parties_lost", "step"}``,
    the step ``start`` (their hosts never joined: every process agreed them at start-up),
    ``upload`` (lost at the upload) or ``start, upload``; :class:`DropoutBoundError` when
    ``lost`` exceeds the run's ``max_lost`` (the deployment's ``max_dropouts``)."""
    runtime = session.runtime
    n = session.n_parties
    bound = None if runtime is None else runtime.max_lost
    if bound is not None and lost > bound:
        raise DropoutBoundError(f"{lost} of {n} parties' keys did not reach both servers, "
                                f"more than max_dropouts = {bound}: no release")
    absent = 0
    if runtime is not None and runtime.gone:
        owner = np.asarray(session.placement.owner[:n])
        absent = int(np.isin(owner, sorted(runtime.gone)).sum())
    steps = [s for s, hit in (("start", absent > 0), ("upload", lost > absent)) if hit]
    return {"parties_lost": int(lost), "step": ", ".join(steps) or "upload"}
