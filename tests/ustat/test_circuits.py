"""Kernel circuits (ustat.umpc.circuits) against the dealer backend and the plaintext kernels.

Oracle: the dealer backend itself (``kernel.secure`` on :class:`SecureOps`,
FSS gates and Beaver products from the trusted dealer) on the same records,
reconstructed; and ``kernel.plain`` on the decoded records. Exhaustive at
small widths (every record in the domain, or every ring value), randomized
with boundaries at full width.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest

import ustat.kernels as K
from mpc.arith.ring import fixed_point
from mpc.arith.rng import CSPRNG
from mpc.arith.sharing import additive_share
from mpc.session import Session
from ustat.secure import SecureOps
from ustat.umpc.circuits import circuit_for, column_domain

K2 = ["gini", "kendall", "auc", "duplicate", "renyi2", "rand"]


def spec(bits, frac, in_frac=None):
    return SimpleNamespace(bits=bits, frac_bits=frac,
                           input_frac_bits=frac if in_frac is None else in_frac)


def share(values, bits, seed):
    """values (m, 2, d) uint64 -> (shares (2 members, 2 d, m), x for SecureOps)."""
    ring = fixed_point(bits, 0).ring
    m, _, d = values.shape
    S = additive_share(ring, np.moveaxis(values, 0, -1), 2, CSPRNG(seed=seed))  # (2, 2, d, m)
    x = [[S[:, i, c, :] for c in range(d)] for i in range(2)]
    cols = S.reshape(2, 2 * d, m)
    return cols, x


def dealer_values(kern, sp, values, seed=1):
    """The dealer backend's f on ``values`` (m, 2, d), reconstructed mod 2^l."""
    m = values.shape[0]
    cols, x = share(values, sp.bits, seed)
    s = Session(2, bits=sp.bits, frac_bits=sp.frac_bits, seed=seed)
    holders = np.stack([np.zeros(m, np.int64), np.ones(m, np.int64)])
    ops = SecureOps(s, holders, input_fp=fixed_point(sp.bits, sp.input_frac_bits))
    out = kern.secure(ops, x)
    return (out[0] + out[1]) & s.ring.mask, cols


def check(kern, sp, values, domain="validated", seed=1):
    want, cols = dealer_values(kern, sp, values, seed)
    kc = circuit_for(kern, sp, domain)
    got = kc.evaluate_plain(cols)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (kern.name, values[bad[0]].tolist(), int(got[bad[0]]), int(want[bad[0]]))
    return kc


def domain_values(kern, sp):
    """Every pair of records in the validated domain (column intervals; None: all ring values)."""
    dom = column_domain(kern, sp.input_frac_bits, "validated")
    ranges = [range(iv[0], iv[1] + 1) if iv else range(1 << sp.bits) for iv in dom]
    recs = np.array(list(itertools.product(*ranges)), dtype=np.uint64)       # (r, d)
    i, j = np.meshgrid(np.arange(len(recs)), np.arange(len(recs)), indexing="ij")
    return np.stack([recs[i.ravel()], recs[j.ravel()]], axis=1)             # (m, 2, d)


def ring_values(d, bits):
    grid = np.array(list(itertools.product(range(1 << bits), repeat=2 * d)), dtype=np.uint64)
    return grid.reshape(-1, 2, d)


# -- exhaustive at small widths ----------------------------------------------------------------
@pytest.mark.parametrize("name", K2)
def test_exhaustive_validated_domain(name):
    kern = K.get(name)
    bits = 6 if kern.categorical and name != "auc" else 10
    if name == "rand":
        bits = 4
    sp = spec(bits, 2, 3)
    check(kern, sp, domain_values(kern, sp))


@pytest.mark.parametrize("name", ["gini", "auc"])
def test_exhaustive_operand_as_wide_as_the_ring(name):
    """c_in = l - 2 (order kernels' choice): x_i - x_j needs all l bits, still no wrap."""
    kern = K.get(name)
    sp = spec(8, 2, 6)
    kc = check(kern, sp, domain_values(kern, sp))
    assert kc.operands[0].width == 8


def test_kendall_operands_as_wide_as_the_ring():
    kern = K.get("kendall")
    sp = spec(8, 2, 6)
    g = np.random.default_rng(0)
    vals = g.integers(0, 65, (20000, 2, 2)).astype(np.uint64)
    vals[:, 1, 0] = np.where(g.random(20000) < 0.2, vals[:, 0, 0], vals[:, 1, 0])    # ties
    vals[:4] = [[[0, 0], [64, 64]], [[64, 0], [0, 64]], [[64, 64], [64, 64]], [[0, 64], [64, 0]]]
    check(kern, sp, vals)


@pytest.mark.parametrize("name,bits", [("gini", 6), ("kendall", 4), ("auc", 4), ("duplicate", 6),
                                       ("rand", 4)])
