"""``ustat deploy init``: a deployment directory with its configuration and its CA.

:func:`init` writes ``DIR/deploy.toml`` (:mod:`.config`), the deployment's
CA in ``DIR/ca/`` (``ca.key`` mode 0600, optionally encrypted; keep it
offline) and its certificate in ``DIR/keys/ca.pem``. It writes no
participant's key: each makes its own (``ustat deploy keygen``) and the
organizer signs and pins it (``ustat deploy sign``; :mod:`.keys`). With
:class:`.keys.Keys` ``local=True`` (``deploy init --local``: a demo on one
machine) it also writes every participant's key (0600) and certificate in
``DIR/keys/`` and pins them, and ``deploy.toml`` says ``local = true``. The parties
``0..N-1`` are split into ``hosts`` contiguous blocks, one party host
each (``host-0``, ...); the roles get a process each (the dealer and the
aggregator for U-MPC, and the relay when there are two or more hosts).
Addresses are ``ADDRESS:PORT`` with ports from ``base_port`` up: edit
them in ``deploy.toml`` for real hosts (``--address NAME=HOST:PORT``
sets one at init).
"""

from __future__ import annotations

import itertools
import math
import os
import shutil
import tempfile
from typing import TYPE_CHECKING

from .config import FILE, ROLES, Config, Job, _address, dump, load, seed_of
from .keys import Keys, make_keys

if TYPE_CHECKING:
    from collections.abc import Iterable

#: the roles of U-MPC (``ustat estimate``), with the relay when hosts >= 2
UMPC_ROLES = ("dealer", "aggregator")


def init(out: str, parties: int, job: Job, *, hosts: int = 4, roles: Iterable[str] | None = None,
         base_port: int = 7100, addresses: dict | None = None, name: str = "deployment",
         timeout: float = 60.0, connect_timeout: float = 30.0, insecure: bool = False,
         keys: Keys | None = None) -> Config:
    """Write a deployment to directory ``out`` and return its :class:`.config.Config`.

    ``job``: what the participants compute (:class:`.config.Job`: the statistic, its spec,
    how each party host reads its own file; ``ustat.cli.deploy.job_from_command`` makes one
    from a ``ustat`` command line). ``roles``: default the statistic's (the dealer and the
    aggregator for U-MPC, two servers and the analyst for the ECDF family), plus the relay
    with two or more hosts. Addresses: ``addresses`` (``{name: "HOST:PORT"}``), else
    127.0.0.1 and ports from ``base_port``. ``keys``: how keys are made (:class:`.keys.Keys`;
    default: only the CA, in ``out/ca/``; ``Keys(local=True)``: every key here, for a demo).

    A spec with a seed (``--seed``: every participant can then compute the noise) is refused
    unless ``insecure`` (``deploy init --insecure``: tests, demos); then ``deploy.toml`` says
    ``insecure = true`` and the release carries a note saying so.

    Everything is checked before anything is written (ValueError naming the flag: ports in
    1..65535 for every participant, timeouts > 0, ``addresses`` naming participants, ``out``
    new or empty); the directory is written in a temporary sibling and renamed into place, so
    a failure leaves nothing behind and the retry needs no clean-up.
    """
    keys = keys if keys is not None else Keys()
    if isinstance(parties, bool) or not isinstance(parties, int) or parties < 2:
        raise ValueError(f"--parties must be an integer >= 2, got {parties!r}")
    if isinstance(hosts, bool) or not isinstance(hosts, int) or not 1 <= hosts <= parties:
        raise ValueError(f"--hosts must be an integer in 1..{parties}, got {hosts!r}")
    for flag, v in (("--timeout", timeout), ("--connect-timeout", connect_timeout)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                or v <= 0:
            raise ValueError(f"{flag} must be a number of seconds > 0, got {v!r}")
    if not isinstance(job, Job):
        raise TypeError(f"job must be a ustat.deploy.Job, got {type(job).__name__}")
    if job.spec is not None and seed_of(job.spec) is not None and not insecure:
        raise ValueError("--seed in a deployment lets every participant compute the noise (no "
                         "privacy against them): drop it, or give deploy init --insecure for a "
                         "test or a demo")
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
    last = base_port + len(people) - 1 if isinstance(base_port, int) else None
    if isinstance(base_port, bool) or last is None or base_port < 1 or last > 65535:
        raise ValueError(f"--base-port must leave a port for each of the {len(people)} "
                         f"participants in 1..65535 (at most {65536 - len(people)}), got "
                         f"{base_port!r}")
    if os.path.exists(os.path.join(out, FILE)):
        raise ValueError(f"{os.path.join(out, FILE)} exists: choose another --out")
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise ValueError(f"--out {out} exists and is not an empty directory: choose another "
                         "--out")
    addresses = dict(addresses or {})
    unknown = [a for a in addresses if a not in {p[0] for p in people}]
    if unknown:
        raise ValueError(f"--address names no participant: {', '.join(unknown)} "
                         f"(participants: {', '.join(p[0] for p in people)})")
    plist = []
    for i, (pname, role, held) in enumerate(people):
        entry = {"name": pname, "role": role}
        if held is not None:
            entry["parties"] = held
        entry["address"] = addresses.pop(pname, f"127.0.0.1:{base_port + i}")
        try:
            _address(entry["address"])
        except ValueError as e:
            raise ValueError(f"--address {pname}=...: {e}") from None
        entry["key"] = f"keys/{pname}.key"
        entry["cert"] = f"keys/{pname}.pem"
        plist.append(entry)
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(os.path.abspath(out))}.", dir=parent)
    try:
        os.chmod(tmp, 0o755)
        _write(tmp, plist, name, (timeout, connect_timeout), job, parties, insecure, keys)
        load(tmp)                           # what every participant will read: checked
        if os.path.isdir(out):
            os.rmdir(out)                   # empty (checked above)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return load(out)


def _write(out, plist, name, timeouts, job, parties, insecure, keys) -> None:
    pins = make_keys(out, [p["name"] for p in plist], name, keys)
    for p in plist:
        if p["name"] in pins:
            p["fingerprint"] = pins[p["name"]]
    doc = {"deployment": {"name": name, "session": int.from_bytes(os.urandom(7), "little"),
                          "timeout": float(timeouts[0]), "connect_timeout": float(timeouts[1]),
                          "delay": 0.0, "source": job.source, "ca": "keys/ca.pem",
                          "insecure": True if insecure else None,
                          "local": True if keys.local else None},
           "run": job.to_dict(parties),
           "participant": plist}
    with open(os.path.join(out, FILE), "w") as f:
        f.write(dump(doc))
