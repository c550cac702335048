"""authors_code (issue 38 item 2): the plan's run counts, reuse of committed runs, the noise split.

The plan is checked on arrays of the real sizes (nothing of the authors' code runs); the reuse
of committed rows on a CSV written here; the driver's record of the U-MPC noise on a fake
``protocols`` package (as ``test_pieces``).
"""

import math
import sys
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest

from experiments import authors_code as A

from .test_pieces import fake_authors_package

SIZES = {"job": 4521, "job-small": 1000, "bank": 4521, "heart": 834, "uniform": 1000,
         "uniform-100": 100, "uniform-5000": 5000, "uniform-7000": 7000}


def _plan():
    run = SimpleNamespace(seed_for=lambda *labels: ":".join(map(str, labels)))
    return A.plan(run, {k: np.zeros(n) for k, n in SIZES.items()}, quick=False)


def _count(runs, **where):
    return sum(all(r.get(k) == v for k, v in where.items()) for r in runs)


def test_full_plan_has_the_runs_the_referee_asks_for():
    runs = _plan()
    e02 = int(0.02 * math.comb(4521, 2))
    assert _count(runs, group="kendall-umpc", edges=e02, epsilon=1.0) >= 20
    assert _count(runs, group="kendall-umpc", edges=e02, epsilon=0.1) >= 10
    for n in (100, 5000, 7000):
        assert _count(runs, group="gini-umpc", data=f"uniform-{n}", edges=2 * n) >= 7
    for n in (5000, 7000):                                # their comparison.py's nb_test
        assert _count(runs, group="gini-umpc", data=f"uniform-{n}",
                      edges=int(0.02 * math.comb(n, 2))) >= 7
    for eps in (0.1, 1.0):                                # Bell at the full n = 4521, as their
        assert _count(runs, group="bank-bell", subset=None, epsilon=eps) >= 5   # file's 5
    labels = [(r["seed"], r["run"]) for r in runs]
    assert len(set(labels)) == len(labels)                # every run its own seed


def test_reuse_keeps_committed_rows_and_runs_only_the_missing(tmp_path):
    runs = _plan()[:5]
    done = [{**{k: v for k, v in r.items() if k != "seed"}, "protocol": "umpc",
             "estimate": 0.25, "real": 0.5, "sq_err": 0.0625, "seconds": 1.5}
            for r in runs[1:3]]
    path = tmp_path / "authors_code.csv"
    run = SimpleNamespace(path=lambda suffix: str(path),
                          provenance=lambda: {"commit": "abc1234"})
    A.C.write_csv(run, done)
    kept, todo = A.reuse(runs, str(path))
    assert [r["run"] for r in todo] == [runs[0]["run"], runs[3]["run"], runs[4]["run"]]
    assert len(kept) == 2 and all(r["commit"] == "abc1234" for r in kept)
    assert kept[0]["edges"] == runs[1]["edges"] and kept[0]["epsilon"] == runs[1]["epsilon"]
    assert kept[0]["sq_err"] == 0.0625 and kept[0].get("alpha") == runs[1].get("alpha")
    assert A.summarize(kept)                              # typed as the driver's rows


FAKE_OUR = textwrap.dedent('''
    import numpy as np

    def ours_balanced(n, m, data, epsilon, funct, l=40, c=14, secret_shared=False):
        return float(np.mean(data)) + 0.125 + np.random.laplace(0, 2 / (epsilon * n))
''')


def test_driver_records_the_umpc_noise(tmp_path):
    code = fake_authors_package(tmp_path, FAKE_OUR)
    job = {"group": "g", "kind": "umpc", "data": "x", "kernel": "gini", "sampler": "balanced",
           "edges": 20, "epsilon": 1.0, "run": 0, "seed": "a"}
    work = tmp_path / "work"
    work.mkdir()
    rows = A.run_driver(sys.executable, str(code), str(work), {"x": np.arange(10.0)}, [job], "f")
    r = rows[0]
    assert r["noise"] != 0
    assert r["estimate"] - r["noise"] - r["real"] == pytest.approx(0.125)
    assert r["sampling_err"] == pytest.approx(0.125)


def test_staged_runs_keep_the_plan_order(tmp_path, monkeypatch):
    runs = [{"group": g, "kind": "umpc", "data": "x", "kernel": "gini", "run": i, "seed": str(i)}
            for i, g in enumerate(["a", "b", "a", "b"])]
    monkeypatch.setattr(A, "extract_code", lambda repo, work: work)
    monkeypatch.setattr(A, "run_driver", lambda py, code, work, data, todo, label: [
        {**r, "sq_err": 0.0, "seconds": 0.0} for r in todo])
    monkeypatch.setattr(A, "require_numpy1", lambda py, todo: None)
    args = SimpleNamespace(reuse=None, groups="b", limit=1)
    rows = A.execute(SimpleNamespace(args=args), "py", "repo", {}, runs)
    assert [r["run"] for r in rows] == [1] and "seed" not in rows[0] and rows[0]["commit"]


def test_checker_ignores_the_run_commit_and_fields_recorded_later():
    from experiments.check_results import compare

    old = [{"run": "0", "x": "1.0", "noise": "", "commit": "e5e29e9"}]
    same = [{"run": "0", "x": "1.0", "noise": "0.5", "commit": "ab5a752"}]
    assert compare(old, same, 1) == []
    assert compare(old, [{**same[0], "x": "1.5"}], 1)
    assert compare([{**old[0], "noise": "0.25"}], same, 1)        # recorded: compared
