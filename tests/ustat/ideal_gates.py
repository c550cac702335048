"""Ideal-functionality comparison gates (test double, NOT secure).

Reconstructs the shared inputs, computes the gate in the clear and reshares
the result among the same holders. Used only to test the U-MPC plumbing
independently of the FSS layer; costs are not counted.
"""

import numpy as np

from mpc.arith.sharing import additive_share


def _open(s, x):
    return s.ring.to_signed(s.ring.sum(x, axis=0))


def _reshare(s, values, p):
    return additive_share(s.ring, s.ring.from_signed(values.astype(np.int64)), p, s.dealer.rng)


def less_than(s, x, y, holders):
    return _reshare(s, _open(s, x) < _open(s, y), x.shape[0])


def greater_than(s, x, y, holders):
    return _reshare(s, _open(s, x) > _open(s, y), x.shape[0])


def equal(s, x, y, holders):
    return _reshare(s, _open(s, x) == _open(s, y), x.shape[0])


def sign(s, x, holders):
    return _reshare(s, np.sign(_open(s, x)), x.shape[0])


def abs_value(s, x, holders):
    return _reshare(s, np.abs(_open(s, x)), x.shape[0])


def in_interval(s, x, lo, hi, holders):
    v = _open(s, x)
    return _reshare(s, (v >= lo) & (v <= hi), x.shape[0])
