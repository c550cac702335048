"""Examples without the shared data folder (../shared/data is not part of the repository):
they say in one line that they use synthetic data, or, for gc_aes.py, which needs its
circuit, exit with one error line and no traceback."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example(name, tmp_path):
    env = dict(os.environ, USTAT_SHARED_DATA=str(tmp_path / "absent"))
    return subprocess.run([sys.executable, os.path.join(ROOT, "examples", name)], env=env,
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_gc_aes_without_its_circuit_is_one_line(tmp_path):
    r = _example("gc_aes.py", tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.count("\n") == 1 and "aes_128.txt" in r.stderr and "README" in r.stderr


def test_examples_say_they_fall_back_to_synthetic_data(tmp_path):
    r = _example("duplicate.py", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "bank.csv not found" in r.stderr and "synthetic data" in r.stderr


def test_readme_says_where_the_data_folder_comes_from():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = " ".join(f.read().split())
    assert "a folder *beside* the repository that is not part of it" in text
    assert "PROVENANCE.md" in text and "USTAT_SHARED_DATA" in text
