"""Dealing a chunk's preprocessing ahead: PrepTape, SecureOps(tape=...), prepare/finish_chunk.

``finish_chunk(prepare_chunk(spec, i, m_c), values)`` must return the bits of
``run_chunk(spec, i, values)`` (shares and traffic) for every degree-2 kernel
on the dealer backend; a kernel whose secure evaluation is not data-oblivious
must be caught, never silently use misplaced preprocessing.
"""

import dataclasses
import pickle

import numpy as np
import pytest

import ustat.umpc.protocol as protocol
from mpc.arith.ring import fixed_point
from mpc.arith.rng import CSPRNG
from mpc.arith.sharing import additive_share
from mpc.session import Session
from tests.api import flat_umpc
from ustat import kernels as K
from ustat.secure import PrepTape, SecureOps
from ustat.umpc.chunk import (
    ChunkSpec,
    PreparedChunk,
    can_prepare,
    finish_chunk,
    prepare_chunk,
    run_chunk,
)

DEGREE2 = [n for n in K.names() if K.get(n).degree == 2]
DEGREE3 = [n for n in K.names() if K.get(n).degree == 3]


# -- helpers ---------------------------------------------------------------------------------------
def _spec(kernel, backend="dealer", record_views=False, bits=40, frac=14, in_frac=14, seed=4):
    kern = K.get(kernel) if isinstance(kernel, str) else kernel
    return ChunkSpec(kernel=kern, bits=bits, frac_bits=frac, input_frac_bits=in_frac,
                     roles=("dealer", "aggregator"), streams=CSPRNG(seed).derive("chunks"),
                     backend=backend, record_views=record_views)


def _records(kern, n, seed):
    """Records on a grid of 1/8 (ties in numeric columns), categorical columns as small ints."""
    g = np.random.default_rng(seed)                   # test data only
    X = np.round(g.random((n, kern.columns)) * 8) / 8
    for c in kern.categorical:
        X[:, c] = g.integers(0, kern.extra.get("levels", {}).get(c, 3), n)
    return X


def _values(kern, m, seed, bits=40, in_frac=14):
    """Encoded (m, k, d) chunk values and the records they encode (m, k, d)."""
    fp = fixed_point(bits, in_frac)
    X = _records(kern, kern.degree * m, seed)
    enc = np.empty(X.shape, np.uint64)
    for c in range(kern.columns):
        enc[:, c] = (fp.ring.from_signed(X[:, c].astype(np.int64)) if c in kern.categorical
                     else fp.encode(X[:, c]))
    shape = (m, kern.degree, kern.columns)
    return enc.reshape(shape), X.reshape(shape)


def _same_result(a, b):
    assert a.index == b.index
    assert a.shares.dtype == b.shares.dtype == np.uint64
    assert np.array_equal(a.shares, b.shares)
    assert pickle.dumps(a.traffic) == pickle.dumps(b.traffic)


def _opened(spec, res):
    fp = fixed_point(spec.bits, spec.frac_bits)
    return fp.decode(np.sum(res.shares, axis=0, dtype=np.uint64) & fp.ring.mask)


# -- prepare-then-finish equals run_chunk ----------------------------------------------------------
def test_every_degree_two_kernel_is_covered():
    assert {"gini", "kendall", "auc", "duplicate", "rand", "renyi2"} <= set(DEGREE2)
    assert {"triples", "vus"} <= set(DEGREE3)


@pytest.mark.parametrize("name", DEGREE2)
def test_prepared_chunks_equal_run_chunk(name):
    kern = K.get(name)
    spec = _spec(name)
    assert can_prepare(spec)
    for index, m in ((0, 40), (1, 40), (7, 33)):
        values, X = _values(kern, m, seed=10 * index + 1)
        prepared = prepare_chunk(spec, index, m)
        assert isinstance(prepared, PreparedChunk) and prepared.edges == m
        assert len(prepared.tape) > 0 and not prepared.tape.recording
        fin = finish_chunk(prepared, values)
        ref = run_chunk(spec, index, values)
        _same_result(fin, ref)
        assert len(prepared.tape) == 0                  # everything dealt was used
        # and the shares open to the kernel on the records (exact on the 1/8 grid)
        np.testing.assert_allclose(_opened(spec, fin), kern.plain(X), rtol=0, atol=2.0 ** -12)
    # different chunks, different streams
    assert not np.array_equal(fin.shares, run_chunk(spec, 8, values).shares)


