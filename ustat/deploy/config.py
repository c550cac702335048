"""``deploy.toml``: who takes part in a deployment, where each listens, and what they compute.

A deployment directory holds ``deploy.toml`` and ``keys/`` (the CA's
certificate, every participant's certificate, and on each participant's own
machine its own key, made there: :mod:`.keys`); the organizer keeps the CA in
``ca/``. The file::

    [deployment]
    name = "bank-kendall"
    session = 1234567890123          # the run's tag (frames of another deployment are refused)
    timeout = 60.0                   # seconds one step may wait for a peer
    connect_timeout = 30.0           # seconds to wait for every participant at start-up
    delay = 0.0                      # added to every step (latency studies)
    source = "bank.csv"              # how the release names the data
    insecure = true                  # only with deploy init --insecure: a seeded run
    local = true                     # only with deploy init --local: every key made here
    max_dropouts = 1130              # parties the run may lose (default floor((n - 1) / 3))

    [run]
    command = "estimate"             # the statistic: estimate (U-MPC), ecdf, quantile, roc, hl
    parties = 4521                   # data parties (one record each)

    [run.data]                       # what each party host reads of its own file
    columns = "age,balance"
    header = true

    [run.budget]                     # only with --budget-file: the releasing role's ledger
    file = "budget.json"             # relative to this file's directory
    total = 3.0                      # the data set's totals, when the ledger first sees it
    epsilon = 1.0                    # what each run charges
    delta = 0.0

    [run.spec]                       # the run spec (ustat.specs), as to_dict writes it
    kernel = "kendall"
    confidence = 0.95

    [run.spec.privacy]
    epsilon = 1.0
    threat_model = "dis"
    ...

    [[participant]]
    name = "host-0"                  # the name in its certificate
    role = "parties"                 # parties | dealer | aggregator | relay | server-0 | ...
    parties = "0-1130"               # a party host: the records it holds (one party each)
    address = "10.0.0.5:7100"        # where it listens (the relay and every process)
    key = "keys/host-0.key"          # made on host-0 (ustat deploy keygen), never copied
    cert = "keys/host-0.pem"
    fingerprint = "sha256:9f2c..."   # its certificate's pin (ustat deploy sign writes it)

The ranks of the run are the participants in file order, the relay left
out. Everything here is public; the keys are the only secrets (mode 0600).
A run starts only when every participant has a pinned certificate, and a
peer whose certificate is not its pin is refused: removing or replacing a
pin revokes that certificate.
The TOML reader is the standard library's ``tomllib`` (Python 3.11+) or
``tomli``; the writer emits the small subset above.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mpc.run.hosts import Plan
    from mpc.wire.tls import Credentials

    from ..specs import Spec

ROLES = ("dealer", "aggregator", "relay", "server-0", "server-1", "analyst")
FILE = "deploy.toml"


@dataclass(frozen=True)
class Job:
    """What the participants of a deployment compute: ``command`` (``estimate``: U-MPC;
    ``ecdf``, ``quantile``, ``roc``, ``hl``), its ``spec`` (:mod:`ustat.specs`), and ``data``:
    how each party host reads its own file (the fields of
    :class:`ustat.data.records.RecordSource`: ``columns``, ``sep``, ``header``,
    ``encoding``, ``positive``, ``classes``, ``clip``). ``args``: an ECDF command's flags
    (its spec is written from them). ``source``: how the release names the data (``deploy
    init --source``; written to ``[deployment] source``). ``budget``: the protocol's
    ``--budget-file`` and what each run charges to it (``[run.budget]``: ``file``, ``total``,
    ``total_delta``, ``epsilon``, ``delta``, ``label``; :mod:`ustat.deploy.budget`), or empty."""

    command: str
    spec: Any = None
    data: dict = field(default_factory=dict)
    args: tuple = ()
    source: str = ""
    budget: dict = field(default_factory=dict)

    def to_dict(self, parties: int) -> dict:
        """The ``[run]`` table of ``deploy.toml``."""
        out: dict = {"command": self.command, "parties": int(parties)}
        if self.args:
            out["args"] = list(self.args)
        out["data"] = {k: v for k, v in self.data.items() if v is not None}
        if self.spec is not None:
            out["spec"] = self.spec.to_dict()
        if self.budget:
            out["budget"] = dict(self.budget)
        return out


@dataclass
class Participant:
    name: str
    role: str                   # "parties" for a party host, else one of ROLES
    address: tuple              # (host, port)
    key: str = ""
    cert: str = ""
    parties: range | None = None
    fingerprint: str = ""       # the pinned certificate's SHA-256 (mpc.wire.tls.fingerprint)


@dataclass
class Config:
    """A parsed ``deploy.toml`` (see the module docstring); paths are absolute."""

    path: str
    name: str
    session: int
    run: dict
    participants: list
    timeout: float = 60.0
    connect_timeout: float = 30.0
    delay: float = 0.0
    source: str = ""
    ca: str = ""
    extra: dict = field(default_factory=dict)
    insecure: bool = False      # deploy init --insecure: a seeded run (tests, demos)
    local: bool = False         # deploy init --local: every key made in one place (a demo)
    max_dropouts: int | None = None     # parties the run may lose (None: the default)

    @property
    def dropout_bound(self) -> int:
        """Parties the run may lose (``max_dropouts``, default floor((parties - 1) / 3):
        :mod:`ustat.umpc.dropouts`)."""
        from ..umpc.dropouts import default_max_dropouts
        return default_max_dropouts(self.parties) if self.max_dropouts is None \
            else self.max_dropouts

    @property
    def ranked(self) -> list:
        """The participants that are ranks of the run (all but the relay), in order."""
        return [p for p in self.participants if p.role != "relay"]

    @property
    def relay(self) -> Participant | None:
        return next((p for p in self.participants if p.role == "relay"), None)

    def loopback(self) -> bool:
        """True if every participant (the relay included) listens on a loopback address
        (127.0.0.0/8 or ::1, written as such: a name such as ``localhost`` is not trusted)."""
        return all(is_loopback(p.address[0]) for p in self.participants)

    def check_plain(self) -> None:
        """ValueError unless plain TCP is allowed: every address loopback (:meth:`loopback`).
        Threat model: plain TCP has no TLS and no end-to-end encryption, so anyone on the
        network path reads and alters every frame; only this machine's own traffic is exempt."""
        if not self.loopback():
            off = ", ".join(f"{p.name} ({p.address[0]})" for p in self.participants
                            if not is_loopback(p.address[0]))
            raise ValueError(f"--plain (no TLS, no encryption) only when every participant "
                             f"listens on a loopback address (127.0.0.0/8, ::1); not: {off} "
                             f"({self.path}); run without --plain")

    def check_seed(self) -> None:
        """ValueError if the run's spec has a seed and ``deploy init --insecure`` was not given
        (``[deployment] insecure = true``): with the seed every participant can compute the
        noise, so the release protects nothing against them."""
        if seed_of(self.spec()) is not None and not self.insecure:
            raise ValueError(f"{self.path}: the run has a seed ([run.spec]), with which every "
                             "participant can compute the noise; only a deployment made with "
                             "`deploy init --insecure` (tests, demos) may run it")

    def get(self, name: str) -> Participant:
        for p in self.participants:
            if p.name == name:
                return p
        raise ValueError(f"{self.path}: no participant named {name!r}; participants: "
                         + ", ".join(p.name for p in self.participants))

    def by_role(self, role: str) -> Participant:
        found = [p for p in self.participants if p.role == role]
        if not found:
            raise ValueError(f"{self.path}: no participant has role {role!r}; roles: "
                             + ", ".join(sorted({p.role for p in self.participants})))
        return found[0]

    def host_for(self, ids: range) -> Participant:
        for p in self.participants:
            if p.parties == ids:
                return p
        hosts = ", ".join(f"{p.name} ({_range_text(p.parties)})" for p in self.participants
                          if p.parties is not None)
        raise ValueError(f"{self.path}: no party host holds exactly parties "
                         f"{_range_text(ids)}; hosts: {hosts}")

    def groups(self) -> list:
        """The run's process groups: a host's party range, or its role as the protocol's
        session names it (an ECDF run's unused dealer shares the analyst's process)."""
        from .ecdf import COMMANDS, SESSION_ROLE

        out = [[p.parties] if p.parties is not None else [SESSION_ROLE.get(p.role, p.role)]
               for p in self.ranked]
        if self.command in COMMANDS and not any(
                p.role == "dealer" for p in self.ranked):
            next(g for g in out if g == ["analyst"]).append("dealer")
        return out

    def plan(self) -> Plan:
        """The run's :class:`mpc.run.hosts.Plan`."""
        from mpc.run.hosts import Plan

        ranked = self.ranked
        relay = self.relay
        hosts = [r for r, p in enumerate(ranked) if p.parties is not None]
        relayed = frozenset(hosts) if relay is not None and len(hosts) > 1 else frozenset()
        return Plan(names=[p.name for p in ranked], groups=self.groups(),
                    addresses=[p.address for p in ranked], session=self.session,
                    relay=relay.address if relay is not None else None,
                    relayed=relayed,
                    relay_name=relay.name if relay is not None else "relay",
                    timeout=self.timeout, connect_timeout=self.connect_timeout,
                    delay=self.delay, may_vanish=self.may_vanish(hosts))

    def may_vanish(self, hosts: list) -> frozenset:
        """The ranks of the party hosts that may vanish (a dropout, not a fault): each holding
        at most ``dropout_bound`` parties, for a U-MPC estimate and for ``ecdf``, ``quantile``,
        ``roc`` and ``hl`` on the FSS or the pointwise servers (:mod:`ustat.ecdf.dropouts`:
        left out unless their keys, answers or HL sums reached every server)."""
        if self.command != "estimate":
            backend = getattr(getattr(self.spec(), "execution", None), "backend", None)
            if self.command not in ("ecdf", "quantile", "roc", "hl") or \
                    backend not in ("fss", "pointwise"):
                return frozenset()
        bound = self.dropout_bound
        return frozenset(r for r in hosts if len(self.ranked[r].parties) <= bound)

    @property
    def command(self) -> str:
        """The statistic the participants compute (``estimate``, ``ecdf``, ...)."""
        return str(self.run.get("command", "estimate"))

    @property
    def parties(self) -> int:
        return int(self.run.get("parties", 0))

    @property
    def budget(self) -> dict:
        """``[run.budget]`` (empty: no budget kept); ``file`` made absolute against this
        file's directory (the releasing role's copy of it)."""
        b = dict(self.run.get("budget") or {})
        if b.get("file"):
            b["file"] = os.path.join(os.path.dirname(self.path), str(b["file"]))
        return b

    def spec(self) -> Spec:
        """The run's spec (:mod:`ustat.specs`: a UMPCSpec for ``estimate``, the ECDF family's
        for ``ecdf``, ``quantile``, ``roc``, ``hl``), checked; ValueError naming the file."""
        from ..specs import UMPCSpec
        from ..specs.ecdf import ECDFSpec, HLSpec, QuantileSpec, ROCSpec

        kinds: dict[str, type[Spec]] = {"estimate": UMPCSpec, "ecdf": ECDFSpec,
                                        "quantile": QuantileSpec, "roc": ROCSpec, "hl": HLSpec}
        if self.command not in kinds:
            raise ValueError(f"{self.path}: [run] command {self.command!r} has no spec here")
        return kinds[self.command].from_dict(self.run.get("spec", {}),
                                             f"{self.path}: [run.spec]")

    def credentials(self, name: str) -> Credentials:
        """Participant ``name``'s TLS material with every participant's pin; ValueError if a
        file is missing, a participant is not pinned yet, or ``name``'s own certificate is
        not its pin."""
        from mpc.wire.tls import Credentials, fingerprint, load_certificate

        p = self.get(name)
        for what, path in (("key", p.key), ("certificate", p.cert), ("CA certificate", self.ca)):
            if not os.path.isfile(path):
                where = ("made on its machine by `ustat deploy keygen`" if what == "key" else
                         "from the organizer (`ustat deploy sign` writes it)")
                raise ValueError(f"{name}'s {what} {path} is missing ({where}; {self.path})")
        bare = [q.name for q in self.participants if not q.fingerprint]
        if bare:
            raise ValueError(f"{self.path}: no certificate is pinned for {', '.join(bare)}: "
                             "the organizer signs their requests (`ustat deploy sign`), "
                             "which pins them, and sends out the new deploy.toml")
        if fingerprint(load_certificate(p.cert)) != p.fingerprint:
            raise ValueError(f"{name}'s certificate {p.cert} is not the one pinned for it in "
                             f"{self.path} (revoked or replaced: use the signed certificate "
                             "that came with this deploy.toml)")
        return Credentials(name, p.key, p.cert, self.ca,
                           {q.name: q.fingerprint for q in self.participants})


