"""Texts of the command line (issue 37): what a field means, how numbers are printed."""

import json

import pytest

from ustat.cli import main


def _run(capsys, argv):
    code = main(argv + ["--no-progress"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("threat,who,count", [("hf", "committee members", None),
                                              ("dis", "parties", 60)])
def test_all_but_one_names_whom(capsys, threat, who, count):
    """``epsilon_all_but_one`` is against all but one *contributor* of the noise: under hf all
    but one committee member, not all but one party. A field says how many, the text whom."""
    argv = ["estimate", "gini", "--n", "60", "--seed", "1", "--threat-model", threat,
            "--noise-method", "polya"]
    code, out, err = _run(capsys, argv + ["--json"])
    assert code == 0, err
    c = json.loads(out)["collusion"]
    assert c["all_but_one_colluders"] == c["contributors"] - 1
    if count is not None:
        assert c["contributors"] == count
    code, out, _ = _run(capsys, argv)
    line = next(ln for ln in out.splitlines() if "all but one" in ln)
    assert f"{c['contributors'] - 1} of the {c['contributors']} {who}" in line
