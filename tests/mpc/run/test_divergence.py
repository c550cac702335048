"""Issue 40, silent case 6: a process whose program diverges is named as such, and a process
that branches on an output it did not receive raises instead of taking a silent branch."""

import numpy as np
import pytest

from mpc.run.launch import LaunchError, launch
from mpc.session import Session
from mpc.values import NotReceived, received

DATA = np.array([[1, 2], [3, 4]])
GROUPS = [[0], [1, "dealer"]]


def _extra_round(rt):
    s = Session(2, seed=1, runtime=rt, roles=("dealer",))
    x = s.input(DATA, by=[0, 1], bound=8)
    if s.is_local(1):
        s.output(x, to=0)              # a round only this process runs
    return s.output(x[0] * x[1], to=[0, 1])


def _branch_on_what_it_did_not_receive(rt):
    s = Session(2, seed=1, runtime=rt, roles=("dealer",))
    x = s.input(DATA, by=[0, 1], bound=8)
    total = s.output(x.sum(), to=0)
    if total > 3:                      # party 1's process has no total: it must not guess
        s.output(x[0], to=0)
    return s.output(x[1], to=[0, 1])


def _fewer_rounds(rt):
    s = Session(2, seed=1, runtime=rt, roles=("dealer",))
    x = s.input(DATA, by=[0, 1], bound=8)
    if s.is_local(0):
        return s.output(x[0], to=[0, 1])
    return None                        # this process ends its program early


def test_an_extra_round_is_named_as_a_divergence_with_both_operations():
    with pytest.raises(LaunchError) as e:
        launch(_extra_round, groups=GROUPS, timeout=20)
    assert "process 1 (party 1, dealer) diverged at step" in str(e.value)
    assert "got 'output_values'" in str(e.value)


def test_a_program_that_ends_early_is_named_as_a_divergence():
    with pytest.raises(LaunchError) as e:
        launch(_fewer_rounds, groups=GROUPS, timeout=20)
    assert "process 1 (party 1, dealer) diverged at step" in str(e.value)
    assert "expected 'output_values', got the end of its program" in str(e.value)


def test_branching_on_an_output_this_process_did_not_receive_raises():
    with pytest.raises(LaunchError, match="did not receive this output"):
        launch(_branch_on_what_it_did_not_receive, groups=GROUPS, timeout=20)


def test_an_output_not_received_refuses_every_use_and_returns_as_none():
    out = NotReceived([0], (2,))
    for use in (bool, len, lambda v: v > 1, lambda v: v == 1, lambda v: v + 1, lambda v: v[0],
                np.asarray, float):
        with pytest.raises(TypeError, match=r"participant\(s\) \[0\]"):
            use(out)
    assert not received(out) and received(np.zeros(2))
    res = launch(_fewer_rounds, groups=[[0, 1, "dealer"]])      # one process: nothing diverges
    assert res[0].value.tolist() == [1, 2]


def test_every_recorded_message_names_its_operation_in_the_simulator():
    s = Session(2, seed=1, roles=("dealer",), record_views=True)
    x = s.input(DATA, by=[0, 1], bound=8)
    s.output(x[0] * x[1], to=[0, 1])
    ops = {r.op for r in s.net.view(0)}
    assert {"input_values", "output_values"} <= ops and "" not in ops