def is_loopback(host: str) -> bool:
    """True for an IP address in 127.0.0.0/8 or ::1 (a host name is not resolved: False)."""
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def seed_of(spec: Spec) -> int | str | None:
    """The debug seed of a run's spec (U-MPC or the ECDF family: ``execution.seed``)."""
    execution = getattr(spec, "execution", None)
    return getattr(execution, "seed", None)


#: the note a seeded deployment's release carries (``deploy init --insecure``)
INSECURE_NOTE = ("insecure deployment (deploy init --insecure): the run is seeded, so every "
                 "participant can compute the noise; for tests and demos only")


def parse_range(text: str | int) -> range:
    """``"5"`` -> range(5, 6); ``"0-1130"`` -> range(0, 1131)."""
    s = str(text).strip()
    try:
        if "-" in s:
            a, b = s.split("-", 1)
            lo, hi = int(a), int(b)
        else:
            lo = hi = int(s)
    except ValueError:
        raise ValueError(f"a party id or range I-J, got {text!r}") from None
    if lo < 0 or hi < lo:
        raise ValueError(f"a party range needs 0 <= I <= J, got {text!r}")
    return range(lo, hi + 1)


def _range_text(r: range | None) -> str:
    if r is None:
        return "-"
    return f"{r.start}" if len(r) == 1 else f"{r.start}-{r.stop - 1}"


