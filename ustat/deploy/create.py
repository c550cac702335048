"""``ustat deploy init``: a deployment directory with its configuration, CA and certificates.

:func:`init` writes ``DIR/deploy.toml`` (:mod:`.config`) and ``DIR/keys/``:
the deployment's CA (``ca.key``, ``ca.pem``) and one key (mode 0600) and
certificate per participant, its name in the certificate. The parties
``0..N-1`` are split into ``hosts`` contiguous blocks, one party host
each (``host-0``, ...); the roles get a process each (the dealer and the
aggregator for U-MPC, and the relay when there are two or more hosts).
Addresses are ``ADDRESS:PORT`` with ports from ``base_port`` up: edit
them in ``deploy.toml`` for real hosts (``--address NAME=HOST:PORT``
sets one at init).
"""

from __future__ import annotations

import itertools
import os
from typing import TYPE_CHECKING

from .config import FILE, ROLES, Config, Job, dump, load

if TYPE_CHECKING:
    from collections.abc import Iterable

#: the roles of U-MPC (``ustat estimate``), with the relay when hosts >= 2
UMPC_ROLES = ("dealer", "aggregator")


def init(out: str, parties: int, job: Job, *, hosts: int = 4, roles: Iterable[str] | None = None,
         address: str = "127.0.0.1", base_port: int = 7100, addresses: dict | None = None,
         name: str = "deployment", timeout: float = 60.0, connect_timeout: float = 30.0,
         source: str = "") -> Config:
    """Write a deployment to directory ``out`` and return its :class:`.config.Config`.

    ``job``: what the participants compute (:class:`.config.Job`: the statistic, its spec,
    how each party host reads its own file; ``ustat.cli.deploy.job_from_command`` makes one
    from a ``ustat`` command line). ``roles``: default the statistic's (the dealer and the
    aggregator for U-MPC, two servers and the analyst for the ECDF family), plus the relay
    with two or more hosts.
    """
    from mpc.wire.tls import make_deployment

    if isinstance(parties, bool) or not isinstance(parties, int) or parties < 2:
        raise ValueError(f"--parties must be an integer >= 2, got {parties!r}")
    if isinstance(hosts, bool) or not isinstance(hosts, int) or not 1 <= hosts <= parties:
        raise ValueError(f"--hosts must be an integer in 1..{parties}, got {hosts!r}")
    if not isinstance(job, Job):
        raise TypeError(f"job must be a ustat.deploy.Job, got {type(job).__name__}")
    from . import ecdf

    command = job.command
    if command != "estimate" and command not in ecdf.COMMANDS:
        raise ValueError(f"deployments run `ustat estimate` (U-MPC) or `ustat "
                         f"{' / '.join(ecdf.COMMANDS)}`, not {command!r}")
    needed = UMPC_ROLES if command == "estimate" else ecdf.ROLES
    roles = list(needed + (("relay",) if hosts >= 2 else ())) if roles is None \
        else list(roles)
    for r in roles:
        if r not in ROLES:
            raise ValueError(f"unknown role {r!r}; roles: {', '.join(ROLES)}")
    missing = [r for r in needed if r not in roles]
    if missing:
        raise ValueError(f"`ustat {command}` needs the roles {', '.join(needed)}; missing "
                         f"{', '.join(missing)}")
    extra = [r for r in roles if r not in needed and r != "relay"]
    if extra:
        raise ValueError(f"`ustat {command}` has no role {', '.join(extra)} (its roles: "
                         f"{', '.join(needed)}, and the relay)")
    cuts = [round(i * parties / hosts) for i in range(hosts + 1)]
    people: list[tuple[str, str, str | None]] = [
        (f"host-{i}", "parties", f"{a}-{b - 1}" if b - a > 1 else f"{a}")
        for i, (a, b) in enumerate(itertools.pairwise(cuts))]
    people += [(r, r, None) for r in roles]
    if os.path.exists(os.path.join(out, FILE)):
        raise ValueError(f"{os.path.join(out, FILE)} exists: choose another --out")
    keys = os.path.join(out, "keys")
    os.makedirs(keys, exist_ok=True)
    make_deployment(keys, [p[0] for p in people], name)
    addresses = dict(addresses or {})
    plist = []
    for i, (pname, role, held) in enumerate(people):
        entry = {"name": pname, "role": role}
        if held is not None:
            entry["parties"] = held
        entry["address"] = addresses.pop(pname, f"{address}:{base_port + i}")
        entry["key"] = f"keys/{pname}.key"
        entry["cert"] = f"keys/{pname}.pem"
        plist.append(entry)
    if addresses:
        raise ValueError(f"--address names no participant: {', '.join(addresses)}")
    doc = {"deployment": {"name": name, "session": int.from_bytes(os.urandom(7), "little"),
                          "timeout": float(timeout), "connect_timeout": float(connect_timeout),
                          "delay": 0.0, "source": source, "ca": "keys/ca.pem"},
           "run": job.to_dict(parties),
           "participant": plist}
    with open(os.path.join(out, FILE), "w") as f:
        f.write(dump(doc))
    return load(out)
