"""The committed results: one commit, provenance everywhere, the README's table, regeneration.

``experiments/results`` is written by ``run_all --out experiments/results`` at
one commit of the code. These tests read it as a user would: every file
records that commit (an ancestor of HEAD, with a clean work tree), the
command and the seed; the README's combined table is exactly the one
``experiments.summary`` builds from the results' JSON; and (slow) a full-mode
rerun with 2 runs per setting reproduces the committed rows of runs 0 and 1
(``experiments.check_results``) for the scripts cheap enough to rerun here.
"""

import os
import subprocess

import pytest

from experiments import _common as C
from experiments import summary

RESULTS = C.RESULTS
README = os.path.join(C.ROOT, "experiments", "README.md")


def _files():
    if not os.path.isdir(RESULTS) or not any(f.endswith(".json") for f in os.listdir(RESULTS)):
        pytest.skip("no committed results")
    return sorted(f for f in os.listdir(RESULTS) if not f.startswith("summary"))


def test_every_committed_file_records_one_clean_commit():
    """Every results file comes from one clean commit, the same for all scripts, an ancestor of
    HEAD, named in the README (issue 38: the results regenerated at one commit; a change to
    some scripts' code regenerates all of them)."""
    provs = {f: C.read_provenance(os.path.join(RESULTS, f)) for f in _files()}
    by_script = {}
    for f, p in provs.items():
        by_script.setdefault(f.split(".")[0].split("_curves")[0].split("_methods")[0],
                             set()).add(p["commit"])
    for name, commits in by_script.items():
        assert len(commits) == 1, (name, commits)
    commits = {p["commit"] for p in provs.values()}
    assert len(commits) == 1, f"the results come from several commits: {sorted(commits)}"
    authors = os.path.join(RESULTS, "authors_code.csv")
    if os.path.exists(authors):                     # each of its rows names where it was made
        assert {r["commit"] for r in C.read_csv(authors)} == commits
    with open(README) as fh:
        readme = fh.read()
    for commit in commits:
        assert "dirty" not in commit and len(commit) == 40
        assert commit in readme, f"the README does not name the results' commit {commit}"
    for f, p in provs.items():
        assert p["mode"] == "full" and p["seed"] == C.DEFAULT_SEED, f
        # runs added in stages (authors_code --reuse: each stage reuses the last one's CSV,
        # written to scratch, the README lists every stage) or written straight to results/
        assert p["command"].startswith("python -m experiments.") and \
            ("--out experiments/results" in p["command"] or "--reuse" in p["command"]), f
        if "--reuse" in p["command"]:
            assert "--reuse" in readme and "stages" in readme, f
    for commit in commits:
        git = subprocess.run(["git", "-C", C.ROOT, "merge-base", "--is-ancestor", commit,
                              "HEAD"], capture_output=True, timeout=60)
        if git.returncode not in (0, 1):
            pytest.skip("not a git checkout with history")
        assert git.returncode == 0, f"{commit} is not an ancestor of HEAD"


def test_every_script_has_committed_results():
    """Every script but ``authors_code``: that one needs a clone of the authors' repository
    and about two hours; its results are committed when it was run (the README says so)."""
    from experiments.run_all import NEEDS_AUTHORS, SCRIPTS

    files = set(_files())
    for name in SCRIPTS:
        if name in NEEDS_AUTHORS and f"{name}.json" not in files:
            continue
        for suffix in (".csv", ".md", ".json"):
            assert f"{name}{suffix}" in files, f"{name}{suffix}"


def test_readme_table_is_the_generated_one():
    _files()
    assert summary.readme_block(README) == summary.table(summary.load(RESULTS)).strip()
    assert "pending" not in summary.readme_block(README).lower()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["fedauc_rr", "fedauc_scores"])
def test_full_mode_reproduces_the_committed_rows(name, tmp_path):
    from experiments.check_results import check

    _files()
    if not os.path.exists(os.path.join(C._data.DATA, "diabetes", "diabetic_data.csv")):
        pytest.skip("shared data not available")
    assert check(name, RESULTS, str(tmp_path), 2) == []
