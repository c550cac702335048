"""Deployments: Kendall on Bank over 4 party hosts + dealer + relay + aggregator, latency, TLS.

Usage: python benchmarks/deploy.py [--json] [--quick] [--repeats N] [--no-mpyc] [--gc] [--rehearsal]

Every participant is its own OS process on 127.0.0.1 (``ustat deploy run
--local``), TLS 1.3 with the deployment's own CA, the party hosts through
the relay (frames sealed end to end). Keys:

- ``deploy_kendall_bank_seconds``: wall time of the whole deployed run
  (7 processes started, connected, computed, stopped), with
  ``deploy_kendall_bank_protocol_seconds`` (the slowest participant from
  its start to its end) and ``estimate_kendall_bank_seconds`` (``ustat
  estimate``, one process, the same run) beside it;
- ``deploy_wire_overhead_ratio``: bytes TCP carried for the participants
  (TLS records, framing, envelopes, tags) beyond the payload of the
  messages that cross processes, over that payload;
- ``deploy_kendall_bank_seconds_rtt10ms``: the same protocol with 10 ms
  added to every step (``[deployment] delay``, this kernel has no netem),
  against ``rtt10ms_model_seconds = steps x 0.01 + protocol seconds
  without delay`` (``steps``: exchanges of the participant with the most);
- ``dropout_kendall_bank_seconds``: the same run with ``--no-check-inputs``
  and host-2 killed (SIGKILL) when it starts computing: the release completes
  without its parties and edges (``dropout_parties_lost``,
  ``dropout_edges_lost``, ``dropout_step`` "computing");
  ``dropout_overhead_ratio`` is its wall time over the same run without the
  kill (docs/guides/deploy.md, "Dropouts": with the input check, the parties
  whose checking partner host-2 held are lost too);
- ``lt_per_s_tls``: 10^6 two-party comparisons (two parties and a dealer,
  three processes, TLS), against MPyC ``-M3`` on the same machine
  (``mpyc_lt_per_s_m3``; ``mpyc_ssl`` says whether MPyC ran with
  ``--ssl``), with the ratio. Program time of the slowest process, as
  MPyC's is timed after ``mpc.start()``; each process loads its compiled
  kernels while it connects (:mod:`mpc.run.warmup`), so start-up is apart:
  ``lt_launch_seconds_tls`` is the whole launch (processes started,
  connected, kernels loaded, computed, stopped);
- ``parties_1e4_auc_seconds``: AUC over 10^4 synthetic parties in 4 host
  processes through the relay, deployed (wall), and its protocol seconds
  (secure randomness: no seed);
- ``handshake_slowloris_delay_seconds``: start-up (TLS, 3 party hosts through
  the relay and a dealer, in threads of this process) with one idle TCP
  connection held open to the relay and one to host-0's listener, minus
  without (median of ``max(3, --repeats)`` each; target <= 2);
- ``relay_peak_rss_mb_adversarial``: the peak RSS (MB) of a relay process
  fed the issue-36 W3/W4 inputs by an authenticated host (one envelope
  announcing 2^34 bytes; 300,000 empty DATA envelopes; 300,000 minimal ones
  to a host that reads nothing), the largest of the three runs
  (``tests/mpc/wire/adversary.py``, each under an address-space cap;
  target <= 256);
- with ``--rehearsal`` (issue 36 item 7): ``parties_1e5_hosts8_dropout_seconds``,
  Kendall over 10^5 synthetic parties on 8 party hosts through the relay,
  10 ms slept before every exchange (``[deployment] delay``: a WAN's latency
  stand-in), host-3 (1 of 8) killed when it starts computing; the release
  completes without it; ``..._model_seconds`` = steps x 10 ms + the
  protocol seconds of the same run without delay or dropout;
- with ``--gc``: ``deploy_kendall_bank_gc_seconds`` (``--backend gc
  --threat-model hf``, seed 5, deployed with a 900 s step timeout) and
  ``deploy_kendall_bank_gc_same_release`` (equal to ``ustat estimate``).

Medians of ``--repeats`` runs (default 1: each deployed Bank run starts 7
interpreters); whole-run wall times include interpreter start-up.
"""

