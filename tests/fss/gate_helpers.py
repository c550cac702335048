"""Helpers shared by the FSS gate tests: sessions, shares, opening, measured costs."""

import numpy as np

from mpc.arith.sharing import additive_share
from mpc.session import Session


def session(n_parties, l, prefix="gates", **kw):
    return Session(n_parties, bits=l, frac_bits=min(14, l - 1), seed=f"{prefix}-{l}-{n_parties}",
                   **kw)


def share(s, values, p):
    return additive_share(s.ring, s.ring.from_signed(np.asarray(values, dtype=np.int64)), p,
                          s.rng.derive("test-shares"))


def open_(s, shares):
    return s.ring.to_signed(s.ring.sum(shares, axis=0))


def assert_costs(s, h, B, c):
    """The network's measurement of the gate calls in phase "computing" equals ``c`` per instance
    (:func:`fss.gates.costs`) for every key holder h[:2] and other holder h[2:]."""
    rep = s.net.report()["phases"]["computing"]
    assert rep["online"]["rounds"] == c["online_rounds"]
    assert rep["offline"]["rounds"] == c["offline_rounds"]
    sent, recv = s.net.party_bits()
    _, offr = s.net.party_bits(offline=True)
    for kh in h[:2]:
        assert sent[kh] == B * c["online_sent_key_holder"]
        assert recv[kh] == B * c["online_received_key_holder"]
        assert offr[kh] == B * c["offline_key_holder"]
    for o in h[2:]:
        assert sent[o] == B * c["online_sent_other"]
        assert offr[o] == B * c["offline_other"]
