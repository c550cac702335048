"""A builder for integer circuits with few AND gates (kernels are written in it).

Values are :class:`Word` objects: a tuple of wire ids, least significant bit
first, l-bit two's complement when read as signed. Operations emit XOR, AND
and INV gates with constant folding (constants are not wires until an
output needs one), double-negation removal and structural hashing (the same
gate on the same wires is emitted once). AND counts are those of the
optimal free-XOR constructions (XOR and NOT cost nothing when garbled):

    add, sub (mod 2^l)             l - 1     ripple carry, 1 AND per full adder
    neg                            l - 2     ~x + 1
    lt/le/gt/ge (signed/unsigned)  l         carry chain of x - y; signed flips the MSBs
    eq / is_zero                   l - 1     AND tree of XNORs (depth log2 l)
    mux                            l         b ^ s(a ^ b)
    abs (signed)                   l - 1     (x ^ s) + s
    mul (truncated to l)           l^2 - l + 1    schoolbook
    mul_full (2l bits)             2l^2 - l unsigned, + 4l - 2 signed
    sign (in {-1, 0, 1}, 2 bits)   l - 1
    shifts, slices, concat, zext/sext, constants: free

Example (the Gini kernel |x - y| on 40-bit inputs)::

    b = CircuitBuilder("gini")
    x = b.input(40, party=GARBLER)
    y = b.input(40, party=EVALUATOR)
    d = x.sext(41) - y.sext(41)
    b.output(b.abs(d))
    circuit = b.build()

Building loops over bits and gates in Python: circuits are built once and
reused for whole batches (evaluation is vectorized, building is not).
"""

from __future__ import annotations

import numbers

import numpy as np

from mpc.gc.circuit import Circuit
from mpc.gc.gates import AND, EQ, INV, PARTY_NAMES, XOR
from mpc.gc.word import Word

ZERO, ONE = -1, -2  # constant "wires" (materialized by EQ gates only if output)


