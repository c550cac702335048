"""Keys that stay where they are made, pinned certificates, per-run freshness (issue 36 W1, W5).

A participant makes its key and a signing request (:func:`mpc.wire.tls.keygen`), the
organizer signs it (:func:`mpc.wire.tls.sign_request`); every connection checks the peer's
certificate against its pin, so a certificate the same CA signed but nobody pinned is
refused (mesh, relay both ways, announcements through the relay). Through the relay, an
announcement replayed from an earlier run (with that run's leaked ephemeral key) is refused
before any frame. Threads on loopback with short timeouts; every socket closed.
"""

import os
import stat
import threading

import pytest

pytest.importorskip("cryptography")

from mpc.run.hosts import join, open_mesh, open_relay, run_relay
from mpc.wire import e2e, tls
from mpc.wire.relay import ANNOUNCE, Relay
from mpc.wire.transport import TransportError
from tests.mpc.wire.test_tls import NAMES, _close, _dial, _lone_server, _plan


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("pki"))
    creds = tls.make_deployment(d, NAMES + ["relay"], "test", ca_directory=os.path.join(d, "ca"))
    ca_key = tls.load_key(os.path.join(d, "ca", "ca.key"))
    ca_cert = tls.load_certificate(os.path.join(d, "ca", "ca.pem"))
    # whoever holds the CA key mints a second host-1 and a second relay: valid, not pinned
    rogue_dir = str(tmp_path_factory.mktemp("rogue"))
    rogue = {n: tls.issue(rogue_dir, n, ca_key, ca_cert) for n in ("host-1", "relay")}
    rogue = {n: tls.Credentials(n, c.key, c.cert, creds[n].ca, creds[n].pins)
             for n, c in rogue.items()}
    return creds, rogue, (ca_key, ca_cert)


# -- W1: keygen, sign, pins -----------------------------------------------------------------------
def test_keygen_and_sign_make_a_pinned_certificate_and_the_key_never_leaves(tmp_path, pki):
    _, _, (ca_key, ca_cert) = pki
    key, csr = tls.keygen(str(tmp_path / "host-1"), "host-1")
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    with open(csr, "rb") as f:
        req = f.read()
    assert b"PRIVATE KEY" not in req
    name, pem = tls.sign_request(req, ca_key, ca_cert, NAMES)
    assert name == "host-1"
    cert = tls.verify_certificate(pem, ca_cert, "host-1", {"host-1": tls.fingerprint(
        tls._crypto()[0].load_pem_x509_certificate(pem))})
    own = tls.load_key(key).public_key().public_numbers()
    assert cert.public_key().public_numbers() == own          # the participant's own key
    with pytest.raises(ValueError, match="exists"):
        tls.keygen(str(tmp_path / "host-1"), "host-1")


def test_sign_refuses_strangers_and_tampered_requests(tmp_path, pki):
    _, _, (ca_key, ca_cert) = pki
    _, csr = tls.keygen(str(tmp_path), "mallory")
    with open(csr, "rb") as f:
        req = f.read()
    with pytest.raises(ValueError, match="names 'mallory', not a participant"):
        tls.sign_request(req, ca_key, ca_cert, NAMES)
    _, csr = tls.keygen(str(tmp_path), "host-2")
    with open(csr, "rb") as f:
        der = bytearray(tls._crypto()[0].load_pem_x509_csr(f.read()).public_bytes(
            tls._crypto()[2].Encoding.DER))
    der[-5] ^= 1                                              # inside the signature
    import base64
    bad = (b"-----BEGIN CERTIFICATE REQUEST-----\n" + base64.encodebytes(bytes(der))
           + b"-----END CERTIFICATE REQUEST-----\n")
    with pytest.raises(ValueError, match=r"signature does not verify|not a certificate"):
        tls.sign_request(bad, ca_key, ca_cert, NAMES)
    with pytest.raises(ValueError, match="not a certificate signing request"):
        tls.sign_request(b"junk", ca_key, ca_cert, NAMES)