@pytest.mark.parametrize("name", ["gini", "kendall"])
def test_prepared_chunks_equal_run_chunk_on_other_widths(name):
    kern = K.get(name)
    spec = _spec(name, bits=48, frac=16, in_frac=20, seed=9)
    values, _X = _values(kern, 25, seed=3, bits=48, in_frac=20)
    _same_result(finish_chunk(prepare_chunk(spec, 2, 25), values), run_chunk(spec, 2, values))


def test_prepare_chunk_moves_only_dealer_traffic():
    """The plan sends nothing online and only dealer -> member offline traffic."""
    spec = _spec("gini")
    prepared = prepare_chunk(spec, 0, 12)
    rep = prepared.session.net.report()
    assert rep["online"]["bits"] == 0 and rep["online"]["rounds"] == 0
    assert rep["offline"]["bits"] > 0
    assert rep["offline"]["roles"]["dealer"]["sent_bits"] == rep["offline"]["bits"]
    values, _ = _values(K.get("gini"), 12, seed=2)
    ref = run_chunk(spec, 0, values)
    assert ref.traffic.cells[("computing", True)][:3] == \
        prepared.session.net.traffic().cells[("computing", True)][:3]


def test_finishing_order_does_not_matter():
    """Several chunks prepared first, finished in another order: each still equals run_chunk."""
    spec = _spec("auc")
    kern = spec.kernel
    prepared = [prepare_chunk(spec, i, 20) for i in range(3)]
    for i in (2, 0, 1):
        values, _ = _values(kern, 20, seed=i)
        _same_result(finish_chunk(prepared[i], values), run_chunk(spec, i, values))


@pytest.fixture(scope="module")
def captured_runs():
    """The ChunkSpec and chunk tasks of small run_umpc runs (300 records, chunks of 100)."""
    out = {}
    real = protocol.run_chunks

    def grab(spec, tasks, n, **kw):
        out[spec.kernel.name] = (spec, tasks)
        return real(spec, tasks, n, **kw)

    protocol.run_chunks = grab
    try:
        for name in DEGREE2:
            kern = K.get(name)
            X = _records(kern, 300, seed=5)
            flat_umpc(X, name, epsilon=1.0, threat_model="hf", seed=5, workers=1, chunk_size=100)
    finally:
        protocol.run_chunks = real
    return out


@pytest.mark.parametrize("name", DEGREE2)
def test_prepared_chunks_of_a_real_run_equal_run_chunk(captured_runs, name):
    spec, tasks = captured_runs[name]
    assert spec.backend == "dealer" and can_prepare(spec)
    chunks = list(tasks)
    assert len(chunks) >= 3
    for i, v in chunks[:3] + chunks[-1:]:
        _same_result(finish_chunk(prepare_chunk(spec, i, v.shape[0]), v), run_chunk(spec, i, v))


# -- can_prepare and errors ------------------------------------------------------------------------
@pytest.mark.parametrize("spec_kw", [
    {"kernel": "gini", "backend": "gc"},
    {"kernel": "auc", "backend": "gc"},
    {"kernel": "vus"},
    {"kernel": "triples"},
    {"kernel": "gini", "record_views": True},
    {"kernel": "kendall", "record_views": True},
])
def test_can_prepare_refuses_and_prepare_chunk_raises(spec_kw):
    spec = _spec(**spec_kw)
    assert can_prepare(spec) is False
    with pytest.raises(ValueError, match="prepare_chunk"):
        prepare_chunk(spec, 0, 5)


@pytest.mark.parametrize("name", DEGREE2)
def test_can_prepare_accepts_degree_two_dealer_kernels(name):
    assert can_prepare(_spec(name)) is True


