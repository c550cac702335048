"""The privacy budget file: refuse overspends, survive concurrent runs, never half-written."""

import json
import multiprocessing as mp

import pytest

from noise.budget_file import FORMAT, BudgetFile


def test_reserve_confirm_cancel_and_overspend(tmp_path):
    path = tmp_path / "b.json"
    bf = BudgetFile(path)
    with pytest.raises(ValueError, match="give its total epsilon"):
        bf.reserve("sha256:x", 0.5)
    r1 = bf.reserve("sha256:x", 0.5, total=1.0, label="auc", description={"path": "d.csv"})
    assert (r1.total, r1.spent, r1.remaining) == (1.0, 0.5, 0.5)
    bf.confirm(r1)
    r2 = bf.reserve("sha256:x", 0.3)
    with pytest.raises(ValueError, match=r"spent 0\.8 of 1, asked 0\.3"):
        bf.reserve("sha256:x", 0.3)
    bf.cancel(r2)                                # the run failed before releasing
    assert bf.status("sha256:x")["spent"] == 0.5
    r3 = bf.reserve("sha256:x", 0.5)             # exactly the rest (exact rational sums)
    assert r3.remaining == 0.0
    with pytest.raises(ValueError, match="cannot be changed"):
        bf.reserve("sha256:x", 0.1, total=5.0)
    doc = json.loads(path.read_text())
    assert doc["format"] == FORMAT and doc["version"] == 1
    entry = doc["datasets"]["sha256:x"]
    assert [s["status"] for s in entry["spends"]] == ["spent", "reserved"]
    assert entry["description"] == {"path": "d.csv"} and entry["spends"][0]["label"] == "auc"
    assert bf.status("sha256:y") is None
    with pytest.raises(ValueError, match="no spend"):
        bf.cancel(r2)


def test_bad_files_are_refused_and_left_alone(tmp_path):
    path = tmp_path / "b.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        BudgetFile(path).reserve("k", 0.1, total=1.0)
    assert path.read_text() == "{not json"
    path.write_text(json.dumps({"format": FORMAT, "version": 99, "datasets": {}}))
    with pytest.raises(ValueError, match="version 99"):
        BudgetFile(path).reserve("k", 0.1, total=1.0)
    path.write_text(json.dumps({"something": "else"}))
    with pytest.raises(ValueError, match="is not a ustat-privacy-budget file"):
        BudgetFile(path).reserve("k", 0.1, total=1.0)
    with pytest.raises(ValueError, match="does not exist"):
        BudgetFile(tmp_path / "missing" / "b.json").reserve("k", 0.1, total=1.0)


def _spend(path, q):
    try:
        BudgetFile(path).reserve("sha256:race", 0.1, total=1.0)
        q.put(True)
    except ValueError:
        q.put(False)


def test_concurrent_runs_never_overspend(tmp_path):
    path = str(tmp_path / "b.json")
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=_spend, args=(path, q)) for _ in range(16)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    wins = [q.get(timeout=10) for _ in procs]
    assert sum(wins) == 10                                # 10 x 0.1 = 1.0 exactly
    assert len(json.loads(open(path).read())["datasets"]["sha256:race"]["spends"]) == 10
