"""The M_HF committee noise protocol (Sinh & Ramon, Sec. 4): a random committee shares DLap noise.

:func:`committee_dlap` is called by :func:`noise.distributed.shared_dlap_noise`
for threat model ``"hf"``; it returns additive shares in Z_2^l (party axis
first) of one discrete Laplace value, counted on the session's network.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from mpc.arith.sharing import additive_share
from mpc.comm.network import Traffic

from . import accounting as acc
from ._contributions import (
    _check_parties,
    _check_session,
    _encode_signed,
    _honest_shape,
    _polya_differences,
    _stream,
)
from .collusion import committee_size
from .samplers import RealLike, as_fraction

if TYPE_CHECKING:
    from mpc.arith.rng import CSPRNG
    from mpc.session import Session

__all__ = ["committee_bits", "committee_dlap", "draw_committee"]


#: The simulator sends the committee's m (n - 1) shares one by one up to this many messages (so
#: every party's view is the protocol's, the same as in a run across processes); above it, it
#: draws the parties' sums from their joint law (the same law, O(n) instead of O(m n) work: the
#: committee of 184 at n = 10^7 would be 1.8 x 10^9 messages). A run across processes always
#: sends them.
MESSAGES_SENT_LIMIT = 1 << 24


def committee_bits(n: int, m: int, bits: int) -> int:
    """Communication of :func:`committee_dlap`: m (n-1) l bits (each member shares with all)."""
    return m * (n - 1) * bits


def draw_committee(rng: CSPRNG, parties: ArrayLike, size: int) -> np.ndarray:
    """``size`` distinct parties drawn uniformly (public coin from ``rng``), in drawn order."""
    parties = np.asarray(parties, dtype=np.int64)
    return parties[_committee_positions(rng, parties.size, size)]


def _committee_positions(rng, n: int, size: int) -> np.ndarray:
    """Positions in the party list of the committee :func:`draw_committee` draws from ``rng``."""
    return rng.choice(n, min(int(size), n))


def committee_dlap(s: Session, scale: RealLike, *, parties: ArrayLike | None = None,
                   fail: float | Fraction = 2.0 ** -40, f_h: float | Fraction = 0.5,
                   size: int | None = None,
                   honest: int | None = None) -> tuple[np.ndarray, np.ndarray, bool]:
    """M_HF variant: a random committee draws discrete Laplace noise and shares it with all.

    Steps: (0) a committee Z of m = min(size, n) parties (default size: the
    paper's committee_size(fail, f_h)) is drawn with public coins (the session
    CSPRNG; a deployment would use a coin-flipping protocol); (1) member k
    draws c_k = Polya(1/h, a) - Polya(1/h, a), h = ``honest`` (default m: the
    paper's split, every member must be honest for epsilon); (2) member k
    additively shares c_k among all n parties and sends them their shares;
    (3) every party sums its m shares. Any h of the c_k sum to DLap(a).

    Execution: up to :data:`MESSAGES_SENT_LIMIT` messages, and always in a
    run across processes, every member draws its sharing and sends it
    (:func:`_committee_sent`). Above the limit the simulator batches
    (no loop over members or parties): m independent
    additive sharings of the c_k sum to an additive sharing of C = sum c_k
    (shares at P_1..P_n-1 uniform, at P_0 C minus them), so party j's sum
    is drawn directly as one sharing of C: n CSPRNG words instead of m n,
    exactly the protocol's law. The m (n - 1) messages are counted as sent
    in O(n + m) (bits, messages, per-party counters, one round); with
    ``record_views`` they are also drawn (:func:`_committee_messages`: the
    protocol's joint law of messages and results) and delivered. Results do
    not depend on ``record_views``.

    Cost: one round, m (n-1) l bits (O(n l)). Threat model M_HF: at most a
    (1 - f_H) fraction corrupted; :func:`noise.collusion.committee_plan`
    gives the h that holds except with probability ``fail``.
    Returns ``(shares, committee, exact)``.
    """
    s = _check_session(s)
    P = _check_parties(s, parties)
    m = committee_size(fail, f_h) if size is None else acc.check_n(size, "size")
    scale = as_fraction(scale, "scale")
    ring, net = s.ring, s.net
    n = P.size
    pos = _committee_positions(s.agreed(s.rng.derive("noise", "committee",
                                                     int(s.rng.uint64()))), n, m)
    Z = P[pos]                                              # = draw_committee(...) on that stream
    m = Z.size
    r = _honest_shape(honest, m)
    rng = _stream(s, "committee")
    c = _encode_signed(ring, _polya_differences(r, scale, m, rng), "Polya difference")
    if n > 1 and (net.link is not None or m * n <= MESSAGES_SENT_LIMIT):
        return _committee_sent(s, P, Z, pos, c, rng), Z, True
    out = additive_share(ring, ring.sum(c), n, rng)          # (n,): party j's sum of m shares
    if n > 1:
        if net.record_views:
            M = _committee_messages(ring, c, out, rng.derive("messages"))
            keep = np.ones((m, n), dtype=bool)
            keep[np.arange(m), pos] = False                  # a member keeps its own share
            with net.round():
                net.send(np.broadcast_to(Z[:, None], (m, n))[keep],
                         np.broadcast_to(P[None, :], (m, n))[keep], M[keep], ring.bits)
        else:
            _count_committee_traffic(net, P, pos, ring.bits)
    return out, Z, True


def _committee_sent(s, P, Z, pos, c, rng) -> np.ndarray:
    """The protocol as its members run it when the parties live in several processes.

    Member k shares c_k among the n parties (row k of M, drawn from the
    members' stream: every process draws every row and uses its own
    members'), sends M[k, j] to party j (one round, m (n - 1) messages),
    and party j sums its column. The same law as the simulator's direct
    draw of the column sums (:func:`committee_dlap`), and the same counts,
    with every message on the wire: O(m n) work and memory.
    """
    ring, net = s.ring, s.net
    m, n = Z.size, P.size
    M = additive_share(ring, c, n, rng.derive("member-shares")).T.copy()   # (m, n)
    keep = np.ones((m, n), dtype=bool)
    keep[np.arange(m), pos] = False                          # a member keeps its own share
    rows = M[keep]
    with net.round():
        net.send(np.broadcast_to(Z[:, None], (m, n))[keep],
                 np.broadcast_to(P[None, :], (m, n))[keep], rows, ring.bits)
    M[keep] = rows                                           # what each party received
    return ring.sum(M, axis=0)


def _committee_messages(ring, c: np.ndarray, out: np.ndarray, rng) -> np.ndarray:
    """``(m, n)`` shares, uniform given row sums ``c`` (member k's sharing) and column sums ``out``.

    The (m-1) x (n-1) block is uniform, column 0 closes rows 0..m-2, row m-1
    closes the columns (a bijection onto that fiber): with ``out`` a sharing
    of sum(c), exactly m independent additive sharings of the c_k.
    """
    m, n = c.size, out.size
    M = np.empty((m, n), dtype=np.uint64)
    M[:m - 1, 1:] = rng.ring_elements(ring, (m - 1, n - 1))
    M[:m - 1, 0] = ring.sub(c[:m - 1], ring.sum(M[:m - 1, 1:], axis=1))
    M[m - 1] = ring.sub(out, ring.sum(M[:m - 1], axis=0))
    return M


def _count_committee_traffic(net, P: np.ndarray, pos: np.ndarray, bits: int) -> None:
    """Count m (n-1) messages of ``bits`` from the members ``P[pos]`` to every other party of P.

    One round in the current phase, O(n + m): a :class:`mpc.comm.network.Traffic`
    on P (a member sends n-1 messages and receives m-1, any other party
    receives m). Not inside an open round block (``Network.absorb``).
    """
    n, m = P.size, pos.size
    sent = np.zeros(n, dtype=np.int64)
    sent[pos] = (n - 1) * bits
    received = np.full(n, m * bits, dtype=np.int64)
    received[pos] -= bits
    key = net.current_phase
    cell = (m * (n - 1) * bits, m * (n - 1), 1, sent, received)
    net.absorb(Traffic(n, (), {key: cell}, 1), P)
