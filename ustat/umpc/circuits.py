"""Garbled-circuit forms of k = 2 kernels, derived from their secure definitions.

:func:`circuit_for` runs a kernel's ``secure(ops, x)`` once on a *tracing*
context (:class:`CircuitOps`, the same methods as :class:`ustat.secure.SecureOps`)
whose values are symbols instead of shares, so every kernel written from
``SecureOps`` (the built-in ones and users' kernels alike) gets its circuit
without a second definition. The trace keeps two kinds of values:

- *linear* values: a linear form over the 2 d input columns (member 0's
  columns, then member 1's) plus a constant, mod 2^l. ``add``, ``sub``,
  ``neg``, ``scale``, ``const``, ``to_fixed`` on them stay linear: each
  member computes its share of the form locally, nothing enters the circuit;
- *wires*: words of the circuit. A linear value becomes a circuit input the
  first time a gate needs it (an *operand*): the garbler (member 0) inputs
  its share, the evaluator (member 1) its share, and the circuit adds them.

Every value carries an integer interval when one is known: numeric columns
are in [0, 2^c_in] (records normalized to [0, 1], encoded with
``spec.input_frac_bits``), categorical columns with ``kernel.extra["levels"]``
in [0, levels - 1], others unknown (the whole ring). A value whose interval
fits in w <= l signed bits with |v| < 2^(w-1) is a w-bit word (reconstructed
from the low w bits of the shares, no wrap-around possible); otherwise it is
an l-bit word with the ring's mod-2^l meaning.
Gates reproduce the dealer backend's values exactly (:mod:`fss.gates`):
``less_than`` = MSB(a - b mod 2^l), ``sign`` = 1 - MSB(z) - MSB(z - 1) mod 2^l
(so sign(-2^(l-1)) = 0), ``equal`` = [a - b = 0 mod 2^l], ``abs`` =
z - 2 z MSB(z) mod 2^l, ``in_interval`` on the signed reading, ``mul`` mod 2^l.
With ``domain="validated"`` the circuit equals the dealer for every record in
the domain :func:`ustat.umpc.inputs.validate_records` enforces (the gc backend
checks each member's own record against it); ``domain="ring"`` assumes
nothing and equals the dealer on every ring input, at a larger size.

The circuit's output is f(x_e) as an l-bit word; :mod:`ustat.umpc.gc_backend`
turns it into additive shares in Z_2^l (``mpc.gc.yao`` output "additive").
An equality of a linear difference is tested as "garbler's share = minus the
evaluator's share" (l - 1 ANDs, no adder). AND gates per edge at l = 40,
c = c_in = 14 (validated): gini 30, kendall 63, auc 36, duplicate/renyi2 39,
rand 78, before the l - 1 of the additive output; ``domain="ring"``: 78,
159, 714, 39, 78. Building loops over gates in Python; circuits are cached per
(kernel, widths, domain).
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

import numpy as np

from mpc.arith.ring import fixed_point
from mpc.gc import EVALUATOR, GARBLER, CircuitBuilder, Word, bits_to_int, evaluate
from mpc.gc.builder import ZERO

from ..secure import const_scale, narrow_bits

if TYPE_CHECKING:
    from mpc.gc.circuit import Circuit

    from ..kernels import Kernel

DOMAINS = ("validated", "ring")
_U64 = np.uint64

#: An integer interval (lo, hi) of a value, or None (unknown: the whole ring).
Interval = tuple[int, int] | None


class Widths(Protocol):
    """What :func:`circuit_for` reads of a spec: the ring and fixed-point widths
    (a :class:`ustat.umpc.chunk.ChunkSpec`, or a ``SimpleNamespace`` of the three)."""

    @property
    def bits(self) -> int: ...

    @property
    def frac_bits(self) -> int: ...

    @property
    def input_frac_bits(self) -> int: ...


@dataclass(frozen=True)
class Operand:
    """A linear form sum_c coef[c] x_c + const (mod 2^l), entering the circuit as ``width`` bits."""

    coef: tuple
    const: int
    width: int
    negate_evaluator: bool = False   # the evaluator inputs minus its share (equality tests)


@dataclass(frozen=True)
class KernelCircuit:
    """A kernel's circuit and how each member computes its circuit inputs from its shares.

    ``circuit`` inputs: for each operand t, the garbler's share (width w_t)
    then the evaluator's share; outputs: f(x_e) as an l-bit word (then, for a
    kernel with edge sums, each of them as one more l-bit word).
    ``domain``: per input column (member 0's, then member 1's) its interval
    or None (whole ring).
    """

    kernel: str
    bits: int
    frac_bits: int
    input_frac_bits: int
    domain_mode: str
    domain: tuple
    operands: tuple
    circuit: Circuit

    @property
    def n_and(self) -> int:
        return int(self.circuit.schedule.n_and)

    def operand_shares(self, cols: np.ndarray, member: int) -> list:
        """Member ``member``'s inputs: its share of each operand, ``(m,)`` uint64 of w_t bits.

        ``cols``: ``(2 d, m)`` uint64, this member's shares of the input
        columns. Local: nothing is sent. The constant goes to member 0.
        """
        mask_l = (1 << self.bits) - 1
        out = []
        for op in self.operands:
            acc = np.zeros(cols.shape[1], dtype=_U64)
            for c, k in enumerate(op.coef):
                if k:
                    acc += _U64(k) * cols[c]
            if member == 0 and op.const:
                acc += _U64(op.const)
            if member == 1 and op.negate_evaluator:
                acc = _U64(0) - acc
            out.append(acc & _U64(mask_l & ((1 << op.width) - 1)))
        return out

    def inputs(self, shares: np.ndarray) -> list:
        """All circuit inputs in circuit order from both members' shares ``(2, 2 d, m)``."""
        g, e = self.operand_shares(shares[0], 0), self.operand_shares(shares[1], 1)
        return [v for pair in zip(g, e) for v in pair]

    def evaluate_plain(self, shares: np.ndarray) -> np.ndarray:
        """The circuit in the clear on both members' shares ``(2, 2 d, m)``: f, ``(m,)`` uint64."""
        # an l-bit output (l <= 64): an array, not a list of ints
        return cast(np.ndarray, bits_to_int(evaluate(self.circuit, self.inputs(shares))[0]))


