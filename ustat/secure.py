"""Secure operations on shared values of a batch of edges: what kernels are built from.

A :class:`SecureOps` context belongs to one batch of edges of a hypergraph:
``holders`` is the ``(k, m)`` array of the members of m edges, and every
shared value is a plain ``uint64`` array of shape ``(k, m)`` whose row j is
held by member ``holders[j]`` (a k-of-k additive sharing in Z_2^l). Values are
fixed point with ``c`` fractional bits (``ops.fp``) unless an operation says
it returns an *integer* (comparison results are 0/1 or -1/0/1 as plain ring
integers); :meth:`SecureOps.to_fixed` converts an integer to fixed point.
Numeric inputs arrive encoded with ``ops.input_fp``: the same as ``ops.fp``
for arithmetic kernels, more fractional bits for order kernels, which only
take signs of input combinations (:mod:`ustat.umpc.precision`); a kernel that
mixes an input-scale value into its output must be declared arithmetic.

Operations and their costs (per edge, k members, l-bit ring):

- ``add``, ``sub``, ``neg``, ``scale`` (by a public integer), ``const``,
  ``to_fixed``: local, free.
- ``less_than``, ``greater_than``, ``equal``, ``sign``, ``abs``,
  ``in_interval``: for k = 2 one FSS gate (:mod:`fss.gates`: one online
  round, l bits per member; ``abs`` adds a Beaver round; with a public
  ``bound`` on the operand the comparison runs on d = c_in + ceil(log2
  bound) + 2 bits instead of l); for k > 2 the
  p-party masked-opening circuit of :mod:`mpc.protocols.compare` (about 8 rounds),
  because two FSS key holders who collude would learn the compared value.
  The ``*_many`` forms evaluate several gates of one kind in the same rounds.
- ``mul``: Beaver multiplication (:mod:`mpc.protocols.beaver`), one round, each member
  sends 2 (k-1) l bits; ``mul_many`` batches several products in one round.
  ``mul`` multiplies ring integers: the product of two fixed-point values
  carries 2c fractional bits, so kernels multiply integer-valued gate outputs
  (or one integer by one fixed-point value) and never need truncation.

Threat model (inherited from the gates and Beaver): static semi-honest
adversary corrupting up to k-1 members of an edge, trusted dealer; for k > 2
no intermediate value is revealed unless all k members collude.
"""

from __future__ import annotations

import collections
import math
import numbers
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from fss import gates as fss_gates
from mpc.protocols import compare as circuit_gates
from mpc.protocols.beaver import multiply
from mpc.protocols.dealer import check_holders

if TYPE_CHECKING:
    from mpc.arith.ring import FixedPoint
    from mpc.session import Session


def narrow_bits(input_frac_bits: int, bound: float | None, ring_bits: int) -> int | None:
    """Bits that hold a gate operand with |a| <= ``bound`` input units, or None (the ring's).

    ``bound``: a public bound on the operand's magnitude in the units of the
    numeric inputs (which lie in [0, 1]; e.g. 1 for x - y, 2 for x + y - 2 z),
    or None. The operand, an integer combination of inputs encoded with c_in
    fractional bits, is then at most 2^(c_in + ceil(log2 bound)) in magnitude,
    so d = c_in + ceil(log2 bound) + 2 bits hold it with a bit to spare and a
    comparison gate can work on d bits instead of l (fewer DCF levels, d bits
    sent per member). None when ``bound`` is None or d >= l.
    """
    if bound is None:
        return None
    if isinstance(bound, bool) or not isinstance(bound, numbers.Real) \
            or not math.isfinite(bound) or bound <= 0:
        raise ValueError(f"bound must be a positive finite number, got {bound!r}")
    d = max(2, input_frac_bits + math.ceil(math.log2(bound)) + 2)
    return d if d < ring_bits else None


class PrepTape:
    """A batch's dealer preprocessing, dealt ahead by a planning pass and used in the same order.

    A :class:`SecureOps` given a recording tape *plans*: every gate and
    product deals its offline part (:func:`fss.gates.prepare`, Beaver
    triples) onto the tape and returns zero shares of the right shape, with
    no online work and no traffic but the dealer's. The tape then
    :meth:`replay` s: a second :class:`SecureOps` on the same session runs the
    kernel on the real shares, each operation taking its dealt part instead of
    dealing. A kernel's secure function is data-oblivious (the sequence of
    operations and their shapes never depends on share values), so the
    dealer draws the same values in the same order as in a single pass and
    the outputs and every traffic count are the same bits; a mismatch (an
    operation or shape the plan did not see) raises. Only FSS comparisons
    (k = 2) and products can be planned.
    """

    def __init__(self) -> None:
        self._items: collections.deque[tuple[tuple, Any]] = collections.deque()
        self.recording = True

    def record(self, key: tuple, prep: Any) -> None:
        self._items.append((key, prep))

    def replay(self) -> PrepTape:
        """Switch from recording to replaying; returns the tape."""
        self.recording = False
        return self

    def take(self, key: tuple) -> Any:
        """The next dealt part, which must belong to an operation ``key`` (name, shape, options)."""
        if self.recording:
            raise RuntimeError("the tape is still recording: call replay() first")
        if not self._items:
            raise RuntimeError(f"the kernel ran {key} after the operations it planned: its "
                               "secure evaluation is not data-oblivious")
        planned, prep = self._items.popleft()
        if planned != key:
            raise RuntimeError(f"the kernel ran {key} where it planned {planned}: its secure "
                               "evaluation is not data-oblivious")
        return prep

    def __len__(self) -> int:
        return len(self._items)


