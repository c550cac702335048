"""ustat.data.errors: errors and remarks carry advice for the Python API and for the CLI."""

import numpy as np
import pytest

from ustat import data as D


def test_messages_carry_api_and_cli_advice():
    assert not D.DATA_BOUNDS_WARNING.lower().startswith("warning")
    with pytest.raises(D.DataError) as exc:
        D.normalize(np.array([[5.0]]), [(0, 1)], names=["age"])
    assert "clip=True" in str(exc.value) and "--clip" in exc.value.for_cli()
    assert "clip=True" not in exc.value.for_cli() and exc.value.kind == "bounds"


def test_data_error_and_remark_hold_both_hints():
    err = D.DataError("bad cell", api_hint="pass x=1", cli_hint="use --x 1", kind="k", column="c")
    assert str(err) == "bad cell (pass x=1)" and err.for_cli() == "bad cell (use --x 1)"
    assert err.for_cli("other advice") == "bad cell (other advice)"
    assert (err.message, err.kind, err.column) == ("bad cell", "k", "c")
    assert str(D.DataError("plain")) == "plain" and D.DataError("plain").for_cli() == "plain"
    r = D.Remark("looks odd", "pass y", "use --y")
    assert isinstance(r, str) and r == "looks odd (pass y)" and r.for_cli() == "looks odd (use --y)"
    assert D.Remark("bare") == "bare" and D.Remark("bare").for_cli() == "bare"
