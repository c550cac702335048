"""ustat.data.values: class labels by a rule fixed before looking at the data."""

import pytest

from ustat import data as D


def _labels(values, n_classes, **kw):
    lines = list(range(2, 2 + len(values)))
    return D.map_labels(list(values), "y", lines, "f.csv", n_classes, **kw)


def test_binary_labels_with_fixed_meaning():
    codes, m = _labels(["no", "YES", "1", "0.0", "False", "true"], 2)
    assert codes.tolist() == [0, 1, 1, 0, 0, 1]
    assert m == {"column": "y", "rule": "fixed vocabulary", "classes": ["0/no/false", "1/yes/true"]}
    # the mapping is the same whatever occurs: one class only is not an error
    assert _labels(["yes"] * 5, 2)[0].tolist() == [1] * 5


def test_case_control_needs_the_positive_class():
    with pytest.raises(D.DataError) as exc:
        _labels(["case", "control"], 2)
    msg = str(exc.value)
    assert "line 2" in msg and "'case'" not in msg and "positive=" in msg   # not the label
    assert "--positive VALUE" in exc.value.for_cli() and exc.value.kind == "label"
    codes, m = _labels(["case", "control", "other"], 2, positive="case")
    assert codes.tolist() == [1, 0, 0] and m["classes"] == ["any label but 'case'", "case"]
    codes, _ = _labels(["2", "1", "2.0"], 2, positive="2")
    assert codes.tolist() == [1, 0, 1]
    codes, _ = _labels(["control", "case"], 2, classes=["control", "case"])
    assert codes.tolist() == [0, 1]


def test_ordered_classes():
    with pytest.raises(D.DataError, match="not one of the codes 0,1,2") as exc:
        _labels(["low", "medium", "high"], 3)
    assert "--classes a,b,c" in exc.value.for_cli()
    codes, m = _labels(["low", "high", "medium"], 3, classes=["low", "medium", "high"])
    assert codes.tolist() == [0, 2, 1] and m["classes"] == ["low", "medium", "high"]
    assert _labels(["2", "0", "1.0"], 3)[0].tolist() == [2, 0, 1]
    with pytest.raises(D.DataError, match=r"line 3.*the label is not one of the classes"):
        _labels(["low", "huge"], 3, classes=["low", "medium", "high"])
    with pytest.raises(ValueError, match="3 distinct labels"):
        _labels(["a"], 3, classes=["a", "a", "b"])
    with pytest.raises(D.DataError, match="two-class"):
        _labels(["a"], 3, positive="a")
