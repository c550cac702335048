"""ustat.data.scale: public bounds and the map of records into [0, 1]^d."""

import numpy as np
import pytest

from ustat import data as D


def test_parse_bounds_ok():
    assert D.parse_bounds("0:1, -5:2.5,1e3:2e3") == [(0.0, 1.0), (-5.0, 2.5), (1000.0, 2000.0)]
    assert D.parse_bounds("-1:1", d=1) == [(-1.0, 1.0)]


@pytest.mark.parametrize("text,msg", [
    ("", "empty"),
    ("0-1", "not of the form lo:hi"),
    ("0:1:2", "not of the form lo:hi"),
    ("a:1", "must be numbers"),
    ("1:1", "need lo < hi"),
    ("2:1", "need lo < hi"),
    ("0:inf", "finite"),
    ("0:1,", "entry 2"),
])
def test_parse_bounds_errors(text, msg):
    with pytest.raises(ValueError, match=msg):
        D.parse_bounds(text)


def test_parse_bounds_count_and_type():
    with pytest.raises(ValueError, match="2 lo:hi pair\\(s\\) for 3 column"):
        D.parse_bounds("0:1,0:1", d=3)
    with pytest.raises(TypeError):
        D.parse_bounds([(0, 1)])


def test_normalize_with_bounds():
    x = np.array([[0.0, 10.0], [5.0, 20.0], [10.0, 15.0]])
    y, warn = D.normalize(x, [(0, 10), (10, 20)])
    assert warn is None
    assert np.allclose(y, [[0, 0], [0.5, 1], [1, 0.5]])
    y1, _ = D.normalize(np.array([1.0, 3.0]), "0:4")
    assert y1.shape == (2,) and np.allclose(y1, [0.25, 0.75])


def test_normalize_out_of_bounds_and_clip():
    x = np.array([[0.0, 1.0], [2.0, 5.0], [3.0, -1.0], [9.0, 0.5]])
    with pytest.raises(ValueError, match="'age': row 3 is outside the bounds"):
        D.normalize(x, [(0, 2.5), (0, 10)], names=["age", "w"])
    with pytest.raises(ValueError, match="column 1: row 2 is outside"):
        D.normalize(x, [(0, 10), (0, 1)])
    y, warn = D.normalize(x, [(0, 2.5), (0, 1)], clip=True)
    assert warn is None and y.min() >= 0 and y.max() <= 1
    assert np.allclose(y[:, 0], [0, 0.8, 1, 1])


def test_normalize_data_bounds_warns():
    x = np.array([[1.0, 7.0], [3.0, 7.0], [2.0, 7.0]])
    y, warn = D.normalize(x)
    assert warn == D.DATA_BOUNDS_WARNING and "leak" in warn
    assert np.allclose(y[:, 0], [0, 1, 0.5]) and np.all(y[:, 1] == 0)  # constant column -> 0


def test_normalize_errors():
    with pytest.raises(ValueError, match="row 1 of 'b' is NaN or infinite"):
        D.normalize(np.array([[1.0, np.nan]]), names=["a", "b"])
    with pytest.raises(ValueError, match="one \\(lo, hi\\) pair per column"):
        D.normalize(np.zeros((3, 2)), [(0, 1)])
    with pytest.raises(ValueError, match="need finite lo < hi"):
        D.normalize(np.zeros((3, 1)), [(1, 0)])


def test_huge_values_do_not_become_nan():
    x = np.array([[1e308], [-1e308], [0.0], [5e307]])
    y, _ = D.normalize(x)
    assert np.all(np.isfinite(y)) and y[:, 0].tolist() == [1.0, 0.0, 0.5, 0.75]
    y2, _ = D.normalize(x, [(-1.7e308, 1.7e308)])
    assert np.all(np.isfinite(y2)) and y2[2, 0] == 0.5
