"""bell-2pc: kernel circuits, exactness at eps = inf, GC = plain, measured bits, unbiasedness,
errors."""

import json
import math

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from mpc.gc import bits_to_int, evaluate
from tests.api import flat_protocol
from ustat import kernels as K
from ustat.baselines import _common as C
from ustat.baselines.bell_2pc import make_pairs
from ustat.baselines.bell_2pc_circuits import (
    SUPPORTED,
    kernel_spec,
    output_width,
    pair_circuit,
)

from ._data import correlated_pairs, scored_labels


def _records(kernel, n, seed=1):
    if kernel == "auc":
        return scored_labels(n, seed)
    g = CSPRNG(seed)
    if kernel in ("duplicate", "renyi2"):
        return g.integers(5, (n,)).astype(float)[:, None]
    if kernel == "rand":
        return np.column_stack([g.integers(3, (n,)), g.integers(3, (n,))]).astype(float)
    X = correlated_pairs(n, seed)
    return X[:, :1] if kernel == "gini" else X


@pytest.mark.parametrize("kernel", SUPPORTED)
def test_kernel_circuit_equals_the_kernel_on_every_pair_of_cells(kernel):
    """Exhaustive on the grid (t = 4): circuit value / scale == kern.plain on representatives."""
    kern = K.get(kernel)
    X = _records(kernel, 50)
    grid = C.make_grid(X, kern, 4, levels=None if kernel == "auc" else 5)
    spec = kernel_spec(kern, grid)
    T = grid.domain
    a, b = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")
    a, b = a.ravel(), b.ravel()
    reps = grid.representatives()
    cells = np.stack(np.unravel_index(np.arange(T), grid.sizes), axis=1)
    packed = np.zeros(T, dtype=np.uint64)
    at = 0
    for c, w in enumerate(spec.col_bits):
        packed |= cells[:, c].astype(np.uint64) << np.uint64(at)
        at += w
    out = evaluate(pair_circuit(spec, None, 40), [packed[a], packed[b]])[0]
    v = bits_to_int(out, signed=True).astype(np.int64)
    expect = kern.plain(np.stack([reps[a], reps[b]], axis=1))
    np.testing.assert_array_equal(v / spec.scale, expect)
    assert v.min() >= spec.lo and v.max() <= spec.hi


def test_pairs_each_user_p_times_and_all_pairs():
    g, e = make_pairs(10, 3, CSPRNG(1))
    counts = np.bincount(np.concatenate([g, e]), minlength=10)
    assert g.size == 15 and np.all(counts == 3) and np.all(g != e)
    g, e = make_pairs(7, 2, CSPRNG(2))                # odd n: one user per permutation sits out
    assert g.size == 6 and np.bincount(np.concatenate([g, e]), minlength=7).max() == 2
    g, e = make_pairs(6, "all", CSPRNG(3))
    assert g.size == 15 and np.all(g < e)


@pytest.mark.parametrize("kernel", SUPPORTED)
def test_privacy_off_equals_the_plaintext_pair_average_exactly(kernel):
    X = _records(kernel, 24, seed=4)
    kw = {} if kernel == "auc" else {"levels": 5}
    r = flat_protocol("bell-2pc", X, kernel, epsilon=math.inf, bins=8, pairs=2, seed=5,
                      evaluate=True, **kw)
    assert r.u_hat == r.evaluation["u_pairs"]            # kern.plain on the discretized pairs
    assert r.params["n_pairs"] == 24 and r.delta == 0.0
    if kernel == "auc":
        aux = [float(X[:, 1].sum())]
        assert r.estimate == K.get("auc").release(r.u_hat, aux, 24)


def test_all_pairs_privacy_off_is_the_complete_discretized_u_statistic():
    X = correlated_pairs(16, 6)
    r = flat_protocol("bell-2pc", X, "kendall", epsilon=math.inf, bins=8, pairs="all", seed=7,
                      evaluate=True)
    assert r.params["n_pairs"] == 120
    assert r.u_hat == pytest.approx(r.evaluation["u_discretized"], abs=1e-15)


def test_garbled_and_plain_engines_agree_on_the_same_coins():
    X = correlated_pairs(30, 8)
    a = flat_protocol("bell-2pc", X, "kendall", epsilon=1.0, bins=8, pairs=2, seed=9)
    b = flat_protocol("bell-2pc", X, "kendall", epsilon=1.0, bins=8, pairs=2, seed=9,
                      engine="plain")
    assert a.estimate == b.estimate and a.params["n_and"] == b.params["n_and"]
    assert a.estimate != flat_protocol("bell-2pc", X, "kendall", epsilon=1.0, bins=8, pairs=2,
                                       seed=10).estimate
    assert b.offline_bits == 128 * 30 and any("engine='plain'" in s for s in b.notes)