def test_a_ca_key_with_a_passphrase_needs_it(tmp_path):
    tls.make_ca(str(tmp_path / "ca"), "p", passphrase=b"correct horse")
    path = str(tmp_path / "ca" / "ca.key")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "ca").st_mode) == 0o700
    with open(path, "rb") as f:
        assert b"ENCRYPTED" in f.read()
    with pytest.raises(ValueError, match="is encrypted: give its passphrase"):
        tls.load_key(path)
    with pytest.raises(ValueError, match="wrong passphrase"):
        tls.load_key(path, b"wrong")
    assert tls.load_key(path, b"correct horse") is not None


def test_an_unpinned_certificate_from_the_same_ca_is_refused_by_the_mesh(pki):
    """The issue's test: a freshly minted host-1 certificate signed by the same CA, not the
    pinned one, is refused before any frame (today's code accepted it)."""
    creds, rogue, _ = pki
    mesh, box, t = _lone_server(creds)
    try:
        got = _dial(mesh.port, rogue["host-1"], claim=1)
        t.join(10)
        assert got == b"" or isinstance(got, Exception)
        msg = str(box["error"])
        assert "never connected: host-1" in msg and "not the one pinned" in msg, msg
    finally:
        mesh.close()


def _join_all(plan, creds, relay_cls=None, relay_creds=None):
    """Join every rank (and run the relay) in threads; returns (runtimes, errors, relay)."""
    n = len(plan.names)
    meshes = [open_mesh(plan, r, creds[plan.names[r]], port=0) for r in range(n)]
    plan.addresses = [("127.0.0.1", m.port) for m in meshes]
    relay = open_relay(plan, relay_creds or creds["relay"], port=0)
    if relay_cls is not None:
        relay.__class__ = relay_cls
    plan.relay = ("127.0.0.1", relay.port)
    out, errs, box = [None] * n, [None] * n, {"errors": []}

    def go(r):
        try:
            out[r] = join(meshes[r], plan, creds[plan.names[r]])
        except Exception as e:
            errs[r] = e
            meshes[r].close(e)

    def serve():
        try:
            box["out"] = run_relay(relay)
        except Exception as e:
            box["errors"].append(e)
    ts = [threading.Thread(target=go, args=(r,)) for r in range(n)]
    rt = threading.Thread(target=serve)
    for t in [*ts, rt]:
        t.start()
    for t in ts:
        t.join(20)
    return out, errs, (relay, box, [rt])


@pytest.mark.parametrize("who", ["host", "relay"])
def test_an_unpinned_certificate_is_refused_at_the_relay_both_ways(pki, who):
    creds, rogue, _ = pki
    plan = _plan(3, relay=True, timeout=2.0)
    plan.connect_timeout = 1.0
    if who == "host":          # host-1 with the rogue certificate: the relay refuses it
        rts, errs, relay = _join_all(plan, {**creds, "host-1": rogue["host-1"]})
    else:                      # a relay with a rogue certificate: every host refuses it
        rts, errs, relay = _join_all(plan, creds, relay_creds=rogue["relay"])
    _close(rts, relay)
    assert all(isinstance(errs[r], TransportError) for r in range(3)), errs
    if who == "host":
        assert any("not the one pinned" in str(e) for e in relay[1]["errors"]), relay[1]
    else:
        assert all("refused or failed the handshake" in str(errs[r]) and "not the one pinned"
                   in str(errs[r]) for r in range(3)), errs


def test_an_unpinned_certificate_in_an_announcement_is_refused(pki):
    creds, rogue, _ = pki
    e0 = e2e.Endpoint(creds["host-0"], NAMES, 0, 1)
    e1 = e2e.Endpoint(rogue["host-1"], NAMES, 1, 1)
    with pytest.raises(e2e.E2EError, match=r"host-1 does not verify: .*not the one pinned"):
        e0.accept(1, e1.announcement())


# -- W5: per-run freshness and key confirmation ----------------------------------------------------
def _pair(creds, session=7):
    return e2e.Endpoint(creds["host-0"], NAMES, 0, session), \
        e2e.Endpoint(creds["host-1"], NAMES, 1, session)


