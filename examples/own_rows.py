"""Processes that each hold only their own rows: a deployment on this machine, one file per host.

``LocalProcesses(P)`` is not an isolation boundary: the launcher holds every
party's rows and its processes are forked from it, so any of them can read
all the data in its copy of the launcher's memory. For processes that each
hold only their own rows, each must load its rows itself: here every party
host's rows are in a file of its own (standing in for data that lives with
its parties), and every participant is a new ``python -m ustat`` process
(exec'd: it shares no memory with this script) given only its own file
(``ustat.deploy.run_local`` with ``{host: file}``). This script writes the
files and then drops the data before starting anything.

A demo on one machine (``Keys(local=True)``: every key made here); on real
hosts the same commands run one per machine (docs/guides/deploy.md).
"""

import csv
import os
import sys
import tempfile

import _paths
import numpy as np

from ustat.cli.deploy import job_from_command
from ustat.deploy import Keys, init, load, run_local

N, HOSTS = 2000, 2
QUANTILE = ["quantile", "--column", "age", "--bounds", "18:95", "--thresholds", "16",
            "--q", "0.25,0.5,0.75", "--epsilon", "1"]


def write_own_files(ages, cfg, directory: str) -> dict:
    """Each party host's rows (its parties' records, header first) in ``directory/<host>.csv``:
    ``{host name: path}``. A host's file holds its rows and nothing else."""
    files = {}
    for p in cfg.participants:
        if p.parties is None:
            continue
        path = os.path.join(directory, f"{p.name}.csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["age"])
            w.writerows([[int(a)] for a in ages[p.parties.start:p.parties.stop]])
        files[p.name] = path
    return files


def main() -> None:
    if _paths.have(_paths.BANK):
        with open(_paths.BANK) as f:
            ages = np.array([int(r["age"]) for _, r in zip(range(N),
                                                              csv.DictReader(f, delimiter=";"))])
    else:
        ages = np.random.default_rng(5).integers(18, 96, N)
    with tempfile.TemporaryDirectory(prefix="ustat-own-rows-") as tmp:
        dep = os.path.join(tmp, "dep")
        init(dep, N, job_from_command(QUANTILE, N), hosts=HOSTS, keys=Keys(local=True),
             base_port=7400 + os.getpid() % 200 * 10)
        files = write_own_files(ages, load(dep), tmp)
        del ages                            # this script keeps none of the data
        out = run_local(dep, files)         # each host: `ustat party ... --csv <its file>`
    rel = out["release"]
    print("quartiles of age, each host reading only its own file:",
          ", ".join(f"{v:.1f}" for v in rel["quantiles"]), file=sys.stdout)


if __name__ == "__main__":
    main()