@pytest.mark.parametrize("shape_change", ["edges", "members", "columns", "flat"])
def test_finish_chunk_rejects_values_of_the_wrong_shape(shape_change):
    spec = _spec("kendall")                                # 2 columns
    values, _ = _values(spec.kernel, 10, seed=1)
    prepared = prepare_chunk(spec, 0, 10)
    bad = {"edges": values[:9],
           "members": np.concatenate([values, values[:, :1]], axis=1),
           "columns": values[:, :, :1],
           "flat": values.reshape(10, 4)}[shape_change]
    with pytest.raises((ValueError, TypeError)):
        finish_chunk(prepared, bad)
    # a refused call consumes nothing: the chunk still finishes to run_chunk's bits
    assert len(prepared.tape) > 0
    _same_result(finish_chunk(prepared, values), run_chunk(spec, 0, values))


def test_finish_chunk_message_and_dtype():
    spec = _spec("gini")
    values, _ = _values(spec.kernel, 6, seed=1)
    with pytest.raises(ValueError, match="prepared for 6 edges"):
        finish_chunk(prepare_chunk(spec, 0, 6), values[:5])
    with pytest.raises(TypeError, match="unsigned"):
        finish_chunk(prepare_chunk(spec, 0, 6), values.astype(np.int64))
    # a narrower unsigned type holding the same words is accepted, as by run_chunk
    small = (values % np.uint64(1 << 16)).astype(np.uint32)
    _same_result(finish_chunk(prepare_chunk(spec, 0, 6), small), run_chunk(spec, 0, small))


def test_a_prepared_chunk_cannot_be_finished_twice():
    """Its dealt masks and keys are used once: a second finish is refused before it sends."""
    spec = _spec("duplicate")
    values, _ = _values(spec.kernel, 8, seed=1)
    prepared = prepare_chunk(spec, 0, 8)
    finish_chunk(prepared, values)
    sent = prepared.session.net.report()
    with pytest.raises(RuntimeError, match="finished already"):
        finish_chunk(prepared, values)
    assert prepared.session.net.report() == sent


@pytest.mark.parametrize("edges", [0, -3, 2.5, True, "8"])
def test_prepare_chunk_needs_a_positive_integer_edge_count(edges):
    with pytest.raises(ValueError, match="positive integer"):
        prepare_chunk(_spec("gini"), 0, edges)


def _branchy(plan, replay, name="branchy"):
    """A degree-2 kernel whose secure function runs ``plan`` when planning, ``replay`` otherwise."""
    def secure(ops, x):
        d = ops.sub(x[0][0], x[1][0])
        return (plan if ops.tape is not None and ops.tape.recording else replay)(ops, d)
    return dataclasses.replace(K.get("gini"), name=name, secure=secure)


def _abs(ops, d):
    return ops.abs(d, bound=1)


def _abs_then_mul(ops, d):
    a = ops.abs(d, bound=1)
    return ops.mul(a, ops.const(1, fixed=False))


def _sign(ops, d):
    return ops.to_fixed(ops.sign(d, bound=1))


def test_finish_chunk_catches_a_kernel_that_runs_fewer_operations_than_planned():
    spec = _spec(_branchy(_abs_then_mul, _abs))
    assert can_prepare(spec)
    values, _ = _values(K.get("gini"), 7, seed=1)
    prepared = prepare_chunk(spec, 0, 7)
    assert len(prepared.tape) == 2
    with pytest.raises(RuntimeError, match=r"1 more operations.*data-oblivious"):
        finish_chunk(prepared, values)


def test_finish_chunk_catches_a_kernel_that_runs_more_operations_than_planned():
    spec = _spec(_branchy(_abs, _abs_then_mul))
    values, _ = _values(K.get("gini"), 7, seed=1)
    with pytest.raises(RuntimeError, match=r"after the operations it planned.*data-oblivious"):
        finish_chunk(prepare_chunk(spec, 0, 7), values)


def test_finish_chunk_catches_a_kernel_that_runs_another_operation():
    spec = _spec(_branchy(_abs, _sign))
    values, _ = _values(K.get("gini"), 7, seed=1)
    with pytest.raises(RuntimeError, match=r"where it planned.*data-oblivious"):
        finish_chunk(prepare_chunk(spec, 0, 7), values)


def test_a_data_oblivious_custom_kernel_prepares_exactly():
    """The same branchy helper with plan == replay is fine (control for the tests above)."""
    spec = _spec(_branchy(_abs_then_mul, _abs_then_mul))
    values, X = _values(K.get("gini"), 9, seed=4)
    fin = finish_chunk(prepare_chunk(spec, 3, 9), values)
    _same_result(fin, run_chunk(spec, 3, values))
    np.testing.assert_array_equal(_opened(spec, fin), np.abs(X[:, 0, 0] - X[:, 1, 0]))


