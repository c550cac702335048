"""Deployments: the participants of a run as processes on separate hosts (TLS, a relay).

From Python, the same as the command line::

    from ustat.deploy import Job, init, load, run_participant, run_local
    from ustat.specs import UMPCSpec
    spec = UMPCSpec.of("kendall", epsilon=1.0, bounds=[(18, 95), (-8019, 102127)])
    cfg = init("dep", 4521, Job("estimate", spec, {"columns": "age,balance"}), hosts=4,
               keys=Keys(local=True))           # a demo: every key made here
    out = run_local("dep", "bank.csv")          # every participant as a process here
    out["release"]["estimate"]
    # on real hosts: init("dep", ...) writes the CA only; each participant
    # runs keygen("host-0", "dep/keys"), the organizer sign("dep/ca", [csr, ...]),
    # then each host: run_participant(load("dep"), "host-0", "bank.csv"), ...

Modules: :mod:`.config` (deploy.toml, :class:`Job`), :mod:`.create` (init:
the configuration and the CA), :mod:`.keys` (keygen, sign, pins),
:mod:`.participant` (the executor of one participant), :mod:`.runner` (one
participant's part of the run), :mod:`.local` (all of them here), :mod:`.wire`
(bytes on the wire); the commands ``ustat deploy``, ``serve``, ``party`` are in
:mod:`ustat.cli.deploy`. Reference: docs/guides/deploy.md.
"""

from .config import Config, Job, load
from .create import init
from .keys import Keys, keygen, sign
from .local import DeployError, run_local
from .runner import run_participant

__all__ = ["Config", "DeployError", "Job", "Keys", "init", "keygen", "load", "run_local",
           "run_participant", "sign"]
