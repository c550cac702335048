"""Builder circuits against Python: exhaustive at small widths, random and boundary at 40/64
bits; AND counts of the optimal free-XOR constructions; the U-MPC kernel shapes."""

import numpy as np
import pytest

from mpc.gc import EVALUATOR, GARBLER, CircuitBuilder, bits_to_int, evaluate
from tests.mpc.gc._helpers import load

OPS = {  # name: (build, python reference on Python ints, signed inputs, output width)
    "add": (lambda b, x, y: x + y, lambda x, y, w: x + y, False, 1),
    "sub": (lambda b, x, y: x - y, lambda x, y, w: x - y, False, 1),
    "neg": (lambda b, x, y: -x, lambda x, y, w: -x, False, 1),
    "add_carry": (lambda b, x, y: b.concat(*b.add_carry(x, y)), lambda x, y, w: x + y, False,
                  lambda w: w + 1),
    "lt_u": (lambda b, x, y: x.lt(y, signed=False), lambda x, y, w: x < y, False, 0),
    "lt_s": (lambda b, x, y: x.lt(y, signed=True), lambda x, y, w: x < y, True, 0),
    "le_s": (lambda b, x, y: x.le(y, signed=True), lambda x, y, w: x <= y, True, 0),
    "le_u": (lambda b, x, y: x.le(y, signed=False), lambda x, y, w: x <= y, False, 0),
    "gt_s": (lambda b, x, y: x.gt(y, signed=True), lambda x, y, w: x > y, True, 0),
    "gt_u": (lambda b, x, y: x.gt(y, signed=False), lambda x, y, w: x > y, False, 0),
    "ge_s": (lambda b, x, y: x.ge(y, signed=True), lambda x, y, w: x >= y, True, 0),
    "eq": (lambda b, x, y: x.eq(y), lambda x, y, w: x == y, False, 0),
    "ne": (lambda b, x, y: x.ne(y), lambda x, y, w: x != y, False, 0),
    "is_zero": (lambda b, x, y: b.is_zero(x), lambda x, y, w: x == 0, False, 0),
    "mux": (lambda b, x, y: b.mux(x.lt(y, signed=True), x, y), lambda x, y, w: min(x, y),
            True, 1),
    "abs": (lambda b, x, y: b.abs(x), lambda x, y, w: abs(x), True, 1),
    "mul": (lambda b, x, y: x * y, lambda x, y, w: x * y, False, 1),
    "mul_s": (lambda b, x, y: x * y, lambda x, y, w: x * y, True, 1),
    "mul_full_u": (lambda b, x, y: b.mul_full(x, y, signed=False), lambda x, y, w: x * y,
                   False, 2),
    "mul_full_s": (lambda b, x, y: b.mul_full(x, y, signed=True), lambda x, y, w: x * y,
                   True, 2),
    "sign": (lambda b, x, y: b.sign(x), lambda x, y, w: (x > 0) - (x < 0), True, -2),
    "bitwise": (lambda b, x, y: (x & y) | (~x ^ y), lambda x, y, w: (x & y) | (~x ^ y), False, 1),
    "shifts": (lambda b, x, y: b.concat(x << 1, b.shr(x, 1, signed=True),
                                        b.shr(x, 2, signed=False)),
               None, True, 3),
    "ext": (lambda b, x, y: b.concat(x.sext(x.width + 2), x.zext(x.width + 1)), None, True, 0),
    "const": (lambda b, x, y: x + 3, lambda x, y, w: x + 3, False, 1),
    "rsub_const": (lambda b, x, y: 1 - x, lambda x, y, w: 1 - x, False, 1),
}


def _out_width(w, factor):
    if callable(factor):
        return factor(w)
    return 2 if factor == -2 else (1 if factor == 0 else factor * w)


def _build(name, w):
    build = OPS[name][0]
    b = CircuitBuilder(name)
    x = b.input(w, party=GARBLER)
    y = b.input(w, party=EVALUATOR)
    b.output(build(b, x, y))
    return b.build()