def _address(text: str) -> tuple:
    host, _, port = str(text).rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"an address host:port, got {text!r}")
    if not 1 <= int(port) <= 65535:
        raise ValueError(f"an address host:port with a port in 1..65535, got {text!r}")
    return host.strip("[]"), int(port)


def _toml():
    try:
        import tomllib
    except ModuleNotFoundError:                     # Python 3.10
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise ImportError("reading deploy.toml on Python 3.10 needs tomli: "
                              "pip install 'ustat-mpc[deploy]'") from None
    return tomllib


def load(path: str) -> Config:
    """Read and check a ``deploy.toml`` (a directory means its ``deploy.toml``)."""
    if os.path.isdir(path):
        path = os.path.join(path, FILE)
    path = os.path.abspath(path)
    with open(path, "rb") as f:
        try:
            doc = _toml().load(f)
        except Exception as e:
            raise ValueError(f"{path}: not valid TOML ({e})") from None
    base = os.path.dirname(path)
    dep, run = doc.get("deployment", {}), doc.get("run", {})
    parts = []
    for i, p in enumerate(doc.get("participant", [])):
        try:
            role = p["role"]
            if role != "parties" and role not in ROLES:
                raise ValueError(f"role {role!r} (one of parties, {', '.join(ROLES)})")
            parts.append(Participant(
                p["name"], role, _address(p["address"]),
                os.path.join(base, p.get("key", "")), os.path.join(base, p.get("cert", "")),
                parse_range(p["parties"]) if role == "parties" else None,
                str(p.get("fingerprint", ""))))
        except (KeyError, ValueError) as e:
            raise ValueError(f"{path}: participant {i + 1}: bad or missing {e}") from None
    if not parts:
        raise ValueError(f"{path}: no [[participant]]")
    names = [p.name for p in parts]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: participant names must be distinct")
    if "session" not in dep:
        raise ValueError(f"{path}: [deployment] has no session (the run's tag: one integer, "
                         "the same in every participant's copy)")
    try:
        session = int(dep["session"])
        seconds = {k: float(dep.get(k, d)) for k, d in
                   (("timeout", 60.0), ("connect_timeout", 30.0), ("delay", 0.0))}
    except (TypeError, ValueError) as e:
        raise ValueError(f"{path}: [deployment]: {e}") from None
    for k, v in seconds.items():
        if not math.isfinite(v) or v < 0 or (v == 0 and k != "delay"):
            raise ValueError(f"{path}: [deployment] {k} must be a number of seconds "
                             f"{'>= 0' if k == 'delay' else '> 0'}, got {dep[k]!r}")
    cfg = Config(path, dep.get("name", "deployment"), session, run, parts,
                 seconds["timeout"], seconds["connect_timeout"], seconds["delay"],
                 dep.get("source", ""), os.path.join(base, dep.get("ca", "keys/ca.pem")),
                 insecure=dep.get("insecure", False) is True,
                 local=dep.get("local", False) is True,
                 max_dropouts=_max_dropouts(path, dep))
    _check_parties(cfg)
    if cfg.max_dropouts is not None and cfg.max_dropouts > cfg.parties - 2:
        raise ValueError(f"{path}: [deployment] max_dropouts = {cfg.max_dropouts} would leave "
                         f"fewer than 2 of the {cfg.parties} parties")
    _check_last_round(cfg)
    return cfg


