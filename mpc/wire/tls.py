"""Certificates and TLS 1.3 contexts of a deployment: its own CA, one key and certificate each.

A deployment has its own certificate authority (:func:`make_ca`). Every
participant process (a party host, the dealer, the aggregator, the relay,
an ECDF server, the analyst) gets one private key and one certificate
signed by that CA (:func:`issue`), whose subject alternative name is the
participant's name (``host-0``, ``dealer``, ...). Connections are TLS 1.3
with mutual authentication (:func:`server_context`, :func:`client_context`):
a peer must present a certificate that chains to the deployment's CA, and
the name in it must be the participant it claims to be in its greeting
(:func:`check_peer`); both are checked right after the handshake, before
any protocol frame is read (:class:`mpc.wire.transport.SocketMesh`).

Keys are ECDSA P-256 (fast handshakes; the same key signs the participant's
ephemeral X25519 key for end-to-end encryption through the relay,
:mod:`mpc.wire.e2e`). Private keys are written with mode 0600.

Needs the ``cryptography`` package (``pip install 'ustat-mpc[deploy]'``).

Keys stay where they are made: a participant makes its own key and a
certificate signing request on its own machine (:func:`keygen`); the
organizer signs the request with the CA (:func:`sign_request`), checking the
name is one of the deployment's participants. Each certificate's
:func:`fingerprint` (SHA-256 of its DER) is *pinned*: given ``pins`` in the
:class:`Credentials`, every TLS connection (:func:`check_peer`) and every
certificate met through the relay (:func:`verify_certificate`) must be the
pinned one for that name, not merely one the CA signed. :func:`make_deployment`
(a demo on one machine) makes every key in one place and pins them all.

Threat model: the CA's key signs the deployment's membership; with pins, it
alone no longer admits a participant (a certificate the CA signs is refused
until its fingerprint is pinned), but keep it offline all the same
(:func:`make_ca` writes it apart, optionally encrypted with a passphrase).
A participant's key proves that participant's identity to every other;
replacing or removing its pin revokes it.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import socket
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ec import (
        EllipticCurvePrivateKey,
        EllipticCurvePublicKey,
    )
    from cryptography.x509 import Certificate

#: how long issued certificates are valid
VALID_DAYS = 365


def _crypto():
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:                             # pragma: no cover - the extra is missing
        raise ImportError("certificates need the cryptography package: "
                          "pip install 'ustat-mpc[deploy]'") from None
    return x509, hashes, serialization, ec, NameOID


@dataclass(frozen=True)
class Credentials:
    """Paths of one participant's TLS material: its key, its certificate, the CA certificate.

    ``pins``: ``{name: fingerprint}`` of every participant's certificate
    (:func:`fingerprint`); given, a peer's certificate must be the pinned one for its name
    (a certificate the CA signed but that is not pinned is refused). None: the CA alone."""

    name: str
    key: str
    cert: str
    ca: str
    pins: Mapping[str, str] | None = None


def _name(NameOID, x509, cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_ca(directory: str, deployment: str = "ustat deployment", *,
            passphrase: bytes | None = None) -> tuple[EllipticCurvePrivateKey, Certificate]:
    """Create ``ca.key`` (0600; encrypted with ``passphrase`` if given) and ``ca.pem`` in
    ``directory`` (made 0700); returns (key, cert) objects. Keep the directory offline: its
    key signs the deployment's certificates (:func:`sign_request`)."""
    x509, hashes, serialization, ec, NameOID = _crypto()
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    name = _name(NameOID, x509, f"{deployment} CA")
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False,
                                         False), critical=True)
            .sign(key, hashes.SHA256()))
    os.makedirs(directory, mode=0o700, exist_ok=True)
    os.chmod(directory, 0o700)
    _write_key(os.path.join(directory, "ca.key"), key, passphrase)
    _write(os.path.join(directory, "ca.pem"), cert.public_bytes(serialization.Encoding.PEM))
    return key, cert


