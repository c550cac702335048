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


def test_thresholds_accept_an_integral_exponent(capsys):
    """``--thresholds 1e2`` is N = 100, as the docs write counts (``1e6``); ``2.5`` is
    refused in one line naming the value."""
    code, out, err = _run(capsys, ["ecdf", "--n", "200", "--seed", "1", "--thresholds", "1e2",
                                   "--json"])
    assert code == 0, err
    assert len(json.loads(out)["thresholds"]) == 100
    code, out, err = _run(capsys, ["ecdf", "--n", "200", "--seed", "1", "--thresholds", "1e2",
                                   "--grid", "geometric", "--bounds", "0.001:1", "--clip",
                                   "--json"])
    assert code == 0, err
    code, _, err = _run(capsys, ["ecdf", "--n", "200", "--thresholds", "2.5"])
    assert code == 2 and err.count("\n") == 1 and "'2.5'" in err


def test_quantile_levels_print_plain_numbers(capsys):
    code, _, err = _run(capsys, ["quantile", "--n", "100", "--q", "0.5,1.5"])
    assert code == 2 and "level 1.5 is not in [0, 1]" in err and "np." not in err


@pytest.mark.parametrize("name", ["auc", "vus"])
def test_class_count_share_in_kernel_descriptions(name):
    """The descriptions give the class counts' share as chosen now (from public parameters),
    not the old fixed 10%: the number they quote is choose_aux_fraction's at |E| = 2n."""
    from ustat import kernels as K
    from ustat.umpc.release import choose_aux_fraction

    kern = K.get(name)
    share = choose_aux_fraction(kern, 1000, 2000, 2 * kern.degree)   # BalancedSamp: deg 2k
    assert "chosen from public parameters" in kern.description
    assert f"{share:g} at the default |E| = 2n" in kern.description
    assert "10%" not in kern.description
