"""Budget keys from parsed content: what does not change the records does not change the keys."""

import gzip

import numpy as np

from ustat.data.identity import canonical_column, dataset_identity, rows_key

ROWS = [("age", "income", "y"), ("30", "1787", "no"), ("33", "4789", "yes"), ("35", "1350", "no"),
        ("30", "1476", "No"), ("59", "0", "yes"), ("30", "1787", "no")]   # a duplicated record


def _write(path, rows, sep=",", eol="\n", quote=False, gz=False):
    q = (lambda c: f'"{c}"') if quote else (lambda c: c)
    text = eol.join(sep.join(q(c) for c in r) for r in rows) + eol
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return path


def _keys(path, used=("age", "y"), **kw):
    return dataset_identity(path, list(used), **kw).keys


def test_same_records_in_any_form_have_the_same_keys(tmp_path):
    base = _keys(_write(tmp_path / "a.csv", ROWS))
    rng = np.random.default_rng(1)
    shuffled = [ROWS[0]] + [ROWS[1:][i] for i in rng.permutation(len(ROWS) - 1)]
    variants = {
        "shuffled rows, CRLF": _write(tmp_path / "b.csv", shuffled, eol="\r\n"),
        "semicolons, quoted": _write(tmp_path / "c.csv", ROWS, sep=";", quote=True),
        "gzip": _write(tmp_path / "d.csv.gz", ROWS, gz=True),
        "numbers rewritten": _write(tmp_path / "e.csv", [ROWS[0]] + [
            (f"{float(a):.2f}", f"{int(b):05d}", y) for a, b, y in ROWS[1:]]),
    }
    for what, path in variants.items():
        assert _keys(path)[:2] == base[:2], what
    # columns renamed and reordered: the same data set
    renamed = [("label", "salary", "years")] + [(y, b, a) for a, b, y in ROWS[1:]]
    assert _keys(_write(tmp_path / "f.csv", renamed), ("years", "label"))[:2] == base[:2]


def test_the_columns_key_survives_other_columns_the_file_key_other_releases(tmp_path):
    base = _keys(_write(tmp_path / "a.csv", ROWS))
    extra = [r + (("id",) if i == 0 else (str(i),)) for i, r in enumerate(ROWS)]
    widened = _keys(_write(tmp_path / "b.csv", extra))
    assert widened[1] == base[1] and widened[0] != base[0]       # same columns, another file
    other = _keys(tmp_path / "a.csv", ("income",))
    assert other[0] == base[0] and other[1] != base[1]           # same file, other columns


def test_a_changed_record_is_another_data_set(tmp_path):
    base = _keys(_write(tmp_path / "a.csv", ROWS))
    changed = list(ROWS)
    changed[3] = ("36", "1350", "no")
    keys = _keys(_write(tmp_path / "b.csv", changed))
    assert keys[0] != base[0] and keys[1] != base[1]
    dropped = _keys(_write(tmp_path / "c.csv", ROWS[:-1]))      # the duplicate counts
    assert dropped[0] != base[0] and dropped[1] != base[1]


def test_canonical_cells_and_key_properties():
    assert canonical_column([" 1", "1.0", "1e0", "-0", "0"]) == ["1.0", "1.0", "1.0", "0.0", "0.0"]
    assert canonical_column(["Yes", " yes ", "2", "x"]) == ["yes", "yes", "2.0", "x"]
    cols = [["1.0", "2.0", "3.0"], ["a", "b", "a"]]
    assert rows_key(cols) == rows_key(cols[::-1])                 # column order
    assert rows_key(cols) == rows_key([c[::-1] for c in cols])    # row order
    assert rows_key(cols) != rows_key([["1.0", "2.0", "3.0"], ["a", "a", "b"]])   # pairing


def test_no_header_files_and_the_legacy_byte_key(tmp_path):
    path = _write(tmp_path / "h.csv", ROWS[1:])
    a = _keys(path, ("1", "3"), header=False)
    b = _keys(_write(tmp_path / "i.csv", ROWS), ("age", "y"))
    assert a[:2] == b[:2] and a[2].startswith("sha256:") and a[2] != b[2]
