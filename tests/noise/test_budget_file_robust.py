"""The budget file read as hostile input (issue 37): every malformed file is refused in one line
naming the file and what is wrong, a raised total is refused, and the data-set keys it stores
are keyed with a secret salt kept beside it."""

import hashlib
import json
import os
import stat

import pytest

from noise.budget_file import FORMAT, VERSION, BudgetFile

KEY = "file-rows:" + hashlib.sha256(b"the rows of some data set").hexdigest()
BYTES = "sha256:" + hashlib.sha256(b"the bytes of its file").hexdigest()


def _doc(**entry):
    base = {"keys": ["k"], "total_epsilon": 1.0, "total_delta": 1e-6, "description": {},
            "spends": [{"id": "a", "epsilon": 0.5, "delta": 0.0, "label": "auc",
                        "status": "spent"}]}
    base.update(entry)
    return {"format": FORMAT, "version": 2, "datasets": {"k": base}}


def _spend(**fields):
    sp = {"id": "a", "epsilon": 0.5, "delta": 0.0, "label": "auc", "status": "spent"}
    sp.update(fields)
    return [sp]


@pytest.mark.parametrize("doc, needle", [
    ({"format": FORMAT, "version": 2, "datasets": {"k": {"keys": ["k"], "total_epsilon": 1.0}}},
     "datasets['k'] has no 'spends'"),
    (_doc(spends={"a": 1}), "datasets['k'].spends must be a list"),
    (_doc(spends=_spend(epsilon=-10.0)), "datasets['k'].spends[0].epsilon must be"),
    (_doc(spends=_spend(epsilon=float("nan"))), "datasets['k'].spends[0].epsilon must be"),
    (_doc(spends=_spend(epsilon="1")), "datasets['k'].spends[0].epsilon must be"),
    (_doc(spends=_spend(delta=2.0)), "datasets['k'].spends[0].delta must be in [0, 1)"),
    (_doc(spends=_spend(status="maybe")), "datasets['k'].spends[0].status must be"),
    (_doc(spends=[3]), "datasets['k'].spends[0] must be an object"),
    (_doc(total_epsilon=float("inf")), "datasets['k'].total_epsilon must be"),
    (_doc(total_epsilon=None), "datasets['k'].total_epsilon must be"),
    (_doc(total_delta=-1), "datasets['k'].total_delta must be in [0, 1)"),
    (_doc(keys="k"), "datasets['k'].keys must be a list of strings"),
    ({"format": FORMAT, "version": 2, "datasets": {"k": []}}, "datasets['k'] must be an object"),
    ({"format": FORMAT, "version": 1, "datasets": {"k": {"total_epsilon": 1.0}}},
     "datasets['k'] has no 'spends'"),
])
def test_a_malformed_file_is_refused_in_one_line_naming_it(tmp_path, doc, needle):
    path = tmp_path / "b.json"
    text = json.dumps(doc)
    path.write_text(text)
    bf = BudgetFile(path)
    for call in (lambda: bf.reserve("k", 0.1, total=1.0), lambda: bf.status("k")):
        with pytest.raises(ValueError) as info:
            call()
        msg = str(info.value)
        assert f"budget file {path}" in msg and needle in msg and "\n" not in msg, msg
    assert path.read_text() == text                     # left alone


def test_a_raised_total_is_refused_a_lowered_one_accepted(tmp_path):
    path = tmp_path / "b.json"
    bf = BudgetFile(path)
    bf.confirm(bf.reserve(KEY, 0.5, total=1.0, total_delta=1e-6))
    doc = json.loads(path.read_text())
    (entry,) = doc["datasets"].values()
    entry["total_epsilon"] = 100.0                      # a hand edit
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"total_epsilon is 100 but its spends were made under a "
                                         r"total of 1; a total cannot be raised") as info:
        bf.reserve(KEY, 0.1)
    assert str(path) in str(info.value)
    entry["total_epsilon"], entry["total_delta"] = 1.0, 0.5
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"total_delta is 0\.5 but"):
        bf.reserve(KEY, 0.1)
    entry["total_epsilon"], entry["total_delta"] = 0.75, 1e-7   # lowering is conservative
    path.write_text(json.dumps(doc))
    assert bf.reserve(KEY, 0.25).remaining == 0.0


def test_keys_are_salted_and_the_salt_kept_beside_the_file(tmp_path):
    path = tmp_path / "b.json"
    bf = BudgetFile(path)
    bf.confirm(bf.reserve([KEY, BYTES], 0.5, total=1.0))
    salt = tmp_path / "b.json.salt"
    assert salt.exists() and len(salt.read_bytes()) == 32
    assert stat.S_IMODE(os.stat(salt).st_mode) == 0o600
    text = path.read_text()
    assert KEY.split(":")[1] not in text and BYTES[7:] not in text   # no plain digest stored
    assert json.loads(text)["version"] == VERSION
    assert bf.reserve([KEY], 0.25).spent == 0.75        # recognised through the salt
    assert bf.status(KEY)["spent"] == 0.75
    other = BudgetFile(tmp_path / "c.json")             # another ledger: another salt
    other.reserve([KEY], 0.1, total=1.0)
    assert (set(json.loads((tmp_path / "c.json").read_text())["datasets"])
            .isdisjoint(json.loads(text)["datasets"]))
    # the salt lost: the ledger's data sets cannot be recognised, refused (never a fresh salt)
    salt.rename(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match=r"budget file .*b\.json: its salt file .*b\.json\.salt "
                                         r"is missing"):
        bf.reserve([KEY], 0.1)
    assert not salt.exists()
    salt.write_bytes(b"short")
    with pytest.raises(ValueError, match=r"salt file .*b\.json\.salt must hold 32 bytes, has 5"):
        bf.reserve([KEY], 0.1)


def test_a_version_2_file_with_plain_keys_is_upgraded(tmp_path):
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"format": FORMAT, "version": 2, "datasets": {KEY: {
        "keys": [KEY, BYTES], "total_epsilon": 1.0, "total_delta": 1e-6,
        "description": {}, "spends": _spend()}}}))
    bf = BudgetFile(path)
    assert bf.status(KEY)["spent"] == 0.5               # read as it is
    r = bf.reserve(["column-rows:x", BYTES], 0.25)
    assert r.spent == 0.75
    text = path.read_text()
    assert json.loads(text)["version"] == VERSION
    assert KEY.split(":")[1] not in text and BYTES[7:] not in text
    assert bf.status(KEY)["spent"] == 0.75 and bf.status("column-rows:x")["spent"] == 0.75