def test_exhaustive_every_ring_value(name, bits):
    """domain='ring': equal to the dealer on every ring input, -2^(l-1) and wrap-around included."""
    kern = K.get(name)
    check(kern, spec(bits, 1, 1), ring_values(kern.columns, bits), domain="ring")


# -- randomized at full width, boundaries included ---------------------------------------------
def random_records(kern, sp, m, rng):
    top = 1 << sp.input_frac_bits
    levels = kern.extra.get("levels", {})
    cols = []
    for c in range(kern.columns):
        if c not in kern.categorical:
            v = rng.integers(0, top + 1, (m, 2))
            v[:8] = [[0, 0], [0, top], [top, 0], [top, top], [1, 0], [top - 1, top], [5, 5],
                     [top, top - 1]]
            v[8:m // 4, 1] = v[8:m // 4, 0]                      # ties
        elif c in levels:
            v = rng.integers(0, levels[c], (m, 2))
        else:
            v = rng.integers(-3, 3, (m, 2))
            v[:4] = [[-(1 << 40), -(1 << 40)], [1 << 40, -(1 << 40)], [7, 7], [2**50, 2**50 + 1]]
            v = v.astype(np.int64).astype(np.uint64) & np.uint64((1 << sp.bits) - 1)
        cols.append(v)
    return np.stack(cols, axis=-1).astype(np.uint64)            # (m, 2, d)


@pytest.mark.parametrize("name", K2)
@pytest.mark.parametrize("bits,frac,in_frac",
                         [(40, 14, 14), (40, 20, 12), (48, 16, 24), (64, 20, 30)])
def test_randomized_full_width(name, bits, frac, in_frac):
    kern = K.get(name)
    sp = spec(bits, frac, in_frac)
    rng = np.random.default_rng(bits + frac)
    check(kern, sp, random_records(kern, sp, 400, rng), seed=bits)


@pytest.mark.parametrize("name", K2)
def test_equals_plaintext_kernel(name):
    """f / 2^c equals kernel.plain on the decoded records (output scale = input scale)."""
    kern = K.get(name)
    sp = spec(40, 14)
    rng = np.random.default_rng(7)
    vals = random_records(kern, sp, 300, rng)
    cols, _ = share(vals, 40, 3)
    got = circuit_for(kern, sp).evaluate_plain(cols)
    fp = fixed_point(40, 14)
    X = np.empty(vals.shape)
    for c in range(kern.columns):
        X[..., c] = (fp.ring.to_signed(vals[..., c]) if c in kern.categorical
                     else fp.decode(vals[..., c]))
    np.testing.assert_array_equal(fp.decode(got), kern.plain(X))


# -- structure, derivation, errors ---------------------------------------------------------
def test_widths_follow_the_spec():
    g1 = circuit_for(K.get("gini"), spec(40, 14, 14))
    g2 = circuit_for(K.get("gini"), spec(40, 14, 20))
    assert [o.width for o in g1.operands] == [16]
    assert [o.width for o in g2.operands] == [22]
    assert g1.circuit.output_widths == (40,)
    assert circuit_for(K.get("gini"), spec(48, 16)).circuit.output_widths == (48,)


def test_user_kernel_is_derived_from_its_secure_definition():
    """A user kernel written from SecureOps gets a circuit: [|x - y| <= 1/4] by abs, in_interval."""

    def plain(X):
        return (np.abs(X[:, 0, 0] - X[:, 1, 0]) <= 0.25).astype(float)

    def secure(ops, x):
        d = ops.abs(ops.sub(x[0][0], x[1][0]))
        near = ops.in_interval(d, 0, ops.input_fp.scale // 4)
        return ops.to_fixed(ops.mul(near, ops.const(1, fixed=False)))

    kern = K.Kernel("near-test", 2, 1, plain, secure, (0.0, 1.0))
    sp = spec(12, 4, 3)
    check(kern, sp, domain_values(kern, sp))
    check(kern, sp, ring_values(1, 6) % np.uint64(64), domain="ring")


def test_degree_three_refused():
    with pytest.raises(ValueError, match="k = 2"):
        circuit_for(K.get("triples"), spec(40, 14))


def test_kernel_outside_secure_ops_refused():
    def secure(ops, x):
        return ops.session.ring.add(x[0][0], x[1][0])

    kern = K.Kernel("bad-test", 2, 1, lambda X: X[:, 0, 0], secure, (0.0, 1.0))
    with pytest.raises(ValueError, match="no garbled circuit"):
        circuit_for(kern, spec(40, 14))


def test_bad_domain_refused():
    with pytest.raises(ValueError, match="domain must be one of"):
        circuit_for(K.get("gini"), spec(40, 14), domain="all")
