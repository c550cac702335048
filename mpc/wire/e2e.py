"""End-to-end encryption between two participants whose frames go through a relay.

Party hosts do not connect to each other: their frames travel through the
relay (:mod:`mpc.wire.relay`). So that the relay learns only sizes and timing,
every such frame is sealed between the two hosts with an AEAD:

1. At start-up every host draws a fresh X25519 key pair for the run and
   *announces* its public key: ``(session, rank, name, public key)``,
   signed (ECDSA P-256, SHA-256) by the key of its TLS certificate, sent
   with that certificate (:meth:`Endpoint.announcement`).
2. A host accepts another's announcement only if the certificate chains to
   the deployment's CA, names the participant that rank must be, and the
   signature over the announcement verifies (:meth:`Endpoint.accept`).
   The X25519 keys are thus bound to the participants' certificates: the
   relay cannot substitute its own (no man in the middle).
3. The two hosts derive one AES-256-GCM key per direction,
   ``HKDF-SHA256(X25519(a, B), salt=session, info=label || sender rank ||
   receiver rank || both public keys)``.
4. A frame from s to r at step t, segment g is sealed with nonce
   ``(t, g)`` (each used once per key) and associated data ``(session, t,
   s, r, g)``: a frame replayed from another step, reordered within a step,
   redirected to another receiver, from another run, or altered in one bit
   fails to open (:class:`E2EError`).

Cost: one X25519 and one ECDSA verification per pair of hosts at start-up;
AES-GCM at a few GB/s per frame (16 bytes of tag per frame).

Threat model: the relay is an active network adversary that cannot read or
alter frames; it can drop, delay or reorder them (each ends the run: the
receiver's exchange times out or the frame fails to open). Forward secrecy
per run: the X25519 keys are ephemeral.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

from mpc.wire import tls

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePublicKey
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from mpc.wire.tls import Credentials

LABEL = b"ustat-e2e-v1"
TAG_BYTES = 16
_AAD = struct.Struct("<QQIIH")
_NONCE = struct.Struct("<QI")


class E2EError(ValueError):
    """An announcement or a frame that does not verify."""


def _primitives():
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, x25519
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    return hashes, serialization, ec, x25519, AESGCM, HKDF


def _signed_bytes(session: int, rank: int, name: str, public: bytes) -> bytes:
    return LABEL + struct.pack("<QI", session, rank) + name.encode() + b"\0" + public


class Endpoint:
    """One host's end of the end-to-end layer: its X25519 key and the keys it shares.

    ``creds``: its :class:`mpc.wire.tls.Credentials`; ``names[rank]``: the
    participant each rank must be; ``session``: the run's tag.
    """

    def __init__(self, creds: Credentials, names: Iterable[str], rank: int, session: int):
        _, serialization, _, x25519, _, _ = _primitives()
        self.rank, self.session, self.names = int(rank), int(session), list(names)
        self._ca = tls.load_certificate(creds.ca)
        self._signer = tls.load_key(creds.key)
        with open(creds.cert, "rb") as f:
            self._cert_pem = f.read()
        self._x = x25519.X25519PrivateKey.generate()
        self.public = self._x.public_key().public_bytes(serialization.Encoding.Raw,
                                                        serialization.PublicFormat.Raw)
        self._send: dict[int, AESGCM] = {}
        self._recv: dict[int, AESGCM] = {}

    # -- start-up -------------------------------------------------------------------------------
    def announcement(self) -> bytes:
        """``len(cert) || cert || public key || signature``: what every other host receives."""
        hashes, _, ec, *_ = _primitives()
        sig = self._signer.sign(_signed_bytes(self.session, self.rank, self.names[self.rank],
                                              self.public), ec.ECDSA(hashes.SHA256()))
        return struct.pack("<I", len(self._cert_pem)) + self._cert_pem + self.public + sig

    def accept(self, peer: int, blob: bytes) -> None:
        """Check ``peer``'s announcement and derive the two keys shared with it (E2EError)."""
        hashes, _, ec, x25519, AESGCM, HKDF = _primitives()
        name = self.names[peer]
        try:
            (n,) = struct.unpack_from("<I", blob)
            cert_pem, public, sig = blob[4:4 + n], blob[4 + n:36 + n], blob[36 + n:]
            if len(public) != 32 or not sig:
                raise ValueError("truncated announcement")
            cert = tls.verify_certificate(cert_pem, self._ca, name)
            ec_key = cast("EllipticCurvePublicKey", cert.public_key())   # issue()'s EC keys
            ec_key.verify(sig, _signed_bytes(self.session, peer, name, public),
                          ec.ECDSA(hashes.SHA256()))
            shared = self._x.exchange(x25519.X25519PublicKey.from_public_bytes(public))
        except Exception as e:                      # every failure is refusal
            raise E2EError(f"the key announcement of {name} does not verify: {e}") from None

        def key(s, r):
            info = LABEL + struct.pack("<II", s, r) + min(public, self.public) \
                + max(public, self.public)
            return AESGCM(HKDF(hashes.SHA256(), 32, struct.pack("<Q", self.session),
                               info).derive(shared))

        self._send[peer] = key(self.rank, peer)
        self._recv[peer] = key(peer, self.rank)

    def knows(self, peer: int) -> bool:
        return peer in self._send

    # -- frames ---------------------------------------------------------------------------------
    def seal(self, peer: int, step: int, segment: int, plaintext: bytes | memoryview) -> bytes:
        """The ciphertext (plaintext + 16-byte tag) of one frame to ``peer``."""
        return self._send[peer].encrypt(_NONCE.pack(step, segment), plaintext,
                                        _AAD.pack(self.session, step, self.rank, peer, segment))

    def open(self, peer: int, step: int, segment: int, ciphertext: bytes | memoryview) -> bytes:
        """The plaintext of a frame from ``peer`` for (step, segment); E2EError if it does not
        authenticate (altered, replayed, reordered, redirected or forged)."""
        try:
            return self._recv[peer].decrypt(_NONCE.pack(step, segment), ciphertext,
                                            _AAD.pack(self.session, step, peer, self.rank,
                                                      segment))
        except Exception:                           # InvalidTag and friends
            raise E2EError(f"a frame from {self.names[peer]} at step {step} fails "
                           "authentication (altered, replayed, reordered or not from it)") \
                from None
