"""Providers: how a session compares secret-shared values and where its correlated randomness
comes from, each named by its trust model (CrypTen's providers are the model).

A :class:`~mpc.session.Session` is *given* its providers; nothing is
registered by importing a module:

- **Comparisons** (:class:`Comparisons`): ``x < y`` and ``x == y`` on
  :class:`~mpc.values.SecureArray` values. A session holds a sequence of
  them and uses the first that serves the number of holders:
  :class:`CircuitComparisons` (here: the p-party masked-opening circuit of
  :mod:`mpc.protocols.compare`, any p >= 2, about 8 rounds, a trusted
  dealer), ``fss.FSSGates`` (two holders, one round, a trusted dealer's DCF
  keys) and ``mpc.gc.GarbledCircuits`` (two holders, Yao with oblivious
  transfer, no dealer).
- **Preprocessing** (:class:`Preprocessing`): the source of Beaver triples,
  daBits and truncation masks (:meth:`Preprocessing.truncate`).
  :class:`TrustedDealerPreprocessing` (the session's
  :class:`~mpc.protocols.dealer.TrustedDealer`, default) or
  :class:`OTPreprocessing` (dealer-free: bit triples for GMW and arithmetic
  Beaver triples for products of secure values by oblivious transfer
  between the holders, :mod:`mpc.protocols.ot_triples`; XOR ANDs, daBits
  and the truncation masks of fixed-point products still need a dealer and
  are refused). A session whose
  comparisons are all dealer-free (``mpc.gc.GarbledCircuits()``) takes
  :class:`OTPreprocessing` by default.

A provider may have compiled kernels to load (:meth:`Comparisons.warm_up`):
the launcher and the deployment runner load them while a process connects
(:mod:`mpc.run.warmup`), when they are given the provider's warm-up.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from mpc.protocols import compare, truncation

if TYPE_CHECKING:
    from mpc.session import Session

__all__ = [
    "CircuitComparisons", "Comparisons", "OTPreprocessing", "Preprocessing",
    "TrustedDealerPreprocessing", "as_comparisons", "as_preprocessing",
]


class Comparisons:
    """A comparison provider: ``[z < 0]`` and ``[z == 0]`` of an additive sharing ``z``.

    Subclasses set :attr:`name` and :attr:`trust` and implement :meth:`serves`
    and :meth:`compare`.
    """

    #: short name (results and messages)
    name = "comparisons"
    #: whom a run with this provider trusts, in words
    trust = ""
    #: True when it needs no trusted dealer (then a session's products default to OT triples)
    dealer_free = False

    def serves(self, holders: int) -> bool:
        """Whether this provider compares values shared among ``holders`` parties."""
        raise NotImplementedError

    def compare(self, session: Session, z: np.ndarray, holders: ArrayLike, op: str,
                in_bits: int | None) -> np.ndarray:
        """Additive shares ``uint64 (p, m)`` of ``[z < 0]`` (op ``"ltz"``) or ``[z == 0]``
        (``"eqz"``) among the same holders; ``z``: a ``(p, m)`` sharing mod 2^l, row j held
        by ``holders[j]`` (``(p,)`` or per instance ``(p, m)``); ``in_bits``: None, or
        d < l with |z| < 2^(d-1) guaranteed."""
        raise NotImplementedError

    def warm_up(self) -> None:
        """Load this provider's compiled kernels (nothing by default)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class CircuitComparisons(Comparisons):
    """The p-party masked-opening comparison circuit (:mod:`mpc.protocols.compare`).

    Any number p >= 2 of holders; about 8 rounds; secure against any p - 1
    colluding holders; a trusted dealer's AND triples and daBits.
    """

    name = "circuit"
    trust = "trusted dealer for AND triples and daBits; secure against any p - 1 holders"

    def serves(self, holders: int) -> bool:
        return holders >= 2

    def compare(self, session: Session, z: np.ndarray, holders: ArrayLike, op: str,
                in_bits: int | None) -> np.ndarray:
        fn = compare.ltz if op == "ltz" else compare.eqz
        return fn(session, z, holders)


