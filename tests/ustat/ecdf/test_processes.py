"""The ECDF family with its parties, servers and analyst in separate processes.

One program runs the FSS ECDF with live quantile searches, the pointwise
ECDF, a ROC curve and a Hosmer-Lemeshow test, each on its own session. One
debug seed: every process's outputs, report and recorded views equal the
simulator's at P = 2 and 3. No seed, the parties in two processes and each
server and the analyst in its own (parties never message each other, so
every message crosses): the exact ECDF, quantiles, ROC and HL statistic
(numpy, scikit-learn) at epsilon inf, and socket payload bytes equal to the
counted bits / 8 within a byte per frame. The FSS ECDF and HL again with
their noise sampled inside MPC by the servers (noise mode "mpc", a GMW with
OT triples): the same, the secure counts within the noise of the exact ones.
"""

import math
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from mpc.run.launch import launch
from tests.api import flat_hl, flat_quantiles, flat_release, flat_roc
from tests.process_helpers import (
    assert_same_as_simulator,
    assert_socket_bytes,
    local_rows,
    result,
    wire_mark,
)
from ustat.ecdf.servers import make_session

N = 30
TAU = np.linspace(0.0, 1.0, 12)
LEVELS = [0.25, 0.5, 0.9]
_G = np.random.default_rng(11)
VALUES = _G.random(N)
LABELS = (_G.random(N) < VALUES).astype(np.int64)       # calibrated: VALUES are the probabilities


def _mine(s, a, fill=0):
    """Only the rows of this process's parties (the others are a public filler)."""
    return np.where(s.net.is_local(np.arange(a.size)), a, fill)


CASES = ("fss", "pointwise", "roc", "hl", "fss-mpc", "hl-mpc")


def program(rt, seed, views=True, cases=CASES, n=N):
    out = {}
    for case in cases:
        s = make_session(n, 2, bits=48 if case == "hl" else 32, seed=seed, record_views=views,
                         runtime=rt)
        mark, an = wire_mark(s), s.net.role("analyst")
        x, y = _mine(s, VALUES[:n]), _mine(s, LABELS[:n])
        eps = math.inf if seed is None else 1.0
        if case == "fss":
            r = flat_release(x, TAU, eps, session=s)
            q = flat_quantiles(x, TAU, LEVELS, eps, session=s)
            rows = {"counts": r.counts, "quantiles": q.quantiles, "curve": q.ecdf.counts}
        elif case == "pointwise":
            r = flat_release(x, TAU, eps, backend="pointwise", noise_mode="split", session=s)
            # live queries: the servers add noise on the paths the analyst asked (sent to them)
            q = flat_quantiles(x, TAU, LEVELS, 4 * eps, backend="pointwise", noise_mode="mpc",
                               session=s)
            rows = {"counts": r.counts, "quantiles": q.quantiles, "curve": q.ecdf.counts}
        elif case == "roc":
            r = flat_roc(x, y, TAU, 2 * eps, bounds=(0.0, 1.0), session=s,
                         max_auc_halfwidth=None)
            rows = {"fpr": r.fpr, "tpr": r.tpr, "auc": [r.auc]}
        elif case == "hl":
            r = flat_hl(x, y, 3, 4 * eps, n_thresholds=16, session=s,
                        max_detectable=None)
            rows = {"statistic": [r.statistic, r.p_value], "edges": r.edges}
        elif case == "fss-mpc":         # node noise sampled inside MPC by the servers (OT GMW)
            r = flat_release(x, TAU, 8.0, noise_mode="mpc", session=s)
            rows = {"counts": r.counts, "delta": [r.account["delta"]]}
        else:
            r = flat_hl(x, y, 3, 8.0, n_thresholds=16, noise_mode="mpc",
                        session=s, max_detectable=None)
            rows = {"statistic": [r.statistic], "edges": r.edges}
        outputs = {k: local_rows(s, [an], [np.asarray(v, dtype=np.float64)])
                   for k, v in rows.items()}
        out[case] = result(s, outputs, mark)
    return out


def _case(runs, case):
    return [SimpleNamespace(rank=r.rank, value=r.value[case]) for r in runs]


@pytest.fixture(scope="module")
def runs():
    apart = [[range(15)], [range(15, 30)], ["server0"], ["server1"], ["analyst", "dealer"]]
    return {"sim": program(None, 5),
            2: launch(program, 5, groups=[[range(15), "server0", "analyst", "dealer"],
                                          [range(15, 30), "server1"]]),
            3: launch(program, 5, groups=[[range(10), "analyst", "dealer"],
                                          [range(10, 20), "server0"], [range(20, 30), "server1"]]),
            "secure": launch(program, None, False, groups=apart)}


@pytest.mark.parametrize("procs", [2, 3])
@pytest.mark.parametrize("case", CASES)
def test_processes_release_the_simulators_bits(runs, procs, case):
    assert_same_as_simulator(runs["sim"][case], _case(runs[procs], case))
    released = [r.value[case]["outputs"] for r in runs[procs]]
    assert sum(len(o[next(iter(o))][0]) for o in released) == 1      # at the analyst only


def _exact_hl(p, y, n_thresholds, Q):
    """The HL statistic without noise, from numpy: grid quantiles as edges, half-open groups."""
    tau = np.linspace(0.0, 1.0, n_thresholds)
    F = np.searchsorted(np.sort(p), tau, side="right") / p.size
    inner = np.array([tau[np.argmax(q / Q <= F)] for q in range(1, Q)])
    g = (inner[None, :] < p[:, None]).sum(axis=1)
    E1, O1 = np.bincount(g, p, Q), np.bincount(g, y, Q)
    E0, O0 = np.bincount(g, 1 - p, Q), np.bincount(g, 1 - y, Q)
    return inner, float(np.sum((O1 - E1) ** 2 / E1 + (O0 - E0) ** 2 / E0))