def _signed(v, w):
    return [a - (1 << w) if a >> (w - 1) else a for a in v]


def _expected(name, xs, ys, w):
    ref, signed, factor = OPS[name][1:]
    ow = _out_width(w, factor)
    if name == "shifts":
        sx = _signed(xs, w)
        return [((x << 1) & ((1 << w) - 1)) | (((s >> 1) & ((1 << w) - 1)) << w)
                | ((x >> 2) << (2 * w)) for x, s in zip(xs, sx)]
    if name == "ext":
        sx = _signed(xs, w)
        return [(s % (1 << (w + 2))) | (x << (w + 2)) for x, s in zip(xs, sx)]
    a = _signed(xs, w) if signed else xs
    bb = _signed(ys, w) if signed else ys
    return [int(ref(p, q, w)) % (1 << ow) for p, q in zip(a, bb)]


def _run(c, xs, ys, w):
    x = np.array(xs, dtype=np.uint64)
    y = np.array(ys, dtype=np.uint64)
    return bits_to_int(evaluate(c, [x, y])[0])


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("w", [1, 2, 3, 5])
def test_builder_exhaustive_small_widths(name, w):
    c = _build(name, w)
    vals = np.arange(1 << w)
    xs = np.repeat(vals, 1 << w).tolist()
    ys = np.tile(vals, 1 << w).tolist()
    got = [int(v) for v in _run(c, xs, ys, w)]
    assert got == _expected(name, xs, ys, w)


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("w", [40, 64])
def test_builder_random_and_boundary(name, w, rng):
    if name.startswith("mul_full") and w == 64:
        w = 32           # the product is 128 bits; 32 keeps it within one uint64 reading
    c = _build(name, w)
    m = (1 << w) - 1
    edge = [0, 1, 2, (1 << (w - 1)) - 1, 1 << (w - 1), (1 << (w - 1)) + 1, m - 1, m]
    xs = [a for a in edge for _ in edge] + [int(v) & m for v in rng.uint64(100)]
    ys = [b for _ in edge for b in edge] + [int(v) & m for v in rng.uint64(100)]
    got = [int(v) for v in _run(c, xs, ys, w)]
    assert got == _expected(name, xs, ys, w)


@pytest.mark.parametrize("w", [8, 40, 64])
def test_and_counts_are_the_optimal_ones(w):
    expect = {"add": w - 1, "sub": w - 1, "neg": w - 2, "lt_u": w, "lt_s": w, "eq": w - 1,
              "mux": 2 * w, "abs": w - 1, "mul": w * w - w + 1, "sign": w - 1,
              "add_carry": w, "bitwise": 2 * w}
    got = {k: _build(k, w).n_and for k in expect}
    assert got == expect          # mux here includes its lt (w) and the select (w)
    assert _build("mul_full_u", 16).n_and == 2 * 16 * 16 - 16
    assert _build("mul_full_s", 16).n_and <= 2 * 16 * 16 - 16 + 4 * 16 - 2


def test_constant_folding_and_structural_hashing():
    b = CircuitBuilder()
    x = b.input(8, party=GARBLER)
    y = b.input(8, party=EVALUATOR)
    z = (x + 0) ^ (x ^ x) ^ (y & 0) ^ (y | 255) ^ b.const(255, 8)
    assert z.wires == x.wires            # everything folded away
    s1, s2 = x + y, x + y
    assert s1.wires == s2.wires          # built once
    assert (~~x).wires == x.wires
    b.output(z)
    b.output(b.const(6, 3))
    c = b.build()
    assert c.gate_counts == {"EQ": 2}
    o = evaluate(c, [np.array([77], np.uint64), np.array([5], np.uint64)])
    assert int(bits_to_int(o[0])[0]) == 77 and int(bits_to_int(o[1])[0]) == 6


def test_embed_a_bristol_circuit(rng):
    adder = load("adder64")
    b = CircuitBuilder()
    x = b.input(64, party=GARBLER)
    y = b.input(64, party=EVALUATOR)
    (s,) = b.embed(adder, x, y)
    b.output(s - y)                      # (x + y) - y = x
    c = b.build()
    assert c.n_and == 63 + 63
    xs, ys = rng.uint64(50), rng.uint64(50)
    np.testing.assert_array_equal(bits_to_int(evaluate(c, [xs, ys])[0]), xs)