class SecureOps:
    """Secure operations on ``(k, m)`` shares held by the members of m edges.

    ``tape``: a :class:`PrepTape` to plan onto (recording) or take the dealt
    preprocessing from (replaying); None deals as it goes.
    """

    def __init__(self, session: Session, holders: np.ndarray, comparison: str = "auto", *,
                 input_fp: FixedPoint | None = None, tape: PrepTape | None = None):
        self.session = session
        self.ring = session.ring
        self.fp = session.fp
        self.input_fp = session.fp if input_fp is None else input_fp
        self.holders = np.asarray(holders, dtype=np.int64)
        if self.holders.ndim != 2:
            raise ValueError(f"holders must have shape (k, m), got {self.holders.shape}")
        self.k, self.m = self.holders.shape
        if comparison not in ("auto", "fss", "circuit"):
            raise ValueError(f"comparison must be 'auto', 'fss' or 'circuit', got {comparison!r}")
        if comparison == "auto":
            comparison = "fss" if self.k == 2 else "circuit"
        self.comparison = comparison
        self._gates = fss_gates if comparison == "fss" else circuit_gates
        # FSS key generation and evaluation threads: the session's ``workers``
        # (1 inside a chunk that already runs in parallel; None: fss's default)
        workers = getattr(session, "workers", None)
        self._gate_kw = {"workers": workers} if comparison == "fss" and workers else {}
        if tape is not None and comparison != "fss":
            raise ValueError("only FSS comparisons (k = 2) can be planned on a PrepTape")
        self.tape = tape

    # -- local linear operations --------------------------------------------------
    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self.ring.add(a, b)

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self.ring.sub(a, b)

    def neg(self, a: np.ndarray) -> np.ndarray:
        return self.ring.neg(a)

    def scale(self, factor: int, a: np.ndarray) -> np.ndarray:
        """Multiply a shared value by a public integer."""
        return self.ring.smul(factor, a)

    def const(self, value: ArrayLike, fixed: bool = True, *,
              scale: str | None = None) -> np.ndarray:
        """A public constant as a sharing (member 0 holds it, the others 0).

        ``fixed=True`` encodes a real in fixed point, at ``scale``:
        ``"input"`` (``ops.input_fp``: to combine with the inputs, e.g. compare
        x - 1.0) or ``"output"`` (``ops.fp``: to add to a result). When the
        two differ (order kernels encode inputs with more fractional bits) the
        scale must be named: a constant at the wrong scale would silently
        compare or add a different number. ``fixed=False`` takes a ring
        integer (signed).
        """
        out = np.zeros((self.k, self.m), dtype=np.uint64)
        if fixed:
            fp = const_scale(value, scale, self.input_fp, self.fp)
            out[0] = fp.encode(np.broadcast_to(np.asarray(value, float), (self.m,)))
        else:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"an integer constant is needed with fixed=False, got {value!r}")
            out[0] = self.ring.from_signed(np.full(self.m, int(value), dtype=np.int64))
        return out

    def to_fixed(self, a: np.ndarray, numerator: int = 1, log2_denominator: int = 0) -> np.ndarray:
        """Fixed-point sharing of ``a * numerator / 2^log2_denominator`` for an integer ``a``.

        Exact (local scaling by 2^(c - log2_denominator)); needs
        ``log2_denominator <= c``.
        """
        c = self.fp.frac_bits
        if log2_denominator > c:
            raise ValueError(f"log2_denominator must be <= frac_bits={c}")
        return self.ring.smul(numerator << (c - log2_denominator), a)

    def sum(self, values: Sequence[np.ndarray]) -> np.ndarray:
        out = values[0]
        for v in values[1:]:
            out = self.ring.add(out, v)
        return out

    # -- gates --------------------------------------------------------------------
    def _narrow(self, bound, gate=None) -> dict:
        """The gate's operand bound: ``in_bits`` of an FSS comparison (:func:`narrow_bits`), or
        the p-party circuit's ``bound`` (ring units) for less/greater_than. Without a kernel
        bound the operand is a combination of inputs whose magnitude the precision choice keeps
        below 2^(l-2) (:mod:`ustat.umpc.precision`)."""
        if self.comparison != "fss":
            if gate not in (circuit_gates.less_than, circuit_gates.greater_than):
                return {}
            l = self.ring.bits
            if bound is None:
                return {"bound": (1 << (l - 2)) - 1}
            return {"bound": min(int(math.ceil(bound * (1 << self.input_fp.frac_bits))),
                                 (1 << (l - 1)) - 1)}
        d = narrow_bits(self.input_fp.frac_bits, bound, self.ring.bits)
        return {} if d is None else {"in_bits": d}

    def _batched(self, gate: Any, operands: list, extra: tuple = (),
                 kw: dict | None = None) -> list[np.ndarray]:
        """Evaluate ``gate`` on several operand tuples in one call (one round)."""
        count = len(operands)
        holders = self.holders if count == 1 else np.tile(self.holders, (1, count))
        kw = dict(self._gate_kw, **(kw or {}))
        key = (gate.__name__, (self.m * count,), tuple(sorted(kw.items())))
        if self.tape is not None and self.tape.recording:
            batch = key[1]
            self.tape.record(key, fss_gates.prepare(gate, self.session, holders, batch, **kw))
            out = np.zeros((self.k,) + batch, dtype=np.uint64)
        else:
            if self.tape is not None:
                kw["prep"] = self.tape.take(key)
            cat = operands[0] if count == 1 else [
                np.concatenate([ops[i] for ops in operands], axis=1)
                for i in range(len(operands[0]))]
            out = gate(self.session, *cat, *extra, holders, **kw)
        return [out] if count == 1 else np.split(out, count, axis=1)

    def less_than(self, a: np.ndarray, b: np.ndarray, *, bound: float | None = None) -> np.ndarray:
        """Integer sharing of [a < b] (signed values; |a - b| < 2^(l-1)).

        ``bound``: a public bound on |a - b| in input units, which lets the
        FSS gate compare on fewer bits (:meth:`_narrow`); the same for every
        gate below that takes it.
        """
        return self.less_than_many([(a, b)], bound=bound)[0]

    def less_than_many(self, pairs: Iterable[tuple[np.ndarray, np.ndarray]], *,
                       bound: float | None = None) -> list[np.ndarray]:
        return self._batched(self._gates.less_than, list(pairs),
                             kw=self._narrow(bound, self._gates.less_than))

    def greater_than(self, a: np.ndarray, b: np.ndarray, *,
                     bound: float | None = None) -> np.ndarray:
        """Integer sharing of [a > b]."""
        return self._batched(self._gates.greater_than, [(a, b)],
                             kw=self._narrow(bound, self._gates.greater_than))[0]

    def equal(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Integer sharing of [a == b]."""
        return self.equal_many([(a, b)])[0]

    def equal_many(self, pairs: Iterable[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        return self._batched(self._gates.equal, list(pairs))

    def sign(self, a: np.ndarray, *, bound: float | None = None) -> np.ndarray:
        """Integer sharing of sign(a) in {-1, 0, 1} (``bound`` on |a|: :meth:`less_than`)."""
        return self.sign_many([a], bound=bound)[0]

    def sign_many(self, values: Iterable[np.ndarray], *,
                  bound: float | None = None) -> list[np.ndarray]:
        return self._batched(self._gates.sign, [(v,) for v in values], kw=self._narrow(bound))

    def abs(self, a: np.ndarray, *, bound: float | None = None) -> np.ndarray:
        """Sharing of |a| (same scale as a; ``bound`` on |a|: :meth:`less_than`)."""
        return self._batched(self._gates.abs_value, [(a,)], kw=self._narrow(bound))[0]

    def in_interval(self, a: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """Integer sharing of [lo <= a <= hi] for public ring integers lo, hi."""
        return self._batched(self._gates.in_interval, [(a,)], extra=(lo, hi))[0]

    # -- products -------------------------------------------------------------------
    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Sharing of a * b (Beaver; see the module note on scales)."""
        return self.mul_many([(a, b)])[0]

    def mul_many(self, pairs: Iterable[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        """Several products in one Beaver round."""
        pairs = list(pairs)
        key = ("mul", (self.m, len(pairs)))
        if self.tape is not None and self.tape.recording:
            s = self.session
            h = check_holders(self.holders, s.net, key[1])
            self.tape.record(key, s.dealer.beaver_triples(h, key[1]))
            return [np.zeros((self.k, self.m), dtype=np.uint64) for _ in pairs]
        triples = None if self.tape is None else self.tape.take(key)
        x = np.stack([p[0] for p in pairs], axis=-1)
        y = np.stack([p[1] for p in pairs], axis=-1)
        z = multiply(self.session, x, y, self.holders, triples)
        return [z[..., i] for i in range(len(pairs))]


def const_scale(value: Any, scale: str | None, input_fp: Any, fp: Any) -> Any:
    """The fixed point a kernel constant is encoded at, the same rule on every backend
    (:meth:`SecureOps.const` and the garbled-circuit tracer): ``scale="input"`` -> ``input_fp``,
    ``"output"`` or None -> ``fp``; None raises ValueError when the two differ (ambiguous)."""
    if scale not in (None, "input", "output"):
        raise ValueError(f"scale must be 'input' or 'output', got {scale!r}")
    if scale is None and input_fp.frac_bits != fp.frac_bits:
        raise ValueError(
            f"ops.const({value!r}) is ambiguous here: inputs carry {input_fp.frac_bits} "
            f"fractional bits and outputs {fp.frac_bits}; say ops.const({value!r}, "
            "scale='input') to combine it with inputs, or scale='output' to add it to a result")
    return input_fp if scale == "input" else fp
