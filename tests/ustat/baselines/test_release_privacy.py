"""What a baseline reports besides its release is computed from released values and public
parameters only (issue 37, item 2): never from the records or the true class counts."""

import math

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from tests.api import flat_protocol
from ustat.baselines import fedauc as FA
from ustat.baselines.result import CLAMPED

from ._data import correlated_pairs, scored_labels

M, POSITIVES = 300, 129


def _labels_with(count: int, seed: int = 5) -> np.ndarray:
    """Scores and exactly ``count`` positive labels among M records."""
    g = CSPRNG(seed)
    S = np.column_stack([g.random(M), np.zeros(M)])
    S[g.permutation(M)[:count], 1] = 1.0
    return S


def _roots(pn: float) -> list:
    """Both solutions P of P (M - P) = pn."""
    disc = M * M - 4 * pn
    if not disc >= 0:
        return []
    return [(M - math.sqrt(disc)) / 2, (M + math.sqrt(disc)) / 2]


def test_fedauc_formulas_do_not_reveal_the_true_positive_count():
    # the audit: solving eq. (7) or eq. (8) for P gave exactly the true 129 of 300
    S = _labels_with(POSITIVES)
    rr = flat_protocol("fedauc-rr", S, "auc", epsilon=1.0, seed=11).theory
    c = math.e / (1 + math.e) ** 2 * M * (M - 1) * (2 * M - 1) / 6
    lap = flat_protocol("fedauc-lap", S, "auc", epsilon=1.0, seed=11).theory
    for pn in (math.sqrt(c / rr["variance_paper_eq7"]),
               math.sqrt(2 * M * (M - 1) ** 2 / lap["variance_paper_eq8_global"])):
        assert all(abs(p - POSITIVES) > 1e-3 and abs(p - (M - POSITIVES)) > 1e-3
                   for p in _roots(pn))
    # what they take instead: the released (debiased) positive count
    assert rr["variance_paper_eq7"] == pytest.approx(c / (rr["P_est"] * (M - rr["P_est"])) ** 2)


@pytest.mark.parametrize("proto, statistics", [("fedauc-rr", "rr_statistics"),
                                               ("fedauc-lap", "lap_statistics")])
def test_fedauc_report_is_a_function_of_the_released_sums(monkeypatch, proto, statistics):
    # two data sets with the same scores and different labels (129 and 171 positives), whose
    # clients happen to send the same noisy statistics: everything reported is the same
    real = getattr(FA, statistics)
    sent = {}

    def same_sums(ranks, y, owner, K, eps, *args, **kw):
        out = real(ranks, y, owner, K, eps, *args, **kw)
        stats = out[0] if isinstance(out, tuple) else out
        sent.setdefault("stats", stats)
        fixed = sent["stats"]
        return (fixed, out[1]) if isinstance(out, tuple) else fixed

    monkeypatch.setattr(FA, statistics, same_sums)
    S = _labels_with(POSITIVES)
    T = S.copy()
    T[:, 1] = 1.0 - S[:, 1]
    a = flat_protocol(proto, S, "auc", epsilon=1.0, seed=3).to_dict()
    b = flat_protocol(proto, T, "auc", epsilon=1.0, seed=3).to_dict()
    for key in ("estimate", "theory", "params", "notes", "delta"):
        assert a[key] == b[key], key


def test_fedauc_empty_class_is_released_not_raised():
    # an empty class is private: not refused (that would reveal it), no exception after the
    # noise was drawn; the release is the noise, nan with a note when undefined
    S = scored_labels(200)
    S[:, 1] = 0.0
    for proto in ("fedauc-rr", "fedauc-lap"):
        for seed in range(3):
            r = flat_protocol(proto, S, "auc", epsilon=1.0, seed=seed)
            assert math.isnan(r.estimate) or 0.0 <= r.estimate <= 1.0
            assert all(isinstance(v, (int, float, str, list, type(None), bool))
                       for v in r.theory.values())


def _kendall_records(seed):
    return correlated_pairs(60, seed)


#: (protocol, kernel, options, the public column to keep, theory entries computed from the
#: released values rather than from public parameters alone)
OTHERS = [("bell-ldp", "kendall", {"bins": 4}, None, ()),
          ("ghazi", "kendall", {"bins": 4}, None, ()),
          ("ghazi-sm", "gini", {"bins": 4}, None, ()),
          ("bell-2pc", "gini", {"bins": 4, "engine": "plain"}, None, ()),
          ("bell-auc", "auc", {"bins": 8}, 1,
           ("discarded_nodes", "recursed_nodes", "leaves_reached"))]


