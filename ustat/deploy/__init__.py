"""Deployments: the participants of a run as processes on separate hosts (TLS, a relay).

From Python, the same as the command line::

    from ustat.deploy import init, load, run_participant, run_local
    cfg = init("dep", 4521, ["estimate", "kendall", "--columns", "age,balance",
                             "--bounds", "18:95,-8019:102127", "--epsilon", "1"], hosts=4)
    out = run_local("dep", "bank.csv")          # every participant as a process here
    out["release"]["estimate"]
    # on each host instead: run_participant(load("dep"), "host-0", "bank.csv"), ...

Modules: :mod:`.config` (deploy.toml), :mod:`.create` (init: CA, keys,
certificates), :mod:`.runner` (one participant), :mod:`.local` (all of them
here), :mod:`.wire` (bytes on the wire), :mod:`.cli` (``ustat deploy``,
``serve``, ``party``). Reference: docs/deploy.md.
"""

from .config import Config, load
from .create import init
from .local import DeployError, run_local
from .runner import run_participant

__all__ = ["Config", "load", "init", "run_local", "run_participant", "DeployError"]