from __future__ import annotations

import datetime
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
from _common import ROOT, emit  # importing it puts the repository on sys.path

BANK = os.path.join(ROOT, "..", "shared", "data", "bank", "bank.csv")
KENDALL = ["estimate", "kendall", "--columns", "age,balance", "--bounds", "18:95,-8019:102127",
           "--epsilon", "1"]
_PORT = [18000 + os.getpid() % 500 * 10]


def _port():
    _PORT[0] += 10
    return _PORT[0]


def _deployed(tmp, parties, command, csv, delay=0.0, timeout=60.0, kill=None, hosts=4):
    """``kill``: a party host killed when it starts computing (a dropout)."""
    from ustat.cli.deploy import job_from_command
    from ustat.deploy import Keys, init, run_local

    d = tempfile.mkdtemp(dir=tmp)
    os.rmdir(d)
    init(d, parties, job_from_command(command, parties), hosts=hosts, base_port=_port(),
         timeout=timeout, insecure="--seed" in command,     # the gc run is seeded
         keys=Keys(local=True))                             # every key here: one machine
    if delay:
        path = os.path.join(d, "deploy.toml")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace("delay = 0.0", f"delay = {delay!r}"))
    t = time.perf_counter()
    out = run_local(d, csv, on_start=None if kill is None else
                    lambda procs, logs: _kill_when_computing(procs, logs, kill))
    wall = time.perf_counter() - t
    protocol = max(p["seconds"] for p in out["participants"])
    steps = max(p["wire"].get("exchanges", 0) for p in out["participants"]
                if p["role"] != "relay")
    return wall, protocol, steps, out


def _kill_when_computing(procs, logs, name, limit=600.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        logs[name].seek(0)
        if b"computing" in logs[name].read():
            procs[name].kill()
            return
        time.sleep(0.05)


def _dropout_deployment(tmp, csv, n) -> dict:
    """Kendall on 4 hosts, host-2 killed when it starts computing: the survivors release
    without its parties and edges. Both runs ``--no-check-inputs`` (with the input check the
    parties whose checking partner host-2 held are lost too: beyond max_dropouts)."""
    command = [*KENDALL, "--no-check-inputs"]
    wall = _deployed(tmp, n, command, csv)[0]
    t, _, _, out = _deployed(tmp, n, command, csv, kill="host-2")
    rel = out["release"]
    return {"dropout_kendall_bank_seconds": t, "dropout_overhead_ratio": t / wall,
            "dropout_parties_lost": rel["dropouts"]["parties_lost"],
            "dropout_edges_lost": rel["dropouts"]["edges_lost"],
            "dropout_step": rel["dropouts"]["step"]}


def _rehearsal(tmp, n, delay=0.01) -> dict:
    """Item 7: Kendall over n synthetic parties on 8 hosts through the relay, ``delay`` s
    slept before every exchange (a WAN's latency; this kernel has no netem), host-3 (1 of 8)
    killed when it starts computing; against steps x delay + the protocol seconds of the same
    run without delay and without the dropout."""
    csv = os.path.join(tmp, "kendall_synth.csv")
    rng = np.random.default_rng(5)
    x = rng.random(n)
    y = np.clip(x + rng.normal(0, 0.3, n), 0, 1)
    with open(csv, "w") as f:
        f.write("x,y\n")
        f.writelines(f"{a:.6f},{b:.6f}\n" for a, b in zip(x, y))
    cmd = ["estimate", "kendall", "--columns", "x,y", "--bounds", "0:1,0:1", "--epsilon", "1"]
    _, base, _, _ = _deployed(tmp, n, cmd, csv, hosts=8, timeout=600.0)
    wall, proto, steps, out = _deployed(tmp, n, cmd, csv, delay=delay, kill="host-3", hosts=8,
                                        timeout=600.0)
    key = f"parties_{'1e5' if n == 10**5 else n}_hosts8_dropout"
    return {f"{key}_seconds": wall, f"{key}_protocol_seconds": proto, f"{key}_steps": steps,
            f"{key}_delay_seconds": delay,
            f"{key}_model_seconds": steps * delay + base,
            f"{key}_parties_lost": out["release"]["dropouts"]["parties_lost"]}


def _estimate_seconds(csv, command=KENDALL):
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ustat", *command, "--csv", csv, "--json",
                    "--no-progress"], check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - t