def test_secure_runs_release_the_exact_curves(runs):
    x, y = VALUES, LABELS
    got = {case: next(r.value[case]["outputs"] for r in runs["secure"]
                      if r.value[case]["outputs"]["counts" if case in ("fss", "pointwise") else
                                                  "auc" if case == "roc" else "edges"][0].size)
           for case in ("fss", "pointwise", "roc", "hl")}
    exact = np.searchsorted(np.sort(x), TAU, side="right")
    for case in ("fss", "pointwise"):
        np.testing.assert_array_equal(got[case]["counts"][1][0], exact)
    # the grid quantile: the smallest threshold whose exact ECDF reaches the level
    want = [TAU[np.argmax(exact >= N * p)] for p in LEVELS]
    np.testing.assert_array_equal(got["fss"]["quantiles"][1][0], want)
    # ROC at these thresholds: the AUC of the scores rounded up to the grid (ties count half)
    up = TAU[np.searchsorted(TAU, x, side="left")]
    assert got["roc"]["auc"][1][0, 0] == pytest.approx(roc_auc_score(y, up), abs=1e-12)
    inner, H = _exact_hl(x, y, 16, 3)
    np.testing.assert_array_equal(got["hl"]["edges"][1][0][1:-1], inner)
    assert got["hl"]["statistic"][1][0, 0] == pytest.approx(H, rel=1e-4)


def test_secure_noise_sampled_inside_mpc(runs):
    """Noise mode "mpc" without a seed: the counts within the noise of the exact ones (node
    scale 1 at epsilon 8; a junk row of another process's server would move them by ~2^31)."""
    got = next(r.value["fss-mpc"]["outputs"] for r in runs["secure"]
               if r.value["fss-mpc"]["outputs"]["counts"][0].size)
    counts, delta = got["counts"][1][0], got["delta"][1][0, 0]
    exact = np.searchsorted(np.sort(VALUES), TAU, side="right")
    assert np.abs(counts - exact).max() <= 80 and 0 < delta <= 2.0 ** -40


def test_socket_bytes_are_the_counted_bits_plus_framing(runs):
    for case in CASES:
        sec = _case(runs["secure"], case)
        assert_socket_bytes(sec, sec[0].value["report"]["total_bits"])


def test_mpc_noise_through_the_api_in_three_processes():
    one = flat_release(VALUES, TAU, 1.0, noise_mode="mpc", seed=3)
    three = flat_release(VALUES, TAU, 1.0, noise_mode="mpc", seed=3, processes=3)
    np.testing.assert_array_equal(one.counts, three.counts)
    assert three.account["delta"] == one.account["delta"] and len(three.process_costs) == 3


def test_hosmer_lemeshow_through_the_api_in_three_processes():
    got = flat_hl(VALUES, LABELS, 3, math.inf, n_thresholds=16, processes=3)
    inner, H = _exact_hl(VALUES, LABELS, 16, 3)
    assert got.released and got.processes == 3 and len(got.process_costs) == 3
    np.testing.assert_array_equal(got.edges[1:-1], inner)
    assert got.statistic == pytest.approx(H, rel=1e-4)


def test_runs_across_processes_refuse_what_they_cannot_do():
    with pytest.raises(ValueError, match="evaluate reads every"):
        flat_release(VALUES, TAU, 1.0, processes=2, evaluate=True)
    with pytest.raises(ValueError, match="trusted curator"):
        flat_release(VALUES, TAU, 1.0, processes=2, backend="central")
    with pytest.raises(ValueError, match="do not pass session"):
        flat_release(VALUES, TAU, 1.0, processes=2, session=make_session(N))
    with pytest.raises(ValueError, match="public bounds"):
        flat_roc(VALUES, LABELS, TAU, 1.0, processes=2, max_auc_halfwidth=None)
    with pytest.raises(ValueError, match="positive integer"):
        flat_release(VALUES, TAU, 1.0, processes=0)


def test_the_command_line_runs_the_ecdf_family_in_processes(tmp_path, capsys):
    """``--processes 3``: the one-process release and traffic, plus the processes' costs."""
    import json

    from ustat.cli import main

    path = tmp_path / "scores.csv"
    path.write_text("s,y\n" + "".join(f"{a:.6f},{b}\n" for a, b in zip(VALUES, LABELS)))
    commands = [["roc", "--csv", str(path), "--score", "s", "--label", "y", "--bounds", "0:1",
                 "--epsilon", "20"],
                ["hl", "--csv", str(path), "--prob", "s", "--label", "y", "--groups", "3",
                 "--epsilon", "40"],
                ["quantile", "--n", "50", "--epsilon", "20"]]   # else the noise hides them
    for cmd in commands:
        got = {}
        for extra in ([], ["--processes", "3"]):
            argv = cmd + ["--thresholds", "16", "--seed", "2", "--json", "--no-progress"] + extra
            assert main(argv) == 0, cmd
            got[bool(extra)] = json.loads(capsys.readouterr().out)
        one, three = got[False], got[True]
        for key in ("auc", "fpr", "statistic", "edges", "quantiles", "communication"):
            assert three.get(key) == one.get(key), (cmd[0], key)
        assert "processes" not in one and three["processes"] == 3
        assert three["wire"]["payload_bytes"] > 0 and len(three["process_costs"]) == 3
    assert main(["ecdf", "--n", "40", "--thresholds", "8", "--processes", "2",
                 "--no-progress"]) == 0
    assert "processes : 2 on this machine" in capsys.readouterr().out
    assert main(["ecdf", "--n", "40", "--processes", "2", "--backend", "central"]) == 2
    assert "--processes spreads" in capsys.readouterr().err
