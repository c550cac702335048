"""Tests for ustat.data: CSV loading, bounds, normalisation, synthetic default."""

from pathlib import Path

import numpy as np
import pytest

from mpc.arith.rng import CSPRNG
from ustat import data as D

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"
BANK = SHARED_DATA / "bank" / "bank.csv"
needs_bank = pytest.mark.skipif(
    not BANK.exists(),
    reason=f"shared data set not present ({BANK}); it lives in ../shared/data next to the repo")


def write(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


# ---------------------------------------------------------------- load_csv
def test_load_comma_and_semicolon_quoted(tmp_path):
    p1 = write(tmp_path, "a,b\n1,2.5\n3,-4e1\n", "c.csv")
    v, names = D.load_csv(p1)
    assert names == ["a", "b"]
    assert v.dtype == np.float64 and np.array_equal(v, [[1, 2.5], [3, -40]])
    p2 = write(tmp_path, '"a";"name";"b"\n1;"x; y";2\n3;"z";4\n', "s.csv")
    v, names = D.load_csv(p2, columns=["b", "a"])
    assert names == ["b", "a"]
    assert np.array_equal(v, [[2, 1], [4, 3]])


def test_explicit_sep_and_string_columns(tmp_path):
    p = write(tmp_path, "a|b\n1|2\n")
    v, names = D.load_csv(p, columns="b", sep="|")
    assert names == ["b"] and v.tolist() == [[2.0]]


@pytest.mark.parametrize("body,line,col,what", [
    ("a,b\n1,2\n3,\n", 3, "b", "empty"),
    ("a,b\n1,2\n3,4\nnan,5\n", 4, "a", "NaN"),
    ("a,b\n1,2\n3,abc\n", 3, "b", "non-numeric"),
    ("a,b\n1,inf\n", 2, "b", "NaN or infinite"),
])
def test_bad_cells_name_line_and_column(tmp_path, body, line, col, what):
    p = write(tmp_path, body)
    with pytest.raises(ValueError) as exc:
        D.load_csv(p)
    msg = str(exc.value)
    assert f"line {line}" in msg and f"'{col}'" in msg and what in msg


def test_missing_column_lists_available(tmp_path):
    p = write(tmp_path, "age,income\n1,2\n")
    with pytest.raises(ValueError, match="'height'.*not found; available columns: age, income"):
        D.load_csv(p, columns=["age", "height"])


def test_structural_errors(tmp_path):
    with pytest.raises(ValueError, match="line 3: expected 2 fields"):
        D.load_csv(write(tmp_path, "a,b\n1,2\n3\n"))
    with pytest.raises(ValueError, match="no data rows"):
        D.load_csv(write(tmp_path, "a,b\n", "h.csv"))
    with pytest.raises(ValueError, match="header"):
        D.load_csv(write(tmp_path, "", "e.csv"))
    with pytest.raises(ValueError, match="sep must be a single character"):
        D.load_csv(write(tmp_path, "a\n1\n", "x.csv"), sep=",,")
    with pytest.raises(ValueError, match="more than once"):
        D.load_csv(write(tmp_path, "a,a\n1,2\n", "d.csv"), columns=["a"])


def test_categorical_codes(tmp_path):
    p = write(tmp_path, "job,age\nnurse,30\nadmin.,40\nnurse,50\nzoo,1\n")
    v, names, cats = D.load_csv(p, categorical=["job"], return_categories=True)
    assert cats == {"job": ["admin.", "nurse", "zoo"]}
    assert v[:, 0].tolist() == [1, 0, 1, 2] and v[:, 1].tolist() == [30, 40, 50, 1]
    v2, _ = D.load_csv(p, columns=["job"], categorical=True)
    assert v2[:, 0].tolist() == [1, 0, 1, 2]
    with pytest.raises(ValueError, match="categorical column"):
        D.load_csv(p, columns=["age"], categorical=["job"])


@needs_bank
def test_bank_csv_loads():
    v, names = D.load_csv(BANK, columns=["age", "balance", "duration"])
    assert v.shape == (4521, 3) and names == ["age", "balance", "duration"]
    assert v[0].tolist() == [30, 1787, 79]
    jobs, _, cats = D.load_csv(BANK, columns=["job"], categorical=True, return_categories=True)
    assert jobs.shape == (4521, 1)
    assert len(cats["job"]) == 12  # input space {0, ..., 11} as in Section 6.2.3
    assert set(np.unique(jobs).tolist()) == set(range(12))
    with pytest.raises(ValueError, match="line 2, column 'job': non-numeric"):
        D.load_csv(BANK, columns=["age", "job"])


# ---------------------------------------------------------------- parse_bounds
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


# ---------------------------------------------------------------- normalize
def test_normalize_with_bounds():
    x = np.array([[0.0, 10.0], [5.0, 20.0], [10.0, 15.0]])
    y, warn = D.normalize(x, [(0, 10), (10, 20)])
    assert warn is None
    assert np.allclose(y, [[0, 0], [0.5, 1], [1, 0.5]])
    y1, _ = D.normalize(np.array([1.0, 3.0]), "0:4")
    assert y1.shape == (2,) and np.allclose(y1, [0.25, 0.75])


def test_normalize_out_of_bounds_and_clip():
    x = np.array([[0.0, 1.0], [2.0, 5.0], [3.0, -1.0], [9.0, 0.5]])
    with pytest.raises(ValueError, match="'age': 2 of 4 row\\(s\\) outside the bounds"):
        D.normalize(x, [(0, 2.5), (0, 10)], names=["age", "w"])
    with pytest.raises(ValueError, match="column 1: 2 of 4 row"):
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
    with pytest.raises(ValueError, match="NaN or infinite value\\(s\\) in 'b'"):
        D.normalize(np.array([[1.0, np.nan]]), names=["a", "b"])
    with pytest.raises(ValueError, match="one \\(lo, hi\\) pair per column"):
        D.normalize(np.zeros((3, 2)), [(0, 1)])
    with pytest.raises(ValueError, match="need finite lo < hi"):
        D.normalize(np.zeros((3, 1)), [(1, 0)])


# ---------------------------------------------------------------- synthetic
def test_synthetic_uniform():
    a = D.synthetic_uniform(2000, 3, CSPRNG(1))
    b = D.synthetic_uniform(2000, 3, 1)
    assert a.shape == (2000, 3) and a.dtype == np.float64
    assert np.array_equal(a, b)
    assert a.min() >= 0 and a.max() < 1
    assert np.all(np.abs(a.mean(axis=0) - 0.5) < 0.03)
    with pytest.raises(ValueError, match="n must be >= 1"):
        D.synthetic_uniform(0, 2)
    with pytest.raises(TypeError, match="d must be an integer"):
        D.synthetic_uniform(5, 2.0)


def test_numeric_categories_keep_numeric_order(tmp_path):
    from ustat.data import load_csv

    f = tmp_path / "c.csv"
    f.write_text("cls\n10\n2\n3\n2\n")
    values, _, cats = load_csv(f, categorical=True, return_categories=True)
    assert cats["cls"] == ["2", "3", "10"]
    assert values[:, 0].tolist() == [2, 0, 1, 0]


# ---------------------------------------------------------------- issue 8: formats and messages
def test_gzip_is_read_transparently_and_hashes_the_content(tmp_path):
    import gzip

    plain = write(tmp_path, "a;b\n1;2\n3;4\n", "p.csv")
    gz = tmp_path / "p.csv.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    v, names = D.load_csv(gz)
    assert names == ["a", "b"] and v.tolist() == [[1, 2], [3, 4]]
    assert D.read_table(gz).sha256 == D.read_table(plain).sha256


def test_non_utf8_names_file_line_and_encoding(tmp_path):
    p = tmp_path / "l.csv"
    p.write_bytes(b"name,v\nAna,1\nJos\xe9,2\n")
    with pytest.raises(D.DataError) as exc:
        D.load_csv(p, columns=["v"])
    msg = str(exc.value)
    assert str(p) in msg and "line 3" in msg and "0xe9" in msg and "utf-8" in msg
    assert "encoding='latin-1'" in msg and "--encoding latin-1" in exc.value.for_cli()
    v, _ = D.load_csv(p, columns=["v"], encoding="latin-1")
    assert v[:, 0].tolist() == [1, 2]
    with pytest.raises(ValueError, match="unknown encoding"):
        D.load_csv(p, encoding="klingon")


def test_headerless_file_keeps_its_first_record(tmp_path):
    p = write(tmp_path, "1,2\n3,4\n5,6\n")
    t = D.read_table(p)
    assert t.n_rows == 2 and len(t.warnings) == 1 and "looks like data" in t.warnings[0]
    assert "header=False" in t.warnings[0] and "--no-header" in t.warnings[0].for_cli()
    v, names = D.load_csv(p, header=False)
    assert names == ["1", "2"] and v.tolist() == [[1, 2], [3, 4], [5, 6]]
    v2, _ = D.load_csv(p, columns=["2"], header=False)
    assert v2[:, 0].tolist() == [2, 4, 6]
    assert D.read_table(write(tmp_path, "a,b\n1,2\n", "h.csv")).warnings == []


def test_huge_values_do_not_become_nan():
    x = np.array([[1e308], [-1e308], [0.0], [5e307]])
    y, _ = D.normalize(x)
    assert np.all(np.isfinite(y)) and y[:, 0].tolist() == [1.0, 0.0, 0.5, 0.75]
    y2, _ = D.normalize(x, [(-1.7e308, 1.7e308)])
    assert np.all(np.isfinite(y2)) and y2[2, 0] == 0.5


def test_messages_carry_api_and_cli_advice():
    assert not D.DATA_BOUNDS_WARNING.lower().startswith("warning")
    with pytest.raises(D.DataError) as exc:
        D.normalize(np.array([[5.0]]), [(0, 1)], names=["age"])
    assert "clip=True" in str(exc.value) and "--clip" in exc.value.for_cli()
    assert "clip=True" not in exc.value.for_cli() and exc.value.kind == "bounds"


def test_chooser_decides_from_the_header(tmp_path):
    p = write(tmp_path, "id,score,label\n1,0.5,1\n2,0.7,0\n")
    t = D.read_table(p, lambda head: [h for h in head if h != "id"])
    assert t.names == ["score", "label"] and t.columns["label"] == ["1", "0"] and t.lines == [2, 3]


# ---------------------------------------------------------------- labels
def _labels(values, n_classes, **kw):
    return D.map_labels(list(values), "y", list(range(2, 2 + len(values))), "f.csv", n_classes, **kw)


def test_binary_labels_with_fixed_meaning():
    codes, m = _labels(["no", "YES", "1", "0.0", "False", "true"], 2)
    assert codes.tolist() == [0, 1, 1, 0, 0, 1]
    assert m == {"column": "y", "rule": "fixed vocabulary", "classes": ["0/no/false", "1/yes/true"]}
    # the mapping is the same whatever occurs: one class only is not an error
    assert _labels(["yes"] * 5, 2)[0].tolist() == [1] * 5


def test_case_control_needs_the_positive_class():
    with pytest.raises(D.DataError) as exc:
        _labels(["case", "control"], 2)
    assert "line 2" in str(exc.value) and "'case'" in str(exc.value) and "positive=" in str(exc.value)
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
    with pytest.raises(D.DataError, match="line 3.*'huge' is not one of the classes"):
        _labels(["low", "huge"], 3, classes=["low", "medium", "high"])
    with pytest.raises(ValueError, match="3 distinct labels"):
        _labels(["a"], 3, classes=["a", "a", "b"])
    with pytest.raises(D.DataError, match="two-class"):
        _labels(["a"], 3, positive="a")


def test_public_names_importable_from_ustat_data():
    """The split into data_errors / data_io / data_values / data_scale keeps ustat.data's API."""
    import ustat.data_errors
    import ustat.data_io
    import ustat.data_scale
    import ustat.data_values

    for name in D.__all__:
        assert getattr(D, name) is not None, name
    assert D.read_table is ustat.data_io.read_table and D.load_csv is ustat.data_io.load_csv
    assert D.DataError is ustat.data_errors.DataError and D.normalize is ustat.data_scale.normalize
    assert D.map_labels is ustat.data_values.map_labels
    assert issubclass(D.DataError, ValueError)
