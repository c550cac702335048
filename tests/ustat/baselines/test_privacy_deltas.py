"""Every protocol names the delta it spends, and the CLI can charge it before the run:
``planned_delta`` (public planning only) equals the ``delta`` the run reports; GhaziSM's shuffle
delta rests on a bound checked against an exact computation and a brute-force distance."""

import itertools
import math
from collections import Counter
from fractions import Fraction

import pytest

from tests.api import flat_planned_delta, flat_protocol
from ustat.baselines import PROTOCOLS
from ustat.baselines import ghazi_shuffle as GS

from ._data import correlated_pairs, scored_labels

CASES = [("bell-ldp", "kendall", {}), ("bell-auc", "auc", {}), ("ghazi", "kendall", {}),
         ("ghazi-sm", "kendall", {}), ("ghazi-sm", "auc", {}), ("fedauc-rr", "auc", {}),
         ("fedauc-lap", "auc", {}), ("fedauc-lap", "auc", {"mechanism": "gaussian", "delta": 1e-7}),
         ("bell-2pc", "gini", {"engine": "plain"}),
         ("bell-2pc", "kendall", {"engine": "plain", "pairs": "all", "delta": 1e-6}),
         ("umpc", "auc", {}), ("umpc", "auc", {"threat_model": "hf"}),
         ("umpc", "auc", {"noise_method": "polya"}),
         ("umpc", "auc", {"noise_method": "polya", "threat_model": "hf"})]


#: the cases whose release is not pure epsilon-DP (bell-2pc: delta of its bounded noise; umpc:
#: the in-MPC sampler's 2^-40 per noise, and under hf the committee's failure probability;
#: umpc with Polya noise under dis: pure)
APPROXIMATE = {("ghazi-sm", "kendall"), ("ghazi-sm", "auc"), ("fedauc-lap", "gaussian"),
               ("bell-2pc", "gini"), ("bell-2pc", "kendall"), ("umpc", "hf"), ("umpc", "auc"),
               ("umpc", "polya-hf")}


@pytest.mark.parametrize("name, kernel, kw", CASES)
def test_planned_delta_is_the_reported_delta(name, kernel, kw):
    n = 400 if kw.get("threat_model") == "hf" else 60
    X = scored_labels(n) if kernel == "auc" else correlated_pairs(n)
    if kernel == "gini":
        X = X[:, :1]
    bins = {"bins": 8} if PROTOCOLS[name].uses_bins else {}
    plan = flat_planned_delta(name, X, kernel, epsilon=2.0, **bins, **kw)
    res = flat_protocol(name, X, kernel, epsilon=2.0, seed=3, **bins, **kw)
    assert res.delta == pytest.approx(plan, rel=1e-12, abs=0.0)
    tag = kw.get("mechanism") or kw.get("threat_model") or kernel
    if kw.get("noise_method") == "polya":
        tag = "polya-" + kw.get("threat_model", "dis")
    assert (res.delta > 0.0) == ((name, tag) in APPROXIMATE), res.delta
    assert flat_planned_delta(name, X, kernel, epsilon=math.inf, **bins, **kw) == 0.0


def test_umpc_committee_delta_counts_every_noisy_sum():
    from noise.distributed import noise_plan
    from ustat.umpc.privacy import delta_spent

    fail = noise_plan("hf", 4521).fail_probability
    assert 0 < fail <= 2.0 ** -40
    polya = {"noise_method": "polya"}
    assert delta_spent("auc", 4521, 1.0, threat_model="hf", **polya) == pytest.approx(2 * fail)
    assert delta_spent("vus", 4521, 1.0, threat_model="hf", **polya) == pytest.approx(4 * fail)
    assert delta_spent("gini", 4521, 1.0, threat_model="hf", **polya) == pytest.approx(fail)
    assert delta_spent("auc", 4521, 1.0, threat_model="dis", **polya) == 0.0
    # in MPC (the default): 2^-40 per noise, and one committee for all the noises under hf
    one = noise_plan("hf", 4521, method="mpc").fail_probability
    assert delta_spent("auc", 4521, 1.0, threat_model="dis") == 2 * 2.0 ** -40
    assert delta_spent("vus", 4521, 1.0, threat_model="hf") == pytest.approx(4 * 2.0 ** -40 + one)
    assert delta_spent("gini", 4521, 1.0, threat_model="dis", backend="gc") == 0.0   # Polya


def _exact_excess(n, m, q):
    """E[q^(c-1)] - 1 for the random m-regular bipartite multigraph, exactly (recurrence on the
    component holding a given node: h(j) = sum_s C(j-1,s-1) C(j,s) q / C(mj,ms) h(j-s))."""
    h = [Fraction(1)]
    for j in range(1, n + 1):
        h.append(sum(Fraction(math.comb(j - 1, s - 1) * math.comb(j, s) * q,
                              math.comb(m * j, m * s)) * h[j - s] for s in range(1, j + 1)))
    return h[n] / q - 1


@pytest.mark.parametrize("n, m, bits", [(2, 3, 1), (3, 3, 2), (5, 4, 2), (8, 3, 4), (20, 5, 10),
                                        (40, 6, 20)])
def test_collision_bound_is_above_the_exact_excess(n, m, bits):
    exact = float(_exact_excess(n, m, 2 ** bits))
    assert 0 < exact <= 2.0 ** GS.log2_collision_excess(n, m, bits)


def _views(inputs, m, q):
    """The exact distribution of the shuffled multiset of every party's m additive shares."""
    dist = Counter()
    per_party = []
    for x in inputs:
        per_party.append([s + ((x - sum(s)) % q,) for s in itertools.product(range(q),
                                                                             repeat=m - 1)])
    for combo in itertools.product(*per_party):
        dist[tuple(sorted(v for shares in combo for v in shares))] += 1
    total = sum(dist.values())
    return {k: v / total for k, v in dist.items()}


@pytest.mark.parametrize("n, m, q, a, b", [
    (2, 3, 2, (0, 1), (1, 0)), (3, 3, 2, (0, 0, 1), (1, 1, 1)),
    (2, 3, 3, (0, 2), (1, 1)), (3, 3, 3, (0, 1, 2), (1, 1, 1))])
def test_split_and_mix_distance_brute_force(n, m, q, a, b):
    """Two inputs with the same sum: the exact distance of the views is within the bound
    (here q is tiny, so the bound is weak but must still hold)."""
    va, vb = _views(a, m, q), _views(b, m, q)
    tv = 0.5 * sum(abs(va.get(k, 0) - vb.get(k, 0)) for k in set(va) | set(vb))
    excess = float(_exact_excess(n, m, q))
    assert tv <= math.sqrt(excess) + 1e-12
    assert tv <= math.sqrt(2.0 ** GS.log2_collision_excess(n, m, math.log2(q))) + 1e-12


def test_shuffle_delta_at_bank_size_and_its_limits():
    n, bits = 4521, 40
    m = GS.default_messages(n, bits)
    assert m == 15 and GS.log2_collision_excess(n, m, bits) < -106
    d = GS.shuffle_delta(n, m, bits, 512, 1.0)
    assert 1e-14 < d < 1e-12                       # (1 + e) 512 2^-54.35
    assert GS.shuffle_delta(n, 2, bits, 512, 1.0) == 1.0   # m < 3: no bound, no guarantee
    assert GS.shuffle_delta(n, m, bits, 512, math.inf) == 0.0
