"""A session: the parties, the network, the randomness and the dealer of one run.

No global state: a protocol is a function of (session, inputs) that returns
outputs and leaves its costs in ``session.costs()`` (``session.net.report()``
is the same as a dict).

Processes. A session belongs to one process of a run. Without a
``runtime`` (the simulator) the process holds every party and role; with
one (:mod:`mpc.run.runtime`, started by :mod:`mpc.run.launch`) it holds those its
group names, and the network exchanges each round's messages with the
other processes. The same protocol code runs in both cases; only the
participants local to this process have their shares, inputs and outputs
here (:meth:`is_local`).

Randomness: every session takes a fresh stream (:meth:`mpc.arith.rng.CSPRNG.fresh`)
from what it is given, so two sessions never share a dealer stream (masks,
Beaver triples, FSS keys), even when one :class:`~mpc.arith.rng.CSPRNG` object is
passed to both: a key holder would otherwise see the exact change of another
party's input between the two runs. With ``seed=None`` or a secure generator
the nonce comes from ``os.urandom``; a seeded generator draws it from its own
stream (reproducible, and still different for every session made from that
object). An int/str/bytes seed is a debug seed: the same seed gives the same
session by design, and the session is flagged insecure; it gives the same
session in every process of a run too, so a seeded run's results do not
depend on how its participants are spread over processes. Public
randomness (edges, committees) comes from :meth:`agreed` streams, the same
in every process.

- ``session.rng``: the session's master stream (private to this process).
- ``session.party_rng(i)``: party i's private stream, one stateful
  generator per party (the same object on every call).
- ``session.dealer.rng``: the dealer's stream.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from mpc.arith.ring import DEFAULT_BITS, DEFAULT_FRAC_BITS, FixedPoint, ring
from mpc.arith.rng import CSPRNG, RngLike, as_rng
from mpc.comm.network import DEFAULT_ROLES, Network
from mpc.comm.placement import Placement
from mpc.protocols.dealer import TrustedDealer
from mpc.protocols.providers import Comparisons, Preprocessing, as_comparisons, as_preprocessing

if TYPE_CHECKING:
    from mpc.comm.costs import Costs
    from mpc.run.routing import Link
    from mpc.run.runtime import Runtime
    from mpc.values import NotReceived, SecureArray

#: What a session is given to compare with: a provider, a sequence of them, or None.
ComparisonsLike = Comparisons | Iterable[Comparisons] | None


class Session:
    """Parties, roles, network, CSPRNG and trusted dealer of one run, in one process.

    Parameters
    ----------
    n_parties : int
        Number of data-holding parties (ids 0..n-1).
    bits, frac_bits : int
        Ring Z_2^bits and fixed-point fractional bits (paper defaults 40, 14).
    seed : None | int | str | bytes | CSPRNG
        ``None``: fresh ``os.urandom`` key (secure). A seed makes the run
        reproducible and marks it insecure (``session.insecure``). A
        :class:`CSPRNG` is the parent of the session's fresh stream (see the
        module docstring): never reused as is.
    roles : names of the extra participants (a ``"dealer"`` role is required).
    record_views : record what each party receives (tests, small n).
    runtime : the process's :class:`mpc.run.runtime.Runtime` in a run of several
        processes; None (default): the simulator, every participant here.
    comparisons : how secure values compare (:mod:`mpc.values`): a comparison
        provider or a sequence of them, the first that serves the number of
        holders is used (:mod:`mpc.protocols.providers`). Default: the p-party
        circuit (:class:`~mpc.protocols.providers.CircuitComparisons`);
        ``(fss.FSSGates(), CircuitComparisons())`` compares two holders in one
        round; ``mpc.gc.GarbledCircuits()`` without a dealer.
    preprocessing : where triples come from:
        :class:`~mpc.protocols.providers.TrustedDealerPreprocessing` (default)
        or :class:`~mpc.protocols.providers.OTPreprocessing` (no dealer: products
        by OT triples; the default when every comparison provider is dealer-free,
        e.g. ``comparisons=GarbledCircuits()``).

    ``workers`` (attribute, default None): how many threads a protocol step
    may use inside this session (None: the step's own default). Sessions of
    chunks that already run in parallel set it to 1, so that nothing nests.
    """

    def __init__(self, n_parties: int, *, bits: int = DEFAULT_BITS,
                 frac_bits: int = DEFAULT_FRAC_BITS, seed: RngLike = None,
                 roles: Iterable[str] = DEFAULT_ROLES, record_views: bool = False,
                 runtime: Runtime | None = None, comparisons: ComparisonsLike = None,
                 preprocessing: Preprocessing | None = None):
        self._setup(n_parties, as_rng(seed).fresh("session"), bits, frac_bits, roles,
                    record_views, runtime, None)
        self._providers(comparisons, preprocessing)

    @classmethod
    def derived(cls, n_parties: int, rng: CSPRNG, *, bits: int = DEFAULT_BITS,
                frac_bits: int = DEFAULT_FRAC_BITS, roles: Iterable[str] = DEFAULT_ROLES,
                record_views: bool = False, workers: int | None = None,
                runtime: Runtime | None = None, link: Link | None = None,
                comparisons: ComparisonsLike = None,
                preprocessing: Preprocessing | None = None) -> Session:
        """A session on a stream the caller derived: one piece of a larger run.

        ``rng`` is used as is (not refreshed), so the piece is reproducible
        from it: a chunk of a U-MPC run derives it from the run's fresh
        stream and the chunk index, which makes the chunk's masks, triples
        and keys independent of which worker runs it and when. The caller
        must never hand the same ``rng`` to two pieces. ``link``: the
        parent network's link narrowed to the piece's participants
        (:meth:`mpc.run.routing.Link.sub`), when the run spans processes.
        """
        if not isinstance(rng, CSPRNG):
            raise TypeError(f"rng must be an mpc.arith.rng.CSPRNG, got {type(rng).__name__}")
        self = cls.__new__(cls)
        self._setup(n_parties, rng, bits, frac_bits, roles, record_views, runtime, link)
        self.workers = workers
        self._providers(comparisons, preprocessing)
        return self

    def _providers(self, comparisons, preprocessing) -> None:
        self.comparisons = as_comparisons(comparisons)
        self.preprocessing = as_preprocessing(preprocessing, self.comparisons)

    def comparison_for(self, holders: int) -> Comparisons:
        """The first of :attr:`comparisons` that serves ``holders`` holders (ValueError if none)."""
        for c in self.comparisons:
            if c.serves(holders):
                return c
        names = ", ".join(type(c).__name__ for c in self.comparisons)
        raise ValueError(f"no comparison provider of this session ({names}) serves {holders} "
                         "holders; add mpc.protocols.providers.CircuitComparisons() (any number "
                         "of holders) to Session(comparisons=...)")

    def _setup(self, n_parties, rng, bits, frac_bits, roles, record_views, runtime, link):
        self.ring = ring(bits)
        self.fp = FixedPoint(self.ring, frac_bits)
        self._rng: CSPRNG = rng
        roles = tuple(roles)
        if "dealer" not in roles:
            roles = roles + ("dealer",)
        self.net = Network(n_parties, roles=roles, record_views=record_views)
        self.runtime = runtime
        if link is None and runtime is not None:
            link = runtime.link(self.net.n_parties, roles)
        self.net.attach(link)
        self.placement = link.placement if link is not None else Placement.single(self.net.size)
        self._public_id = runtime.next_session() if runtime is not None else 0
        self._agreed = 0
        self._streams = 0
        self.dealer = TrustedDealer(self.ring, self._rng.derive("dealer"), self.net)
        self._party_rngs: dict = {}
        self.workers = None

    # -- who is here --------------------------------------------------------------------------
    @property
    def n_parties(self) -> int:
        return self.net.n_parties

    @property
    def rng(self) -> CSPRNG:
        """The session's master stream (private to this process; derive from it, see the module
        docstring; a party's own stream is :meth:`party_rng`)."""
        return self._rng

    @property
    def insecure(self) -> bool:
        """True when randomness comes from an explicit (debug) seed."""
        return self._rng.seeded

    @property
    def single_process(self) -> bool:
        """True in the simulator: this process holds every party and role."""
        return self.placement.single_process

    def is_local(self, who: ArrayLike | str) -> np.ndarray | bool:
        """Whether party id(s) or a role name run in this process."""
        if isinstance(who, str):
            who = self.net.role(who)
        return self.net.is_local(who)

    def participant(self, who: int | str) -> int:
        """The id of a party id or a role name, checked."""
        if isinstance(who, str):
            return self.net.role(who)
        return int(self.net._ids(who, "participant"))

    # -- randomness ---------------------------------------------------------------------------
    def party_rng(self, i: int) -> CSPRNG:
        """Party i's private stream (the same stateful generator on every call)."""
        i = int(self.net._ids(i, "party"))
        g = self._party_rngs.get(i)
        if g is None:
            g = self._party_rngs[i] = self._rng.derive("party", i)
        return g

    def stream(self, label: str) -> CSPRNG:
        """A fresh private stream for one protocol step: ``rng.derive(label, k)`` with k the
        number of streams taken so far (the same in every process: SPMD order). A step that
        draws every local party's randomness at once takes one, so the draws stay vectorized."""
        self._streams += 1
        return self._rng.derive(label, self._streams)

    def agreed(self, stream: CSPRNG) -> CSPRNG:
        """A stream for *public* randomness that every process of the run draws alike.

        In the simulator and in seeded runs (where every process computes the
        same streams) it is ``stream`` itself, so results do not depend on how
        the run is spread over processes. In a secure run of several
        processes, ``stream`` is private to each process, so the agreed one is
        derived from the runtime's joint key, this session's number and the
        call's number instead (the same in every process: SPMD order).
        """
        self._agreed += 1
        if self.single_process:
            return stream
        return agreed_stream(self.runtime, stream, "session", self._public_id, self._agreed)

    # -- secure values (mpc.values) ---------------------------------------------------------------
    def input(self, values: ArrayLike | None, by: ArrayLike, *, holders: ArrayLike | None = None,
              bound: float | None = None, frac_bits: int = 0) -> SecureArray:
        """Parties ``by`` secret-share their rows of ``values`` among ``holders`` (default
        ``by``): a :class:`mpc.values.SecureArray` (see :func:`mpc.values.input_values`)."""
        from mpc.values import input_values
        return input_values(self, values, by, holders=holders, bound=bound,
                            frac_bits=frac_bits)

    def output(self, x: SecureArray,
               to: int | str | Sequence[int | str] | None = None) -> np.ndarray | NotReceived:
        """Open a secure value to ``to``: see :func:`mpc.values.output_values` (a
        :class:`mpc.values.NotReceived` in a process where no receiver runs)."""
        from mpc.values import output_values
        return output_values(self, x, to)

    def costs(self) -> Costs:
        """What this session sent so far: a :class:`mpc.comm.costs.Costs`."""
        from mpc.comm.costs import Costs
        return Costs.of(self)

    def __repr__(self) -> str:
        where = "" if self.single_process else \
            f", process={self.placement.rank}/{self.placement.n_procs}"
        return (f"Session(n_parties={self.n_parties}, ring={self.ring}, "
                f"frac_bits={self.fp.frac_bits}, insecure={self.insecure}{where})")


def agreed_stream(runtime: Runtime | None, stream: CSPRNG, *labels: str | int | bytes) -> CSPRNG:
    """``stream`` itself without a runtime or when it is seeded (every process computes the
    same stream); else the stream of ``labels`` from the runtime's joint key, the same in every
    process (see :meth:`Session.agreed`). ``labels`` must be the same in every process."""
    if runtime is None or stream.seeded:
        return stream
    key = runtime.joint_key
    if key is None:
        raise RuntimeError("the runtime has no joint key (mpc.run.launch agrees one at start-up)")
    return CSPRNG(_key=key).derive("agreed", runtime.next_agreed(), *labels)
