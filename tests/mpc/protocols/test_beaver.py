import numpy as np
import pytest
from scipy import stats

from mpc.arith.sharing import additive_reconstruct, additive_share
from mpc.protocols.beaver import multiply, multiply_xor, open_shares
from mpc.session import Session


def _shared(s, values, p):
    return additive_share(s.ring, s.ring.element(values), p, s.rng)


@pytest.mark.parametrize("p", [2, 3, 5])
@pytest.mark.parametrize("bits", [1, 16, 40, 64])
def test_multiply_correct(p, bits):
    s = Session(p, bits=bits, frac_bits=0, seed=p * 100 + bits)
    x = s.rng.ring_elements(s.ring, (50, 3))
    y = s.rng.ring_elements(s.ring, (50, 3))
    z = multiply(s, _shared(s, x, p), _shared(s, y, p), np.arange(p))
    assert np.array_equal(additive_reconstruct(s.ring, z), s.ring.mul(x, y))


def test_multiply_exact_communication_two_parties():
    n, l = 1000, 40
    s = Session(2, seed=1)
    h = np.array([0, 1])
    with s.net.phase("mul"):
        multiply(s, _shared(s, np.arange(n), 2), _shared(s, np.arange(n), 2), h)
    ph = s.net.report()["phases"]["mul"]
    # online: each party sends d and e shares: 2 l bits per product, one round
    assert ph["online"]["bits"] == 2 * 2 * l * n
    assert ph["online"]["rounds"] == 1
    assert ph["online"]["max_party_sent_bits"] == 2 * l * n
    # offline: dealer sends 3 ring elements per triple to each party
    assert ph["offline"]["bits"] == 2 * 3 * l * n and ph["offline"]["rounds"] == 1


def test_multiply_per_edge_holders_p_parties():
    # each instance has its own 3 holders among 6 parties (edges of a hypergraph)
    s = Session(6, seed=2)
    edges = np.array([[0, 1, 2], [3, 4, 5], [0, 2, 4], [1, 3, 5]]).T   # (3, 4)
    x, y = np.array([1, 2, 3, 4]), np.array([5, -6, 7, 8])
    with s.net.phase("mul"):
        z = multiply(s, _shared(s, x, 3), _shared(s, y, 3), edges)
    assert np.array_equal(s.ring.to_signed(additive_reconstruct(s.ring, z)), x * y)
    ph = s.net.report()["phases"]["mul"]["online"]
    assert ph["bits"] == 4 * 3 * 2 * 2 * 40 and ph["rounds"] == 1
    sent, _ = s.net.party_bits()
    # party 0 is in two edges, sends 2 elements to 2 others in each
    assert sent[0] == 2 * 2 * 2 * 40


def test_fixed_point_product_needs_rescaling():
    s = Session(2, seed=3)
    fp = s.fp
    z = multiply(s, _shared(s, fp.encode(1.5), 2)[:, None], _shared(s, fp.encode(-2.0), 2)[:, None],
                 np.array([0, 1]))
    prod = s.ring.to_signed(additive_reconstruct(s.ring, z))
    assert prod[0] == -3 * fp.scale * fp.scale


def test_open_shares():
    s = Session(3, seed=4)
    x = np.arange(10)
    with s.net.phase("open"):
        out = open_shares(s, _shared(s, x, 3), np.arange(3))
    assert np.array_equal(out, x)
    ph = s.net.report()["phases"]["open"]["online"]
    assert ph["bits"] == 3 * 2 * 10 * 40 and ph["rounds"] == 1


def test_view_independent_of_other_party_input():
    """Party 1's view of x*y is the same law whether party 0's x is 0 or 2^39."""
    n = 20_000
    views = []
    for secret in (0, 1 << 39):
        s = Session(2, seed=secret % 97 + 5, record_views=True)
        x = _shared(s, np.full(n, secret), 2)
        y = _shared(s, np.full(n, 12345), 2)
        multiply(s, x, y, np.array([0, 1]))
        got = [r for r in s.net.view(1) if not r.offline]
        assert len(got) == 1 and got[0].sender == 0
        views.append(np.asarray(got[0].payload)[..., 0])  # party 0's share of d = x - a
    bins = np.uint64(36)
    c0 = np.bincount(views[0] >> bins, minlength=16)
    c1 = np.bincount(views[1] >> bins, minlength=16)
    assert stats.chi2_contingency(np.stack([c0, c1]))[1] > 1e-3


def test_dealer_triples_and_errors():
    s = Session(3, seed=5)
    a, b, c = s.dealer.beaver_triples(np.array([0, 2]), (4,))
    r = s.ring
    assert np.array_equal(r.mul(r.sum(a, 0), r.sum(b, 0)), r.sum(c, 0))
    with pytest.raises(ValueError, match="same shape"):
        multiply(s, np.zeros((2, 3), np.uint64), np.zeros((2, 4), np.uint64), np.array([0, 1]))
    with pytest.raises(ValueError, match="holders"):
        multiply(s, np.zeros((2, 3), np.uint64), np.zeros((2, 3), np.uint64), np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="outside"):
        s.dealer.beaver_triples(np.array([0, 99]), (2,))
    with pytest.raises(TypeError, match="uint64"):
        multiply(s, np.zeros((2, 3)), np.zeros((2, 3)), np.array([0, 1]))


def test_session_flags():
    assert Session(2, seed=1).insecure
    assert not Session(2).insecure
    with pytest.raises(ValueError, match="bits"):
        Session(2, bits=65)


def _xor_shared(s, words, p):
    sh = s.rng.ring_elements(s.ring, (p,) + np.shape(words))
    sh[0] = np.bitwise_xor.reduce(sh[1:], axis=0) ^ words if p > 1 else words
    return sh


@pytest.mark.parametrize("p", [2, 3, 5])
@pytest.mark.parametrize("bits", [1, 40, 64])
def test_multiply_xor_is_the_bitwise_and_with_its_stated_cost(p, bits):
    """XOR shares of x & y for random l-bit words; online one round, 2 (p-1) l bits sent per
    word by each holder; offline 3 l bits per word to each holder."""
    s = Session(p, bits=bits, frac_bits=0, seed=p * 1000 + bits)
    n = 37
    x = s.rng.ring_elements(s.ring, (n,))
    y = s.rng.ring_elements(s.ring, (n,))
    with s.net.phase("and"):
        z = multiply_xor(s, _xor_shared(s, x, p), _xor_shared(s, y, p), np.arange(p), s.ring)
    assert np.array_equal(np.bitwise_xor.reduce(z, axis=0), x & y)
    ph = s.net.report()["phases"]["and"]
    assert ph["online"]["rounds"] == 1
    assert ph["online"]["bits"] == p * (p - 1) * 2 * bits * n
    assert ph["online"]["max_party_sent_bits"] == (p - 1) * 2 * bits * n
    assert ph["offline"]["bits"] == p * 3 * bits * n
