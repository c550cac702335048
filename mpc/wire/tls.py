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

Threat model: the CA's key signs the deployment's membership: whoever holds
it can add a participant. Keep it offline (``deploy init`` writes it next to
the configuration; move it away after issuing the certificates). A
participant's key proves that participant's identity to every other.
"""

from __future__ import annotations

import datetime
import os
import socket
import ssl
from collections.abc import Iterable
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
    """Paths of one participant's TLS material: its key, its certificate, the CA certificate."""

    name: str
    key: str
    cert: str
    ca: str


def _name(NameOID, x509, cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_ca(directory: str,
            deployment: str = "ustat deployment") -> tuple[EllipticCurvePrivateKey, Certificate]:
    """Create ``ca.key`` (0600) and ``ca.pem`` in ``directory``; returns (key, cert) objects."""
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
    os.makedirs(directory, exist_ok=True)
    _write_key(os.path.join(directory, "ca.key"), key)
    _write(os.path.join(directory, "ca.pem"), cert.public_bytes(serialization.Encoding.PEM))
    return key, cert


def issue(directory: str, name: str, ca_key: EllipticCurvePrivateKey,
          ca_cert: Certificate) -> Credentials:
    """Key ``<name>.key`` (0600) and certificate ``<name>.pem`` for participant ``name``."""
    x509, hashes, serialization, ec, NameOID = _crypto()
    check_name(name)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(_name(NameOID, x509, name))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH,
                                                  x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    kp, cp = os.path.join(directory, f"{name}.key"), os.path.join(directory, f"{name}.pem")
    _write_key(kp, key)
    _write(cp, cert.public_bytes(serialization.Encoding.PEM))
    return Credentials(name, kp, cp, os.path.join(directory, "ca.pem"))


def make_deployment(directory: str, names: Iterable[str],
                    deployment: str = "ustat deployment") -> dict[str, Credentials]:
    """A CA and credentials for every name: ``{name: Credentials}``."""
    ca_key, ca_cert = make_ca(directory, deployment)
    return {n: issue(directory, n, ca_key, ca_cert) for n in names}


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


def check_peer(sock: ssl.SSLSocket, expected: str) -> None:
    """ssl.SSLError unless the peer's certificate names participant ``expected``."""
    names = peer_names(sock)
    if names != [expected]:
        raise ssl.SSLError(f"the peer's certificate names {', '.join(names) or 'nobody'}, "
                           f"not {expected}")


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
        check_peer(tls, self.names[peer])
        return tls

    def verify(self, sock: ssl.SSLSocket, peer: int) -> None:
        check_peer(sock, self.names[peer])


def load_certificate(path: str) -> Certificate:
    x509 = _crypto()[0]
    with open(path, "rb") as f:
        return x509.load_pem_x509_certificate(f.read())


def load_key(path: str) -> EllipticCurvePrivateKey:
    serialization = _crypto()[2]
    with open(path, "rb") as f:        # a deployment's keys are EC keys (make_ca, issue)
        return cast("EllipticCurvePrivateKey",
                    serialization.load_pem_private_key(f.read(), password=None))


def verify_certificate(cert_pem: bytes, ca_cert: Certificate, expected: str) -> Certificate:
    """The certificate in ``cert_pem`` if the CA signed it, it is valid now and names
    ``expected``; ValueError otherwise (certificates met outside TLS, e.g. through the relay)."""
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
    return cert


def _write_key(path, key) -> None:
    serialization = _crypto()[2]
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    os.chmod(path, 0o600)


def _write(path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
