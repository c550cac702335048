"""A session: the parties, the network, the randomness and the dealer of one run.

No global state: a protocol is a function of (session, inputs) that returns
outputs and leaves its costs in ``session.net.report()``.

Randomness: every session takes a fresh stream (:meth:`mpc.rng.CSPRNG.fresh`)
from what it is given, so two sessions never share a dealer stream (masks,
Beaver triples, FSS keys), even when one :class:`~mpc.rng.CSPRNG` object is
passed to both: a key holder would otherwise see the exact change of another
party's input between the two runs. With ``seed=None`` or a secure generator
the nonce comes from ``os.urandom``; a seeded generator draws it from its own
stream (reproducible, and still different for every session made from that
object). An int/str/bytes seed is a debug seed: the same seed gives the same
session by design, and the session is flagged insecure.
"""

from __future__ import annotations

from .dealer import TrustedDealer
from .network import DEFAULT_ROLES, Network
from .ring import DEFAULT_BITS, DEFAULT_FRAC_BITS, FixedPoint, ring
from .rng import CSPRNG, as_rng


class Session:
    """Simulated parties sharing one network, CSPRNG and trusted dealer.

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

    ``workers`` (attribute, default None): how many threads a protocol step
    may use inside this session (None: the step's own default). Sessions of
    chunks that already run in parallel set it to 1, so that nothing nests.
    """

    def __init__(self, n_parties, *, bits: int = DEFAULT_BITS,
                 frac_bits: int = DEFAULT_FRAC_BITS, seed=None,
                 roles=DEFAULT_ROLES, record_views: bool = False):
        self._setup(n_parties, as_rng(seed).fresh("session"), bits, frac_bits, roles,
                    record_views)

    @classmethod
    def derived(cls, n_parties, rng: CSPRNG, *, bits: int = DEFAULT_BITS,
                frac_bits: int = DEFAULT_FRAC_BITS, roles=DEFAULT_ROLES,
                record_views: bool = False, workers=None) -> "Session":
        """A session on a stream the caller derived: one piece of a larger run.

        ``rng`` is used as is (not refreshed), so the piece is reproducible
        from it: a chunk of a U-MPC run derives it from the run's fresh
        stream and the chunk index, which makes the chunk's masks, triples
        and keys independent of which worker runs it and when. The caller
        must never hand the same ``rng`` to two pieces.
        """
        if not isinstance(rng, CSPRNG):
            raise TypeError(f"rng must be an mpc.rng.CSPRNG, got {type(rng).__name__}")
        self = cls.__new__(cls)
        self._setup(n_parties, rng, bits, frac_bits, roles, record_views)
        self.workers = workers
        return self

    def _setup(self, n_parties, rng, bits, frac_bits, roles, record_views):
        self.ring = ring(bits)
        self.fp = FixedPoint(self.ring, frac_bits)
        self.rng: CSPRNG = rng
        roles = tuple(roles)
        if "dealer" not in roles:
            roles = roles + ("dealer",)
        self.net = Network(n_parties, roles=roles, record_views=record_views)
        self.dealer = TrustedDealer(self.ring, self.rng.derive("dealer"), self.net)
        self._party_rngs: dict = {}
        self.workers = None

    @property
    def n_parties(self) -> int:
        return self.net.n_parties

    @property
    def insecure(self) -> bool:
        """True when randomness comes from an explicit (debug) seed."""
        return self.rng.seeded

    def party_rng(self, i: int) -> CSPRNG:
        """Party i's private stream (the same stateful generator on every call)."""
        g = self._party_rngs.get(i)
        if g is None:
            g = self._party_rngs[i] = self.rng.party(i)
        return g

    def __repr__(self) -> str:
        return (f"Session(n_parties={self.n_parties}, ring={self.ring}, "
                f"frac_bits={self.fp.frac_bits}, insecure={self.insecure})")
