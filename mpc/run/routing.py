"""Routing one exchange between processes: which rows leave, which arrive, where they land.

A protocol step sends *message batches* (``senders``, ``receivers``,
``payload`` with one row per message; :class:`mpc.comm.network.Network`). Every
process runs the same step on the same public routing, with the payload
rows of its local senders computed and the other rows unknown to it. For
one round, :class:`Exchange` collects the batches and then, per peer
process q:

- *out*: the rows whose sender is local and whose receiver is held by q,
  packed at the batch's element width (:func:`mpc.wire.frames.pack`), one frame
  per batch that has any;
- *expected*: the rows whose receiver is local and whose sender is held
  by q: their number, dtype and shape follow from the public routing, so
  the frame is checked before anything is allocated;

and after the transport's exchange it writes every received row into the
payload array it was sent in (*in place*), so the protocol reads what each
local receiver got from the same array after the round. Rows whose sender
and receiver are both remote are left as they were: nobody here may use
them.

Cost per batch of m messages: O(m) mask and gather work per peer process,
no Python loop over messages.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from mpc.wire import frames as fr
from mpc.wire.transport import Expected, Outgoing


@dataclass
class _Fill:
    """Where the rows of one expected frame land."""

    target: np.ndarray          # the payload array (written in place)
    index: object               # what ``target[index] = rows`` takes
    receivers: np.ndarray | None  # receiver id of each row (views), or None
    senders: np.ndarray | None
    single: tuple | None        # (sender, receiver) of a one-message batch
    first: bool = False         # a broadcast: keep one of the identical copies per row


class Exchange:
    """The cross-process part of one round (see the module docstring)."""

    def __init__(self, placement, op: int = 0):
        self.pl = placement
        self.op = op            # the tag of the round's operation (every frame carries it)
        self.out: dict[int, list] = {}
        self.expect: dict[int, list] = {}
        self.fills: dict[int, list] = {}
        self.records: list = []  # (fill, phase, round, offline) for recorded views

    def __bool__(self) -> bool:
        return bool(self.out) or bool(self.expect)

    def _add_out(self, q, arr, bits):
        frames = self.out.setdefault(int(q), [])
        frames.append(Outgoing(len(frames), arr.dtype, int(bits), arr.shape, fr.pack(arr, bits),
                               self.op))

    def _add_in(self, q, dtype, bits, shape, fill):
        specs = self.expect.setdefault(int(q), [])
        specs.append(Expected(len(specs), np.dtype(dtype), int(bits), tuple(shape),
                              _landing(fill, dtype, bits, shape), self.op))
        self.fills.setdefault(int(q), []).append(fill)
        return fill

    # -- batches ----------------------------------------------------------------------------------
    def single(self, s: int, r: int, payload: np.ndarray, bits: int) -> _Fill | None:
        """One message, the whole ``payload``, from participant s to r. Returns its fill or None."""
        owner, rank = self.pl.owner, self.pl.rank
        so, ro = int(owner[s]), int(owner[r])
        if so == rank and ro != rank:
            self._add_out(ro, payload, bits)
        elif ro == rank and so != rank:
            _writable(payload, s)
            return self._add_in(so, payload.dtype, bits, payload.shape,
                                _Fill(payload, Ellipsis, None, None, (s, r)))
        return None

    def batch(self, s: np.ndarray | int, r: np.ndarray | int, payload: np.ndarray, bits: int,
              m: int) -> list[_Fill]:
        """m messages, row i of ``payload`` from ``s[i]`` to ``r[i]`` (either may be one id)."""
        owner, rank = self.pl.owner, self.pl.rank
        so = np.broadcast_to(owner[s], (m,))
        ro = np.broadcast_to(owner[r], (m,))
        mine_s, mine_r = so == rank, ro == rank
        out_rows = mine_s & ~mine_r
        in_rows = mine_r & ~mine_s
        fills: list[_Fill] = []
        if out_rows.any():
            for q in np.unique(ro[out_rows]).tolist():
                idx = np.flatnonzero(out_rows & (ro == q))
                self._add_out(q, payload[_as_slice(idx)], bits)
        if in_rows.any():
            _writable(payload, s)
            ss, rr = np.broadcast_to(s, (m,)), np.broadcast_to(r, (m,))
            for q in np.unique(so[in_rows]).tolist():
                idx = np.flatnonzero(in_rows & (so == q))
                fills.append(self._add_in(q, payload.dtype, bits,
                                          (idx.size,) + payload.shape[1:],
                                          _Fill(payload, idx, rr[idx], ss[idx], None)))
        return fills

    def _spread(self, P: np.ndarray) -> tuple[np.ndarray, list]:
        """(this process's positions in P, [(q, the positions process q owns)] for every other
        process q owning some of P) of a step from every P[i] to every other P[j]; no peers
        when this process owns none of P (it neither sends nor receives)."""
        own = self.pl.owner[P]
        rank = self.pl.rank
        mine = np.flatnonzero(own == rank)
        if mine.size == 0:
            return mine, []
        return mine, [(q, np.flatnonzero(own == q)) for q in np.unique(own[own != rank]).tolist()]

    def all_to_all(self, P: np.ndarray, payload: np.ndarray, bits: int) -> list[_Fill]:
        """``payload[i, j]`` from ``P[i]`` to ``P[j]`` for every i != j."""
        mine, peers = self._spread(P)
        for q, theirs in peers:
            self._add_out(q, payload[np.ix_(mine, theirs)], bits)
        return self._inbound(P, mine, peers, payload, bits, first=False)

    def broadcast(self, P: np.ndarray, rows: np.ndarray, bits: int) -> list[_Fill]:
        """``rows[i]`` from ``P[i]`` to every other ``P[j]``: one copy per receiving participant."""
        mine, peers = self._spread(P)
        for q, theirs in peers:
            copies = np.broadcast_to(rows[mine][:, None], (mine.size, theirs.size) + rows.shape[1:])
            self._add_out(q, copies, bits)
        return self._inbound(P, mine, peers, rows, bits, first=True)

    def _inbound(self, P: np.ndarray, mine: np.ndarray, peers: list, target: np.ndarray,
                 bits: int, first: bool) -> list[_Fill]:
        """The fills of what each peer sends to this process's positions ``mine`` of P:
        ``target[theirs, mine]`` (all to all) or, ``first``, the rows ``target[theirs]`` of
        which each receiver keeps one copy (broadcast)."""
        if peers:
            _writable(target, P[0])
        fills: list[_Fill] = []
        for q, theirs in peers:
            shape = (theirs.size, mine.size) + target.shape[1 if first else 2:]
            ss = np.broadcast_to(P[theirs][:, None], shape[:2])
            rr = np.broadcast_to(P[mine][None, :], shape[:2])
            index = theirs if first else np.ix_(theirs, mine)
            fills.append(self._add_in(q, target.dtype, bits, shape,
                                      _Fill(target, index, rr, ss, None, first=first)))
        return fills

    # -- delivery ----------------------------------------------------------------------------
    def deliver(self, got: dict) -> None:
        """Write every received frame into its payload array (in place)."""
        for q, arrays in got.items():
            for fill, arr in zip(self.fills[q], arrays):
                if arr is not None:             # None: received in place (_landing)
                    fill.target[_as_slice(fill.index)] = arr[:, 0] if fill.first else arr


def _landing(fill: _Fill, dtype, bits, shape):
    """The bytes of the target rows a frame fills, when the transport may receive into them
    directly: full-width elements, rows that are one contiguous block of the target."""
    dtype = np.dtype(dtype)
    if fill.first or bits != dtype.itemsize * 8 or fill.target.dtype != dtype:
        return None
    index = fill.index if fill.index is Ellipsis else _as_slice(fill.index)
    if not (index is Ellipsis or isinstance(index, slice)):
        return None
    region = fill.target[index]
    if not region.flags.c_contiguous or not region.flags.writeable \
            or region.shape != tuple(shape):
        return None
    return region.reshape(-1).view(np.uint8)


def _as_slice(index):
    """A run of consecutive row indices as a slice (a memcpy instead of a gather-scatter)."""
    if isinstance(index, np.ndarray) and index.ndim == 1 and index.size \
            and index[-1] - index[0] + 1 == index.size:
        return slice(int(index[0]), int(index[-1]) + 1)
    return index


def _writable(payload: np.ndarray, sender) -> None:
    if not payload.flags.writeable:
        raise ValueError(
            "a payload that receives rows from another process must be a writable array (the "
            "received rows are written into it); got a read-only view (np.broadcast_to?) "
            f"for messages from participant {np.asarray(sender).ravel()[:1].tolist()}")


class Link:
    """A network's way out of its process: the run's placement, transport and step counter.

    Sub-networks (chunks) share the transport and the counter, so every
    process numbers the run's exchanges the same way (the frames carry it).
    """

    def __init__(self, placement, transport, counter=None):
        self.placement = placement
        self.transport = transport
        self._counter = counter if counter is not None else [0]

    def sub(self, ids: ArrayLike) -> Link:
        """The link of a sub-network whose participant i is this one's ``ids[i]``."""
        return Link(self.placement.sub(ids), self.transport, self._counter)

    def exchange(self, op: str = "") -> Exchange:
        """A new, empty exchange for one round of this link's network; ``op``: the name of the
        operation that runs it (its tag travels in every frame: :func:`mpc.wire.frames.op_tag`)."""
        return Exchange(self.placement, fr.op_tag(op) if op else 0)

    def next_step(self) -> int:
        self._counter[0] += 1
        return self._counter[0]

    def run(self, exchange: Exchange) -> None:
        """Number the step and, if this process sends or receives in it, exchange and deliver."""
        step = self.next_step()
        if exchange:
            exchange.deliver(self.transport.exchange(step, exchange.out, exchange.expect))
