"""Keys that stay where they are made (issue 36 W1): init, keygen, sign, pins, revocation.

``deploy init`` writes no participant's key and keeps the CA apart (``ca/``, 0600/0700,
optionally encrypted); each participant makes its key and a request (``deploy keygen``);
the organizer signs and pins (``deploy sign``); credentials carry every pin, and a
certificate whose pin was replaced is refused. In process, no run (the wire tests show
pins on every connection: tests/mpc/wire/test_keys.py).
"""

import json
import os
import socket
import stat
import threading

import pytest

pytest.importorskip("cryptography")

from mpc.wire import tls
from ustat.cli import main
from ustat.deploy import load

from .test_deploy import KENDALL, _ports

PROTOCOL = ["--", "estimate", *[a for a in KENDALL if a not in ("--seed", "5")]]


def _init(d, *flags):
    return main(["deploy", "init", "--parties", "20", "--hosts", "2", "--out", str(d),
                 "--base-port", str(_ports()), *flags, *PROTOCOL])


def test_init_writes_no_participants_key_and_keeps_the_ca_apart(tmp_path, capsys):
    d = tmp_path / "dep"
    assert _init(d) == 0
    out = capsys.readouterr().out
    assert "deploy keygen" in out and "LOCAL" not in out
    assert sorted(os.listdir(d / "keys")) == ["ca.pem"]                  # no private key
    assert stat.S_IMODE(os.stat(d / "ca" / "ca.key").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(d / "ca").st_mode) == 0o700
    cfg = load(str(d))
    assert not cfg.local and not any(p.fingerprint for p in cfg.participants)
    code = main(["serve", "--config", str(d), "--role", "dealer"])       # refuses at once
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "deploy keygen" in err, err


def test_init_local_makes_every_key_here_and_says_so(tmp_path, capsys):
    d = tmp_path / "dep"
    assert _init(d, "--local") == 0
    assert "LOCAL DEMO" in capsys.readouterr().out
    cfg = load(str(d))
    assert cfg.local and "local = true" in (d / "deploy.toml").read_text()
    for p in cfg.participants:
        assert p.fingerprint == tls.fingerprint(tls.load_certificate(p.cert))
    assert cfg.credentials("host-0").pins == {p.name: p.fingerprint for p in cfg.participants}


def _handshake(server, client, names, client_rank, server_rank):
    """A TLS handshake over a socket pair with pins checked both ways; the errors."""
    a, b = socket.socketpair()
    a.settimeout(5)
    b.settimeout(5)
    errs = []

    def serve():
        try:
            w = tls.Wrapper(server, names)
            s = w(a, True, None)
            w.verify(s, client_rank)
        except Exception as e:
            errs.append(e)
    t = threading.Thread(target=serve)
    t.start()
    try:
        tls.Wrapper(client, names)(b, False, server_rank)
    except Exception as e:
        errs.append(e)
    t.join(10)
    a.close()
    b.close()
    return errs


def test_keygen_sign_pin_and_revoke(tmp_path, capsys):
    d = tmp_path / "dep"
    secret = tmp_path / "pass"
    secret.write_text("a long passphrase\n")
    assert _init(d, "--ca-passphrase-file", str(secret)) == 0
    assert b"ENCRYPTED" in (d / "ca" / "ca.key").read_bytes()
    capsys.readouterr()
    with open(d / "deploy.toml", "a") as f:
        f.write('[notes]\nowner = "the organizer"\n')      # kept when sign rewrites the file
    names = [p.name for p in load(str(d)).participants]
    csrs = []
    for n in names:                   # each on its own machine, into its copy's keys/
        assert main(["deploy", "keygen", "--name", n, "--out", str(d / "keys"), "--json"]) == 0
        csrs += ["--csr", json.loads(capsys.readouterr().out)["csr"]]
    assert main(["deploy", "sign", "--ca", str(d / "ca"), *csrs[:2]]) == 2     # no passphrase
    assert "encrypted" in capsys.readouterr().err
    assert main(["deploy", "sign", "--ca", str(d / "ca"), *csrs, "--json",
                 "--ca-passphrase-file", str(secret)]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["unpinned"] == [] and sorted(s["name"] for s in res["signed"]) == sorted(names)
    cfg = load(str(d))
    assert 'owner = "the organizer"' in (d / "deploy.toml").read_text()
    creds = {n: cfg.credentials(n) for n in ("host-0", "dealer")}
    ranked = [p.name for p in cfg.ranked]
    assert _handshake(creds["dealer"], creds["host-0"], ranked, 0, ranked.index("dealer")) == []
    # a request naming no participant is refused, naming it; nothing is pinned
    _, stranger = tls.keygen(str(tmp_path / "m"), "mallory")
    assert main(["deploy", "sign", "--ca", str(d / "ca"), "--csr", stranger,
                 "--ca-passphrase-file", str(secret)]) == 2
    err = capsys.readouterr().err.strip()
    assert "mallory" in err and len(err.splitlines()) == 1
    # host-0 re-keys: the new certificate's pin replaces the old one, which is revoked
    _, again = tls.keygen(str(tmp_path / "new"), "host-0")
    new_cert = tmp_path / "new" / "host-0.pem"
    assert main(["deploy", "sign", "--ca", str(d / "ca"), "--csr", again, "--out",
                 str(new_cert), "--ca-passphrase-file", str(secret)]) == 0
    assert "revoked" in capsys.readouterr().out
    with pytest.raises(ValueError, match="not the one pinned"):
        load(str(d)).credentials("host-0")                 # its old certificate
    fresh = load(str(d)).credentials("dealer")
    errs = _handshake(fresh, creds["host-0"], ranked, 0, ranked.index("dealer"))
    assert errs and any("not the one pinned" in str(e) for e in errs), errs
