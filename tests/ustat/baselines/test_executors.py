"""One spec, two executors: a seeded release by ``run_protocol`` is the same under the simulator
and under local processes (the program spreads itself through the executor only), with the
same traffic; the process run adds every process's costs and says what it left out."""

import math

import numpy as np
import pytest

from ustat.baselines import BaselineSpec, run_protocol
from ustat.executors import LocalProcesses, Simulator

from ._data import correlated_pairs, scored_labels

N = 14
RECORDS = {"kendall": correlated_pairs(N, 3), "auc": scored_labels(N, 4)}
CASES = [("bell-ldp", "kendall", {"bins": 4}, 2),
         ("bell-auc", "auc", {"bins": 4}, 3),              # labels public: every process
         ("ghazi", "kendall", {"bins": 4, "dim": 6}, 2),
         ("ghazi-sm", "auc", {"bins": 2}, 3),              # a shuffler's process too
         ("fedauc-rr", "auc", {}, 2),
         ("fedauc-lap", "auc", {"mechanism": "gaussian", "delta": 1e-6}, 3),
         ("bell-2pc", "kendall", {"bins": 4, "pairs": 2, "noise_bits": 12}, 2),
         ("umpc", "kendall", {"edges": "2n"}, 2)]          # U-MPC's own program


@pytest.mark.parametrize("name, kernel, flat, procs", CASES, ids=[c[0] for c in CASES])
def test_a_seeded_release_is_the_same_under_both_executors(name, kernel, flat, procs):
    spec = BaselineSpec.of(name, kernel, epsilon=2.0, seed="executors", **flat)
    X = RECORDS[kernel]
    one = run_protocol(X, spec, Simulator())
    many = run_protocol(X, spec, LocalProcesses(procs))
    assert many.released and many.processes == procs and len(many.process_costs) == procs
    assert one.processes == 1 and "process_costs" not in one.to_dict()

    def same(v):
        return v if not (isinstance(v, float) and math.isnan(v)) else "nan"

    assert same(many.estimate) == same(one.estimate) and same(many.u_hat) == same(one.u_hat)
    assert many.delta == one.delta and many.params == one.params and many.spec == one.spec
    assert many.communication["phases"] == one.communication["phases"]
    assert (many.online_bits, many.offline_bits, many.rounds) == \
        (one.online_bits, one.offline_bits, one.rounds)
    left_out = [k for k in one.theory if k not in many.theory]
    for key in many.theory:
        a, b = np.asarray(many.theory[key], dtype=object), np.asarray(one.theory[key],
                                                                      dtype=object)
        assert a.shape == b.shape and (a == b).all(), key
    if left_out:                                        # FedAUC's variances need every label
        assert name.startswith("fedauc")
        (note,) = [n for n in many.notes if n.startswith("theory ") and "left out" in n]
        assert all(k in note for k in left_out)
    else:
        assert many.notes == one.notes


def test_the_simulator_is_the_default_and_local_only_runs_stay_here():
    spec = BaselineSpec.of("bell-ldp", "kendall", bins=4, seed=1)
    X = RECORDS["kendall"]
    assert run_protocol(X, spec).estimate == run_protocol(X, spec, Simulator()).estimate
    with pytest.raises(ValueError, match="evaluate reads every record in the clear: not with "
                                         "processes="):
        run_protocol(X, spec, LocalProcesses(2), evaluate=True)