class CircuitBuilder:
    """Build a :class:`~mpc.gc.circuit.Circuit` from integer operations (module docstring)."""

    def __init__(self, name: str = ""):
        self.name = name
        self._ops: list = []
        self._in0: list = []
        self._in1: list = []
        self._out: list = []
        self._n = 0
        self._inputs: list = []
        self._parties: list = []
        self._outputs: list = []
        self._cache: dict = {}
        self._neg: dict = {ZERO: ONE, ONE: ZERO}

    # -- inputs, constants, outputs -----------------------------------------------------
    def input(self, width: int, party: int | None = None) -> Word:
        """A new input group of ``width`` bits owned by ``party`` (GARBLER/EVALUATOR)."""
        width = _check_width(width)
        if party is not None and (isinstance(party, bool) or party not in PARTY_NAMES):
            raise ValueError(f"party must be GARBLER (0), EVALUATOR (1) or None, got {party!r}")
        wires = range(self._n, self._n + width)
        self._n += width
        self._inputs.append(list(wires))
        self._parties.append(party)
        return Word(self, wires)

    def const(self, value: int, width: int) -> Word:
        """The constant ``value mod 2^width`` (free)."""
        width = _check_width(width)
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"value must be an integer, got {value!r}")
        v = int(value) % (1 << width)
        return Word(self, [ONE if (v >> i) & 1 else ZERO for i in range(width)])

    def output(self, word: Word) -> None:
        """Declare ``word`` as the next output group."""
        self._check(word, "word")
        if word.width == 0:
            raise ValueError("word: an output must have at least one bit")
        self._outputs.append(word.wires)

    def build(self, name: str | None = None) -> Circuit:
        """The finished circuit: the gates that reach an output (the builder can keep growing)."""
        ops, in0, in1, out = self._live_gates()
        n = self._n
        const_wire = {}
        outputs = []
        for group in self._outputs:
            wires = []
            for w in group:
                if w in (ZERO, ONE):
                    if w not in const_wire:
                        const_wire[w] = n
                        ops.append(EQ), in0.append(1 if w == ONE else 0), in1.append(-1)
                        out.append(n)
                        n += 1
                    w = const_wire[w]
                wires.append(w)
            outputs.append(np.array(wires, dtype=np.int64))
        parties = None
        if self._parties and all(p is not None for p in self._parties):
            parties = tuple(self._parties)
        elif any(p is not None for p in self._parties):
            raise ValueError("give a party to every input or to none")
        return Circuit(n, ops, in0, in1, out, tuple(np.array(g, np.int64) for g in self._inputs),
                       tuple(outputs), parties, self.name if name is None else name)

    def _live_gates(self):
        """The gates some output depends on, in order (one reverse pass)."""
        needed = {w for group in self._outputs for w in group}
        keep = []
        for i in range(len(self._ops) - 1, -1, -1):
            if self._out[i] in needed:
                keep.append(i)
                needed.add(self._in0[i])
                needed.add(self._in1[i])
        keep.reverse()
        return ([self._ops[i] for i in keep], [self._in0[i] for i in keep],
                [self._in1[i] for i in keep], [self._out[i] for i in keep])

    # -- gates on single wires ------------------------------------------------------------
    def _gate(self, op, a, b):
        key = (op, a, b)
        w = self._cache.get(key)
        if w is None:
            w = self._n
            self._n += 1
            self._ops.append(op)
            self._in0.append(a)
            self._in1.append(b)
            self._out.append(w)
            self._cache[key] = w
        return w

    def not_bit(self, a: int) -> int:
        r = self._neg.get(a)
        if r is None:
            r = self._gate(INV, a, -1)
            self._neg[a], self._neg[r] = r, a
        return r

    def xor_bit(self, a: int, b: int) -> int:
        if a == b:
            return ZERO
        if a == ZERO or b == ZERO:
            return b if a == ZERO else a
        if a == ONE or b == ONE:
            return self.not_bit(b if a == ONE else a)
        if self._neg.get(a) == b:
            return ONE
        return self._gate(XOR, min(a, b), max(a, b))

    def and_bit(self, a: int, b: int) -> int:
        if a == ZERO or b == ZERO:
            return ZERO
        if a == ONE or b == ONE:
            return b if a == ONE else a
        if a == b:
            return a
        if self._neg.get(a) == b:
            return ZERO
        return self._gate(AND, min(a, b), max(a, b))

    def or_bit(self, a: int, b: int) -> int:
        return self.xor_bit(self.xor_bit(a, b), self.and_bit(a, b))

    # -- helpers -----------------------------------------------------------------------
    def _check(self, word, name):
        if not isinstance(word, Word):
            raise TypeError(f"{name} must be a Word, got {type(word).__name__}")
        if word.builder is not self:
            raise ValueError(f"{name} belongs to another builder")
        return word

    def _pair(self, x, y):
        self._check(x, "x"), self._check(y, "y")
        if x.width != y.width:
            raise ValueError(f"x and y must have the same width, got {x.width} and {y.width}")
        return x.wires, y.wires

    def _coerce(self, y, width):
        if isinstance(y, Word):
            return self._check(y, "y")
        if isinstance(y, numbers.Integral) and not isinstance(y, bool):
            return self.const(int(y), width)
        raise TypeError(f"operand must be a Word or an int, got {type(y).__name__}")

    def _bit(self, s, name="s"):
        self._check(s, name)
        if s.width != 1:
            raise ValueError(f"{name} must be a 1-bit Word, got width {s.width}")
        return s.wires[0]

    def _w(self, wires) -> Word:
        return Word(self, wires)

    # -- bitwise -----------------------------------------------------------------------
    def bxor(self, x: Word, y: Word) -> Word:
        xs, ys = self._pair(x, y)
        return self._w([self.xor_bit(a, b) for a, b in zip(xs, ys)])

    def band(self, x: Word, y: Word) -> Word:
        xs, ys = self._pair(x, y)
        return self._w([self.and_bit(a, b) for a, b in zip(xs, ys)])

    def bor(self, x: Word, y: Word) -> Word:
        xs, ys = self._pair(x, y)
        return self._w([self.or_bit(a, b) for a, b in zip(xs, ys)])

    def bnot(self, x: Word) -> Word:
        self._check(x, "x")
        return self._w([self.not_bit(a) for a in x.wires])

    # -- wiring (free) -------------------------------------------------------------------
    def concat(self, *words: Word) -> Word:
        """Concatenate, first word in the low bits."""
        wires = []
        for i, w in enumerate(words):
            wires.extend(self._check(w, f"words[{i}]").wires)
        return self._w(wires)

    def zext(self, x: Word, width: int) -> Word:
        self._check(x, "x")
        width = _check_width(width)
        if width < x.width:
            raise ValueError(f"width must be >= the word's width {x.width}, got {width}")
        return self._w(x.wires + (ZERO,) * (width - x.width))

    def sext(self, x: Word, width: int) -> Word:
        self._check(x, "x")
        width = _check_width(width)
        if width < x.width:
            raise ValueError(f"width must be >= the word's width {x.width}, got {width}")
        return self._w(x.wires + (x.wires[-1],) * (width - x.width))

    def shl(self, x: Word, k: int) -> Word:
        """``x << k`` mod 2^width."""
        self._check(x, "x")
        k = _check_shift(k)
        return self._w(((ZERO,) * k + x.wires)[:x.width])

    def shr(self, x: Word, k: int, *, signed: bool) -> Word:
        """``x >> k``: arithmetic if ``signed`` else logical."""
        self._check(x, "x")
        k = _check_shift(k)
        fill = x.wires[-1] if signed else ZERO
        return self._w((x.wires + (fill,) * k)[k:k + x.width])

    # -- arithmetic ----------------------------------------------------------------------
    def _adder(self, xs, ys, cin, carry_out: bool):
        """Ripple-carry sum bits (and the carry out): 1 AND per carry computed."""
        c, s = cin, []
        n = len(xs)
        for i, (a, b) in enumerate(zip(xs, ys)):
            s.append(self.xor_bit(self.xor_bit(a, b), c))
            if i < n - 1 or carry_out:
                c = self.xor_bit(c, self.and_bit(self.xor_bit(a, c), self.xor_bit(b, c)))
        return s, c

    def add(self, x: Word, y: Word) -> Word:
        """``x + y mod 2^l`` (l - 1 ANDs)."""
        xs, ys = self._pair(x, y)
        return self._w(self._adder(xs, ys, ZERO, False)[0])

    def add_carry(self, x: Word, y: Word) -> tuple[Word, Word]:
        """``(x + y mod 2^l, carry out)`` for unsigned words (l ANDs)."""
        xs, ys = self._pair(x, y)
        s, c = self._adder(xs, ys, ZERO, True)
        return self._w(s), self._w([c])

    def sub(self, x: Word, y: Word) -> Word:
        """``x - y mod 2^l`` (l - 1 ANDs)."""
        xs, ys = self._pair(x, y)
        return self._w(self._adder(xs, [self.not_bit(b) for b in ys], ONE, False)[0])

    def neg(self, x: Word) -> Word:
        """``-x mod 2^l`` (l - 2 ANDs)."""
        self._check(x, "x")
        return self.sub(self.const(0, x.width), x)

    def _increment(self, xs, cin):
        c, s = cin, []
        for i, a in enumerate(xs):
            s.append(self.xor_bit(a, c))
            if i < len(xs) - 1:
                c = self.and_bit(a, c)
        return s

    def lt(self, x: Word, y: Word, *, signed: bool) -> Word:
        """``x < y`` as one bit (l ANDs): no borrow out of ``x - y`` fails."""
        xs, ys = self._pair(x, y)
        xs, ys = list(xs), [self.not_bit(b) for b in ys]
        if signed:
            xs[-1], ys[-1] = self.not_bit(xs[-1]), self.not_bit(ys[-1])
        c = ONE
        for a, b in zip(xs, ys):
            c = self.xor_bit(c, self.and_bit(self.xor_bit(a, c), self.xor_bit(b, c)))
        return self._w([self.not_bit(c)])

    def gt(self, x: Word, y: Word, *, signed: bool) -> Word:
        return self.lt(y, x, signed=signed)

    def le(self, x: Word, y: Word, *, signed: bool) -> Word:
        return self.bnot(self.lt(y, x, signed=signed))

    def ge(self, x: Word, y: Word, *, signed: bool) -> Word:
        return self.bnot(self.lt(x, y, signed=signed))

    def eq(self, x: Word, y: Word) -> Word:
        """``x == y`` as one bit (l - 1 ANDs, depth ceil(log2 l))."""
        xs, ys = self._pair(x, y)
        return self._w([self._and_tree([self.not_bit(self.xor_bit(a, b))
                                        for a, b in zip(xs, ys)])])

    def is_zero(self, x: Word) -> Word:
        self._check(x, "x")
        return self._w([self._and_tree([self.not_bit(a) for a in x.wires])])

    def _and_tree(self, bits):
        bits = list(bits)
        if not bits:
            return ONE
        while len(bits) > 1:
            nxt = [self.and_bit(bits[i], bits[i + 1]) for i in range(0, len(bits) - 1, 2)]
            if len(bits) % 2:
                nxt.append(bits[-1])
            bits = nxt
        return bits[0]

    def mux(self, s: Word, if_true: Word, if_false: Word) -> Word:
        """``if_true if s else if_false`` for a 1-bit ``s`` (l ANDs)."""
        sb = self._bit(s)
        ts, fs = self._pair(if_true, if_false)
        return self._w([self.xor_bit(f, self.and_bit(sb, self.xor_bit(t, f)))
                        for t, f in zip(ts, fs)])

    def abs(self, x: Word) -> Word:
        """``|x|`` of a signed word (l - 1 ANDs); ``abs(-2^(l-1))`` wraps to itself."""
        self._check(x, "x")
        return self.cond_neg(x, self._w([x.wires[-1]]))

    def cond_neg(self, x: Word, s: Word) -> Word:
        """``-x if s else x`` mod 2^l for a 1-bit ``s`` (l - 1 ANDs)."""
        self._check(x, "x")
        sb = self._bit(s)
        return self._w(self._increment([self.xor_bit(a, sb) for a in x.wires], sb))

    def sign(self, x: Word) -> Word:
        """``sign(x)`` in {-1, 0, 1} as a signed 2-bit word (l - 1 ANDs)."""
        self._check(x, "x")
        nonzero = self.not_bit(self.is_zero(x).wires[0])
        return self._w([nonzero, x.wires[-1]])

    def mul(self, x: Word, y: Word) -> Word:
        """``x * y mod 2^l`` (schoolbook, l^2 - l + 1 ANDs; same for signed)."""
        xs, ys = self._pair(x, y)
        n = len(xs)
        acc = [self.and_bit(a, ys[0]) for a in xs]
        for j in range(1, n):
            row = [self.and_bit(a, ys[j]) for a in xs[:n - j]]
            acc[j:], _ = self._adder(acc[j:], row, ZERO, False)
        return self._w(acc)

    def mul_full(self, x: Word, y: Word, *, signed: bool) -> Word:
        """The full ``2l``-bit product (2l^2 - l ANDs unsigned; 4l - 2 more if signed)."""
        xs, ys = self._pair(x, y)
        n = len(xs)
        acc = [self.and_bit(a, ys[0]) for a in xs] + [ZERO] * n
        for j in range(1, n):
            row = [self.and_bit(a, ys[j]) for a in xs]
            s, c = self._adder(acc[j:j + n], row, ZERO, True)
            acc[j:j + n] = s
            acc[j + n] = c
        prod = self._w(acc)
        if not signed:
            return prod
        hi = self._w(acc[n:])
        zero = self.const(0, n)
        hi = self.sub(hi, self.mux(x.msb, y, zero))
        hi = self.sub(hi, self.mux(y.msb, x, zero))
        return self.concat(self._w(acc[:n]), hi)

    # -- sub-circuits ---------------------------------------------------------------------
    def embed(self, circuit: Circuit, *inputs: Word) -> list[Word]:
        """Insert ``circuit`` on the given input words; returns its output words."""
        if not isinstance(circuit, Circuit):
            raise TypeError(f"circuit must be a Circuit, got {type(circuit).__name__}")
        if len(inputs) != len(circuit.inputs):
            raise ValueError(f"inputs must give {len(circuit.inputs)} words, got {len(inputs)}")
        wire: dict[int, int] = {}
        for i, (word, grp) in enumerate(zip(inputs, circuit.inputs)):
            self._check(word, f"inputs[{i}]")
            if word.width != grp.size:
                raise ValueError(f"inputs[{i}] must have width {grp.size}, got {word.width}")
            wire.update(zip(grp.tolist(), word.wires))
        for op, a, b, o in zip(circuit.ops.tolist(), circuit.in0.tolist(),
                               circuit.in1.tolist(), circuit.out.tolist()):
            if op == XOR:
                wire[o] = self.xor_bit(wire[a], wire[b])
            elif op == AND:
                wire[o] = self.and_bit(wire[a], wire[b])
            elif op == INV:
                wire[o] = self.not_bit(wire[a])
            elif op == EQ:
                wire[o] = ONE if a else ZERO
            else:
                wire[o] = wire[a]
        return [self._w([wire[w] for w in grp.tolist()]) for grp in circuit.outputs]


def _check_width(width) -> int:
    if isinstance(width, bool) or not isinstance(width, numbers.Integral) or width < 1:
        raise ValueError(f"width must be a positive integer, got {width!r}")
    return int(width)


def _check_shift(k) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
        raise ValueError(f"shift must be a non-negative integer, got {k!r}")
    return int(k)
