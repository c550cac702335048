"""Errors and warnings a data file can trigger name the first offending row (the user owns
the file) but never count rows or print a record's value (issue 37, item 4): a message is
an output about the data, and "209 of 300 row(s) outside [-4.0, -0.5]" answers an exact
threshold count for any bounds one picks."""

import gzip
import math
import re

import numpy as np
import pytest

from ustat import data as D

#: a distinctive value and count: neither may appear in a message
VALUE = "777.125"
COUNT = 13


def _bare(message: str, *, count: int = COUNT, value: str = VALUE) -> None:
    assert value not in message, message
    assert not re.search(rf"(?<![\d.]){count}(?![\d.])", message), message
    assert "row(s)" not in message and "cell(s)" not in message, message


def _csv(tmp_path, text: str, name: str = "d.csv") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_empty_cells_are_not_counted(tmp_path):
    rows = ["a,b", "1,2"] + [",2"] * COUNT
    t = D.read_table(_csv(tmp_path, "\n".join(rows) + "\n"))
    with pytest.raises(D.DataError) as exc:
        D.parse_numeric(t.columns["a"], "a", t.lines, t.path)
    assert "line 3" in str(exc.value) and "empty cell" in str(exc.value)
    _bare(str(exc.value))


@pytest.mark.parametrize("bad", ["nan", "inf", "1e999"])
def test_nonfinite_cells_are_neither_counted_nor_quoted(tmp_path, bad):
    rows = ["a", "0.5"] + [bad] * COUNT
    t = D.read_table(_csv(tmp_path, "\n".join(rows) + "\n"))
    with pytest.raises(D.DataError) as exc:
        D.parse_numeric(t.columns["a"], "a", t.lines, t.path)
    assert "line 3" in str(exc.value) and "NaN or infinite" in str(exc.value)
    _bare(str(exc.value), value=repr(bad))


def test_non_numeric_cell_is_not_quoted(tmp_path):
    t = D.read_table(_csv(tmp_path, "a\n1\nsecret-777\n"))
    with pytest.raises(D.DataError) as exc:
        D.parse_numeric(t.columns["a"], "a", t.lines, t.path)
    assert "line 3" in str(exc.value) and "non-numeric" in str(exc.value)
    _bare(str(exc.value), value="secret")


def test_labels_outside_the_rule_are_not_quoted():
    for kw in ({}, {"classes": ["no", "yes"]}):
        with pytest.raises(D.DataError) as exc:
            D.map_labels(["no", "secret-777"], "y", [2, 3], "f.csv", 2, **kw)
        assert "line 3" in str(exc.value)
        _bare(str(exc.value), value="secret")
        _bare(exc.value.for_cli(), value="secret")
    with pytest.raises(D.DataError) as exc:
        D.map_labels(["3", "Secret-777"], "y", [2, 3], "f.csv", 3)
    _bare(str(exc.value), value="ecret")
    with pytest.raises(D.DataError) as exc:           # the positive class mistyped
        D.map_labels(["no", " YES-A "], "y", [2, 3], "f.csv", 2, positive="yes-a")
    assert "line 3" in str(exc.value)
    _bare(str(exc.value), value="YES")
    _bare(exc.value.for_cli(), value="YES")


def test_out_of_bounds_values_are_not_counted():
    # the audit's example: an exact threshold count for any bounds one picks
    x = np.concatenate([np.full(5, -1.0), np.full(COUNT, float(VALUE))])
    with pytest.raises(D.DataError) as exc:
        D.normalize(x, [(-4.0, -0.5)], names=["a"])
    msg = str(exc.value)
    assert "row 6" in msg and "outside the bounds" in msg and "of 18" not in msg
    _bare(msg)
    _bare(exc.value.for_cli())
    with pytest.raises(D.DataError) as exc:           # file lines when the caller knows them
        D.normalize(x, [(-4.0, -0.5)], names=["a"], lines=list(range(2, 20)))
    assert "line 7" in str(exc.value)
    y = np.concatenate([np.zeros(3), np.full(COUNT, np.nan)])
    with pytest.raises(ValueError) as exc2:
        D.normalize(y, [(0.0, 1.0)])
    assert "row 4" in str(exc2.value)
    _bare(str(exc2.value))