def _gc_deployment(tmp, csv, n) -> dict:
    """Kendall on Bank with --backend gc (hf), deployed, against `ustat estimate` (same seed)."""
    import json

    command = KENDALL + ["--threat-model", "hf", "--backend", "gc", "--seed", "5"]
    wall, proto, _, out = _deployed(tmp, n, command, csv, timeout=900.0)
    t = time.perf_counter()
    ref = json.loads(subprocess.run([sys.executable, "-m", "ustat", *command, "--csv", csv,
                                     "--json", "--no-progress"], check=True, capture_output=True,
                                    cwd=ROOT, text=True).stdout)
    keys = ("estimate", "u_hat", "ci", "online_bits", "offline_bits", "rounds")
    from ustat.deploy.wire import summary
    return {"deploy_kendall_bank_gc_seconds": wall,
            "deploy_kendall_bank_gc_protocol_seconds": proto,
            "estimate_kendall_bank_gc_seconds": time.perf_counter() - t,
            "deploy_kendall_bank_gc_same_release": all(out["release"][k] == ref[k]
                                                       for k in keys),
            "deploy_kendall_bank_gc_overhead_ratio":
                summary(out["release"], out["participants"])["overhead_ratio"]}


def lt_program(rt, data):
    from fss import FSSGates
    from mpc.session import Session
    s = Session(2, runtime=rt, roles=("dealer",), comparisons=FSSGates())
    x = s.input(data, by=[0, 1], bound=2**31)
    return s.output(x[0] < x[1], to=[0, 1])


def _lt_tls(n, repeats):
    import fss
    from mpc.run.launch import launch

    data = np.random.default_rng(1).integers(-2**31, 2**31, size=(2, n))
    runs, launches = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        res = launch(lt_program, data, groups=[[0], [1], ["dealer"]], tls=True,
                     warm_up=[fss.warm_up])
        launches.append(time.perf_counter() - t)
        assert np.array_equal(res[0].value, data[0] < data[1])
        runs.append(max(r.seconds for r in res))
    return n / statistics.median(runs), statistics.median(launches)