def test_kernels_of_the_toolkit(rng):
    """The shapes U-MPC kernels use on l-bit two's-complement inputs (l = 40)."""
    l, P = 40, 300
    b = CircuitBuilder("kernels")
    x1, y1 = b.input(l, party=GARBLER), b.input(l, party=GARBLER)
    x2, y2 = b.input(l, party=EVALUATOR), b.input(l, party=EVALUATOR)
    r = b.input(l, party=GARBLER)
    gini = b.abs(x1.sext(l + 1) - x2.sext(l + 1))
    kendall = b.mul(b.sign(x1.sext(l + 1) - x2.sext(l + 1)),
                    b.sign(y1.sext(l + 1) - y2.sext(l + 1)))
    auc = b.concat(x1.eq(x2), x1.lt(x2, signed=True))   # 2 * 1[x<y] + 1[x=y] = 2 * AUC kernel
    b.output(gini.zext(l + 1) - r.sext(l + 1))           # masked by a ring element
    b.output(kendall)
    b.output(auc)
    b.output(x1.eq(x2))
    c = b.build()
    half = 1 << (l - 1)
    vals = [((rng.uint64(P) >> np.uint64(64 - l)).astype(np.int64) - half) for _ in range(4)]
    vals[2][:50] = vals[0][:50]                           # ties
    rr = rng.uint64(P) >> np.uint64(64 - l)
    out = evaluate(c, [vals[0], vals[1], vals[2], vals[3], rr])
    a1, b1, a2, b2 = vals
    r_s = _signed([int(v) for v in rr], l)
    expect = [(abs(int(p) - int(q)) - s) % (1 << (l + 1)) for p, q, s in zip(a1, a2, r_s)]
    assert [int(v) for v in bits_to_int(out[0])] == expect
    np.testing.assert_array_equal(bits_to_int(out[1], signed=True),
                                  np.sign(a1 - a2) * np.sign(b1 - b2))
    np.testing.assert_array_equal(bits_to_int(out[2]), 2 * (a1 < a2) + (a1 == a2))
    np.testing.assert_array_equal(out[3][:, 0], a1 == a2)


@pytest.mark.parametrize("fn, match, exc", [
    (lambda b, x, y, z: x + z, "same width", ValueError),
    (lambda b, x, y, z: x + 1.5, "must be a Word or an int", TypeError),
    (lambda b, x, y, z: b.mux(x, y, y), "1-bit Word", ValueError),
    (lambda b, x, y, z: b.input(0), "width must be a positive integer", ValueError),
    (lambda b, x, y, z: b.input(3, party=7), "party must be", ValueError),
    (lambda b, x, y, z: b.zext(x, 2), "width must be >=", ValueError),
    (lambda b, x, y, z: b.shl(x, -1), "shift must be", ValueError),
    (lambda b, x, y, z: b.const(1.0, 3), "value must be an integer", TypeError),
    (lambda b, x, y, z: b.add(x, CircuitBuilder().input(4)), "another builder", ValueError),
    (lambda b, x, y, z: b.embed(load("adder64"), x), "must give 2 words", ValueError),
    (lambda b, x, y, z: b.embed(load("adder64"), x, y), "must have width 64", ValueError),
    (lambda b, x, y, z: b.output(3), "must be a Word", TypeError),
])
def test_builder_errors(fn, match, exc):
    b = CircuitBuilder()
    x, y, z = b.input(4, party=GARBLER), b.input(4, party=EVALUATOR), b.input(5, party=GARBLER)
    with pytest.raises(exc, match=match):
        fn(b, x, y, z)


def test_parties_all_or_none():
    b = CircuitBuilder()
    b.input(2, party=GARBLER)
    b.output(b.input(2))
    with pytest.raises(ValueError, match="give a party to every input or to none"):
        b.build()
