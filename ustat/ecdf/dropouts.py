"""Dropouts in a deployed ECDF family run: the parties whose uploads every server holds.

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
Threat model: the protocol's (semi-honest non-colluding servers; malicious
parties with the key check).

``hl`` (:mod:`ustat.ecdf.hosmer_lemeshow`): its tree is the release above
(FSS or pointwise); a host lost at the HL sums (step ``sums``: after its keys
reached both servers, before its sum shares reached every server) is left out
of the sums. With the input check (``verify_keys``, the deployed default:
:func:`ustat.ecdf.hl_check.verified_shares`) the check's first round carries,
beside each server's opened values, one bit per party ("I lack its upload":
n bits more each way, no round), the lost vectors are left out unopened and
not counted as failing, and server 0's report carries the count lost above bit
32; unverified, one round of its own (phase ``hl sums held``, :func:`agree_kept`).
Privacy: the 4Q sums' noise is drawn once, independent of n, at the scale of
their L1 sensitivity 4: the sums over the kept parties are 4 eps'-DP for
everyone; a party lost at the sums is in the tree only (eps / 4-DP, as without
dropouts), and the group edges, a function of the tree, are public parameters
of the sums. So every party keeps epsilon, the vanished included. ``n`` (and
the release's ``dropouts``) counts the parties in the sums.

The pointwise backend (:mod:`ustat.ecdf.pointwise`) sends shares at every
query batch: the hosts absent at start are left out before the first query
(every process agreed them: step ``start``); in each batch the servers agree
in one round (phase ``ecdf pointwise held``) whose shares reached every server
and open the sums of those only (step ``query``). The first batch fixes the
parties counted; a party lost at a later batch ends the run with no release
(:class:`LateDropoutError`: its indicators are in opened answers, and answers
at the same nodes without it would open, up to the node noise they share, what
it added), as does a ROC host lost at the second class's answers. Privacy: the
node noise is drawn once per release, independent of n; every opened answer
counts exactly the kept parties, so the release is the release on their data,
epsilon-DP for everyone, the vanished included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from mpc.session import Session

__all__ = ["DropoutBoundError", "LateDropoutError", "absent", "agree_kept", "bound", "may_vanish",
           "outcome", "reached", "units"]


class DropoutBoundError(ValueError):
    """More parties lost than the deployment's ``max_dropouts`` allows: no release."""


class LateDropoutError(ValueError):
    """A party host lost after an answer counting its parties was opened (the pointwise
    backend's later queries): leaving it out of the next answers would open, up to the noise
    they share, what it added to the earlier ones; no release."""


def may_vanish(session: Session) -> bool:
    """Whether this run tolerates party hosts that vanish (a deployment whose transport was
    told which hosts may: :attr:`mpc.wire.transport.SocketMesh.may_vanish`)."""
    runtime = session.runtime
    return runtime is not None and bool(getattr(runtime.transport, "may_vanish", ()))


def reached(session: Session) -> np.ndarray:
    """bool (n,): the parties whose host this process has not lost (so far: what the
    transport saw), every party's in the simulator."""
    runtime = session.runtime
    if runtime is None:
        return np.ones(session.n_parties, dtype=bool)
    return ~_of_hosts(session, set(runtime.transport.gone) | set(runtime.gone))


def absent(session: Session) -> np.ndarray:
    """bool (n,): the parties whose host never joined (every process agreed them at
    start-up: :meth:`mpc.run.runtime.Runtime.roll_call`), none in the simulator."""
    runtime = session.runtime
    if runtime is None or not runtime.gone:
        return np.zeros(session.n_parties, dtype=bool)
    return _of_hosts(session, set(runtime.gone))


def units(session: Session) -> np.ndarray:
    """int (n,): the unit each party is lost with (its host's rank: a host lost loses its
    whole range), public."""
    return np.asarray(session.placement.owner[:session.n_parties], dtype=np.int64)


def bound(session: Session) -> int | None:
    """The run's ``max_lost`` (the deployment's ``max_dropouts``; None: no bound)."""
    runtime = session.runtime
    return None if runtime is None else runtime.max_lost


def _of_hosts(session: Session, hosts: set) -> np.ndarray:
    owner = np.asarray(session.placement.owner[:session.n_parties])
    return np.isin(owner, sorted(hosts))


def agree_kept(session: Session, sid: np.ndarray, held: list,
               phase: str = "ecdf keys held", step: str = "upload",
               earlier: dict | None = None) -> tuple[np.ndarray, dict]:
    """Step 2 of the module docstring, for unverified uploads: ``held[b]`` (bool (n,), in the
    process of server b: the parties whose upload it received) goes to every other server and
    to the analyst in one round (``phase``, offline); returns (K as bool (n,), the release's
    ``dropouts``: :func:`outcome` with ``step`` and ``earlier``), the same in the servers' and
    the analyst's processes (every party in a party host's, which has no later step). With the
    key check (the deployed default) the check's first round carries the same bit and its
    report the count, with no round of their own
    (:meth:`ustat.ecdf.servers.FSSServers._verify`, :func:`ustat.ecdf.hl_check.verified_shares`).
    Cost: 1 round, m n bits from each of the m servers."""
    net, n = session.net, session.n_parties
    masks = [np.asarray(h, dtype=bool).copy() for h in held]
    analyst = net.role("analyst")
    with net.phase(phase, offline=True), net.round():
        for b in range(sid.size):                   # loop over the m servers
            for o in range(sid.size):
                if o != b:
                    net.send(int(sid[b]), int(sid[o]), masks[b], 1)
            net.send(int(sid[b]), analyst, masks[b], 1)
    if not any(net.is_local(int(r)) for r in (*sid, analyst)):
        return np.ones(n, dtype=bool), outcome(session, 0, step, earlier)     # a party host
    kept = np.logical_and.reduce(masks)
    return kept, outcome(session, int(n - kept.sum()), step, earlier)


def outcome(session: Session, lost: int, step: str = "upload",
            earlier: dict | None = None) -> dict:
    """The release's ``dropouts`` for ``lost`` parties left out: ``{"parties_lost", "step"}``,
    the steps at which they were lost, in order: ``start`` (their hosts never joined: every
    process agreed them at start-up), then those of ``earlier`` (this run's outcome at an
    earlier step, whose parties are among these: a host lost stays lost), then ``step`` when
    ``lost`` counts more (``upload``: the DCF keys; ``query``: a pointwise answer; ``sums``:
    the Hosmer-Lemeshow sums); :class:`DropoutBoundError` when ``lost`` exceeds the run's
    ``max_lost`` (the deployment's ``max_dropouts``)."""
    n = session.n_parties
    most = bound(session)
    if most is not None and lost > most:
        where = "both servers" if step == "upload" else "every server"
        raise DropoutBoundError(f"{lost} of {n} parties' {_WHAT.get(step, step)} did not reach "
                                f"{where}, more than max_dropouts = {most}: no release")
    before = int(absent(session).sum())
    steps = ["start"] if before else []
    if earlier and earlier["parties_lost"]:
        steps = earlier["step"].split(", ")
        before = max(before, int(earlier["parties_lost"]))
    if lost > before:
        steps.append(step)
    return {"parties_lost": int(lost), "step": ", ".join(steps) or step}


#: what a step's upload is, in the bound's message
_WHAT = {"upload": "keys", "query": "answers", "sums": "HL sums"}