def _certificate(name: str, public_key: Any, ca_key: EllipticCurvePrivateKey,
                 ca_cert: Certificate) -> Certificate:
    """The CA-signed certificate of participant ``name`` for ``public_key``."""
    x509, hashes, _, _, NameOID = _crypto()
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder().subject_name(_name(NameOID, x509, name))
            .issuer_name(ca_cert.subject).public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH,
                                                  x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))


def issue(directory: str, name: str, ca_key: EllipticCurvePrivateKey,
          ca_cert: Certificate) -> Credentials:
    """Key ``<name>.key`` (0600) and certificate ``<name>.pem`` for participant ``name``, made
    in one place (a demo on one machine, :func:`make_deployment`; a real deployment uses
    :func:`keygen` on the participant's machine and :func:`sign_request`)."""
    serialization, ec = _crypto()[2], _crypto()[3]
    check_name(name)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _certificate(name, key.public_key(), ca_key, ca_cert)
    kp, cp = os.path.join(directory, f"{name}.key"), os.path.join(directory, f"{name}.pem")
    _write_key(kp, key)
    _write(cp, cert.public_bytes(serialization.Encoding.PEM))
    return Credentials(name, kp, cp, os.path.join(directory, "ca.pem"))


def keygen(directory: str, name: str) -> tuple[str, str]:
    """On the participant's own machine: a new key ``<name>.key`` (0600, never copied
    elsewhere) and a certificate signing request ``<name>.csr`` (public: send it to the
    organizer) in ``directory``. Returns their paths; ValueError if the key exists."""
    x509, hashes, serialization, ec, NameOID = _crypto()
    check_name(name)
    kp, rp = os.path.join(directory, f"{name}.key"), os.path.join(directory, f"{name}.csr")
    if os.path.exists(kp):
        raise ValueError(f"{kp} exists: a participant makes its key once (remove it to make "
                         "a new one, then have the new certificate pinned)")
    os.makedirs(directory, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    csr = (x509.CertificateSigningRequestBuilder().subject_name(_name(NameOID, x509, name))
           .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
           .sign(key, hashes.SHA256()))
    _write_key(kp, key)
    _write(rp, csr.public_bytes(serialization.Encoding.PEM))
    return kp, rp


def sign_request(csr_pem: bytes, ca_key: EllipticCurvePrivateKey, ca_cert: Certificate,
                 names: Iterable[str]) -> tuple[str, bytes]:
    """The organizer's step: ``(name, certificate PEM)`` for a request made by :func:`keygen`.
    ValueError unless the request's signature verifies (its maker holds the key), it names
    one participant (CN and SAN agree) and that name is in ``names``, and its key is P-256."""
    x509, _, serialization, ec, NameOID = _crypto()
    try:
        csr = x509.load_pem_x509_csr(csr_pem)
        ok = csr.is_signature_valid
    except Exception as e:
        raise ValueError(f"not a certificate signing request ({type(e).__name__})") from None
    if not ok:
        raise ValueError("the request's signature does not verify")
    cns = [a.value for a in csr.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    try:
        sans = csr.extensions.get_extension_for_class(
            x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)
    except x509.ExtensionNotFound:
        sans = cns
    if len(cns) != 1 or sans != cns:
        raise ValueError(f"the request must name one participant (CN {cns}, SAN {sans})")
    name, allowed = str(cns[0]), list(names)
    if name not in allowed:
        raise ValueError(f"the request names {name!r}, not a participant of this deployment "
                         f"({', '.join(allowed)})")
    pub = csr.public_key()
    if not isinstance(pub, ec.EllipticCurvePublicKey) or pub.curve.name != "secp256r1":
        raise ValueError("the request's key must be ECDSA P-256 (ustat deploy keygen)")
    cert = _certificate(name, pub, ca_key, ca_cert)
    return name, cert.public_bytes(serialization.Encoding.PEM)


def fingerprint(cert: bytes | Certificate) -> str:
    """``sha256:<hex>`` of a certificate's DER encoding (DER bytes or a Certificate): its pin."""
    if not isinstance(cert, bytes):
        serialization = _crypto()[2]
        cert = cert.public_bytes(serialization.Encoding.DER)
    return "sha256:" + hashlib.sha256(cert).hexdigest()


def check_pin(pins: Mapping[str, str] | None, name: str, cert: bytes | Certificate) -> None:
    """ValueError unless ``cert`` is the certificate pinned for ``name`` (no check without
    pins): a certificate the CA signed but nobody pinned, or whose pin was removed or
    replaced (revoked), is refused."""
    if pins is None:
        return
    got, want = fingerprint(cert), pins.get(name)
    if got != want:
        raise ValueError(f"{name}'s certificate ({got[:19]}...) is not the one pinned for it"
                         + (" (none is pinned)" if not want else f" ({want[:19]}...)")
                         + ": revoked, replaced, or signed but never pinned")


def make_deployment(directory: str, names: Iterable[str], deployment: str = "ustat deployment",
                    *, ca_directory: str | None = None) -> dict[str, Credentials]:
    """Every key in one place (tests, a demo on one machine): a CA (its key in
    ``ca_directory``, default ``directory``; ``ca.pem`` in both) and credentials for every
    name, each pinning every name's certificate: ``{name: Credentials}``."""
    import shutil

    ca_key, ca_cert = make_ca(ca_directory or directory, deployment)
    os.makedirs(directory, exist_ok=True)
    if ca_directory is not None:
        shutil.copyfile(os.path.join(ca_directory, "ca.pem"), os.path.join(directory, "ca.pem"))
    made = {n: issue(directory, n, ca_key, ca_cert) for n in names}
    pins = {n: fingerprint(load_certificate(c.cert)) for n, c in made.items()}
    return {n: Credentials(c.name, c.key, c.cert, c.ca, pins) for n, c in made.items()}


def check_name(name: str) -> str:
    """A participant name: letters, digits, '-', '.', '_' (it is a DNS-like SAN)."""
    import re

    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}", name):
        raise ValueError(f"a participant name is 1-63 letters, digits, '.', '_' or '-', got "
                         f"{name!r}")
    return name


# -- TLS contexts --------------------------------------------------------------------------------
def _context(purpose, creds: Credentials) -> ssl.SSLContext:
    side = ssl.PROTOCOL_TLS_SERVER if purpose == "server" else ssl.PROTOCOL_TLS_CLIENT
    ctx = ssl.SSLContext(side)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.check_hostname = False          # names are checked against the greeting (check_peer)
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_verify_locations(creds.ca)
    ctx.load_cert_chain(creds.cert, creds.key)
    return ctx


def server_context(creds: Credentials) -> ssl.SSLContext:
    """TLS 1.3, this participant's certificate, a client certificate from the CA required."""
    return _context("server", creds)


def client_context(creds: Credentials) -> ssl.SSLContext:
    """TLS 1.3, this participant's certificate, the server's certificate from the CA required."""
    return _context("client", creds)


def peer_names(sock: ssl.SSLSocket) -> list[str]:
    """The DNS names of the (CA-verified) certificate the peer of a TLS socket presented."""
    cert: Any = sock.getpeercert()
    if not cert:
        return []
    return [v for k, v in cert.get("subjectAltName", ()) if k == "DNS"]


def check_peer(sock: ssl.SSLSocket, expected: str,
               pins: Mapping[str, str] | None = None) -> None:
    """ssl.SSLError unless the peer's certificate names participant ``expected`` and (given
    ``pins``) is the certificate pinned for it (:func:`check_pin`)."""
    names = peer_names(sock)
    if names != [expected]:
        raise ssl.SSLError(f"the peer's certificate names {', '.join(names) or 'nobody'}, "
                           f"not {expected}")
    try:
        check_pin(pins, expected, sock.getpeercert(binary_form=True) or b"")
    except ValueError as e:
        raise ssl.SSLError(str(e)) from None


class Wrapper:
    """The ``wrap`` hook of :class:`mpc.wire.transport.SocketMesh` and
    :class:`mpc.wire.relay.Relay`: TLS on every connection.

    ``names[rank]`` is the participant each rank must be (its certificate's
    name); ``relay``: the relay's name (the rank :data:`mpc.wire.relay.RELAY_RANK`).
    A client checks the server's name at once; a server learns the rank from
    the greeting and checks it then (:meth:`verify`). A server-side socket that
    is non-blocking is returned before its handshake, which the caller drives
    (:func:`mpc.wire.sockets.accept_peers`, concurrently with others).
    """

    def __init__(self, creds: Credentials, names: Iterable[str], relay: str | None = None):
        from mpc.wire.relay import RELAY_RANK
        self.creds = creds
        self.names = dict(enumerate(names))
        if relay is not None:
            self.names[RELAY_RANK] = relay
        self.server = server_context(creds)
        self.client = client_context(creds)

    def __call__(self, sock: socket.socket, server_side: bool, peer: int | None) -> ssl.SSLSocket:
        if server_side:         # non-blocking: the caller drives the handshake (accept_peers)
            return self.server.wrap_socket(sock, server_side=True,
                                           do_handshake_on_connect=sock.gettimeout() != 0.0)
        tls = self.client.wrap_socket(sock, server_side=False)
        assert peer is not None, "a client names the peer it dials"
        try:
            check_peer(tls, self.names[peer], self.creds.pins)
        except ssl.SSLError:
            tls.close()
            raise
        return tls

    def verify(self, sock: ssl.SSLSocket, peer: int) -> None:
        check_peer(sock, self.names[peer], self.creds.pins)


def load_certificate(path: str) -> Certificate:
    x509 = _crypto()[0]
    with open(path, "rb") as f:
        return x509.load_pem_x509_certificate(f.read())


def load_key(path: str, passphrase: bytes | None = None) -> EllipticCurvePrivateKey:
    """The private key in PEM file ``path`` (``passphrase``: an encrypted CA key); ValueError
    if the passphrase is missing or wrong."""
    serialization = _crypto()[2]
    with open(path, "rb") as f:        # a deployment's keys are EC keys (make_ca, issue)
        data = f.read()
    try:
        return cast("EllipticCurvePrivateKey",
                    serialization.load_pem_private_key(data, password=passphrase))
    except TypeError:
        raise ValueError(f"{path} is encrypted: give its passphrase" if passphrase is None
                         else f"{path} is not encrypted: give no passphrase") from None
    except ValueError:
        raise ValueError(f"{path}: wrong passphrase or not a PEM private key") from None


def verify_certificate(cert_pem: bytes, ca_cert: Certificate, expected: str,
                       pins: Mapping[str, str] | None = None) -> Certificate:
    """The certificate in ``cert_pem`` if the CA signed it, it is valid now, names
    ``expected`` and (given ``pins``) is the one pinned for it; ValueError otherwise
    (certificates met outside TLS, e.g. through the relay)."""
    x509, _, _, ec, _ = _crypto()
    try:
        cert = x509.load_pem_x509_certificate(cert_pem)
        if cert.issuer != ca_cert.subject:
            raise ValueError("not issued by the deployment's CA")
        ca_key = cast("EllipticCurvePublicKey", ca_cert.public_key())     # make_ca's EC key
        ca_key.verify(cert.signature, cert.tbs_certificate_bytes,
                      ec.ECDSA(cert.signature_hash_algorithm))
        now = datetime.datetime.now(datetime.timezone.utc)
        if not cert.not_valid_before_utc <= now <= cert.not_valid_after_utc:
            raise ValueError("expired or not yet valid")
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = san.get_values_for_type(x509.DNSName)
    except ValueError:
        raise
    except Exception as e:                          # any parse/verify failure
        raise ValueError(f"certificate does not verify ({type(e).__name__})") from None
    if names != [expected]:
        raise ValueError(f"the certificate names {', '.join(names) or 'nobody'}, not {expected}")
    check_pin(pins, expected, cert)
    return cert


def _write_key(path, key, passphrase: bytes | None = None) -> None:
    serialization = _crypto()[2]
    enc = serialization.BestAvailableEncryption(passphrase) if passphrase \
        else serialization.NoEncryption()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, enc)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    os.chmod(path, 0o600)


def _write(path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
