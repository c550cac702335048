"""Secure values: typed secret-shared arrays with operators, ``input`` and ``output``.

A :class:`SecureArray` is what a protocol author works with instead of raw
share arrays. It carries

- its shares, ``uint64 (p, *shape)``: row j belongs to ``holders[j]``
  (``holders`` is ``(p,)``, or ``(p, *shape)`` for per-instance holders such
  as the members of each edge). In a run of several processes only the rows
  of holders local to this process are here; :meth:`SecureArray.share` of
  any other holder raises;
- its sharing ``kind``: ``"additive"`` (mod 2^l) or ``"xor"`` (bitwise);
- its ring (width l) and fixed-point scale ``frac_bits`` (c): the secret is
  ``signed(sum of shares) / 2^c``. Values of different scales combine: the
  lower scale is shifted up exactly (a public factor 2^d, no truncation);
  a product of two fixed-point values is truncated back to the larger of
  their scales (:mod:`mpc.values.fixedpoint`: one round more, error below one unit
  of the last place), a product with an integer value is exact;
- ``bound``: a public bound on the secret's magnitude in ring units. Inputs
  get theirs from ``session.input(..., bound=...)`` (checked on the inputs,
  by the party that has them), operations propagate it (a sum's bound is the
  sum of bounds, ...), and a comparison whose operands could leave its
  gate's domain (|x - y| >= 2^(l-1), where x - y would wrap) raises a
  ValueError naming the operand, before any message. No check ever reads
  shares.

Operators: ``+ - * /`` with secure values and public numbers (``*`` of two
secure values is a Beaver product, one round; public factors and divisors
and the fixed-point functions ``reciprocal``, ``sqrt``, ``exp``,
``sigmoid``, ``abs``, ``mean``, ``var``: :mod:`mpc.values.fixedpoint`; ``sort``,
``argsort``, ``shuffle``, ``take``, item assignment and numpy's functions:
:mod:`mpc.values.arrays`); comparisons ``< <= > >= ==``
(0/1 results at scale 0); :func:`where`; ``sum``, ``dot``; ``max``,
``min``, ``argmax``, ``argmin`` over an axis (a tournament: log2(n) levels,
each one batched comparison and one round of products); ``^``, ``&`` on
XOR values. Comparisons use the session's comparison providers
(:mod:`mpc.protocols.providers`): the first that serves the number of
holders, e.g. ``fss.FSSGates()`` for two holders (one round), the p-party
circuit :mod:`mpc.protocols.compare` for any number (about 8 rounds, secure
against any p - 1 holders), or ``mpc.gc.GarbledCircuits()`` (two holders,
oblivious transfer instead of a dealer). Products take Beaver triples from
the session's preprocessing: the trusted dealer, or with ``OTPreprocessing()``
(the default when the comparisons are dealer-free, e.g. garbled circuits)
Gilboa's OT multiplication between the holders, no dealer
(:mod:`mpc.protocols.ot_triples`); ANDs of XOR values, daBits and the
truncation of a product of two fixed-point values still need the dealer.

Threat model: that of the providers (static semi-honest adversary; a
trusted dealer for triples and keys, none with garbled circuits and OT
preprocessing); openings happen only in :func:`output_values`.

Where it is (every name below is importable from here, ``from mpc.values import X``):

- :mod:`mpc.values.secure_array`: :class:`SecureArray`, its arithmetic, indexing, reductions
  and XOR values; :func:`where`, :func:`stack`;
- :mod:`mpc.values.operands`: data shapes and broadcasting, alignment of scales, public
  operands (local bookkeeping, no message);
- :mod:`mpc.values.comparisons`: the comparisons, chunked by :data:`CHUNK`, and the max / min
  tournaments;
- :mod:`mpc.values.input_output`: :func:`input_values`, :func:`constant`, :func:`from_shares`,
  :func:`output_values`, :class:`NotReceived`, :func:`received`;
- :mod:`mpc.values.fixedpoint` and :mod:`mpc.values.arrays`: fixed-point functions;
  sorting, shuffling, secret indexing and numpy's protocols.
"""

from __future__ import annotations

from mpc.values.comparisons import CHUNK
from mpc.values.input_output import (
    NotReceived,
    constant,
    from_shares,
    input_values,
    output_values,
    received,
)
from mpc.values.secure_array import KINDS, SecureArray, stack, where

__all__ = ["CHUNK", "KINDS", "NotReceived", "SecureArray", "constant", "from_shares",
           "input_values", "output_values", "received", "stack", "where"]
