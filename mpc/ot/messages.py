"""One message per OT group, of the group's size, sent with its real bytes.

The OT protocols send, in one step, one message per group (an ordered pair
of parties with its M OTs): the B points of its base OTs, its corrections,
its IKNP matrix. Groups differ in size, and a network batch carries rows of
one shape, so the groups of one size go in one batch (one
:meth:`mpc.comm.network.Network.send` per distinct size: as many messages, bits
and rounds as one message per group, with no loop over groups).

In a run of several processes the receiver's rows are written into the
payload array at the end of the round (:mod:`mpc.run.routing`), so the payload
must be the array the receiver reads afterwards: a *view* of the caller's
flat array when the groups of a size lie back to back (the usual case: one
pair, or groups of equal size), else a gathered copy that :meth:`Landing.land`
writes back into the flat array after the round.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from mpc.comm.network import Network


class Landing:
    """Copies to write back into their source after the round (see the module docstring)."""

    __slots__ = ("_backs",)

    def __init__(self):
        self._backs: list[Callable[[], object]] = []

    def keep(self, write_back: Callable[[], object]) -> None:
        self._backs.append(write_back)

    def land(self) -> None:
        """After the round: the received rows, in the caller's arrays."""
        for write_back in self._backs:
            write_back()
        self._backs = []


def send_groups(net: Network, senders: np.ndarray, receivers: np.ndarray, flat: np.ndarray,
                counts: np.ndarray, *, offline: bool | None,
                landing: Landing | None = None) -> Landing:
    """Group g sends its ``counts[g]`` consecutive rows of ``flat`` as one message.

    ``flat``: ``uint8 (sum(counts), *row)``; each byte is sent and counted as
    8 bits, so a group's message is ``8 counts[g] row_bytes`` bits.
    ``senders``/``receivers``: ``(G,)`` party ids. Returns the
    :class:`Landing` to call after the round.
    """
    landing = Landing() if landing is None else landing
    counts = np.asarray(counts, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    row = flat.shape[1:]
    for k in np.unique(counts).tolist():              # loop over distinct sizes (few)
        sel = np.flatnonzero(counts == k)
        first = int(starts[sel[0]])
        if sel[-1] - sel[0] + 1 == sel.size:          # back to back: a view, filled in place
            payload = flat[first:first + k * sel.size].reshape((sel.size, k) + row)
        else:
            idx = (starts[sel][:, None] + np.arange(k)).reshape(-1)
            payload = flat[idx].reshape((sel.size, k) + row)
            landing.keep(_writer(flat, idx, payload))
        net.send(senders[sel], receivers[sel], payload, 8, offline=offline)
    return landing


def _writer(target, index, payload):
    def write_back():
        target[index] = payload.reshape((-1,) + target.shape[1:])
    return write_back