@pytest.mark.parametrize("proto, kernel, kw, public, from_released", OTHERS,
                         ids=[o[0] for o in OTHERS])
def test_other_baselines_report_nothing_from_the_records(proto, kernel, kw, public,
                                                         from_released):
    # the same public parameters (n, the seed; bell-auc: its public labels) and different
    # private records: the parameters, notes, delta, costs and the theory entries not
    # computed from the released values are the same
    if kernel == "auc":
        A, B = scored_labels(60, 1), scored_labels(60, 2)
        B[:, public] = A[:, public]
    else:
        A, B = _kendall_records(1), _kendall_records(2)
        if kernel == "gini":
            A, B = A[:, :1], B[:, :1]
    ra = flat_protocol(proto, A, kernel, epsilon=1.0, seed=4, **kw).to_dict()
    rb = flat_protocol(proto, B, kernel, epsilon=1.0, seed=4, **kw).to_dict()
    for key in ("params", "delta", "online_bits", "offline_bits", "rounds"):
        assert ra[key] == rb[key], key
    # notes: the same but the clamp's (a function of the released estimate)
    assert [n for n in ra["notes"] if not n.startswith(CLAMPED)] == \
        [n for n in rb["notes"] if not n.startswith(CLAMPED)]
    ta = {k: v for k, v in ra["theory"].items() if k not in from_released}
    tb = {k: v for k, v in rb["theory"].items() if k not in from_released}
    assert ta == tb


# -- item 12: a release in its range, with its noise std and an interval --------------------
@pytest.mark.parametrize("proto, kernel, kw", [("bell-auc", "auc", {"bins": 64}),
                                               ("bell-ldp", "kendall", {"bins": 64}),
                                               ("bell-ldp", "auc", {"bins": 64}),
                                               ("fedauc-rr", "auc", {}),
                                               ("fedauc-lap", "auc", {})])
def test_release_is_clamped_with_noise_std_and_interval(proto, kernel, kw):
    # small n, fine bins: the raw estimates are far outside the range (AUC 1.83, tau 5.40)
    X = scored_labels(60, 3) if kernel == "auc" else correlated_pairs(60, 3)
    outside = 0
    for seed in range(4):
        r = flat_protocol(proto, X, kernel, epsilon=1.0, seed=seed, **kw)
        lo, hi = (0.0, 1.0) if kernel == "auc" else (-1.0, 1.0)
        if math.isnan(r.estimate_raw):
            continue
        outside += not lo <= r.estimate_raw <= hi
        assert lo <= r.estimate <= hi
        assert r.estimate == min(max(r.estimate_raw, lo), hi)
        assert r.noise_std is not None and r.noise_std > 0 and r.ci_method
        assert lo <= r.ci[0] <= r.estimate <= r.ci[1] <= hi
        d = r.to_dict()
        assert {"estimate_raw", "noise_std", "ci", "ci_method", "confidence"} <= d.keys()
    if proto.startswith("bell"):
        assert outside > 0                      # the case of the audit was exercised


@pytest.mark.parametrize("proto, kernel, kw", [("ghazi", "kendall", {"bins": 4}),
                                               ("ghazi-sm", "gini", {"bins": 4}),
                                               ("bell-2pc", "gini", {"bins": 4,
                                                                     "engine": "plain"})])
def test_release_without_public_variance_says_why(proto, kernel, kw):
    X = correlated_pairs(40, 3)
    X = X[:, :1] if kernel == "gini" else X
    r = flat_protocol(proto, X, kernel, epsilon=0.1, seed=1, **kw)
    lo, hi = (-1.0, 1.0) if kernel == "kendall" else (0.0, 1.0)
    assert lo <= r.estimate <= hi and r.noise_std is None and r.ci is None
    assert "private" in r.ci_method


def test_umpc_entry_reports_its_interval():
    r = flat_protocol("umpc", correlated_pairs(40, 3), "kendall", epsilon=1.0, seed=1,
                      threat_model="hf")
    assert r.ci and r.noise_std > 0 and r.ci[0] <= r.estimate <= r.ci[1]