@pytest.mark.parametrize("pairs", [1, "all"])
def test_measured_bits_equal_the_formula(pairs):
    """256 bits per AND + 128 per garbler label + 129 per evaluator bit + base OTs + report."""
    n = 12
    X = correlated_pairs(n, 11)
    r = flat_protocol("bell-2pc", X, "kendall", epsilon=1.0, bins=8, pairs=pairs, seed=12,
                      delta=1e-6)
    R = r.params["noise_bits"]
    kern = K.get("kendall")
    spec = kernel_spec(kern, C.make_grid(X, kern, 8))
    m = spec.record_bits + R + 1                      # evaluator input bits = garbler input bits
    npairs = n // 2 if pairs == 1 else n * (n - 1) // 2
    n_and = r.params["n_and"]
    w = output_width(spec, r.theory["noise_table_size"])
    assert r.params["output_bits"] == w
    ot = 264 + 264 * m + 128 * m                      # Chou-Orlandi direct (m < 128 per pair)
    assert r.offline_bits == npairs * (256 * n_and + ot) + 128 * n
    assert r.online_bits == npairs * (128 * m + 129 * m + 2 * w)
    assert r.rounds == 3 and r.offline_rounds == 5    # seed; OT 3; tables 1
    yao = r.theory["yao"]
    assert yao["per_instance"]["tables"] == 256 * n_and and yao["instances"] == npairs
    json.dumps(r.to_dict())


def test_all_pairs_uses_advanced_composition_and_reports_delta():
    X = correlated_pairs(40, 13)
    r = flat_protocol("bell-2pc", X, "kendall", epsilon=1.0, bins=4, pairs="all", delta=1e-8,
                      engine="plain", seed=14)
    assert r.params["composition"] == "advanced" and r.params["eps_pair"] < 1.0 / 39 * 2
    assert r.delta == pytest.approx(1e-8 + 39 * r.theory["delta_pair"])   # delta' + 39 delta_pair
    assert r.delta < 3e-8
    s = flat_protocol("bell-2pc", X, "kendall", epsilon=1.0, bins=4, pairs=3, engine="plain",
                      seed=14)
    assert s.params["eps_pair"] == pytest.approx(1 / 3) and s.params["composition"] == "basic"
    assert s.delta == pytest.approx(3 * s.theory["delta_pair"]) and s.delta < 1e-9


@pytest.mark.slow
def test_unbiased_with_theorem5_mse():
    """300 runs (plain engine, same coins law as the GC): mean within 4 sigma, MSE near Theorem 5.

    Truth: the complete discretized U-statistic. The MSE over 300 runs has a relative
    standard error of about sqrt(2/300) = 8% (near-Gaussian errors): tolerance 30%.
    """
    X = correlated_pairs(200, 15)
    runs = 300
    first = flat_protocol("bell-2pc", X, "kendall", epsilon=1.0, bins=8, pairs=2,
                          engine="plain", evaluate=True)
    truth = first.evaluation["u_discretized"]
    est = np.array([flat_protocol("bell-2pc", X, "kendall", epsilon=1.0, bins=8, pairs=2,
                                  engine="plain").estimate_raw for _ in range(runs)])
    mse_thm5 = first.evaluation["mse_thm5"]
    assert abs(est.mean() - truth) < 4 * math.sqrt(mse_thm5 / runs)
    assert np.mean((est - truth) ** 2) == pytest.approx(mse_thm5, rel=0.3)


def test_errors_name_the_parameter():
    X = correlated_pairs(20)
    with pytest.raises(ValueError, match="degree-2"):
        flat_protocol("bell-2pc", CSPRNG(1).random((20, 1)), "triples", bins=4)
    with pytest.raises(ValueError, match="pairs must be >= 1"):
        flat_protocol("bell-2pc", X, "kendall", bins=4, pairs=0)
    with pytest.raises(TypeError, match="pairs must be a positive integer"):
        flat_protocol("bell-2pc", X, "kendall", bins=4, pairs="some")
    with pytest.raises(ValueError, match="engine must be"):
        flat_protocol("bell-2pc", X, "kendall", bins=4, engine="fss")
    with pytest.raises(ValueError, match="noise_bits"):
        flat_protocol("bell-2pc", X, "kendall", bins=4, noise_bits=4)
    with pytest.raises(ValueError, match="delta must be in"):
        flat_protocol("bell-2pc", X, "kendall", bins=4, pairs="all", delta=0.0)
    with pytest.raises(ValueError, match="bins must be >= 2"):
        flat_protocol("bell-2pc", X, "kendall", bins=1)
    with pytest.raises(ValueError, match="at least"):
        flat_protocol("bell-2pc", X[:1], "kendall", bins=4)
    user = K.Kernel("bell2pc-test-prod", 2, 1, lambda Z: Z[:, 0, 0] * Z[:, 1, 0],
                    lambda ops, x: None, (0.0, 1.0))
    with pytest.raises(ValueError, match="has none"):
        flat_protocol("bell-2pc", X[:, :1], user, bins=4)


def test_chunked_yao_calls_count_rounds_once(monkeypatch):
    """Pairs split over several Yao calls (small table budget): same output and rounds, bits add."""
    from ustat.baselines import bell_2pc

    X = correlated_pairs(40, 16)
    whole = flat_protocol("bell-2pc", X, "kendall", epsilon=1.0, bins=8, seed=17)
    monkeypatch.setattr(bell_2pc, "CHUNK_BYTES", 32 * whole.params["n_and"] * 7)
    parts = flat_protocol("bell-2pc", X, "kendall", epsilon=1.0, bins=8, seed=17)
    assert parts.theory["yao"]["calls"] == 3 and whole.theory["yao"]["calls"] == 1
    assert parts.estimate == whole.estimate
    assert (parts.rounds, parts.offline_rounds) == (whole.rounds, whole.offline_rounds)
    assert (parts.online_bits, parts.offline_bits) == (whole.online_bits, whole.offline_bits)
