"""``--committee-size`` above n: the committee is every party, said in the notes and on stderr
(issue 37, item 12), as ``--edges`` above C(n, k) is."""

import json

from ustat.cli import main


def test_committee_larger_than_n_is_capped_with_a_note_and_a_warning(capsys):
    code = main(["estimate", "gini", "--n", "200", "--threat-model", "hf", "--committee-size",
                 "5000", "--seed", "1", "--json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    res = json.loads(out)
    (note,) = [t for t in res["notes"] if "committee" in t]
    assert "5000" in note and "200" in note and "all 200 parties" in note
    assert any(line.startswith("ustat: warning:") and "--committee-size 5000" in line
               for line in err.splitlines())


def test_committee_within_n_has_no_note(capsys):
    code = main(["estimate", "gini", "--n", "200", "--threat-model", "hf", "--committee-size",
                 "60", "--seed", "1", "--json", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert not [t for t in json.loads(out)["notes"] if "committee" in t]
    assert "committee" not in err


def test_the_library_notes_the_cap():
    import numpy as np

    from ustat.specs import UMPCSpec
    from ustat.umpc import run_umpc

    x = np.random.default_rng(0).random((50, 1))
    spec = UMPCSpec.of("gini", epsilon=1.0, threat_model="hf", committee_size=80, seed=1)
    res = run_umpc(x, spec)
    assert any("committee" in t and "all 50 parties" in t for t in res.notes)
