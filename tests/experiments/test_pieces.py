"""The experiments' pieces: computed conclusions, the authors' driver, the summary, the checker.

The conclusions the Markdown prints are functions of the numbers: fed two
different sets of numbers, they say different things (no fixed text). The
driver of the authors' code runs here on a fake ``protocols`` package (the
real one is not in this repository), which checks the plumbing: seeding,
subsets, their ``compute_real_U``, one JSON line per protocol.
"""

import math
import sys
import textwrap

import numpy as np
import pytest

from experiments import _common as C


def test_duplicates_reading_follows_the_numbers():
    from experiments import sinh_ramon_duplicates as D

    def stats(mse):
        return {s: {"max_degree": 2260.0 + 100 * i, "incompleteness": (1e-8, 1e-9),
                    "paper": {"mse": (mse[i], mse[i] / 10)}}
                for i, s in enumerate(D.SAMPLERS)}
    ordered, facts = D.conclusions(stats([1e-7, 1e-6, 1e-5]), 4521)
    flat, facts2 = D.conclusions(stats([4e-7, 4.1e-7, 4.2e-7]), 4521)
    assert facts["paper_order"] and facts["strict"] == 2
    assert not facts2["paper_order"] and facts2["strict"] == 0
    assert "no two samplers differ" in flat and "no two samplers differ" not in ordered
    assert facts["paper_over_law"]["balanced"] == pytest.approx(2.248e-6 / D.paper_noise(4521))


def test_umpc_reading_picks_the_closest_variant():
    from experiments import _sinh_ramon as S

    stats = [{"protocol": v, "n": 10, "mse_total": m, "mse_total_se": m / 10}
             for v, m in (("umpc", 1e-4), ("umpc-law", 3e-5), ("umpc-002", 3e-6))]
    text, r = S.umpc_reading(stats, {"n": 10}, 2.8e-6, 4521, 1.0)
    assert r["best"] == "umpc-002" and r["within"]
    text2, r2 = S.umpc_reading(stats, {"n": 10}, 1.2e-4, 4521, 1.0)
    assert r2["best"] == "umpc" and text != text2


def test_fedauc_rr_claims_follow_the_numbers():
    from experiments import fedauc_rr as R

    def stats(ratio):
        out = {}
        for k, scale in (("main", 1.0), ("tenth", 1 / ratio)):
            for e in (1.0, 2.0, math.inf):
                sd = 0.0 if e == math.inf else scale * 1e-3 / e
                out[(k, e)] = {"std": sd, "mean": 0.65, "runs": 100, "M": 1000 if k == "main"
                               else 100, "noisy_mean": 0.5 + 0.1 * min(e, 3)}
        return out
    good = R.claims(stats(0.316), [1.0, 2.0, math.inf], {"main": 0.46})
    bad = R.claims(stats(1.0), [1.0, 2.0, math.inf], {"main": 0.46})
    assert good[1][2] == "yes" and bad[1][2] == "no" and good[1][1] != bad[1][1]
    # Table 3: the noisy AUC is 1/2 + (1 - alpha - beta)(AUC - 1/2) at the base rate
    assert R.shrinkage(0.2559, 1.0) == pytest.approx((0.592421 - 0.5) / (0.749383 - 0.5), rel=0.01)


def test_expected_auc_of_laplace_noised_scores():
    from sklearn.metrics import roc_auc_score

    from experiments.fedauc_scores import expected_auc

    g = np.random.default_rng(1)
    s = g.random(300)
    y = (g.random(300) < 0.2 + 0.6 * s).astype(int)
    assert expected_auc(s, y, 1e7) == pytest.approx(roc_auc_score(y, s), abs=1e-6)
    mc = np.mean([roc_auc_score(y, s + g.laplace(0, 0.5, 300)) for _ in range(3000)])
    assert expected_auc(s, y, 2.0) == pytest.approx(mc, abs=4e-3)    # MC s.e. ~ 7e-4


def test_timing_text_names_the_drop():
    from experiments import sinh_ramon_gini as G

    stats = [{"protocol": "umpc", "n": n, "seconds": t, "setup_seconds": t * 0.9}
             for n, t in ((10_000, 0.3), (30_000, 1.5), (100_000, 0.4))]
    samp = [{"n": n, "k_m": 4 * n, "default_sweeps": 5 if 4 * n <= 2e5 else "auto",
             "default": d, "sweeps_0": 0.05, "sweeps_5": 2.0}
            for n, d in ((10_000, 0.2), (30_000, 1.3), (100_000, 0.2))]
    assert "falls from n = 30000" in G.timing_text(stats, samp)
    stats[2]["seconds"] = 3.0
    assert "grows with n at every step" in G.timing_text(stats, samp)