# -- PrepTape --------------------------------------------------------------------------------------
def test_prep_tape_records_then_replays_in_order():
    tape = PrepTape()
    assert tape.recording and len(tape) == 0
    tape.record(("less_than", (3,)), "a")
    tape.record(("mul", (3, 2)), "b")
    assert len(tape) == 2
    with pytest.raises(RuntimeError, match="still recording"):
        tape.take(("less_than", (3,)))
    assert tape.replay() is tape and not tape.recording
    assert tape.take(("less_than", (3,))) == "a"
    assert len(tape) == 1
    assert tape.take(("mul", (3, 2))) == "b"
    assert len(tape) == 0
    with pytest.raises(RuntimeError, match=r"after the operations it planned.*data-oblivious"):
        tape.take(("mul", (3, 2)))


@pytest.mark.parametrize("planned,asked", [
    (("less_than", (3,)), ("sign", (3,))),          # another operation
    (("less_than", (3,)), ("less_than", (4,))),     # another shape
    (("mul", (3, 2)), ("mul", (3, 1))),             # another number of products
])
def test_prep_tape_take_refuses_a_mismatch(planned, asked):
    tape = PrepTape()
    tape.record(planned, object())
    tape.replay()
    with pytest.raises(RuntimeError, match="data-oblivious") as info:
        tape.take(asked)
    assert str(asked) in str(info.value) and str(planned) in str(info.value)


def _edge_session(m, seed="tape"):
    s = Session(2 * m, bits=40, frac_bits=14, seed=seed)
    return s, np.arange(2 * m, dtype=np.int64).reshape(m, 2).T


def _shares(s, values, label):
    fp = s.fp
    return additive_share(s.ring, fp.encode(values), 2, s.rng.derive("test", label))


def _program(ops, a, b):
    """Every plannable operation, batched and single, with and without an operand bound."""
    lt, gt2 = ops.less_than_many([(a, b), (b, a)], bound=1)
    gt = ops.greater_than(a, b)
    eq1, eq2 = ops.equal_many([(a, b), (a, a)])
    sg = ops.sign_many([ops.sub(a, b), ops.sub(b, a)], bound=1)
    ab = ops.abs(ops.sub(a, b), bound=1)
    ab_full = ops.abs(ops.sub(a, b))
    iv = ops.in_interval(a, 0, 1 << 13)                 # a <= 0.5 (14 fractional bits)
    prod, sq = ops.mul_many([(ab, ab_full), (lt, gt)])
    return [lt, gt2, gt, eq1, eq2, sg[0], sg[1], ab, ab_full, iv, prod, sq]


def test_secure_ops_plan_then_replay_equals_a_single_pass():
    m = 30
    g = np.random.default_rng(0)                        # test data only
    x = np.round(g.random(m) * 8) / 8
    y = np.round(g.random(m) * 8) / 8
    y[:4] = x[:4]                                       # ties
    runs = []
    for planned in (False, True):
        s, h = _edge_session(m)
        with s.net.phase("computing"):
            tape = None
            if planned:
                tape = PrepTape()
                zeros = np.zeros((2, m), dtype=np.uint64)
                outs = _program(SecureOps(s, h, tape=tape), zeros, zeros)
                assert all(o.shape == (2, m) and not o.any() for o in outs)
                assert s.net.report()["online"]["bits"] == 0
                tape.replay()
            A, B = _shares(s, x, "x"), _shares(s, y, "y")
            outs = _program(SecureOps(s, h, tape=tape), A, B)
        if planned:
            assert len(tape) == 0
        runs.append((s, outs))
    (sa, plain), (sb, replayed) = runs
    for u, v in zip(plain, replayed):
        assert np.array_equal(u, v)
    assert sa.net.report() == sb.net.report()
    assert pickle.dumps(sa.net.traffic()) == pickle.dumps(sb.net.traffic())

    def op(v):
        return sb.ring.to_signed(sb.ring.sum(v, axis=0))

    assert np.array_equal(op(replayed[0]), (x < y).astype(int))
    assert np.array_equal(op(replayed[2]), (x > y).astype(int))
    assert np.array_equal(op(replayed[3]), (x == y).astype(int))
    assert np.array_equal(op(replayed[4]), np.ones(m, int))
    assert np.array_equal(op(replayed[5]), np.sign(x - y).astype(int))
    assert np.array_equal(sb.fp.decode(sb.ring.sum(replayed[7], axis=0)), np.abs(x - y))
    assert np.array_equal(op(replayed[9]), (x <= 0.5).astype(int))