def column_domain(kernel: Kernel, input_frac_bits: int, mode: str) -> tuple:
    """Interval of each encoded input column of one record (None: unknown, the whole ring)."""
    if mode not in DOMAINS:
        raise ValueError(f"domain must be one of {DOMAINS}, got {mode!r}")
    levels = kernel.extra.get("levels", {})
    out: list[Interval] = []
    for c in range(kernel.columns):
        if mode == "ring":
            out.append(None)
        elif c not in kernel.categorical:
            out.append((0, 1 << input_frac_bits))
        elif c in levels:
            out.append((0, int(levels[c]) - 1))
        else:
            out.append(None)
    return tuple(out)


def circuit_for(kernel: Kernel, spec: Widths, domain: str = "validated") -> KernelCircuit:
    """The circuit of a k = 2 kernel under ``spec``'s widths (bits, frac_bits, input_frac_bits).

    ``spec``: a :class:`ustat.umpc.chunk.ChunkSpec` (or anything with those
    three attributes). ValueError for kernels of degree > 2 and for kernels
    whose secure definition uses something other than the ``SecureOps``
    operations.
    """
    if getattr(kernel, "degree", None) != 2:
        raise ValueError(f"kernel {getattr(kernel, 'name', kernel)!r} has degree "
                         f"{getattr(kernel, 'degree', None)}: garbled circuits are built for "
                         "k = 2 kernels only (two members: garbler and evaluator)")
    bits, frac, in_frac = int(spec.bits), int(spec.frac_bits), int(spec.input_frac_bits)
    if not 2 <= bits <= 64:
        raise ValueError(f"spec.bits must be in 2..64, got {bits}")
    dom = column_domain(kernel, in_frac, domain)
    with_aux = kernel.secure_with_aux if kernel.edge_aux_names else None
    return _build(kernel.name, kernel.secure, with_aux, kernel.columns, dom, bits, frac, in_frac,
                  domain)


