"""Prime-order elliptic-curve groups for the base OT, one call per group operation.

Two backends, chosen by :func:`get_group`:

* ``"secp256k1"`` (default when installed): Bitcoin Core's libsecp256k1
  through ``coincurve`` (the optional extra ``ot``), chosen as the fastest
  of the libraries measured here: about 0.13 ms per base OT against 0.18 ms
  for ristretto255 through libsodium (``rbcl``; PyNaCl 1.6 exposes no
  ristretto255 calls, and its edwards25519 variable-base multiplication
  costs 0.13 ms alone) and 2.5 ms for P-256 through pycryptodome. Prime order
  n = 2^256 - 432420386565659656852420866394968145599, cofactor 1.
* ``"p256"`` (fallback, always available): NIST P-256 through pycryptodome's
  ``ECC`` (C point arithmetic, but point encoding and decoding go through
  Python integers), prime order, cofactor 1. About 20 times slower than
  secp256k1 here (benchmarks/ot.py, ``base_ot_per_s_by_group``).

Both encode a point as 33 bytes (SEC1 compressed), so every OT cost formula
is the same for both: ``POINT_BITS = 264`` bits per group element. Decoding
a received encoding checks that it is a point of the group (cofactor 1:
every curve point is in the prime-order group, no small-subgroup caveat).

Neither library batches: each scalar multiplication is one Python call into
C (tens of microseconds), so the base OT costs a Python loop over OTs
(:class:`mpc.ot.base.BaseOTBatch`, one loop per protocol step) calling the
per-OT methods here (:class:`Group`), which keep the protocol code
backend-neutral. Scalars are drawn from 40 random bytes reduced mod (n - 1),
plus 1 (statistical distance < 2^-60 from uniform on [1, n-1]).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from coincurve import PublicKey
    from Crypto.PublicKey.ECC import EccPoint

POINT_BYTES = 33
POINT_BITS = 8 * POINT_BYTES
SCALAR_RAW_BYTES = 40
# the domain names the module's first path (mpc.gc.ot): a new string would change every
# seeded release
_KDF_DOMAIN = b"ustat-toolkit mpc.gc.ot Chou-Orlandi v1"


def kdf(a_enc: bytes, b_enc: bytes, point_enc: bytes, index: int) -> bytes:
    """The key of OT number ``index``: ``SHA-256(domain || index || A || B || point)[:16]``
    (``index`` as 8 little-endian bytes). Binding the index keeps the keys of two OTs
    independent even when a receiver sends the same B for both under one A."""
    return hashlib.sha256(_KDF_DOMAIN + int(index).to_bytes(8, "little") + a_enc + b_enc
                          + point_enc).digest()[:16]


def _check_b(a_enc: bytes, b_enc: bytes) -> None:
    """Refuse B = A: then aB - aA is the point at infinity and k1 is a public constant."""
    if b_enc == a_enc:
        raise ValueError("base OT: the receiver's B equals A (malformed or malicious message; "
                         "k1 would be public)")


class Group(Protocol):
    """A backend: the per-OT curve operations :class:`mpc.ot.base.BaseOTBatch` calls.

    Scalars and points are the library's own objects (coincurve's 32-byte
    secrets and ``PublicKey``, pycryptodome's integers and ``EccPoint``).
    """

    name: str
    order: int

    def scalar(self, raw: bytes) -> Any:
        """A nonzero scalar from ``SCALAR_RAW_BYTES`` random bytes."""

    def point(self, enc: bytes) -> Any:
        """The point of a received encoding (ValueError if it is not one)."""

    def setup(self, a: Any) -> tuple[Any, bytes, Any]:
        """(A, encoding of A, -aA) for the sender's scalar ``a``."""

    def choose(self, A: Any, a_enc: bytes, b: Any, c: int, index: int) -> tuple[bytes, bytes]:
        """Receiver: (encoding of B = bG + cA, key H(index, A, B, bA)) for OT ``index``."""

    def keys(self, a: Any, a_enc: bytes, neg_aA: Any, b_enc: bytes,
             index: int) -> tuple[bytes, bytes]:
        """Sender: (H(index, A, B, aB), H(index, A, B, aB - aA)) for a received encoding of
        B (ValueError if B = A)."""