def test_fresh_runs_confirm_keys_and_seal(pki):
    creds, _, _ = pki
    a, b = _pair(creds)
    a.accept(1, b.announcement())
    b.accept(0, a.announcement())
    a.confirm(1, b.confirmation(0))
    b.confirm(0, a.confirmation(1))
    assert a.run_id == b.run_id and len(a.run_id) == 32
    assert b.open(0, 3, 0, a.seal(1, 3, 0, b"frame")) == b"frame"
    c, d = _pair(creds)                   # the same deployment, a later run: a new run id
    c.accept(1, d.announcement())
    assert c._hashes() and c.run_id != a.run_id


def test_an_earlier_runs_announcement_with_its_leaked_key_is_refused(pki):
    """W5 at the endpoint: the relay replays host-1's announcement of run 1 to host-0 in run
    2 and holds run 1's ephemeral key; it can compute the MAC but not host-1's signature over
    run 2's transcript, so host-0 refuses and derives no frame key."""
    creds, _, _ = pki
    _, old = _pair(creds)
    replayed = old.announcement()
    leaked = old._x                                          # the relay knows this key
    a, b = _pair(creds)                                      # run 2, same session number
    a.accept(1, replayed)
    b.accept(0, a.announcement())
    # the relay's best confirmation "from host-1": its own MAC, host-1's real signature
    forged = e2e.Endpoint.__new__(e2e.Endpoint)
    forged.__dict__.update(old.__dict__, _x=leaked, _peers={}, _transcript=None)
    forged.accept(0, a.announcement())
    forged._transcript, forged.run_id = a._hashes(), a.run_id
    mac = forged._mac(0, 1, 0)
    sig = b.confirmation(0)[e2e.MAC_BYTES:]
    for blob in (mac + sig, b.confirmation(0)):
        with pytest.raises(e2e.E2EError, match="replayed from another run"):
            a.confirm(1, blob)
    assert not a.knows(1)
    with pytest.raises(e2e.E2EError, match="replayed from another run"):
        b.confirm(0, a.confirmation(1))


class _Recorder(Relay):
    """Keeps host-1's announcement to host-0 (run 1)."""

    kept: bytes = b""

    def forward(self, h, body):
        if h["kind"] == ANNOUNCE and h["src"] == 1 and h["dst"] == 0 and h["segment"] == 0:
            type(self).kept = bytes(body)
        return super().forward(h, body)


class _Replayer(Relay):
    """Gives host-0 run 1's announcement of host-1 in run 2; notes every DATA envelope."""

    data = 0

    def forward(self, h, body):
        from mpc.wire.relay import envelope
        if h["kind"] == ANNOUNCE and h["src"] == 1 and h["dst"] == 0 and h["segment"] == 0:
            body = _Recorder.kept
            return envelope(ANNOUNCE, 1, 0, 0, 0, len(body)), body
        if h["kind"] == 0:
            type(self).data += 1
        return super().forward(h, body)


def test_a_relay_replaying_an_earlier_runs_announcement_ends_the_run_before_any_frame(pki):
    """W5 through the relay: run 1 completes its start-up; in run 2 the relay replays host-1's
    run-1 announcement to host-0. Today's code accepted it (the announcement bound only the
    deployment's fixed session), so a relay holding run 1's leaked key read and forged run
    2's frames; now the run refuses at key confirmation, naming the replay."""
    creds, _, _ = pki
    rts, errs, relay = _join_all(_plan(3, relay=True, timeout=2.0), creds, _Recorder)
    _close(rts, relay)
    assert errs == [None] * 3 and _Recorder.kept
    plan = _plan(3, relay=True, timeout=2.0)
    plan.connect_timeout = 4.0
    rts, errs, relay = _join_all(plan, creds, _Replayer)
    _close(rts, relay)
    assert all(isinstance(e, TransportError) for e in errs), errs   # every host stops
    named = [str(e) for e in errs if "replayed from another run" in str(e)]
    assert named and all("key confirmation of host-" in m for m in named), errs
    assert _Replayer.data == 0                                  # no frame ever crossed