@functools.lru_cache(maxsize=64)
def _build(name, secure, secure_with_aux, columns, dom, bits, frac, in_frac, mode):
    """The circuit; ``secure_with_aux`` (a kernel with edge sums): one output group per value
    it returns (f first), else ``secure``'s one."""
    ops = CircuitOps(bits, frac, in_frac, columns, name)
    x = [[ops.input_column(i * columns + c, dom[c]) for c in range(columns)] for i in range(2)]
    try:
        outs = [secure(ops, x)] if secure_with_aux is None else list(secure_with_aux(ops, x))
        words = [ops.output(out) for out in outs]
    except _NoCircuitError as exc:
        raise ValueError(f"kernel {name!r} has no garbled circuit: {exc}") from None
    except (AttributeError, TypeError) as exc:
        raise ValueError(f"kernel {name!r} has no garbled circuit: its secure definition uses "
                         f"something other than the SecureOps operations ({exc})") from None
    for word in words:
        ops.b.output(word)
    circuit = ops.b.build(f"umpc-{name}")
    return KernelCircuit(name, bits, frac, in_frac, mode, dom + dom, tuple(ops.operands), circuit)


class _NoCircuitError(Exception):
    pass


class _Val:
    """A traced value: linear (``coef``, ``const``) or a circuit word; ``iv``: interval or None."""

    __slots__ = ("coef", "const", "iv", "word")

    def __init__(self, coef=None, const=0, word=None, iv=None):
        self.coef, self.const, self.word, self.iv = coef, const, word, iv

    @property
    def linear(self) -> bool:
        return self.word is None


