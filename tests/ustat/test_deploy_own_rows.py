"""Processes given only their own rows (issue 36 P1): examples/own_rows.py's layout.

``LocalProcesses`` forks from a launcher holding every row (not an isolation boundary);
the example instead gives every party host a file of its own rows and starts each
participant as a new ``python -m ustat`` process: what each process is given (its argv)
names only its own file, and that file holds only its rows. No run here (the example runs
one; tests/ustat/test_deploy.py runs deployments).
"""

import importlib
import os
import sys

import numpy as np

from ustat.cli.deploy import job_from_command
from ustat.deploy import init
from ustat.deploy.local import commands
from ustat.deploy.rows import host_file_rows

from .test_deploy import ROOT, _ports


def _example():
    path = os.path.join(ROOT, "examples")
    if path not in sys.path:
        sys.path.insert(0, path)
    return importlib.import_module("own_rows")


def test_each_party_process_is_given_only_its_own_rows(tmp_path):
    ex = _example()
    n = 23                                      # uneven blocks: 12 + 11
    ages = np.arange(18, 18 + n)
    cfg = init(str(tmp_path / "dep"), n, job_from_command(ex.QUANTILE, n), hosts=ex.HOSTS,
               base_port=_ports())
    files = ex.write_own_files(ages, cfg, str(tmp_path))
    hosts = [p for p in cfg.participants if p.parties is not None]
    assert sorted(files) == sorted(p.name for p in hosts)
    argv = commands(cfg, files, str(tmp_path / "reports"))
    data = cfg.run.get("data", {})
    for p in cfg.participants:
        given = [a for a in argv[p.name] if a.endswith(".csv")]
        if p.parties is None:
            assert given == []                  # a role is given no rows
            continue
        assert given == [files[p.name]]         # its own file, no other host's
        with open(files[p.name]) as f:
            rows = [int(line) for line in f.read().split()[1:]]
        assert rows == list(ages[p.parties.start:p.parties.stop])    # its rows, only them
        assert host_file_rows(files[p.name], p.parties, data) == range(len(p.parties))