def _mpyc_certificates(directory, parties):
    """MPyC's --ssl files: .config/party_i.{crt,key} with CN 'MPyC party i', mpyc_ca.crt."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    cfg = os.path.join(directory, ".config")
    os.makedirs(cfg, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)

    def name(cn):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def cert(subject, key, issuer, signer, ca):
        b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
             .public_key(key.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(minutes=5))
             .not_valid_after(now + datetime.timedelta(days=1))
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        return b.sign(signer, hashes.SHA256())

    pem = serialization.Encoding.PEM
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = cert(name("MPyC CA"), ca_key, name("MPyC CA"), ca_key, True)
    with open(os.path.join(cfg, "mpyc_ca.crt"), "wb") as f:
        f.write(ca.public_bytes(pem))
    for i in range(parties):
        k = ec.generate_private_key(ec.SECP256R1())
        c = cert(name(f"MPyC party {i}"), k, ca.subject, ca_key, False)
        with open(os.path.join(cfg, f"party_{i}.crt"), "wb") as f:
            f.write(c.public_bytes(pem))
        with open(os.path.join(cfg, f"party_{i}.key"), "wb") as f:
            f.write(k.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))


def _mpyc_lt(n, repeats, tmp, ssl):
    from compose import MPYC_ARGMAX, MPYC_SCRIPT, _mpyc

    script = os.path.join(tmp, "mpyc_lt.py")
    with open(script, "w") as f:
        f.write(MPYC_SCRIPT.format(argmax=textwrap.indent(textwrap.dedent(MPYC_ARGMAX),
                                                          " " * 8)))
    if ssl:
        _mpyc_certificates(tmp, 3)
    seconds = _mpyc("lt", n, 3, repeats, script, extra=["--ssl"] if ssl else [], cwd=tmp,
                    expect="via SSL" if ssl else None)
    return n / seconds


def _relay_peak_rss_mb() -> float:
    import json
    peaks = []
    for scenario in ("relay-huge", "relay-empty", "relay-small"):
        out = subprocess.run([sys.executable, "-m", "tests.mpc.wire.adversary", scenario],
                             cwd=ROOT, check=True, capture_output=True, text=True, timeout=120,
                             env=dict(os.environ, PYTHONPATH=ROOT))
        peaks.append(json.loads(out.stdout.strip().splitlines()[-1])["peak_rss_mb"])
    return max(peaks)


def _auc_csv(path, n):
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, n)
    score = np.clip(rng.normal(0.4 + 0.2 * y, 0.15), 0, 1)
    with open(path, "w") as f:
        f.write("score,y\n")
        f.writelines(f"{s:.6f},{int(b)}\n" for s, b in zip(score, y))


def _start_up_seconds(creds, silent: bool) -> float:
    """Seconds until 3 party hosts (through the relay) and a dealer have joined, over TLS; with
    ``silent``, an idle TCP connection (no handshake) held open to the relay and to host-0."""
    import socket
    import threading

    from mpc.run.hosts import Plan, join, open_mesh, open_relay, run_relay

    names = ["host-0", "host-1", "host-2", "dealer"]
    plan = Plan(names=names, groups=[[range(10 * r, 10 * r + 10)] for r in range(3)]
                + [["dealer"]], addresses=[None] * 4, session=7, relay=("127.0.0.1", 0),
                relayed=[0, 1, 2], connect_timeout=30.0)
    meshes = [open_mesh(plan, r, creds[names[r]], port=0) for r in range(4)]
    relay = open_relay(plan, creds["relay"], port=0)
    plan.addresses = [("127.0.0.1", m.port) for m in meshes]
    plan.relay = ("127.0.0.1", relay.port)
    idle = [socket.create_connection(("127.0.0.1", p)) for p in (relay.port, meshes[0].port)] \
        if silent else []
    rts: list = [None] * 4
    ts = [threading.Thread(target=lambda r=r: rts.__setitem__(r, join(meshes[r], plan,
                                                                        creds[names[r]])))
          for r in range(4)]
    server = threading.Thread(target=run_relay, args=(relay,))
    t = time.perf_counter()
    server.start()
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    seconds = time.perf_counter() - t
    for s in idle:
        s.close()
    for rt, m in zip(rts, meshes):
        (rt.transport if rt is not None else m).close()
    server.join()
    relay.close()
    if any(rt is None for rt in rts):
        raise RuntimeError("start-up failed")
    return seconds


def _slowloris_delay(tmp, repeats) -> float:
    """Start-up with one silent connection to the relay and one to a host, minus without."""
    from mpc.wire import tls

    creds = tls.make_deployment(os.path.join(tmp, "slowloris"),
                                ["host-0", "host-1", "host-2", "dealer", "relay"], "bench")
    n = max(3, repeats)
    return (statistics.median(_start_up_seconds(creds, True) for _ in range(n))
            - statistics.median(_start_up_seconds(creds, False) for _ in range(n)))


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--quick", action="store_true", help="1000 Bank records, 10^4 comparisons")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--no-mpyc", action="store_true")
    ap.add_argument("--rehearsal", action="store_true",
                    help="also 10^5 parties on 8 hosts, 10 ms per step, 1 host lost (item 7)")
    ap.add_argument("--gc", action="store_true",
                    help="also Kendall on Bank with --backend gc, deployed (a few minutes)")
    args = ap.parse_args(argv)
    res = {"machine_cores": os.cpu_count(), "transport": "TLS 1.3 (mutual, own CA); party "
           "hosts through the relay, AES-256-GCM end to end"}
    with tempfile.TemporaryDirectory(prefix="ustat-bench-deploy-") as tmp:
        csv, n = BANK, 4521
        if args.quick:
            csv, n = os.path.join(tmp, "bank1000.csv"), 1000
            with open(BANK) as f, open(csv, "w") as g:
                g.writelines(f.readlines()[:n + 1])
        runs = [_deployed(tmp, n, KENDALL, csv) for _ in range(args.repeats)]
        wall = statistics.median(r[0] for r in runs)
        proto = statistics.median(r[1] for r in runs)
        out = runs[-1][3]
        from ustat.deploy.wire import summary
        w = summary(out["release"], out["participants"])
        res.update({"deploy_kendall_bank_parties": n,
                    "deploy_kendall_bank_seconds": wall,
                    "deploy_kendall_bank_protocol_seconds": proto,
                    "estimate_kendall_bank_seconds": statistics.median(
                        _estimate_seconds(csv) for _ in range(args.repeats)),
                    "deploy_wire_overhead_ratio": w["overhead_ratio"],
                    "deploy_wire": w,
                    "deploy_wire_per_participant": {
                        p["name"]: p["wire"].get("tcp_bytes_sent", 0)
                        for p in out["participants"]}})
        res.update(_dropout_deployment(tmp, csv, n))
        wall10, proto10, steps, _ = _deployed(tmp, n, KENDALL, csv, delay=0.01)
        res.update({"deploy_kendall_bank_seconds_rtt10ms": wall10,
                    "deploy_kendall_bank_protocol_seconds_rtt10ms": proto10,
                    "steps": steps, "rtt10ms_model_seconds": steps * 0.01 + proto,
                    "rtt10ms_model_ratio": proto10 / (steps * 0.01 + proto)})
        if args.gc:
            res.update(_gc_deployment(tmp, csv, n))
        if args.rehearsal:
            res.update(_rehearsal(tmp, 10**4 if args.quick else 10**5))
        res["handshake_slowloris_delay_seconds"] = _slowloris_delay(tmp, args.repeats)
        n_lt = 10**4 if args.quick else 10**6
        res["lt_comparisons"] = n_lt
        res["lt_per_s_tls"], res["lt_launch_seconds_tls"] = _lt_tls(n_lt, args.repeats)
        if not args.no_mpyc:
            try:
                import mpyc
                res["mpyc_version"] = mpyc.__version__
                # MPyC's fast path
                res["mpyc_gmpy2"] = importlib.util.find_spec("gmpy2") is not None
                n_m = 10**3 if args.quick else 10**4
                try:
                    res["mpyc_lt_per_s_m3"] = _mpyc_lt(n_m, args.repeats, tmp, ssl=True)
                    res["mpyc_ssl"] = True
                except RuntimeError as e:
                    res["mpyc_ssl"] = f"failed ({e}); plain TCP"
                    res["mpyc_lt_per_s_m3"] = _mpyc_lt(n_m, args.repeats, tmp, ssl=False)
                res["mpyc_lt_comparisons"] = n_m
                res["lt_tls_ratio_vs_mpyc_m3"] = res["lt_per_s_tls"] / res["mpyc_lt_per_s_m3"]
            except ImportError:
                res["mpyc"] = "not installed (pip install mpyc)"
        n_auc = 10**3 if args.quick else 10**4
        auc_csv = os.path.join(tmp, "auc.csv")
        _auc_csv(auc_csv, n_auc)
        wall_auc, proto_auc, _, out_auc = _deployed(
            tmp, n_auc, ["estimate", "auc", "--columns", "score,y", "--bounds", "0:1",
                         "--epsilon", "1"], auc_csv)
        res.update({"parties_auc": n_auc, "parties_1e4_auc_seconds": wall_auc,
                    "parties_1e4_auc_protocol_seconds": proto_auc,
                    "parties_1e4_auc_estimate": out_auc["release"]["estimate"]})
        res["relay_peak_rss_mb_adversarial"] = _relay_peak_rss_mb()
    emit(res, args.json)


if __name__ == "__main__":
    main()