def _check_last_round(cfg: Config) -> None:
    """A U-MPC estimate whose party hosts may vanish ends in a threshold last round
    (:mod:`ustat.umpc.last_round`): t >= 1 colluding hosts learning nothing and t + 1 hosts
    left after any loss within ``max_dropouts``, else refused here."""
    from ..umpc.last_round import threshold_degree

    hosts = [r for r, p in enumerate(cfg.ranked) if p.parties is not None and len(p.parties)]
    if cfg.command != "estimate" or len(hosts) < 2 or not cfg.may_vanish(hosts):
        return
    try:
        threshold_degree([len(cfg.ranked[r].parties) for r in hosts], cfg.dropout_bound)
    except ValueError as e:
        raise ValueError(f"{cfg.path}: [deployment] {e}") from None


def _max_dropouts(path: str, dep: dict) -> int | None:
    """``[deployment] max_dropouts``: an integer >= 0, or absent (None: the default)."""
    v = dep.get("max_dropouts")
    if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
        raise ValueError(f"{path}: [deployment] max_dropouts must be an integer >= 0 (parties "
                         f"the run may lose), got {v!r}")
    return v


def _check_parties(cfg: Config) -> None:
    n = cfg.parties
    held = sorted((p.parties for p in cfg.participants if p.parties is not None),
                  key=lambda r: r.start)
    at = 0
    for r in held:
        if r.start != at:
            raise ValueError(f"{cfg.path}: the party hosts must hold parties 0..{n - 1} once "
                             f"each; parties {at}-{r.start - 1} are missing or held twice")
        at = r.stop
    if at != n:
        raise ValueError(f"{cfg.path}: the party hosts hold parties 0..{at - 1}, the protocol "
                         f"has {n}")


