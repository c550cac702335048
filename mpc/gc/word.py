"""Integer values of a circuit under construction (:class:`Word`), with operators.

A :class:`Word` is a tuple of wire ids, least significant bit first, owned by
a :class:`~mpc.gc.builder.CircuitBuilder`; its operators call the builder
(``x + y`` is ``builder.add(x, y)``; ints are constants of the word's
width). Comparisons are methods with an explicit ``signed`` flag, so that
``==`` keeps its Python meaning.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mpc.gc.builder import CircuitBuilder


class Word:
    """An integer value of a circuit under construction (wires LSB first)."""

    __slots__ = ("builder", "wires")

    def __init__(self, builder: CircuitBuilder, wires: Iterable[int]):
        self.builder = builder
        self.wires = tuple(int(w) for w in wires)

    @property
    def width(self) -> int:
        return len(self.wires)

    def __len__(self) -> int:
        return len(self.wires)

    def __getitem__(self, idx) -> Word:
        if isinstance(idx, slice):
            return Word(self.builder, self.wires[idx])
        return Word(self.builder, (self.wires[idx],))

    def __repr__(self) -> str:
        return f"Word(width={self.width})"

    def _other(self, y: Word | int) -> Word:
        return self.builder._coerce(y, self.width)

    # arithmetic mod 2^width and bitwise operators
    def __add__(self, y):
        return self.builder.add(self, self._other(y))

    def __radd__(self, y):
        return self.builder.add(self._other(y), self)

    def __sub__(self, y):
        return self.builder.sub(self, self._other(y))

    def __rsub__(self, y):
        return self.builder.sub(self._other(y), self)

    def __neg__(self):
        return self.builder.neg(self)

    def __mul__(self, y):
        return self.builder.mul(self, self._other(y))

    __rmul__ = __mul__

    def __xor__(self, y):
        return self.builder.bxor(self, self._other(y))

    __rxor__ = __xor__

    def __and__(self, y):
        return self.builder.band(self, self._other(y))

    __rand__ = __and__

    def __or__(self, y):
        return self.builder.bor(self, self._other(y))

    __ror__ = __or__

    def __invert__(self):
        return self.builder.bnot(self)

    def __lshift__(self, k):
        return self.builder.shl(self, k)

    # comparisons are methods (== keeps its Python meaning)
    def lt(self, y: Word | int, *, signed: bool) -> Word:
        return self.builder.lt(self, self._other(y), signed=signed)

    def le(self, y: Word | int, *, signed: bool) -> Word:
        return self.builder.le(self, self._other(y), signed=signed)

    def gt(self, y: Word | int, *, signed: bool) -> Word:
        return self.builder.gt(self, self._other(y), signed=signed)

    def ge(self, y: Word | int, *, signed: bool) -> Word:
        return self.builder.ge(self, self._other(y), signed=signed)

    def eq(self, y: Word | int) -> Word:
        return self.builder.eq(self, self._other(y))

    def ne(self, y: Word | int) -> Word:
        return ~self.builder.eq(self, self._other(y))

    def zext(self, width: int) -> Word:
        return self.builder.zext(self, width)

    def sext(self, width: int) -> Word:
        return self.builder.sext(self, width)

    @property
    def msb(self) -> Word:
        return self[-1]
