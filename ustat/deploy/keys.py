"""Keys that stay where they are made: each participant's own key, the organizer's CA and pins.

The organizer's flow (docs/guides/deploy.md, "Keys"):

1. ``ustat deploy init ... --out dep`` writes ``dep/deploy.toml`` (no pins
   yet), ``dep/keys/ca.pem`` and the CA in ``dep/ca/`` (``ca.key``, mode
   0600, in a 0700 directory; encrypted with ``--ca-passphrase-file``). It
   writes no participant's private key (:func:`make_keys`).
2. Each participant, on its own machine: ``ustat deploy keygen --name host-1
   --out keys`` (:func:`keygen`): its key (0600, it never leaves) and a
   certificate signing request ``host-1.csr`` for the organizer.
3. The organizer: ``ustat deploy sign --ca dep/ca --csr host-1.csr ...``
   (:func:`sign`): checks each request names a participant of
   ``deploy.toml``, writes its certificate to ``dep/keys/host-1.pem`` and
   *pins* its fingerprint (SHA-256 of the DER certificate) in
   ``deploy.toml`` (:func:`pin`).
4. ``deploy.toml``, ``keys/ca.pem`` and the certificates (all public) go to
   every participant. A run refuses to start while any participant is
   unpinned, and every connection checks the peer's certificate against
   its pin (:mod:`mpc.wire.tls`).

Revocation is removing or replacing a pin: a participant whose pin changed
(a new request signed) or was removed is refused by every participant that
has the new ``deploy.toml``. ``deploy init --local`` (:class:`Keys`
``local=True``) makes every key at once for a demo on one machine, pins
them all and writes ``local = true`` in ``deploy.toml``.

Threat model: the CA key admits a certificate, the pin admits a
participant: whoever handles ``deploy.toml`` and ``keys/`` (the relay's
operator, say) holds no participant's key. A participant's key proves its
identity to every other; its loss means re-keying it (steps 2-4).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .config import FILE, _toml, dump, load

if TYPE_CHECKING:
    from collections.abc import Iterable

#: the CA's directory in a deployment directory (keep it offline)
CA_DIR = "ca"
#: the environment variable read for the CA key's passphrase (``--ca-passphrase-file`` wins)
PASSPHRASE_ENV = "USTAT_CA_PASSPHRASE"


@dataclass(frozen=True)
class Keys:
    """How ``deploy init`` makes keys. ``local``: every participant's key and certificate at
    once, pinned (a demo on one machine: whoever holds the directory holds every key);
    otherwise only the CA, and the participants make their own (:func:`keygen`).
    ``ca_passphrase``: encrypts the CA key (``ca/ca.key``)."""

    local: bool = False
    ca_passphrase: bytes | None = None


def make_keys(out: str, names: Iterable[str], deployment: str, keys: Keys) -> dict[str, str]:
    """The CA in ``out/ca/`` (its certificate also in ``out/keys/ca.pem``) and, with
    ``keys.local``, every participant's key and certificate in ``out/keys/``. Returns the
    pins ``{name: fingerprint}`` (empty unless local)."""
    import shutil

    from mpc.wire import tls

    ca_dir, key_dir = os.path.join(out, CA_DIR), os.path.join(out, "keys")
    os.makedirs(key_dir, exist_ok=True)
    if keys.local:
        made = tls.make_deployment(key_dir, list(names), deployment, ca_directory=ca_dir)
        return dict(next(iter(made.values())).pins or {}) if made else {}
    tls.make_ca(ca_dir, deployment, passphrase=keys.ca_passphrase)
    shutil.copyfile(os.path.join(ca_dir, "ca.pem"), os.path.join(key_dir, "ca.pem"))
    return {}


def keygen(name: str, out: str = "keys") -> tuple[str, str]:
    """On the participant's machine: ``(key path, request path)`` (:func:`mpc.wire.tls.keygen`)."""
    from mpc.wire import tls

    return tls.keygen(out, name)


def passphrase(file: str | None = None) -> bytes | None:
    """The CA key's passphrase: the first line of ``file``, else :data:`PASSPHRASE_ENV`, else
    None (the key is not encrypted). ValueError if ``file`` is unreadable or empty."""
    if file is not None:
        try:
            with open(file, "rb") as f:
                text = f.read().splitlines()
        except OSError as e:
            raise ValueError(f"--ca-passphrase-file {file}: {e.strerror}") from None
        if not text or not text[0]:
            raise ValueError(f"--ca-passphrase-file {file} is empty")
        return text[0]
    env = os.environ.get(PASSPHRASE_ENV)
    return env.encode() if env else None


def sign(ca: str, csrs: Iterable[str], *, config: str | None = None, out: str | None = None,
         ca_passphrase: bytes | None = None) -> list[dict]:
    """The organizer's step: sign each request in ``csrs`` with the CA in directory ``ca``,
    write the certificate (``out``, one request only; default the participant's ``cert``
    path in ``deploy.toml``) and pin it in ``config`` (default ``ca/../deploy.toml``).
    Returns ``[{"name", "cert", "fingerprint", "replaced"}]``; ValueError naming the request
    for a request that does not verify or names no participant (nothing pinned then)."""
    from mpc.wire import tls

    csrs = list(csrs)
    if out is not None and len(csrs) != 1:
        raise ValueError("--out names one certificate: give one --csr with it")
    config = config or os.path.join(os.path.dirname(os.path.abspath(ca)), FILE)
    if not os.path.isfile(config):
        raise ValueError(f"no deployment configuration at {config} (give --config)")
    cfg = load(config)
    ca_key = tls.load_key(os.path.join(ca, "ca.key"), ca_passphrase)
    ca_cert = tls.load_certificate(os.path.join(ca, "ca.pem"))
    names = [p.name for p in cfg.participants]
    signed = []
    for path in csrs:
        try:
            with open(path, "rb") as f:
                name, pem = tls.sign_request(f.read(), ca_key, ca_cert, names)
        except (OSError, ValueError) as e:
            raise ValueError(f"--csr {path}: {getattr(e, 'strerror', None) or e}") from None
        signed.append((name, pem))
    out_rows = []
    for name, pem in signed:
        dest = out or cfg.get(name).cert
        os.makedirs(os.path.dirname(os.path.abspath(dest)), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(pem)
        fp = tls.fingerprint(tls.load_certificate(dest))
        old = pin(config, name, fp)
        out_rows.append({"name": name, "cert": dest, "fingerprint": fp,
                         "replaced": old if old and old != fp else None})
    return out_rows


def pin(config: str, name: str, fingerprint: str | None) -> str | None:
    """Set (``None``: remove, which revokes) participant ``name``'s pin in ``config``;
    returns the pin it had. The file is rewritten whole and checked (:func:`.config.load`)."""
    with open(config, "rb") as f:
        doc = _toml().load(f)
    entry = next((p for p in doc.get("participant", []) if p.get("name") == name), None)
    if entry is None:
        raise ValueError(f"{config}: no participant named {name!r}")
    old = entry.pop("fingerprint", None)
    if fingerprint is not None:
        entry["fingerprint"] = fingerprint
    tmp = config + ".tmp"
    with open(tmp, "w") as f:
        f.write(dump(doc))
    try:
        load(tmp)
    except BaseException:
        os.unlink(tmp)
        raise
    os.replace(tmp, config)
    return old


def unpinned(config: str) -> list[str]:
    """The participants of ``config`` with no pinned certificate yet."""
    return [p.name for p in load(config).participants if not p.fingerprint]