def dump(cfg_dict: dict) -> str:
    """The TOML text of a deployment: {"deployment": {...}, "run": {...}, "participant":
    [{...}, ...]}; values are strings, numbers, booleans, lists and nested tables (None
    values are left out: every field that may be None has None as its default)."""
    out: list = []
    tables = ["deployment", "run"] + [t for t in cfg_dict
                                      if t not in ("deployment", "run", "participant")]
    for table in tables:                # other tables (added by hand, say) are kept
        _table(out, table, cfg_dict[table])
    for p in cfg_dict["participant"]:
        out.append("[[participant]]")
        out += [f"{k} = {_value(v)}" for k, v in p.items()]
        out.append("")
    return "\n".join(out)


def _table(out: list, name: str, table: dict) -> None:
    out.append(f"[{name}]")
    nested = []
    for k, v in table.items():
        if isinstance(v, dict):
            nested.append((k, v))
        elif v is not None:
            out.append(f"{k} = {_value(v)}")
    out.append("")
    for k, v in nested:
        _table(out, f"{name}.{k}", v)


def _value(v) -> str:
    import json

    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if v is None:                       # inside a list (a categorical column's bounds):
        return "[]"                     # TOML has no null; the spec reads [] as None
    return json.dumps(str(v))           # a TOML basic string is a JSON string
