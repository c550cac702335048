"""Base OT with a peer whose process vanished (a dropout, issue 36 item 5).

In a run across processes, what a vanished process owed reads as zeros
(:mod:`mpc.wire.transport`), never a curve point. The base OT skips the OTs
whose peer vanished (their keys stay zero) instead of failing to decode the
zeros, and the OTs between the other parties are still correct. The
simulator stands in for the processes: party 3 is made remote and vanished.
"""

import numpy as np
import pytest

from mpc.arith.rng import as_rng
from mpc.ot import available_groups
from mpc.ot.base import BaseOTBatch
from mpc.ot.group import SCALAR_RAW_BYTES, get_group
from mpc.session import Session

GONE = 3


def _as_if_party_vanished(net, monkeypatch):
    """``net`` as seen from a process that holds every party but ``GONE``, whose process
    vanished (the rows it owed stay zero: nothing writes them in the simulator)."""
    monkeypatch.setattr(net, "is_local", lambda ids: np.asarray(ids) != GONE)
    monkeypatch.setattr(net, "vanished", lambda ids: np.asarray(ids) == GONE)


@pytest.mark.parametrize("group", available_groups())
def test_ots_with_a_vanished_peer_are_skipped_and_the_others_stay_correct(monkeypatch, group):
    net = Session(5, seed=3).net
    _as_if_party_vanished(net, monkeypatch)
    # every ordered pair among 5 parties, 2 OTs each: the pairs with party 3 both ways
    s, r = np.array([(a, b) for a in range(5) for b in range(5) if a != b]).T
    counts = np.full(s.size, 2, dtype=np.int64)
    base = BaseOTBatch(get_group(group), s, r, 2 * s, counts)
    rng = as_rng(9)
    raw_a = rng.bytes_array(base.n_senders * SCALAR_RAW_BYTES).reshape(-1, SCALAR_RAW_BYTES)
    n = int(counts.sum())
    choices = rng.bytes_array(n) & 1
    raw_b = rng.bytes_array(n * SCALAR_RAW_BYTES).reshape(n, SCALAR_RAW_BYTES)
    with net.round():
        base.send_a(net, raw_a, False)
    with net.round():
        kc = base.choose(net, choices, raw_b, False)
    k0, k1 = base.sender_keys()         # before: ValueError decoding the zeros of party 3
    with_gone = np.repeat((s == GONE) | (r == GONE), counts)
    assert not kc[with_gone].any() and not k0[with_gone].any() and not k1[with_gone].any()
    ok = ~with_gone
    want = np.where(choices[ok, None] == 1, k1[ok], k0[ok])
    assert np.array_equal(kc[ok], want)                     # the others' OTs hold
    assert not np.array_equal(k0[ok], k1[ok])
