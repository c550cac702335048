"""Making secure values and opening them: inputs, constants, shares made elsewhere, outputs.

- :func:`input_values` (``session.input``): parties secret-share their own rows among
  the holders, each checking its values against the public bound (one round);
- :func:`constant`: a public value as a secure value among given holders (no message);
- :func:`from_shares`: additive shares made elsewhere (e.g. distributed noise,
  :class:`noise.shares.NoiseShares`) as a secure value, in an explicit unit (no message);
- :func:`output_values` (``session.output``): a value opened to its receivers (one
  round); elsewhere a :class:`NotReceived` that refuses to be used (:func:`received`
  tests it).

Cost and threat model: in each function's docstring; the only openings of secure values
are in :func:`output_values`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

import mpc.values.arrays as _arrays
from mpc.values.operands import exact_at, show
from mpc.values.secure_array import SecureArray

if TYPE_CHECKING:
    from mpc.session import Session

__all__ = ["NotReceived", "constant", "from_shares", "input_values", "output_values",
           "received"]


# -- values made here: constants and shares made elsewhere ----------------------------------
def constant(session: Session, value: ArrayLike, holders: ArrayLike,
             frac_bits: int | None = None) -> SecureArray:
    """A secure value holding the public ``value`` among ``holders`` (no message; holder 0's
    share is the encoding): :func:`mpc.values.arrays.public_like`. ``frac_bits``: the unit (default
    0 for integers, the session's for floats); a value an explicit ``frac_bits`` does not hold
    exactly (0.01 at 4 fractional bits) raises ValueError instead of rounding."""
    if frac_bits is not None and not exact_at(np.asarray(value), int(frac_bits)):
        raise ValueError(f"constant {show(value)} is not exact at {int(frac_bits)} fractional "
                         "bits: pass the scale that holds it (frac_bits=)")
    h = np.atleast_1d(np.asarray([session.participant(x) for x in np.atleast_1d(holders)]))
    empty = SecureArray(session, np.zeros((h.size, 1), dtype=np.uint64), h, bound=0)
    return _arrays.public_like(empty, value, frac_bits)



def from_shares(session: Session, shares: Any, holders: ArrayLike, *, frac_bits: int,
                bound: float | None = None) -> SecureArray:
    """A secure value from additive shares made elsewhere (e.g. distributed noise), in an
    explicit unit.

    ``shares``: ``uint64 (p, *shape)``, row j held by ``holders[j]``, or an
    object with ``.shares`` and, when it states them, ``.frac_bits`` (its
    unit) and ``.bound`` (|secret| bound in its ring units), such as
    :class:`noise.shares.NoiseShares`. ``frac_bits`` (required): the scale of
    the result; the secret is ``signed(sum of shares) / 2^frac_bits``. Shares
    that state a lower unit are converted up exactly (a public factor
    2^d, no message); a higher one raises (it would drop fractional bits,
    e.g. wrapping noise at 14 fractional bits as integers multiplies it by
    2^14). ``bound``: public bound on |secret| in real units (default: the
    stated one, else the ring's range). Cost: local, no message. Threat model:
    whatever produced the shares; nothing is opened.
    """
    arr, unit, stated = shares, None, None
    if hasattr(shares, "shares"):
        arr, unit, stated = shares.shares, getattr(shares, "frac_bits", None), \
            getattr(shares, "bound", None)
    frac_bits = int(frac_bits)
    unit = frac_bits if unit is None else int(unit)
    if unit > frac_bits:
        raise ValueError(f"the shares are in units of 2^-{unit} (frac_bits={unit}); "
                         f"frac_bits={frac_bits} would drop {unit - frac_bits} fractional bits "
                         f"and scale the secret by 2^{unit - frac_bits}: pass frac_bits={unit}")
    ring = session.ring
    if bound is not None:
        bound_ring: int | None = math.ceil(float(bound) * (1 << unit))
    else:
        bound_ring = None if stated is None else math.ceil(float(stated))
    x = SecureArray(session, np.asarray(arr, dtype=np.uint64) & ring.mask, holders,
                    frac_bits=unit, bound=bound_ring)
    return x if unit == frac_bits else x._rescaled(frac_bits)



# -- input and output ------------------------------------------------------------------------------
def input_values(session: Session, values: ArrayLike | None, by: ArrayLike, *,
                 holders: ArrayLike | None = None, bound: float | None = None,
                 frac_bits: int = 0) -> SecureArray:
    """Parties ``by`` secret-share their inputs among ``holders`` (one round).

    ``values``: ``(len(by), *shape)``, row j given by party ``by[j]`` (only
    the rows of parties local to this process are read; pass None or zeros
    for the others). ``holders``: who holds the shares (default ``by``,
    which must then name at least two parties). ``bound``: public bound on
    |value|, inclusive (default 2^(l-2) / 2^frac_bits, so that a difference of two
    inputs stays comparable); each party checks its own values against it
    and against the ring (ValueError naming the party). ``frac_bits``: the
    fixed-point scale of the inputs (0: integers).
    Cost: one round; each party sends (p - 1) l bits per element (none to
    itself when it is a holder). Shares come from the session's input
    streams, a fresh derivation per call.
    """
    by = np.atleast_1d(np.asarray(by))
    if by.dtype.kind not in "iu" or by.ndim != 1 or by.size == 0:
        raise TypeError(f"by must be party ids, got {by!r}")
    session.net._ids(by, "by")
    holders = by if holders is None else np.atleast_1d(np.asarray(
        [session.participant(h) for h in np.atleast_1d(holders)]))
    if holders.size < 2:
        raise ValueError("a secret needs at least two holders: name them with holders=")
    if np.unique(holders).size != holders.size:
        raise ValueError("holders must be distinct")
    ring = session.ring
    frac_bits = int(frac_bits)
    lim = 1 << (ring.bits - 1)
    if bound is None:
        bound_ring = 1 << (ring.bits - 2)
    else:
        bound_ring = math.floor(float(bound) * (1 << frac_bits))
        if bound_ring <= 0 or bound_ring >= lim:
            raise ValueError(f"bound {bound!r} must be positive and below 2^{ring.bits - 1} at "
                             f"{frac_bits} fractional bits")
    local = np.asarray(session.net.is_local(by), dtype=bool)
    if values is None:
        if local.any():
            raise ValueError(f"values is None but parties {by[local].tolist()} run here")
        arr = None
    else:
        arr = np.asarray(values)
        if arr.ndim < 1 or arr.shape[0] != by.size:
            raise ValueError(f"values must have one row per party of by ({by.size}), got "
                             f"shape {arr.shape}")
    if arr is None:
        raise ValueError("values is None in a process that inputs nothing: pass an array of "
                         "zeros with the public shape")
    enc = _encode_inputs(arr, local, by, frac_bits, bound_ring, ring)
    p = holders.size
    rng = session.stream("input")
    S = np.empty((p,) + enc.shape, dtype=np.uint64)             # S[i, j]: holder i's share of row j
    S[1:] = rng.ring_elements(ring, (p - 1,) + enc.shape)
    S[0] = (enc - S[1:].sum(axis=0, dtype=np.uint64)) & ring.mask
    net = session.net
    partial = []                    # rows sent to a holder that is itself one of the inputters
    with net.round():
        for i in range(p):                                      # loop over the holders (few)
            send = np.flatnonzero(by != holders[i])
            if send.size == by.size:
                net.send(by, int(holders[i]), S[i], ring.bits)
            elif send.size:
                rows = S[i][send]
                partial.append((i, send, rows))
                net.send(by[send], int(holders[i]), rows, ring.bits)
    for i, send, rows in partial:                               # what those holders received
        S[i][send] = rows
    return SecureArray(session, S, holders, frac_bits=frac_bits, bound=bound_ring)


def _encode_inputs(arr, local, by, frac_bits, bound_ring, ring):
    enc = np.zeros(arr.shape, dtype=np.uint64)
    if not local.any():
        return enc
    rows = arr[local]
    if rows.dtype.kind == "f":
        if not np.all(np.isfinite(rows)):
            bad = by[local][~np.all(np.isfinite(rows.reshape(rows.shape[0], -1)), axis=1)][0]
            raise ValueError(f"values of party {int(bad)} are not finite")
        scaled = np.rint(rows * float(1 << frac_bits)).astype(np.int64)
    elif rows.dtype.kind in "iub":
        scaled = rows.astype(np.int64) << frac_bits
    else:
        raise TypeError(f"values must be numeric, got {rows.dtype}")
    mag = np.abs(scaled).reshape(scaled.shape[0], -1).max(axis=1) if scaled.size else \
        np.zeros(scaled.shape[0], np.int64)
    over = mag > bound_ring
    if over.any():
        who = int(by[local][over][0])
        raise ValueError(f"values of party {who} exceed the input bound: |value| <= "
                         f"{bound_ring / (1 << frac_bits):g} is required (bound=), at "
                         f"{frac_bits} fractional bits in Z_2^{ring.bits}")
    enc[local] = scaled.astype(np.uint64) & ring.mask
    return enc


def output_values(session: Session, x: SecureArray,
                  to: int | str | Sequence[int | str] | None = None
                  ) -> np.ndarray | NotReceived:
    """Open ``x`` to ``to`` (a participant id, a role name, a list of them; default: every
    holder), one round: each holder sends its share to every receiver but itself.

    Returns the values (float64 at scale > 0, int64 at scale 0; signed) in
    processes where a receiver runs; elsewhere a :class:`NotReceived`, which
    refuses to be used (truth value, comparison, arithmetic, indexing: a
    branch on it would silently diverge from the receivers' program) and
    travels back from :func:`mpc.run.launch.launch` as None; test it with
    :func:`received`. Raises ValueError, before any message, if the value's
    tracked bound exceeds the ring's signed range (it may have wrapped).
    Cost: one round, (p - 1) l bits per element to a receiver that holds a
    share, p l to one that does not.
    """
    if not isinstance(x, SecureArray):
        raise TypeError(f"output takes a SecureArray, got {type(x).__name__}")
    _check_openable(x)
    if to is None:
        receivers = np.unique(x.holders)
    else:
        items: Iterable[Any] = to if isinstance(to, (list, tuple, np.ndarray, range)) else [to]
        receivers = np.array([session.participant(t) for t in items], dtype=np.int64)
    net = session.net
    ring = x.ring
    width = ring.bits
    sh = x._shares.copy()           # the receivers' copies of every share (written in place)
    h = x.holders
    partial = []
    with net.round():
        for r in receivers.tolist():
            for j in range(x.p):                               # loop over the holders (few)
                hj = h[j]
                if hj.ndim == 0:
                    if int(hj) != r:
                        net.send(int(hj), r, sh[j, ...], width)    # a view, also for 0-d values
                else:
                    keep = np.flatnonzero(hj.reshape(-1) != r)
                    if keep.size:
                        rows = sh[j].reshape(-1)[keep]
                        partial.append((j, keep, rows))
                        net.send(hj.reshape(-1)[keep], r, rows, width)
    for j, keep, rows in partial:
        sh[j].reshape(-1)[keep] = rows
    if not np.any(net.is_local(receivers)):
        return NotReceived(receivers.tolist(), x.shape)
    if x.kind == "xor":
        return np.bitwise_xor.reduce(sh, axis=0)
    total = sh.sum(axis=0, dtype=np.uint64) & ring.mask
    signed = ring.to_signed(total)
    if x.frac_bits:
        return signed.astype(np.float64) / float(1 << x.frac_bits)
    return signed


class NotReceived:
    """What :func:`output_values` returns in a process where no receiver of the output runs.

    Any use that would decide something from the value (``bool``, ``==``,
    ``<``, arithmetic, indexing, ``len``, numpy conversion) raises TypeError
    naming the receivers: the processes that hold them took their branch on
    the real value, and a silent default here would make this one diverge.
    Pickled (e.g. returned from a launched program) it becomes None.
    """

    __slots__ = ("receivers", "shape")

    def __init__(self, receivers: list, shape: tuple):
        self.receivers = receivers
        self.shape = shape

    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise TypeError(f"this process did not receive this output (opened to participant(s) "
                        f"{self.receivers}, which run elsewhere): it has no value to branch or "
                        "compute on here; open it to this process too (output(..., to=...)) or "
                        "test mpc.values.received(out) first")

    __bool__ = __len__ = __iter__ = __getitem__ = __array__ = __index__ = __int__ = _refuse
    __float__ = __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __floordiv__ = __neg__ = __abs__ = _refuse
    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple:
        return (_none, ())

    def __repr__(self) -> str:
        return f"NotReceived(receivers={self.receivers}, shape={self.shape})"


def _none() -> None:
    return None


def received(out: Any) -> bool:
    """Whether ``out`` (what :func:`output_values` returned) is a value this process received."""
    return not isinstance(out, NotReceived)


def _check_openable(x: SecureArray) -> None:
    """Refuse to open an additive value whose tracked bound exceeds the ring's signed range (it may
    have wrapped: opening would print a wrong number). Values made without a bound carry the
    ring's range itself (2^(l-1)) and pass; no share is read."""
    l = x.ring.bits
    if x.kind != "additive" or x.bound <= 1 << (l - 1):
        return
    raise ValueError(
        f"output refused: the value's tracked bound needs {x.bound.bit_length() + 1} bits "
        f"(|value| < 2^{math.log2(x.bound):.1f} ring units at {x.frac_bits} fractional bits) "
        f"and Z_2^{l} holds {l} bits signed, so it may have wrapped; use a wider ring "
        "(Session(bits=...)), tighter input bounds, or fewer fractional bits")

