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

import os

from .config import FILE, ROLES, dump, load

#: the roles of U-MPC (``ustat estimate``), with the relay when hosts >= 2
UMPC_ROLES = ("dealer", "aggregator")


def init(out: str, parties: int, command: list, *, hosts: int = 4, roles=None,
         address: str = "127.0.0.1", base_port: int = 7100, addresses: dict | None = None,
         name: str = "deployment", timeout: float = 60.0, connect_timeout: float = 30.0,
         source: str = "", session: int | None = None):
    """Write a deployment to directory ``out`` and return its :class:`.config.Config`.

    ``command``: the ``ustat`` command the participants run together, e.g.
    ``["estimate", "kendall", "--columns", "age,balance", "--bounds",
    "18:95,-8019:102127", "--epsilon", "1"]`` (no ``--csv``: each party
    host gives its own file). ``roles``: default the dealer and the
    aggregator, plus the relay with two or more hosts.
    """
    from mpc.wire.tls import make_deployment

    if isinstance(parties, bool) or not isinstance(parties, int) or parties < 2:
        raise ValueError(f"--parties must be an integer >= 2, got {parties!r}")
    if isinstance(hosts, bool) or not isinstance(hosts, int) or not 1 <= hosts <= parties:
        raise ValueError(f"--hosts must be an integer in 1..{parties}, got {hosts!r}")
    if not command:
        raise ValueError("give the protocol after --, e.g. -- estimate kendall --columns a,b "
                         "--bounds 0:1,0:1")
    from . import ecdf

    if command[0] != "estimate" and command[0] not in ecdf.COMMANDS:
        raise ValueError(f"deployments run `ustat estimate` (U-MPC) or `ustat "
                         f"{' / '.join(ecdf.COMMANDS)}`, not {command[0]!r}")
    if "--csv" in command or any(a.startswith("--csv=") for a in command):
        raise ValueError("no --csv in the protocol: each party host gives its own file "
                         "(ustat party --csv FILE)")
    if "--processes" in command:
        raise ValueError("no --processes in the protocol: the deployment lays out the processes")
    needed = UMPC_ROLES if command[0] == "estimate" else ecdf.ROLES
    roles = list(needed + (("relay",) if hosts >= 2 else ())) if roles is None \
        else list(roles)
    for r in roles:
        if r not in ROLES:
            raise ValueError(f"unknown role {r!r}; roles: {', '.join(ROLES)}")
    missing = [r for r in needed if r not in roles]
    if missing:
        raise ValueError(f"`ustat {command[0]}` needs the roles {', '.join(needed)}; missing "
                         f"{', '.join(missing)}")
    extra = [r for r in roles if r not in needed and r != "relay"]
    if extra:
        raise ValueError(f"`ustat {command[0]}` has no role {', '.join(extra)} (its roles: "
                         f"{', '.join(needed)}, and the relay)")
    if command[0] == "estimate":
        _check_command(command)
    else:
        ecdf.check_command(command)
    cuts = [round(i * parties / hosts) for i in range(hosts + 1)]
    people = [(f"host-{i}", "parties", f"{a}-{b - 1}" if b - a > 1 else f"{a}")
              for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:]))]
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
    doc = {"deployment": {"name": name, "session": session if session is not None
                          else int.from_bytes(os.urandom(7), "little"),
                          "timeout": float(timeout), "connect_timeout": float(connect_timeout),
                          "delay": 0.0, "source": source, "ca": "keys/ca.pem"},
           "protocol": {"command": command[0], "args": list(command[1:]), "parties": parties},
           "participant": plist}
    with open(os.path.join(out, FILE), "w") as f:
        f.write(dump(doc))
    return load(out)


def _check_command(command) -> None:
    """The protocol's arguments parse as ``ustat estimate`` and name columns and bounds."""
    from ..cli import build_parser

    try:
        args = build_parser().parse_args(list(command))
    except SystemExit:
        raise ValueError(f"the protocol {' '.join(command)!r} is not a valid `ustat estimate` "
                         "command (see the message above)") from None
    if args.protocol != "umpc":
        raise ValueError("deployments run U-MPC (--protocol umpc)")
    if not args.columns or not args.bounds:
        raise ValueError("the protocol must name --columns and public --bounds (each party "
                         "host reads those columns of its own file)")
    if args.evaluate:
        raise ValueError("--evaluate reads every record in the clear: not in a deployment")