def test_results_files_parse_with_blank_cells():
    from experiments.authors_code import file_mse, parse_results

    text = "ratio\tn\tbal1\two1\n0.5\t10\t\t2.0\n0.5\t10\t1.0\t4.0\nratio\tn\tbal1\two1\n" \
           "0.1\t10\t3.0\t5.0\n"
    rows = parse_results(text)
    assert rows[0]["bal1"] is None and len(rows) == 3
    assert file_mse(rows, "bal1", ratio=0.5)[::2] == (1.0, 1)
    m, se, k = file_mse(rows, "wo1", ratio=0.5)
    assert (m, k) == (3.0, 2) and se == pytest.approx(1.0)


FAKE_OUR = textwrap.dedent('''
    import random
    import numpy as np

    def ours_balanced(n, m, data, epsilon, funct, l=40, c=14, secret_shared=False):
        g = np.random.default_rng()             # unseeded, as the authors' sampler
        return float(np.mean(data)) + g.random() + random.random() + np.random.random()
''')


def fake_authors_package(tmp_path, our: str):
    """A stand-in for the authors' repository: ``protocols/our.py`` (``our``) and a
    ``protocols/real.py`` whose U is the mean; returns its directory."""
    code = tmp_path / "code"
    (code / "protocols").mkdir(parents=True)
    (code / "protocols" / "__init__.py").write_text("")
    (code / "protocols" / "our.py").write_text(our)
    (code / "protocols" / "real.py").write_text(
        "def compute_real_U(data, n, f):\n    return sum(data) / n\n")
    return code


def test_authors_driver_on_a_fake_package(tmp_path):
    from experiments.authors_code import run_driver

    code = fake_authors_package(tmp_path, FAKE_OUR)
    data = {"x": np.arange(10.0)}
    job = {"group": "g", "kind": "umpc", "data": "x", "kernel": "gini", "sampler": "balanced",
           "edges": 20, "epsilon": 1.0}
    runs = [{**job, "run": 0, "seed": "a"}, {**job, "run": 1, "seed": "b"},
            {**job, "run": 2, "seed": "a"}, {**job, "run": 3, "seed": "a", "subset": 4}]
    work = tmp_path / "work"
    work.mkdir()
    rows = run_driver(sys.executable, str(code), str(work), data, runs, "fake")
    assert [r["protocol"] for r in rows] == ["umpc"] * 4
    assert rows[0]["estimate"] == rows[2]["estimate"] != rows[1]["estimate"]   # seeded
    assert rows[0]["real"] == 4.5 and rows[0]["sq_err"] == pytest.approx(
        (rows[0]["estimate"] - 4.5) ** 2)
    assert rows[3]["real"] != 4.5                        # a subset of 4 of the 10 values


def test_summary_appends_the_authors_facts():
    from experiments import summary

    item = C.item("P", "I", "ran", "paper", "ours", "why", "ev", "yes")
    docs = {"a": {"items": [{**item, "see": ["b:f"]}], "numbers": {},
                  "provenance": {"commit": "c", "mode": "full"}}}
    assert summary.rows(docs)[0][-1] == "why. (b was not run: no authors' code runs) [ev]"
    docs["b"] = {"items": [], "numbers": {"facts": {"f": "their code says 1"}},
                 "provenance": {"commit": "c", "mode": "full"}}
    assert summary.rows(docs)[0][-1] == "why. their code says 1 [ev]"
    assert summary.table(docs).count("\n| P: I |") == 1


def test_checker_compares_all_but_timings():
    from experiments.check_results import compare

    old = [{"run": "0", "x": "1.0", "seconds": "3"}, {"run": "5", "x": "2.0", "seconds": "1"},
           {"run": "", "x": "7", "seconds": "1"}]
    new = [{"run": "0", "x": "1.0", "seconds": "9"}, {"run": "", "x": "7", "seconds": "2"}]
    assert compare(old, new, 2) == []
    assert compare(old, [{"run": "0", "x": "1.1", "seconds": "3"}, new[1]], 2) \
        == ["row 0 column x: committed 1.0, now 1.1"]
    assert "rows" in compare(old, new[:1], 2)[0]