class Preprocessing:
    """A source of correlated randomness: ``name`` (``"dealer"`` or ``"ot"``: the GMW
    triple source of :mod:`mpc.protocols.gmw`), ``trust``, whether it gives arithmetic
    Beaver triples (``products``, by :meth:`triples`) and whether a trusted dealer deals
    (``dealer``: XOR ANDs and daBits of secure values need one)."""

    name = ""
    trust = ""
    products = False
    dealer = False

    def triples(self, session: Session, holders: ArrayLike,
                shape: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Beaver triples ``(a, b, c)``, each ``uint64 (p, *shape)``, among ``holders``."""
        raise NotImplementedError

    def truncate(self, session: Session, x: np.ndarray, holders: ArrayLike,
                 m: int) -> np.ndarray:
        """Shares of x / 2^m, stochastically rounded, from shares ``x`` (|x| < 2^(l-2)):
        :func:`mpc.protocols.truncation.truncate` with this source's masks. The base deals
        none and raises ValueError."""
        raise ValueError(f"a truncation needs the dealer's masks, and this session's "
                         f"preprocessing ({type(self).__name__}: {self.trust}) deals none")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class TrustedDealerPreprocessing(Preprocessing):
    """The session's trusted dealer (:class:`mpc.protocols.dealer.TrustedDealer`): Beaver
    triples, daBits, masks and FSS keys, offline, counted as offline traffic."""

    name = "dealer"
    trust = "trusted dealer: honest, colludes with no party, sees no input"
    products = True
    dealer = True

    def triples(self, session: Session, holders: ArrayLike,
                shape: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The dealer's triples (3 p l offline bits each)."""
        return session.dealer.beaver_triples(holders, shape)

    def truncate(self, session: Session, x: np.ndarray, holders: ArrayLike,
                 m: int) -> np.ndarray:
        """The dealer's mask r, floor(r / 2^m) and r's top bit, then one opening
        (:func:`mpc.protocols.truncation.truncate`)."""
        return truncation.truncate(session, x, holders, m)


class OTPreprocessing(Preprocessing):
    """No dealer: bit triples for GMW and arithmetic Beaver triples for products of secure
    values by oblivious transfer between each pair of holders (:mod:`mpc.ot`,
    :mod:`mpc.protocols.ot_triples`: p (p - 1) l OTs and l^2 correction bits per pair and
    product). XOR ANDs, daBits and truncations of secure values are refused (they need a
    dealer): a product of two fixed-point values, which is truncated, raises."""

    name = "ot"
    trust = "no dealer: oblivious transfer between the holders (computational security)"
    products = True

    def triples(self, session: Session, holders: ArrayLike,
                shape: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Gilboa's OT triples (:func:`mpc.protocols.ot_triples.ot_beaver_triples`)."""
        from mpc.protocols.ot_triples import ot_beaver_triples
        return ot_beaver_triples(session, holders, shape)


def as_comparisons(
        comparisons: Comparisons | Iterable[Comparisons] | None) -> tuple[Comparisons, ...]:
    """``comparisons`` (a provider or a sequence of them; None: the p-party circuit) as a
    checked tuple."""
    if comparisons is None:
        return (CircuitComparisons(),)
    items = (comparisons,) if isinstance(comparisons, Comparisons) else tuple(comparisons)
    if not items or not all(isinstance(c, Comparisons) for c in items):
        raise TypeError("comparisons must be a comparison provider (mpc.protocols.providers."
                        "Comparisons: CircuitComparisons, fss.FSSGates, mpc.gc."
                        f"GarbledCircuits) or a sequence of them, got {comparisons!r}")
    return items


def as_preprocessing(preprocessing: Preprocessing | None,
                     comparisons: tuple[Comparisons, ...] = ()) -> Preprocessing:
    """``preprocessing`` checked (None: :class:`OTPreprocessing` when every provider of
    ``comparisons`` is dealer-free, e.g. ``mpc.gc.GarbledCircuits()``, else
    :class:`TrustedDealerPreprocessing`)."""
    if preprocessing is None:
        if comparisons and all(c.dealer_free for c in comparisons):
            return OTPreprocessing()
        return TrustedDealerPreprocessing()
    if not isinstance(preprocessing, Preprocessing):
        raise TypeError("preprocessing must be TrustedDealerPreprocessing() or "
                        f"OTPreprocessing() (mpc.protocols.providers), got {preprocessing!r}")
    return preprocessing
