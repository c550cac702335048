"""The non-interactive baselines with their clients, aggregator and shuffler in separate processes.

One debug seed: every process's release, report and recorded views equal the
simulator's at P = 2 and 3 (each client's report from its own record only:
the rows a process lacks are zeros there). No seed, every participant in its
own process (``run_protocol(records, spec, LocalProcesses(groups=...))``): the
exact statistic of the binned records at epsilon inf against scipy /
scikit-learn / numpy, and socket payload bytes equal to the counted bits / 8
within a byte per frame.
"""

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from mpc.run.launch import launch
from mpc.session import Session
from tests.api import flat_protocol
from tests.process_helpers import (
    assert_same_as_simulator,
    assert_socket_bytes,
    local_rows,
    result,
    wire_mark,
)
from ustat.baselines.registry import get

from ._data import correlated_pairs, scored_labels, tau_a

N = 12
RECORDS = {"kendall": correlated_pairs(N, 3), "gini": correlated_pairs(N, 5)[:, :1],
           "auc": scored_labels(N, 4)}
CASES = [("bell-ldp", "kendall", dict(bins=4)), ("bell-auc", "auc", dict(bins=4)),
         ("ghazi", "auc", dict(bins=4)), ("ghazi-sm", "gini", dict(bins=4)),
         ("ghazi-sm", "auc", dict(bins=2)), ("fedauc-rr", "auc", {}),
         ("fedauc-lap", "auc", {})]
ROLES = ("dealer", "aggregator", "shuffler")


def program(rt, seed):
    out = {}
    for name, kernel, kw in CASES:
        s = Session(N, seed=seed, runtime=rt, record_views=True, roles=ROLES)
        mark = wire_mark(s)
        X = RECORDS[kernel].copy()
        mine = np.asarray(s.net.is_local(np.arange(N)))
        X[~mine, 0] = 0.0                  # only this process's records (bell-auc: labels public)
        if name != "bell-auc":
            X[~mine] = 0.0
        res = flat_protocol(name, X, kernel, epsilon=2.0, session=s, **kw)
        agg = s.net.role("aggregator")
        u = res.estimate if res.u_hat is None else res.u_hat
        out[f"{name}/{kernel}"] = result(s, {"release": local_rows(s, [agg],
                                                                   [[res.estimate, u]])}, mark)
    return out


@pytest.fixture(scope="module")
def runs():
    return {"sim": program(None, 7),
            2: launch(program, 7, groups=[[range(6), "aggregator", "dealer"],
                                          [range(6, 12), "shuffler"]]),
            3: launch(program, 7, groups=[[range(4), "shuffler"], [range(4, 12)],
                                          ["aggregator", "dealer"]])}


@pytest.mark.parametrize("procs", [2, 3])
def test_processes_release_the_simulators_bits(runs, procs):
    for key in runs["sim"]:
        assert_same_as_simulator(runs["sim"][key],
                                 [SimpleNamespace(rank=r.rank, value=r.value[key])
                                  for r in runs[procs]])


def _binned(x, t):
    return (np.minimum(np.floor(x * t), t - 1) + 0.5) / t


def _exact(kernel, X, bins):
    if kernel == "kendall":
        return tau_a(_binned(X[:, 0], bins), _binned(X[:, 1], bins))
    if kernel == "gini":
        v = _binned(X[:, 0], bins)
        return float(np.abs(v[:, None] - v[None, :]).sum() / (v.size * (v.size - 1)))
    scores = X[:, 0] if bins is None else _binned(X[:, 0], bins)
    return roc_auc_score(X[:, 1], scores)


@pytest.mark.parametrize("name, kernel, kw", CASES[:5] + [("fedauc-rr", "auc", {})])
def test_secure_runs_release_the_exact_statistic_and_the_counted_bytes(name, kernel, kw):
    X = RECORDS[kernel][:6]
    roles = ["dealer", "aggregator"] + list(get(name).processes.roles)
    groups = [[i] for i in range(6)] + [[r] for r in roles]
    kw = dict(kw, factorization="exact") if name == "ghazi" else kw
    res = flat_protocol(name, X, kernel, epsilon=math.inf, groups=groups, **kw)
    assert res.released and not res.insecure_seed and res.processes == len(groups)
    assert res.estimate == pytest.approx(_exact(kernel, X, kw.get("bins")), abs=1e-9)
    runs = [SimpleNamespace(value={"wire": c["wire"]}) for c in res.process_costs]
    assert_socket_bytes(runs, res.communication["total_bits"])


def test_the_command_line_runs_a_baseline_in_processes(capsys):
    """``ustat estimate --protocol P --processes 3``: the one-process release and traffic, with
    the processes' costs and what their sockets carried."""
    from ustat.cli import main

    args = ["estimate", "auc", "--protocol", "fedauc-lap", "--n", "40", "--seed", "3", "--json",
            "--no-progress"]
    got = {}
    for extra in ([], ["--processes", "3"]):
        assert main(args + extra) == 0
        got[bool(extra)] = json.loads(capsys.readouterr().out)
    one, three = got[False], got[True]
    assert three["estimate"] == one["estimate"] and three["phases"] == one["phases"]
    assert "processes" not in one and three["processes"] == 3
    assert len(three["process_costs"]) == 3 and three["wire"]["payload_bytes"] > 0
    assert main(args[:-2] + ["--processes", "2"]) == 0
    assert "processes : 2 on this machine" in capsys.readouterr().out


def test_runs_across_processes_refuse_what_they_cannot_do():
    X = RECORDS["auc"]
    with pytest.raises(ValueError, match="evaluate reads every"):
        flat_protocol("bell-ldp", X, "auc", processes=2, evaluate=True)
    with pytest.raises(ValueError, match="clients="):
        flat_protocol("fedauc-rr", X, "auc", processes=2, clients=3)
    with pytest.raises(ValueError, match="allocation='fixed'"):
        flat_protocol("fedauc-lap", X, "auc", processes=2, allocation="fixed")
    with pytest.raises(ValueError, match="do not pass session"):
        flat_protocol("ghazi", X, "auc", processes=2, session=Session(N))
    with pytest.raises(ValueError, match="materialize_limit"):
        flat_protocol("ghazi-sm", X, "auc", processes=2, bins=4, materialize_limit=10)
    with pytest.raises(ValueError, match="positive integer"):
        flat_protocol("bell-ldp", X, "auc", processes=0)
    with pytest.raises(ValueError, match="engine='plain'"):
        flat_protocol("bell-2pc", RECORDS["kendall"], "kendall", processes=2, engine="plain")
    codes = np.column_stack([np.arange(N) % 3, np.arange(N) % 2]).astype(float)
    with pytest.raises(ValueError, match="levels="):
        flat_protocol("bell-ldp", codes, "rand", processes=2, bins=4)
