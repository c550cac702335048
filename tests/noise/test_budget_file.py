"""The privacy budget file: refuse overspends, survive concurrent runs, never half-written."""

import json
import multiprocessing as mp

import pytest

from noise.budget_file import FORMAT, VERSION, BudgetFile


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
    assert doc["format"] == FORMAT and doc["version"] == VERSION
    (entry,) = doc["datasets"].values()
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
    with open(path) as f:
        (entry,) = json.load(f)["datasets"].values()
        assert len(entry["spends"]) == 10


def test_keys_of_one_data_set_delta_and_smaller_confirm(tmp_path):
    """Keys are identities of one data set; delta is charged too (basic composition)."""
    bf = BudgetFile(tmp_path / "b.json")
    r = bf.reserve(["file:A", "cols:age"], 0.5, 1e-7, total=1.0, total_delta=1e-6)
    assert (r.delta, r.total_delta) == (1e-7, 1e-6) and r.spent_delta == pytest.approx(1e-7)
    bf.confirm(r, delta=2e-8)                         # the exact delta, below the reserved one
    st = bf.status("cols:age")
    assert st["spent_delta"] == pytest.approx(2e-8)
    assert [k.split(":")[0] for k in st["keys"]] == ["file", "cols"]     # stored salted
    r2 = bf.reserve(["file:A", "cols:income"], 0.25)  # same file, other columns: same budget
    assert r2.spent == 0.75 and bf.status("cols:income")["id"] == st["id"]
    bf.confirm(r2)
    r3 = bf.reserve(["file:B", "cols:age"], 0.25)     # the used columns in another file: same
    assert r3.spent == 1.0 and r3.key == st["id"]
    bf.cancel(r3)
    with pytest.raises(ValueError, match=r"delta: spent 2e-08 of 1e-06, asked 2e-06"):
        bf.reserve(["cols:age"], 0.1, 2e-6)
    with pytest.raises(ValueError, match=r"total delta of 1e-06 .* not 1e-05"):
        bf.reserve(["cols:age"], 0.1, total_delta=1e-5)
    with pytest.raises(ValueError, match="cannot confirm"):
        bf.confirm(bf.reserve(["cols:age"], 0.1, 0.0), delta=1e-9)


def test_two_data_sets_met_in_one_run_are_merged(tmp_path):
    bf = BudgetFile(tmp_path / "b.json")
    bf.confirm(bf.reserve(["file:A", "cols:x"], 1.0, total=3.0))
    bf.confirm(bf.reserve(["file:B", "cols:y"], 0.5, total=2.0))
    r = bf.reserve(["file:A", "cols:y"], 0.25)        # column y of B is in file A: one data set
    assert r.merged and r.total == 2.0 and r.spent == 1.75
    doc = json.loads((tmp_path / "b.json").read_text())
    assert len(doc["datasets"]) == 1


def test_version_1_files_are_read_and_upgraded(tmp_path):
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"format": FORMAT, "version": 1, "datasets": {"sha256:x": {
        "total_epsilon": 1.0, "total_delta": 0.0, "description": {}, "spends": [
            {"id": "a", "epsilon": 0.5, "delta": 0.0, "label": "auc", "status": "spent"}]}}}))
    r = BudgetFile(path).reserve(["file:X", "sha256:x"], 0.25)
    assert r.spent == 0.75 and r.total_delta == 1e-6        # the default, never chosen in v1
    doc = json.loads(path.read_text())
    (entry,) = doc["datasets"].values()          # keys salted (test_budget_file_robust.py)
    assert doc["version"] == VERSION
    assert [k.split(":")[0] for k in entry["keys"]] == ["sha256", "file"]


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(ValueError, match="is a directory; give a file path such as"):
        BudgetFile(tmp_path)