def test_secure_ops_recording_deals_the_offline_part_only():
    m = 12
    plain, h = _edge_session(m, "offline")
    A = _shares(plain, np.linspace(0, 1, m), "x")
    SecureOps(plain, h).abs(A, bound=1)
    s, _ = _edge_session(m, "offline")
    tape = PrepTape()
    out = SecureOps(s, h, tape=tape).abs(A, bound=1)
    assert out.shape == (2, m) and out.dtype == np.uint64 and not out.any()
    assert len(tape) == 1
    rep, ref = s.net.report(), plain.net.report()
    assert rep["online"]["bits"] == 0 and rep["online"]["rounds"] == 0
    assert rep["offline"] == ref["offline"]


def test_secure_ops_replay_of_another_operation_raises():
    m = 10
    s, h = _edge_session(m, "mismatch")
    tape = PrepTape()
    zeros = np.zeros((2, m), dtype=np.uint64)
    SecureOps(s, h, tape=tape).abs(zeros)
    tape.replay()
    ops = SecureOps(s, h, tape=tape)
    A = _shares(s, np.linspace(0, 1, m), "x")
    with pytest.raises(RuntimeError, match="data-oblivious"):
        ops.mul(A, A)


def test_secure_ops_replay_of_another_shape_raises():
    s, h = _edge_session(10, "shape")
    tape = PrepTape()
    SecureOps(s, h, tape=tape).sign(np.zeros((2, 10), dtype=np.uint64))
    tape.replay()
    h8 = h[:, :8]
    with pytest.raises(RuntimeError, match="data-oblivious"):
        SecureOps(s, h8, tape=tape).sign(np.zeros((2, 8), dtype=np.uint64))


def test_secure_ops_replay_of_more_operations_raises():
    s, h = _edge_session(5, "more")
    tape = PrepTape()
    zeros = np.zeros((2, 5), dtype=np.uint64)
    SecureOps(s, h, tape=tape).mul(zeros, zeros)
    tape.replay()
    ops = SecureOps(s, h, tape=tape)
    A = _shares(s, np.linspace(0, 1, 5), "x")
    ops.mul(A, A)
    assert len(tape) == 0
    with pytest.raises(RuntimeError, match="after the operations it planned"):
        ops.mul(A, A)


def test_prep_tape_needs_fss_comparisons():
    s = Session(9, bits=40, frac_bits=14, seed="k3")
    h3 = np.arange(9, dtype=np.int64).reshape(3, 3).T   # k = 3 members: circuit comparisons
    with pytest.raises(ValueError, match="FSS"):
        SecureOps(s, h3, tape=PrepTape())
    _, h2 = _edge_session(3, "k2")
    with pytest.raises(ValueError, match="FSS"):
        SecureOps(s, h2, comparison="circuit", tape=PrepTape())
    # without a tape both are fine, and k = 2 with a tape is fine
    assert SecureOps(s, h3).comparison == "circuit"
    assert SecureOps(s, h2, tape=PrepTape()).comparison == "fss"


def test_secure_ops_bound_mismatch_is_caught_by_the_tape_before_opening():
    m = 6
    s, h = _edge_session(m, "bound-early")
    tape = PrepTape()
    SecureOps(s, h, tape=tape).abs(np.zeros((2, m), dtype=np.uint64), bound=1)
    tape.replay()
    A = _shares(s, np.linspace(0, 1, m), "x")
    online = s.net.report()["online"]["bits"]
    with pytest.raises(RuntimeError, match="data-oblivious"):
        SecureOps(s, h, tape=tape).abs(A)          # a part dealt for 16 bits, used on 40
    assert s.net.report()["online"]["bits"] == online      # refused before any opening
    assert s.net.report()["online"]["bits"] == 0