class _Secp256k1:
    name = "secp256k1"
    order = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141

    def __init__(self):
        from coincurve import PublicKey
        self._pk = PublicKey

    def scalar(self, raw: bytes) -> bytes:
        return (int.from_bytes(raw, "little") % (self.order - 1) + 1).to_bytes(32, "big")

    def neg(self, s: bytes) -> bytes:
        return (self.order - int.from_bytes(s, "big")).to_bytes(32, "big")

    def point(self, enc: bytes) -> PublicKey:
        """The point of a received encoding (ValueError if it is not one)."""
        return self._pk(enc)

    def setup(self, a: bytes) -> tuple[PublicKey, bytes, PublicKey]:
        """(A, encoding of A, -aA) for the sender's scalar ``a``."""
        A = self._pk.from_valid_secret(a)
        return A, A.format(), A.multiply(self.neg(a))

    def choose(self, A: PublicKey, a_enc: bytes, b: bytes, c: int,
               index: int) -> tuple[bytes, bytes]:
        """Receiver: (encoding of B = bG + cA, key H(index, A, B, bA))."""
        B = self._pk.from_valid_secret(b)
        if c:
            B = self._pk.combine_keys([B, A])
        b_enc = B.format()
        return b_enc, kdf(a_enc, b_enc, A.multiply(b).format(), index)

    def keys(self, a: bytes, a_enc: bytes, neg_aA: PublicKey,
             b_enc: bytes, index: int) -> tuple[bytes, bytes]:
        """Sender: (H(index, A, B, aB), H(index, A, B, aB - aA)) for a received B."""
        _check_b(a_enc, b_enc)
        T = self._pk(b_enc).multiply(a)
        T1 = self._pk.combine_keys([T, neg_aA])
        return kdf(a_enc, b_enc, T.format(), index), kdf(a_enc, b_enc, T1.format(), index)


#: The order of NIST P-256's base point (FIPS 186-4, D.1.2.3); checked against the library.
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


class _P256:
    name = "p256"

    def __init__(self):
        from Crypto.PublicKey import ECC
        self._ecc = ECC
        # public API only: G is the public point of the key with d = 1
        self._g = ECC.construct(curve="P-256", d=1).pointQ
        self.order = P256_ORDER
        if not (self._g * P256_ORDER).is_point_at_infinity():
            raise RuntimeError("pycryptodome's P-256 base point does not have the standard order")

    def scalar(self, raw: bytes) -> int:
        return int.from_bytes(raw, "little") % (self.order - 1) + 1

    def _enc(self, P) -> bytes:
        x, y = int(P.x), int(P.y)
        return bytes([2 + (y & 1)]) + x.to_bytes(32, "big")

    def _dec(self, enc: bytes):
        return self._ecc.import_key(enc, curve_name="P-256").pointQ

    point = _dec

    def setup(self, a: int) -> tuple[EccPoint, bytes, EccPoint]:
        A = self._g * a
        return A, self._enc(A), -(A * a)

    def choose(self, A: EccPoint, a_enc: bytes, b: int, c: int,
               index: int) -> tuple[bytes, bytes]:
        B = self._g * b
        if c:
            B = B + A
        b_enc = self._enc(B)
        return b_enc, kdf(a_enc, b_enc, self._enc(A * b), index)

    def keys(self, a: int, a_enc: bytes, neg_aA: EccPoint, b_enc: bytes,
             index: int) -> tuple[bytes, bytes]:
        _check_b(a_enc, b_enc)
        T = self._dec(b_enc) * a
        T1 = T + neg_aA
        if T.is_point_at_infinity() or T1.is_point_at_infinity():    # pragma: no cover
            raise ValueError("base OT: a key point is the point at infinity")
        return kdf(a_enc, b_enc, self._enc(T), index), kdf(a_enc, b_enc, self._enc(T1), index)


_BACKENDS: dict[str, type[Group]] = {"secp256k1": _Secp256k1, "p256": _P256}
_CACHE: dict[str, Any] = {}


def available_groups() -> list[str]:
    """Names of the group backends that import on this machine, fastest first."""
    out = []
    for name in _BACKENDS:
        try:
            get_group(name)
        except ImportError:
            continue
        out.append(name)
    return out


def get_group(name: str | None = None) -> Group:
    """The group backend ``name`` (``None``: secp256k1 if coincurve is installed, else p256)."""
    if name is None:
        try:
            return get_group("secp256k1")
        except ImportError:
            return get_group("p256")
    if name not in _BACKENDS:
        raise ValueError(f"group must be one of {sorted(_BACKENDS)} or None, got {name!r}")
    g = _CACHE.get(name)
    if g is None:
        try:
            g = _CACHE[name] = _BACKENDS[name]()
        except ImportError as exc:
            raise ImportError(
                f"group {name!r} needs coincurve: pip install 'ustat-mpc[ot]' (or coincurve)"
            ) from exc
    return g
