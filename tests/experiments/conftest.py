"""Fixtures of the experiment tests: each script's --quick run, once per test process.

``quick("name")`` runs ``experiments.<name>`` in --quick mode into a
temporary directory (skipping with the reason when the shared data it reads
is absent) and returns the directory; later calls reuse it, so the checks of
one script spread over several test files cost one run.
"""

import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.normpath(os.path.join(REPO, "..", "shared", "data"))
HEART = [("heart-disease", f) for f in ("processed.cleveland.data", "processed.hungarian.data",
                                        "processed.switzerland.data", "processed.va.data")]
#: The data files each script reads.
NEEDS = {
    "ecdf_roc": [("bank", "bank-full.csv"), ("diabetes", "diabetic_data.csv")] + HEART,
    "ecdf_hosmer_lemeshow": [("bank", "bank-full.csv"), ("diabetes", "diabetic_data.csv")],
    "fedauc_rr": [("diabetes", "diabetic_data.csv")],
    "fedauc_clients": [("diabetes", "diabetic_data.csv")],
    "fedauc_allocation": [("diabetes", "diabetic_data.csv")],
    "fedauc_scores": [("diabetes", "diabetic_data.csv")],
    "bell_auc_rr": [("diabetes", "diabetic_data.csv")],
    "bell_kendall": [("diabetes", "diabetic_data.csv")],
    "sinh_ramon_kendall": [("bank", "bank.csv")],
    "sinh_ramon_duplicates": [("bank", "bank.csv")],
    "sinh_ramon_heart": HEART,
    "authors_code": [("bank", "bank.csv")] + HEART,
}
#: authors_code needs a checkout of the authors' repository (and is slow): only when given.
AUTHORS = os.environ.get("USTAT_AUTHORS_DIR")


def need_data(name):
    for parts in NEEDS.get(name, []):
        path = os.path.join(DATA, *parts)
        if not os.path.exists(path):
            pytest.skip(f"shared data not available: {path} (clone with ../shared beside the repo)")
    if name == "authors_code" and not AUTHORS:
        pytest.skip("authors_code needs a clone of the authors' repository: set "
                    "USTAT_AUTHORS_DIR (and USTAT_AUTHORS_PYTHON, numpy < 2)")


@pytest.fixture(scope="session")
def quick(tmp_path_factory):
    done = {}

    def run(name):
        if name not in done:
            import importlib

            need_data(name)
            out = str(tmp_path_factory.mktemp(name))
            mod = importlib.import_module(f"experiments.{name}")
            assert mod.main(["--quick", "--out", out]) == 0
            done[name] = out
        return done[name]
    return run
