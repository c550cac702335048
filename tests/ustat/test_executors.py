"""Executors: the only code that spreads a program; every executor releases a seeded spec's bits."""

import numpy as np
import pytest

from ustat.executors import Dask, LocalProcesses, Place, Program, Simulator
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc, umpc_program

X = np.random.default_rng(5).random((60, 2))


def test_a_seeded_spec_releases_the_same_bits_in_the_simulator_and_in_processes():
    spec = UMPCSpec.of("kendall", epsilon=1.0, seed=4)
    runs = [run_umpc(X, spec, ex) for ex in (Simulator(workers=1), Simulator(workers=2),
                                             LocalProcesses(2), LocalProcesses(4),
                                             LocalProcesses(groups=([range(30), "dealer"],
                                                                    [range(30, 60)],
                                                                    ["aggregator"])))]
    assert len({r.estimate for r in runs}) == 1
    assert len({(r.online_bits, r.offline_bits, r.rounds) for r in runs}) == 1
    assert [r.processes for r in runs] == [1, 1, 2, 4, 3]
    assert runs[2].process_costs and runs[0].spec == spec.to_dict()


class Echo:
    """What a process of the echo program held."""

    def __init__(self, place, tag, rows):
        self.released = place.runtime is None or place.runtime.rank == 0
        self.rows, self.tag, self.simulated = rows, tag, place.simulated
        self.process_costs: list = []


def _echo(place, tag, rows=None):
    """A program that reports what its process holds (the rows a process does not hold are the
    filler, -1)."""
    return Echo(place, tag, rows)


def test_each_process_gets_only_its_own_rows():
    rows = np.arange(10.0)
    program = Program("echo", _echo, 10, ("dealer",), args=("t",), rows={"rows": (rows, -1.0)})
    sim = Simulator().run(program)
    assert sim.simulated and np.array_equal(sim.rows, rows) and sim.tag == "t"
    got = LocalProcesses(groups=([range(4)], [range(4, 10), "dealer"])).run(program)
    assert not got.simulated
    assert np.array_equal(got.rows, np.where(np.arange(10) < 4, rows, -1.0))
    assert [c["holds"] for c in got.process_costs] == [["parties 0-3"], ["parties 4-9", "dealer"]]


def test_what_an_executor_cannot_do_is_refused():
    with pytest.raises(ValueError, match="evaluate reads every record"):
        run_umpc(X, UMPCSpec.of("kendall"), LocalProcesses(2), evaluate=True)
    program = Program("echo", _echo, 10, ("dealer",), args=("t",))
    with pytest.raises(ValueError, match="no chunks of work to run on Dask"):
        Dask("local").run(program)
    with pytest.raises(ValueError, match="processes must be a positive integer"):
        LocalProcesses(0)
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        Simulator(workers=0)
    with pytest.raises(ValueError, match="pool must be one of"):
        Simulator(pool="forks")
    with pytest.raises(ValueError, match="scheduler must be"):
        Dask("")
    with pytest.raises(TypeError, match=r"spec must be a ustat\.specs\.UMPCSpec"):
        run_umpc(X, "kendall")


def test_a_program_is_the_same_in_every_process():
    """umpc_program: the records are the private rows; the filler is the bounds' lower end."""
    spec = UMPCSpec.of("kendall", bounds=[(18, 95), (-10, 10)])
    p = umpc_program(np.array([[20.0, 0.0], [30.0, 1.0]]), spec)
    assert p.roles == ("dealer", "aggregator") and p.chunked and p.local_only is None
    assert np.array_equal(p.rows["records"][1], [18.0, -10.0])
    assert Place().simulated and not Place(runtime=object()).simulated
