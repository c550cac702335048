"""ustat.data.files: reading delimited text files (CSV, ';', TAB, gzip) into tables and arrays."""

import gzip
from pathlib import Path

import numpy as np
import pytest

from ustat import data as D

REPO = Path(__file__).resolve().parents[3]
SHARED_DATA = REPO.parent / "shared" / "data"
BANK = SHARED_DATA / "bank" / "bank.csv"
needs_bank = pytest.mark.skipif(
    not BANK.exists(),
    reason=f"shared data set not present ({BANK}); it lives in ../shared/data next to the repo")


def write(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


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
    with pytest.raises(ValueError, match=r"'height'.*not found; available columns: age, income"):
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
    v, _, cats = D.load_csv(p, categorical=["job"], return_categories=True)
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


def test_numeric_categories_keep_numeric_order(tmp_path):
    f = tmp_path / "c.csv"
    f.write_text("cls\n10\n2\n3\n2\n")
    values, _, cats = D.load_csv(f, categorical=True, return_categories=True)
    assert cats["cls"] == ["2", "3", "10"]
    assert values[:, 0].tolist() == [2, 0, 1, 0]


def test_gzip_is_read_transparently_and_hashes_the_content(tmp_path):
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
    assert str(p) in msg and "line 3" in msg and "0xe9" not in msg and "utf-8" in msg
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


def test_chooser_decides_from_the_header(tmp_path):
    p = write(tmp_path, "id,score,label\n1,0.5,1\n2,0.7,0\n")
    t = D.read_table(p, lambda head: [h for h in head if h != "id"])
    assert t.names == ["score", "label"] and t.columns["label"] == ["1", "0"] and t.lines == [2, 3]
