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


def _help(capsys, argv) -> str:
    with pytest.raises(SystemExit):
        main(argv + ["--help"])
    return " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("command", ["ecdf", "quantile", "roc", "estimate"])
def test_bounds_help_says_they_are_required(capsys, command):
    """--bounds is required with --csv at a finite epsilon (the data's min/max would leak):
    no command's help may offer the data's min/max as the default."""
    text = _help(capsys, [command])
    assert "required with --csv at a finite epsilon" in text
    assert "default: the data's min/max" not in text


def test_committee_size_help_matches_the_plans(capsys):
    """The committee sizes quoted by --committee-size's help (and cli.md, README) are the
    plans' at f_H = 0.5: 40 (mpc) and 188 (polya) for large n, 180 at Bank's n."""
    import pathlib

    from noise.distributed import noise_plan
    mpc = noise_plan("hf", 10 ** 6, method="mpc").contributors
    polya = noise_plan("hf", 10 ** 6, method="polya").contributors
    bank = noise_plan("hf", 4521, method="polya").contributors
    text = _help(capsys, ["estimate"])
    assert f"{mpc} for f_H = 0.5" in text and f"{polya} for f_H = 0.5" in text
    assert f"{bank} at n = 4521" in text
    root = pathlib.Path(__file__).parents[2]
    readme = " ".join((root / "README.md").read_text().split())
    assert f"({polya} members for large n, {bank} at Bank's n)" in readme
    assert f"({mpc} members for f_H = 0.5" in readme


def test_delta_texts_match_the_planned_delta():
    """cli.md's delta paragraphs and README's Trust quote the delta umpc plans: 2^-40 per
    noisy sum (noise sampled in MPC, the default) plus the committee's failure once under
    hf; Polya: 0 under dis, the failure per noisy sum under hf. The AUC on Bank under hf."""
    import pathlib

    from ustat.umpc.privacy import delta_spent
    d = delta_spent("auc", 4521, 1.0, threat_model="hf")
    root = pathlib.Path(__file__).parents[2]
    cli = " ".join((root / "docs" / "guides" / "cli.md").read_text().split())
    readme = " ".join((root / "README.md").read_text().split())
    assert f"{d:.3g}" == "2.58e-12"
    assert f"{d:.3g}" in cli and f"{d:.3g}" in readme
    assert "delta` (0 under M_Dis;" not in cli          # the old field texts
    assert "the delta spent (0 under M_Dis;" not in cli
    assert "2 x 7.3e-13 on Bank" not in cli