def test_header_remark_does_not_print_the_first_record(tmp_path):
    t = D.read_table(_csv(tmp_path, f"{VALUE},1\n2,3\n"))
    assert len(t.warnings) == 1 and "looks like data" in t.warnings[0]
    _bare(t.warnings[0])
    _bare(t.warnings[0].for_cli())


def test_undecodable_byte_is_not_printed(tmp_path):
    p = tmp_path / "b.csv"
    p.write_bytes(b"a\n1\n\xb7\n")
    with pytest.raises(D.DataError) as exc:
        D.read_table(str(p))
    assert "line 3" in str(exc.value) and "0xb7" not in str(exc.value).lower()
    q = tmp_path / "b.csv.gz"
    q.write_bytes(gzip.compress(b"a\n1\n\xb7\n"))
    with pytest.raises(D.DataError) as exc:
        D.read_table(str(q))
    assert "0xb7" not in str(exc.value).lower()


def test_records_errors_of_the_cli_are_bare(tmp_path, capsys):
    from ustat.cli import main

    path = _csv(tmp_path, "score,label\n" + "0.5,1\n0.2,0\n" + f"{VALUE},1\n" * COUNT)
    code = main(["estimate", "auc", "--csv", path, "--bounds", "0:1", "--seed", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "line 4" in err and "outside the bounds" in err
    _bare(err)


def test_hl_prob_outside_unit_interval_is_bare(tmp_path, capsys):
    from ustat.cli import main

    path = _csv(tmp_path, "p,y\n0.5,1\n0.2,0\n" + f"{VALUE},1\n" * COUNT)
    code = main(["hl", "--csv", path, "--prob", "p", "--label", "y", "--seed", "1"])
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert code == 2 and last.startswith("ustat: error:") and "Traceback" not in err
    assert "row 3" in last
    _bare(err)


def test_bell_auc_does_not_print_class_sizes():
    from tests.api import flat_protocol

    X = np.column_stack([np.linspace(0, 1, 40), np.r_[np.ones(3), np.zeros(37)]])
    with pytest.raises(ValueError) as exc:
        flat_protocol("bell-auc", X, "auc", epsilon=1.0, seed=1, bins=64)
    _bare(str(exc.value), count=3)
    _bare(str(exc.value), count=37)


def test_categorical_codes_errors_do_not_print_values():
    from tests.api import flat_protocol

    X = np.zeros((30, 1))
    X[7:] = float(VALUE)
    with pytest.raises(ValueError) as exc:
        flat_protocol("bell-ldp", X, "duplicate", epsilon=1.0, seed=1, levels=5)
    assert "row 7" in str(exc.value)
    _bare(str(exc.value))


def test_ecdf_and_umpc_record_checks_are_bare():
    from ustat import kernels
    from ustat.ecdf.release import check_values
    from ustat.ecdf.thresholds import grid_rank
    from ustat.umpc.inputs import validate_records

    x = np.r_[np.zeros(3), np.full(COUNT, float(VALUE))]
    for call in (lambda: check_values(x, (0.0, 1.0), False),
                 lambda: check_values(np.r_[np.zeros(3), np.full(COUNT, np.inf)], None, False),
                 lambda: grid_rank(np.r_[np.zeros(3), np.full(COUNT, np.nan)], [0.5])):
        with pytest.raises(ValueError) as exc:
            call()
        assert "row 4" in str(exc.value)
        _bare(str(exc.value))
    gini = kernels.get("gini")
    for bad in (np.inf, float(VALUE)):
        with pytest.raises(ValueError) as exc:
            validate_records(np.r_[np.zeros(3), np.full(COUNT, bad)], gini)
        _bare(str(exc.value), value=VALUE if math.isfinite(bad) else "inf")
