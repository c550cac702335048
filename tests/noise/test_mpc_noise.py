"""Noise sampled inside MPC at the protocol level (noise.mpc_noise, shared_dlap_noise(method=))."""

import math

import numpy as np
import pytest

from mpc.session import Session
from noise import distributed as D
from noise.audit import audit_epsilon_lower_bound
from noise.mpc_sampler import MAX_DELTA


@pytest.mark.parametrize("tm", ["dis", "hf"])
def test_mpc_noise_shares_and_guarantee(tm):
    s = Session(50, seed=3)
    with s.net.phase("noise"):
        nz = D.shared_dlap_noise(s, 1.0, 8 / 2 ** 14, threat_model=tm, method="mpc")
    value = int(s.ring.to_signed(s.ring.sum(nz.shares)))
    assert abs(value) < 2 ** nz.sampler["geometric_bits"]
    assert nz.method == "mpc" and nz.variance_factor == 1.0 and 0 < nz.delta <= MAX_DELTA
    plan = nz.collusion
    assert plan.honest == 1 and plan.max_colluders == plan.contributors - 1
    assert nz.epsilon_against(plan.contributors - 1) == nz.epsilon
    assert nz.epsilon_against(plan.contributors) == math.inf
    g = nz.guarantee()
    assert g["method"] == "mpc" and g["epsilon_all_but_one"] == nz.epsilon
    assert g["delta"] == nz.delta
    if tm == "hf":
        members = np.zeros(50, bool)
        members[nz.committee] = True
        assert plan.contributors == members.sum() < 50 and not nz.shares[~members].any()
        assert plan.fail_probability <= 2.0 ** -40
    rep = s.net.report()["phases"]["noise"]
    assert rep["online"]["rounds"] == 14 and rep["offline"]["rounds"] == 2


def test_batch_of_polya_noises_is_the_single_calls():
    """shared_dlap_noises with Polya draws what one call per noise draws (seeded runs unchanged)."""
    specs = [(0.9, 1.0), (0.1, 3.0)]
    s1, s2 = Session(20, seed=8), Session(20, seed=8)
    batch = D.shared_dlap_noises(s1, specs, threat_model="hf")
    single = [D.shared_dlap_noise(s2, e, d, threat_model="hf") for e, d in specs]
    for a, b in zip(batch, single):
        assert np.array_equal(a.shares, b.shares) and a.method == b.method == "polya"


def test_several_noises_in_one_computation():
    s = Session(6, seed=1)
    nzs = D.shared_dlap_noises(s, [(0.9, 1.0), (0.05, 1.0), (0.05, 1.0)], method="mpc")
    assert [nz.epsilon for nz in nzs] == pytest.approx([0.9, 0.05, 0.05])
    assert nzs[0].scale < nzs[1].scale == nzs[2].scale
    assert s.net.report()["online"]["rounds"] == 14          # one computation for all three


def test_errors():
    s = Session(5, seed=1)
    with pytest.raises(ValueError, match="threat model 'local'"):
        D.shared_dlap_noise(s, 1.0, 1.0, threat_model="local", method="mpc")
    with pytest.raises(ValueError, match="max_colluders applies to the Polya method"):
        D.shared_dlap_noise(s, 1.0, 1.0, method="mpc", max_colluders=2)
    with pytest.raises(ValueError, match="use at least"):
        D.shared_dlap_noise(Session(100, seed=1), 1.0, 1.0, threat_model="hf", method="mpc",
                            committee_size=3)
    with pytest.raises(ValueError, match="method must be"):
        D.shared_dlap_noise(s, 1.0, 1.0, method="gauss")


def test_audit_of_mpc_noise_stays_at_the_claim_against_all_but_one():
    """The coalition of all but one contributor faces the whole DLap: the audit's lower bound
    stays below epsilon; Polya shares sized for half the parties are flagged at n - 1."""
    eps_lo, d = audit_epsilon_lower_bound(n=3, split="mpc", runs=20_000, seed=4)
    assert d["colluders"] == 2 and not d["flagged"] and 0.5 < eps_lo <= d["eps_claimed"]
    eps_polya, dp = audit_epsilon_lower_bound(n=3, split="collusion", colluders=2, runs=20_000,
                                              seed=4)
    assert dp["flagged"] and eps_polya > 1.0
