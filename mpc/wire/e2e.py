"""End-to-end encryption between two participants whose frames go through a relay.

Party hosts do not connect to each other: their frames travel through the
relay (:mod:`mpc.wire.relay`). So that the relay learns only sizes and timing,
every such frame is sealed between the two hosts with an AEAD:

1. At start-up every host draws a fresh X25519 key pair and a fresh 32-byte
   nonce for the run and *announces* them with its certificate: ``(cert,
   public key, nonce)`` (:meth:`Endpoint.announcement`). A host accepts
   another's announcement only if the certificate chains to the
   deployment's CA, names the participant that rank must be, and (with
   pins) is the one pinned for it (:meth:`Endpoint.accept`).
2. The *run id* is ``SHA-256(label, session, every host's nonce in rank
   order)``: fresh for every run as soon as one host is honest. The
   *transcript* is ``SHA-256(label, run id, every host's rank, name, public
   key and nonce in rank order)``.
3. Key confirmation (SIGMA-style, Krawczyk 2003): every host signs
   ``(label, its rank, transcript)`` with its certificate's key (ECDSA
   P-256) and sends each peer that signature with a MAC
   (HMAC-SHA256 under a key derived from the pair's X25519 secret) over
   ``(its rank, the peer's rank, transcript)`` (:meth:`Endpoint.confirmation`).
   A host checks both before deriving any frame key (:meth:`Endpoint.confirm`):
   an announcement replayed from another run (with that run's ephemeral key,
   leaked or not), or any key the relay substituted, makes the two hosts'
   transcripts differ, and the run refuses before its first frame.
4. The two hosts derive one AES-256-GCM key per direction,
   ``HKDF-SHA256(X25519(a, B), salt=run id, info=label || sender rank ||
   receiver rank || transcript)``.
5. A frame from s to r at step t, segment g is sealed with nonce
   ``(t, g)`` (each used once per key) and associated data ``(session, t,
   s, r, g)``: a frame replayed from another step, reordered within a step,
   redirected to another receiver, from another run, or altered in one bit
   fails to open (:class:`E2EError`).

Cost: one ECDSA signature per host, one X25519, one ECDSA verification and
two HMACs per pair of hosts at start-up, and two rounds through the relay
(announcements, then confirmations); AES-GCM at a few GB/s per frame (16
bytes of tag per frame).

Threat model: the relay is an active network adversary that cannot read or
alter frames; it can drop, delay or reorder them (each ends the run: the
receiver's exchange times out or the frame fails to open). Forward secrecy
per run: the X25519 keys are ephemeral, and an old run's key, even leaked,
opens nothing of a later run (its run id and transcript differ).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import struct
from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

from mpc.wire import tls

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePublicKey
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from mpc.wire.tls import Credentials

LABEL = b"ustat-e2e-v2"
TAG_BYTES = 16
NONCE_BYTES = 32
MAC_BYTES = 32
_AAD = struct.Struct("<QQIIH")
_NONCE = struct.Struct("<QI")


class E2EError(ValueError):
    """An announcement, a key confirmation or a frame that does not verify."""


def _primitives():
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, x25519
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    return hashes, serialization, ec, x25519, AESGCM, HKDF


class Endpoint:
    """One host's end of the end-to-end layer: its X25519 key, its nonce, the keys it shares.

    ``creds``: its :class:`mpc.wire.tls.Credentials` (their ``pins``, if any, are checked
    on every announced certificate); ``names[rank]``: the participant each rank must be;
    ``session``: the deployment's tag. Use: :meth:`announcement` to every peer,
    :meth:`accept` each peer's, then :meth:`confirmation` to every peer and :meth:`confirm`
    each peer's; only then :meth:`seal` / :meth:`open`.
    """

    def __init__(self, creds: Credentials, names: Iterable[str], rank: int, session: int):
        _, serialization, _, x25519, _, _ = _primitives()
        self.rank, self.session, self.names = int(rank), int(session), list(names)
        self._ca = tls.load_certificate(creds.ca)
        self._pins = creds.pins
        self._signer = tls.load_key(creds.key)
        with open(creds.cert, "rb") as f:
            self._cert_pem = f.read()
        self._x = x25519.X25519PrivateKey.generate()
        self.public = self._x.public_key().public_bytes(serialization.Encoding.Raw,
                                                        serialization.PublicFormat.Raw)
        self.nonce = os.urandom(NONCE_BYTES)
        self._peers: dict[int, tuple] = {}     # peer -> (its EC key, public, nonce, secret)
        self._transcript: bytes | None = None
        self._signature: bytes | None = None
        self.run_id: bytes | None = None
        self._send: dict[int, AESGCM] = {}
        self._recv: dict[int, AESGCM] = {}

    # -- start-up -------------------------------------------------------------------------------
    def announcement(self) -> bytes:
        """``len(cert) || cert || public key || nonce``: what every other host receives."""
        return struct.pack("<I", len(self._cert_pem)) + self._cert_pem + self.public + self.nonce

    def accept(self, peer: int, blob: bytes) -> None:
        """Check ``peer``'s announcement (its certificate: CA, name, pin) and keep its key and
        nonce (E2EError). No frame key yet: that waits for :meth:`confirm`."""
        _, _, _, x25519, _, _ = _primitives()
        name = self.names[peer]
        try:
            (n,) = struct.unpack_from("<I", blob)
            cert_pem = blob[4:4 + n]
            public, nonce = blob[4 + n:36 + n], blob[36 + n:]
            if len(public) != 32 or len(nonce) != NONCE_BYTES:
                raise ValueError("truncated or overlong announcement")
            cert = tls.verify_certificate(cert_pem, self._ca, name, self._pins)
            ec_key = cast("EllipticCurvePublicKey", cert.public_key())   # issue()'s EC keys
            shared = self._x.exchange(x25519.X25519PublicKey.from_public_bytes(public))
        except Exception as e:                      # every failure is refusal
            raise E2EError(f"the key announcement of {name} does not verify: {e}") from None
        self._peers[peer] = (ec_key, bytes(public), bytes(nonce), shared)
        self._transcript = self._signature = self.run_id = None

    def _hashes(self) -> bytes:
        """The run id and the transcript of every announcement accepted so far (and ours)."""
        if self._transcript is None:
            ranks = sorted({self.rank, *self._peers})
            mine = (None, self.public, self.nonce, None)
            ann = {r: self._peers.get(r, mine) for r in ranks}
            run = hashlib.sha256(LABEL + b"run" + struct.pack("<Q", self.session))
            for r in ranks:
                run.update(struct.pack("<I", r) + ann[r][2])
            self.run_id = run.digest()
            tr = hashlib.sha256(LABEL + b"transcript" + self.run_id)
            for r in ranks:
                nm = self.names[r].encode()
                tr.update(struct.pack("<IH", r, len(nm)) + nm + ann[r][1] + ann[r][2])
            self._transcript = tr.digest()
        return self._transcript

    def _mac(self, peer: int, sender: int, receiver: int) -> bytes:
        hashes, *_, HKDF = _primitives()
        secret = self._peers[peer][3]
        key = HKDF(hashes.SHA256(), 32, self.run_id, LABEL + b"confirm").derive(secret)
        return hmac.new(key, LABEL + struct.pack("<II", sender, receiver) + self._hashes(),
                        hashlib.sha256).digest()

    def confirmation(self, peer: int) -> bytes:
        """``MAC || signature`` for ``peer``, once every peer's announcement is accepted: this
        host's signature over the run's transcript and a MAC with the key it shares with
        ``peer`` (key confirmation)."""
        hashes, _, ec, *_ = _primitives()
        transcript = self._hashes()
        if self._signature is None:
            self._signature = self._signer.sign(LABEL + b"sig" + struct.pack("<I", self.rank)
                                                + transcript, ec.ECDSA(hashes.SHA256()))
        return self._mac(peer, self.rank, peer) + self._signature

    def confirm(self, peer: int, blob: bytes) -> None:
        """Check ``peer``'s confirmation against this run's transcript, then derive the two
        frame keys shared with it. E2EError naming the peer when its signature or MAC does not
        match: an announcement replayed from another run, or a key substituted on the way."""
        hashes, _, ec, _, AESGCM, HKDF = _primitives()
        name = self.names[peer]
        transcript = self._hashes()
        ec_key = self._peers[peer][0]
        mac, sig = bytes(blob[:MAC_BYTES]), bytes(blob[MAC_BYTES:])
        try:
            ec_key.verify(sig, LABEL + b"sig" + struct.pack("<I", peer) + transcript,
                          ec.ECDSA(hashes.SHA256()))
            ok = hmac.compare_digest(mac, self._mac(peer, peer, self.rank))
        except Exception:
            ok = False
        if not ok:
            raise E2EError(f"the key confirmation of {name} does not match this run's "
                           "announcements: an announcement replayed from another run, or a "
                           "key substituted on the way; refused before any frame")
        secret = self._peers[peer][3]

        def key(s, r):
            info = LABEL + b"aead" + struct.pack("<II", s, r) + transcript
            return AESGCM(HKDF(hashes.SHA256(), 32, self.run_id, info).derive(secret))

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
