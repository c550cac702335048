"""Deployment inputs are checked first, with one clear line naming what is wrong (issue 37, 14).

``deploy init`` validates every flag before writing anything and leaves no half-written
directory; ``ustat party`` / ``serve`` check their file, keys, port and ``deploy.toml`` before
waiting for any peer; a party host's file may hold only its own rows. Nothing here connects
to a peer: each case fails (or is decided) before the first connection.
"""

import os
import socket
import subprocess
import sys

import pytest

pytest.importorskip("cryptography")

from ustat.cli import main
from ustat.cli.deploy import job_from_command
from ustat.deploy import init, load

from .test_deploy import KENDALL, LOCAL, ROOT, _bank_rows, _ports

PROTOCOL = ["--", "estimate", *KENDALL]
#: init of a seeded protocol (issue 36: --seed needs --insecure)
INIT = ["deploy", "init", "--insecure"]


def _ustat(*argv, timeout=60):
    out = subprocess.run([sys.executable, "-m", "ustat", *argv], capture_output=True,
                         text=True, timeout=timeout, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": ROOT})
    return out.returncode, out.stderr.strip()


@pytest.mark.parametrize("flags, why", [
    (["--base-port", "70000"], "--base-port"),
    (["--base-port", "65533"], "--base-port"),           # 5 participants: ports up to 65537
    (["--timeout", "-1"], "--timeout"),
    (["--timeout", "0"], "--timeout"),
    (["--connect-timeout", "-3"], "--connect-timeout"),
    (["--address", "dealer=10.0.0.1:99999"], "99999"),
    (["--address", "nobody=10.0.0.1:7000"], "nobody"),
])
def test_deploy_init_checks_every_flag_before_writing_anything(tmp_path, capsys, flags, why):
    d = tmp_path / "dep"
    code = main([*INIT, "--parties", "20", "--hosts", "2", "--out", str(d), *flags,
                 *PROTOCOL])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("ustat: error:") and why in err, err
    assert len(err.splitlines()) == 1
    assert not d.exists() and os.listdir(tmp_path) == []       # nothing half-written
    # the retry with good flags succeeds (no "exists")
    assert main([*INIT, "--parties", "20", "--hosts", "2", "--out", str(d),
                 "--base-port", str(_ports()), *PROTOCOL]) == 0
    assert load(str(d)).parties == 20


def test_deploy_init_refuses_a_directory_in_use(tmp_path, capsys):
    d = tmp_path / "dep"
    d.mkdir()
    (d / "notes.txt").write_text("mine")
    assert main([*INIT, "--parties", "20", "--hosts", "2", "--out", str(d),
                 *PROTOCOL]) == 2
    assert "not an empty directory" in capsys.readouterr().err
    assert os.listdir(d) == ["notes.txt"]


@pytest.fixture
def dep(tmp_path):
    d = str(tmp_path / "dep")
    init(d, 20, job_from_command(["estimate", *KENDALL], 20), hosts=2, base_port=_ports(),
         connect_timeout=2.0, insecure=True, keys=LOCAL)
    return d


def test_a_missing_csv_is_named_before_waiting_for_peers(dep):
    code, err = _ustat("party", "--config", dep, "--id", "0-9", "--csv", "/nonexistent/b.csv",
                       timeout=20)
    assert code == 2 and err == "ustat: error: --csv /nonexistent/b.csv: no such file"


def test_a_missing_key_is_named_with_its_path(dep, tmp_path):
    key = os.path.join(dep, "keys", "host-0.key")
    os.remove(key)
    code, err = _ustat("party", "--config", dep, "--id", "0-9", "--csv",
                       _bank_rows(tmp_path, 20), timeout=20)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert key in err and "host-0" in err and "Errno" not in err


def test_a_busy_port_names_the_address_and_the_participant(dep):
    cfg = load(dep)
    host, port = cfg.get("dealer").address
    with socket.socket() as s:
        s.bind((host, port))
        s.listen()
        code, err = _ustat("serve", "--config", dep, "--role", "dealer", timeout=20)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"{host}:{port}" in err and "dealer" in err and "Errno" not in err


@pytest.mark.parametrize("drop, key", [("session = ", "session"), ("address = ", "address")])
def test_a_deploy_toml_missing_a_key_is_one_line_naming_file_and_key(dep, drop, key):
    path = os.path.join(dep, "deploy.toml")
    with open(path) as f:
        lines = f.readlines()
    cut = next(i for i, ln in enumerate(lines) if ln.startswith(drop))
    with open(path, "w") as f:
        f.writelines(lines[:cut] + lines[cut + 1:])
    code, err = _ustat("serve", "--config", dep, "--role", "dealer", timeout=20)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert path in err and key in err and "Traceback" not in err


def test_a_host_file_holding_only_its_own_rows_is_read_as_those_rows(tmp_path):
    """host-1 holds parties 10-19: a file of exactly its 10 rows is those rows; any other count
    says which rows are needed and how many the file has."""
    from ustat.deploy.runner import host_file_rows

    full = _bank_rows(tmp_path, 20)
    with open(full) as f:
        lines = f.readlines()
    own = tmp_path / "own.csv"
    own.write_text(lines[0] + "".join(lines[11:21]))
    short = tmp_path / "short.csv"
    short.write_text(lines[0] + "".join(lines[11:18]))
    data = {"columns": "age,balance", "header": True}
    assert host_file_rows(full, range(10, 20), data) == range(10, 20)
    assert host_file_rows(str(own), range(10, 20), data) == range(10)
    with pytest.raises(ValueError, match=r"rows 10-19 needed .* the file has 7"):
        host_file_rows(str(short), range(10, 20), data)


def test_a_seed_is_refused_at_init_unless_insecure(tmp_path, capsys):
    """Issue 36 N2: with --seed every participant can compute the noise: refused in one line
    naming --insecure, nothing written; with --insecure, init records it in deploy.toml."""
    d = tmp_path / "dep"
    code = main(["deploy", "init", "--parties", "20", "--hosts", "2", "--out", str(d),
                 "--base-port", str(_ports()), *PROTOCOL])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("ustat: error:") and "--insecure" in err, err
    assert len(err.splitlines()) == 1 and not d.exists()
    with pytest.raises(ValueError, match="insecure"):
        init(str(d), 20, job_from_command(["estimate", *KENDALL], 20), hosts=2,
             base_port=_ports())
    assert main(["deploy", "init", "--parties", "20", "--hosts", "2", "--out", str(d),
                 "--base-port", str(_ports()), "--insecure", *PROTOCOL]) == 0
    assert load(str(d)).insecure
    unseeded = [a for a in KENDALL if a not in ("--seed", "5")]
    init(str(tmp_path / "b"), 20, job_from_command(["estimate", *unseeded], 20), hosts=2,
         base_port=_ports())
    assert not load(str(tmp_path / "b")).insecure


def test_a_seeded_run_is_refused_by_a_participant_without_insecure(tmp_path, capsys):
    """deploy.toml edited to carry a seed without `insecure = true`: each participant refuses
    before connecting."""
    d = tmp_path / "dep"
    init(str(d), 20, job_from_command(["estimate", *KENDALL], 20), hosts=2,
         base_port=_ports(), insecure=True)
    path = d / "deploy.toml"
    path.write_text(path.read_text().replace("insecure = true\n", ""))
    code = main(["serve", "--config", str(path), "--role", "dealer"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "--insecure" in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("address, ok", [("10.0.0.5:7000", False), ("0.0.0.0:7000", False),
                                         ("localhost:7000", False), ("127.0.0.2:7000", True)])
def test_plain_is_refused_unless_every_address_is_loopback(tmp_path, capsys, address, ok):
    """Issue 36 W6: --plain (no TLS, no end-to-end encryption) only when every participant,
    the relay included, listens on a loopback address (127.0.0.0/8, ::1)."""
    d = tmp_path / "dep"
    init(str(d), 20, job_from_command(["estimate", *KENDALL], 20), hosts=2,
         base_port=_ports(), insecure=True, addresses={"relay": address})
    cfg = load(str(d))
    assert cfg.loopback() == ok
    if not ok:
        code = main(["serve", "--config", str(d / "deploy.toml"), "--role", "dealer", "--plain"])
        err = capsys.readouterr().err.strip()
        assert code == 2 and "--plain" in err and "loopback" in err, err
        assert len(err.splitlines()) == 1


def test_deploy_init_source_names_the_data_in_deploy_toml(tmp_path, capsys):
    """``deploy init --source`` (the job's ``source``) is what the release names the data."""
    out = tmp_path / "d"
    assert main(["deploy", "init", "--parties", "10", "--hosts", "1", "--out", str(out),
                 "--source", "bank 2024", "--insecure", "--", "estimate", *KENDALL]) == 0
    capsys.readouterr()
    assert load(str(out)).source == "bank 2024"