class CircuitOps:
    """A tracing stand-in for :class:`ustat.secure.SecureOps` that builds the kernel's circuit.

    Same operation names and meanings as ``SecureOps`` (module docstring);
    values are symbols (:class:`_Val`), not shares.
    """

    k = 2

    def __init__(self, bits: int, frac_bits: int, input_frac_bits: int, columns: int, name=""):
        self.bits = bits
        self.fp = fixed_point(bits, frac_bits)
        self.input_fp = fixed_point(bits, input_frac_bits)
        self.ring = self.fp.ring
        self.n_cols = 2 * columns
        self.b = CircuitBuilder(f"umpc-{name}")
        self.operands: list = []
        self._materialized: dict = {}

    # -- intervals and widths ---------------------------------------------------------
    def _fit(self, iv):
        """The interval if it fits in l signed bits with |v| < 2^(l-1), else None (whole ring)."""
        if iv is None:
            return None
        lo, hi = iv
        return iv if _width(lo, hi) <= self.bits else None

    def _w(self, iv) -> int:
        return self.bits if iv is None else _width(*iv)

    def _mod(self, v: int) -> int:
        return v % (1 << self.bits)

    # -- values ---------------------------------------------------------------------------
    def input_column(self, index: int, iv: Interval) -> _Val:
        coef = [0] * self.n_cols
        coef[index] = 1
        return _Val(tuple(coef), 0, None, iv)

    def _wire(self, v: _Val) -> _Val:
        """``v`` as a circuit word (a linear value becomes an operand, once)."""
        if not isinstance(v, _Val):
            raise _NoCircuitError(f"an operation received {type(v).__name__}, not a traced value")
        if not v.linear:
            return v
        key = (v.coef, v.const)
        hit = self._materialized.get(key)
        if hit is not None:
            return hit
        w = self._w(v.iv)
        if not any(v.coef):
            out = _Val(word=self.b.const(v.const if v.iv is None else v.iv[0], w), iv=v.iv)
        else:
            g = self.b.input(w, party=GARBLER)
            e = self.b.input(w, party=EVALUATOR)
            self.operands.append(Operand(v.coef, v.const, w))
            out = _Val(word=self.b.add(g, e), iv=v.iv)
        self._materialized[key] = out
        return out

    def _resize(self, word: Word, w: int) -> Word:
        return word[:w] if word.width >= w else self.b.sext(word, w)

    def output(self, v: _Val) -> Word:
        """The kernel's value as an l-bit word."""
        return self._resize(self._wire(v).word, self.bits)

    # -- linear operations ----------------------------------------------------------------
    def _lin2(self, a, b, sign):
        coef = tuple(self._mod(p + sign * q) for p, q in zip(a.coef, b.coef))
        iv = None
        if a.iv is not None and b.iv is not None:
            iv = ((a.iv[0] + b.iv[0], a.iv[1] + b.iv[1]) if sign > 0
                  else (a.iv[0] - b.iv[1], a.iv[1] - b.iv[0]))
        return _Val(coef, self._mod(a.const + sign * b.const), None, self._fit(iv))

    def _arith(self, a, b, sign):
        if a.linear and b.linear:
            return self._lin2(a, b, sign)
        a, b = self._wire(a), self._wire(b)
        iv = None
        if a.iv is not None and b.iv is not None:
            iv = self._fit((a.iv[0] + b.iv[0], a.iv[1] + b.iv[1]) if sign > 0
                           else (a.iv[0] - b.iv[1], a.iv[1] - b.iv[0]))
        w = self._w(iv)
        x, y = self._resize(a.word, w), self._resize(b.word, w)
        return _Val(word=self.b.add(x, y) if sign > 0 else self.b.sub(x, y), iv=iv)

    def add(self, a: _Val, b: _Val) -> _Val:
        return self._arith(a, b, 1)

    def sub(self, a: _Val, b: _Val) -> _Val:
        return self._arith(a, b, -1)

    def neg(self, a: _Val) -> _Val:
        return self.scale(-1, a)

    def scale(self, factor: int, a: _Val) -> _Val:
        """Multiply by a public integer (linear values: locally; words: shifts and adds)."""
        if isinstance(factor, bool) or not isinstance(factor, numbers.Integral):
            raise _NoCircuitError(f"scale needs a public integer factor, got {factor!r}")
        f = int(factor)
        iv = None if a.iv is None else self._fit(tuple(sorted((a.iv[0] * f, a.iv[1] * f))))
        if a.linear:
            return _Val(tuple(self._mod(f * c) for c in a.coef), self._mod(f * a.const), None, iv)
        w = self._w(iv)
        return _Val(word=self._cmul(self._resize(a.word, w), f), iv=iv)

    def _cmul(self, x: Word, f: int) -> Word:
        """``f x mod 2^w`` by shifts and adds (free for a power of two)."""
        w = x.width
        neg = f < 0
        k = abs(f) % (1 << w)
        acc = None
        for i in range(w):
            if (k >> i) & 1:
                term = self.b.shl(x, i)
                acc = term if acc is None else self.b.add(acc, term)
        acc = self.b.const(0, w) if acc is None else acc
        return self.b.neg(acc) if neg else acc

    def const(self, value: float, fixed: bool = True, *, scale: str | None = None) -> _Val:
        """As :meth:`ustat.secure.SecureOps.const` (the same scale rule, :func:`const_scale`)."""
        if fixed:
            if np.ndim(value):
                raise _NoCircuitError("const needs a scalar "
                                      "(the circuit is the same for every edge)")
            fp = const_scale(value, scale, self.input_fp, self.fp)
            enc = int(fp.encode(np.array([float(value)]))[0])
        else:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"an integer constant is needed with fixed=False, got {value!r}")
            enc = int(self.ring.from_signed(np.array([int(value)], dtype=np.int64))[0])
        signed = enc - (1 << self.bits) if enc >> (self.bits - 1) else enc
        return _Val((0,) * self.n_cols, enc, None, self._fit((signed, signed)))

    def to_fixed(self, a: _Val, numerator: int = 1, log2_denominator: int = 0) -> _Val:
        c = self.fp.frac_bits
        if log2_denominator > c:
            raise ValueError(f"log2_denominator must be <= frac_bits={c}")
        return self.scale(numerator << (c - log2_denominator), a)

    def sum(self, values: Sequence[_Val]) -> _Val:
        out = values[0]
        for v in values[1:]:
            out = self.add(out, v)
        return out

    # -- gates -------------------------------------------------------------------------
    def _small(self, wires, lo: int, hi: int) -> _Val:
        """A gate output of 2 bits in [lo, hi] (an l-bit word if the ring is that small)."""
        iv = self._fit((lo, hi))
        return _Val(word=self._resize(Word(self.b, wires), self._w(iv)), iv=iv)

    def _bit(self, wire: int) -> _Val:
        return self._small([wire, ZERO], 0, 1)

    def less_than(self, a: _Val, b: _Val, *, bound: float | None = None) -> _Val:
        """[a < b] as the dealer computes it: MSB(a - b mod 2^l), or with an operand
        ``bound`` (:func:`ustat.secure.narrow_bits`, d bits) bit d - 1 (the dealer's
        narrow gate); on the validated domain the builder's interval gives the same."""
        z = self._wire(self.sub(a, b))
        return self._bit(self._msb(z, bound))

    def _msb(self, z: _Val, bound, word=None) -> int:
        """The sign wire the dealer's gate reads: bit d - 1 of ``word`` (default z's) when
        an operand bound narrows the gate and z has no interval, else its top bit."""
        word = z.word if word is None else word
        d = narrow_bits(self.input_fp.frac_bits, bound, self.bits) if z.iv is None else None
        return word.wires[-1] if d is None else word.wires[d - 1]

    def less_than_many(self, pairs: Iterable[tuple[_Val, _Val]], *,
                       bound: float | None = None) -> list[_Val]:
        return [self.less_than(a, b, bound=bound) for a, b in pairs]

    def greater_than(self, a: _Val, b: _Val, *, bound: float | None = None) -> _Val:
        return self.less_than(b, a, bound=bound)

    def equal(self, a: _Val, b: _Val) -> _Val:
        """[a - b = 0 mod 2^l]; a linear difference is tested as g = -e (no adder)."""
        d = self.sub(a, b)
        if d.linear and any(d.coef) and (d.coef, d.const) not in self._materialized:
            w = self._w(d.iv)
            key = ("eq", d.coef, d.const)
            if key not in self._materialized:
                g = self.b.input(w, party=GARBLER)
                e = self.b.input(w, party=EVALUATOR)
                self.operands.append(Operand(d.coef, d.const, w, True))
                self._materialized[key] = self._bit(self.b.eq(g, e).wires[0])
            return self._materialized[key]
        z = self._wire(d)
        return self._bit(self.b.is_zero(z.word).wires[0])

    def equal_many(self, pairs: Iterable[tuple[_Val, _Val]]) -> list[_Val]:
        return [self.equal(a, b) for a, b in pairs]

    def sign(self, a: _Val, *, bound: float | None = None) -> _Val:
        """1 - MSB(z) - MSB(z - 1) mod 2^l: the true sign, and 0 at z = -2^(l-1)."""
        z = self._wire(a)
        if z.iv is not None:                 # |z| < 2^(w-1): the word's sign is exact
            return self._small(self.b.sign(z.word).wires, -1, 1)
        m0 = self._msb(z, bound)
        m1 = self._msb(z, bound, self.b.sub(z.word, self.b.const(1, self.bits)))
        same = self.b.not_bit(self.b.xor_bit(m0, m1))
        return self._small([same, self.b.and_bit(m0, m1)], -1, 1)

    def sign_many(self, values: Iterable[_Val], *, bound: float | None = None) -> list[_Val]:
        return [self.sign(v, bound=bound) for v in values]

    def abs(self, a: _Val, *, bound: float | None = None) -> _Val:
        """z - 2 z MSB(z) mod 2^l (the builder's abs; -2^(l-1) maps to itself, as the dealer's)."""
        z = self._wire(a)
        if z.iv is None:                     # negate where the dealer's gate reads a sign
            return _Val(word=self.b.cond_neg(z.word, Word(self.b, [self._msb(z, bound)])),
                        iv=None)
        lo, hi = z.iv
        top = max(abs(lo), abs(hi))
        bottom = 0 if lo <= 0 <= hi else min(abs(lo), abs(hi))
        iv = self._fit((bottom, top))
        w = self._w(iv)
        return _Val(word=self._resize(self.b.zext(self.b.abs(z.word), z.word.width + 1), w),
                    iv=iv)

    def in_interval(self, a: _Val, lo: int, hi: int) -> _Val:
        """[lo <= a <= hi] on the signed reading of a (public integer bounds)."""
        for v, nm in ((lo, "lo"), (hi, "hi")):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise _NoCircuitError(f"in_interval needs public integer bounds, got {nm}={v!r}")
        z = self._wire(a)
        w = max(z.word.width, _width(int(lo), int(hi))) + 1
        if z.iv is None:
            lim = 1 << (self.bits - 1)
            if not -lim <= lo <= hi < lim:
                raise ValueError(f"in_interval bounds must satisfy -2^(l-1) <= lo <= hi < "
                                 f"2^(l-1), got {lo}, {hi}")
        x = self.b.sext(z.word, w)
        ge = self.b.ge(x, self.b.const(int(lo), w), signed=True).wires[0]
        le = self.b.le(x, self.b.const(int(hi), w), signed=True).wires[0]
        return self._bit(self.b.and_bit(ge, le))

    def mul(self, a: _Val, b: _Val) -> _Val:
        """a b mod 2^l (exact product when both intervals are known and it fits)."""
        x, y = self._wire(a), self._wire(b)
        if x.iv is not None and y.iv is not None:
            corners = [p * q for p in x.iv for q in y.iv]
            iv = self._fit((min(corners), max(corners)))
            for s, t in ((x, y), (y, x)):
                if s.iv[0] >= 0 and s.iv[1] <= 1:          # a bit times a word: a mux
                    w = self._w(iv)
                    word = self._resize(t.word, w)
                    return _Val(word=self.b.mux(s.word[0], word, self.b.const(0, w)), iv=iv)
            if iv is not None:
                n = max(x.word.width, y.word.width)
                full = self.b.mul_full(self.b.sext(x.word, n), self.b.sext(y.word, n),
                                       signed=True)
                return _Val(word=self._resize(full, self._w(iv)), iv=iv)
        for s, t in ((x, y), (y, x)):
            if s.iv is not None:
                return _Val(word=self._mul_narrow(s.word, self._resize(t.word, self.bits)))
        return _Val(word=self.b.mul(x.word, y.word))

    def _mul_narrow(self, s: Word, t: Word) -> Word:
        """``s t mod 2^l`` for a signed w-bit s and an l-bit t: w shifted rows, about 2 w l ANDs."""
        acc = self.b.const(0, self.bits)
        zero = self.b.const(0, self.bits)
        for i in range(s.width):
            row = self.b.mux(s[i], self.b.shl(t, i), zero)
            acc = self.b.sub(acc, row) if i == s.width - 1 else self.b.add(acc, row)
        return acc

    def mul_many(self, pairs: Iterable[tuple[_Val, _Val]]) -> list[_Val]:
        return [self.mul(a, b) for a, b in pairs]


def _width(lo: int, hi: int) -> int:
    """Signed width w with -2^(w-1) < v < 2^(w-1) for every v in [lo, hi]."""
    return max(abs(int(lo)).bit_length(), abs(int(hi)).bit_length()) + 1
