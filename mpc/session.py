"""A session: the parties, the network, the randomness and the dealer of one run.

No global state: a protocol is a function of (session, inputs) that returns
outputs and leaves its costs in ``session.net.report()``.
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
        reproducible and marks it insecure (``session.insecure``).
    roles : names of the extra participants (a ``"dealer"`` role is required).
    record_views : record what each party receives (tests, small n).
    """

    def __init__(self, n_parties, *, bits: int = DEFAULT_BITS,
                 frac_bits: int = DEFAULT_FRAC_BITS, seed=None,
                 roles=DEFAULT_ROLES, record_views: bool = False):
        self.ring = ring(bits)
        self.fp = FixedPoint(self.ring, frac_bits)
        self.rng: CSPRNG = as_rng(seed)
        roles = tuple(roles)
        if "dealer" not in roles:
            roles = roles + ("dealer",)
        self.net = Network(n_parties, roles=roles, record_views=record_views)
        self.dealer = TrustedDealer(self.ring, self.rng.derive("dealer"), self.net)
        self._party_rngs: dict = {}

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
