"""A seeded spec releases the same bits under every executor: the simulator and local processes.

Each statistic of the family, called with its data, a spec and an executor
(``Simulator()`` or ``LocalProcesses(P)``): the released values, the accounting,
the counted traffic and the recorded spec are equal for P = 2 and 3; only the
run across processes carries ``process_costs`` (one entry per process). What
cannot run across processes is refused by the executor, naming why.
"""

import numpy as np
import pytest

from ustat.ecdf import (
    ecdf_program,
    private_hosmer_lemeshow,
    private_quantiles,
    private_roc,
    release,
)
from ustat.ecdf.servers import make_session
from ustat.executors import LocalProcesses, Place, Simulator
from ustat.specs import ECDFSpec, HLSpec, QuantileSpec, ROCSpec

N = 40
_G = np.random.default_rng(21)
VALUES = _G.random(N)
LABELS = (_G.random(N) < VALUES).astype(np.int64)

ECDF = ECDFSpec.of(thresholds=16, bounds=(0, 1), epsilon=2.0, seed="exec")
POINTWISE = ECDF.replace(backend="pointwise", servers=3, noise_mode="split")
QUANTILES = QuantileSpec.of([0.25, 0.5, 0.75], thresholds=16, bounds=(0, 1), epsilon=8.0,
                            seed="exec", max_halfwidth=None)
ROC = ROCSpec.of(thresholds=12, bounds=(0, 1), epsilon=16.0, seed="exec", max_auc_halfwidth=None)
HL = HLSpec.of(groups=3, n_thresholds=16, epsilon=40.0, seed="exec", max_detectable=None)


def _released(name, r) -> dict:
    """What a result releases, as plain values."""
    if name in ("ecdf", "pointwise"):
        out = {"counts": r.counts, "thresholds": r.thresholds}
    elif name == "quantiles":
        out = {"quantiles": r.quantiles, "counts": r.ecdf.counts}
        r = r.ecdf
    elif name == "roc":
        out = {"fpr": r.fpr, "tpr": r.tpr, "auc": r.auc, "n": (r.n_pos, r.n_neg),
               "ci": r.intervals["auc_ci"]}
    else:
        out = {"statistic": r.statistic, "p_value": r.p_value, "edges": r.edges,
               "table": r.table}
    out = {k: np.asarray(v).tolist() if isinstance(v, np.ndarray) else v
           for k, v in out.items()}
    out.update(account=r.account, spec=r.spec,
               bits=(r.communication["online"]["bits"], r.communication["offline"]["bits"],
                     r.communication["online"]["rounds"]))
    return out


def _run(name, executor):
    if name == "ecdf":
        return release(VALUES, ECDF, executor)
    if name == "pointwise":
        return release(VALUES, POINTWISE, executor)
    if name == "quantiles":
        return private_quantiles(VALUES, QUANTILES, executor)
    if name == "roc":
        return private_roc(VALUES, LABELS, ROC, executor)
    return private_hosmer_lemeshow(VALUES, LABELS, HL, executor)


@pytest.mark.parametrize("processes", [2, 3])
@pytest.mark.parametrize("name", ["ecdf", "pointwise", "quantiles", "roc", "hl"])
def test_local_processes_release_the_simulators_bits(name, processes):
    sim = _run(name, Simulator())
    spread = _run(name, LocalProcesses(processes))
    assert _released(name, spread) == _released(name, sim)
    assert spread.released and len(spread.process_costs) == processes
    assert not getattr(sim, "process_costs", None)
    assert _released(name, _run(name, None)) == _released(name, sim)    # the default


def test_what_cannot_run_across_processes_is_refused_by_the_executor():
    with pytest.raises(ValueError, match="evaluate reads every value in the clear: not with "
                                         "processes="):
        release(VALUES, ECDF, LocalProcesses(2), evaluate=True)
    with pytest.raises(ValueError, match="trusted curator"):
        release(VALUES, ECDF.replace(backend="central"), LocalProcesses(2))
    with pytest.raises(ValueError, match="do not pass session"):
        release(VALUES, ECDF, LocalProcesses(2), session=make_session(N))
    with pytest.raises(ValueError, match="needs public bounds"):
        private_roc(VALUES, LABELS, ROCSpec.of(thresholds=np.linspace(0, 1, 12),
                                               max_auc_halfwidth=None), LocalProcesses(2))


def test_a_program_is_the_statistic_in_one_spmd_function():
    """The program names its roles (the servers, the analyst; the unused dealer shares the
    analyst's process) and its private rows with their public filler."""
    p = ecdf_program(VALUES, POINTWISE, weights=LABELS)
    assert p.n == N and p.roles == ("server0", "server1", "server2", "analyst", "dealer")
    assert p.idle == {"dealer": "analyst"} and p.local_only is None
    assert set(p.rows) == {"values", "weights"} and p.rows["values"][1] == 0.0
    assert p.rows["weights"][1] == 0
    direct = p.main(Place(), *p.args, values=VALUES, weights=LABELS)     # as Simulator does
    assert np.array_equal(direct.counts, release(VALUES, POINTWISE, weights=LABELS).counts)
