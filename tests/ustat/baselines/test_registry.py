import contextlib
import importlib.util
import io
import json
import math
import os

import numpy as np
import pytest

from mpc.comm.costs import Costs
from tests.api import flat_protocol
from tests.conftest import REPO, shared_data
from ustat.baselines import PROTOCOLS, BaselineSpec, ProtocolInfo, ProtocolResult, register

from ._data import correlated_pairs, scored_labels

NAMES = ["umpc", "bell-ldp", "bell-auc", "ghazi", "ghazi-sm", "fedauc-rr", "fedauc-lap",
         "bell-2pc"]


def test_table_has_every_protocol_with_trust_text():
    assert list(PROTOCOLS)[:len(NAMES)] == NAMES
    for info in PROTOCOLS.values():
        assert info.description and info.paper and len(info.trust) > 40
        assert info.dp_model in {"local", "shuffle", "central", "label-local", "2pc-cdp"}
        assert info.kernels in {"any", "degree-2", "auc"}


@pytest.mark.parametrize("name", NAMES)
def test_every_protocol_runs_and_serializes(name):
    kernel = "auc" if PROTOCOLS[name].kernels == "auc" else "kendall"
    X = scored_labels(60) if kernel == "auc" else correlated_pairs(60)
    bins = {"bins": 4} if PROTOCOLS[name].uses_bins else {}
    r = flat_protocol(name, X, kernel, epsilon=1.0, seed=1, evaluate=True, **bins)
    assert isinstance(r, ProtocolResult) and r.protocol == name and r.kernel == kernel
    d = r.to_dict()
    text = json.dumps(d)                                   # JSON-ready as the CLI prints it
    for key in ("protocol", "params", "trust", "dp_model", "online_bits", "offline_bits",
                "rounds", "max_party_bits", "mean_party_bits", "seconds", "estimate", "epsilon"):
        assert key in d
    assert r.online_bits > 0 and r.rounds >= 1 and r.insecure_seed
    assert r.evaluation["u_complete"] is not None and json.loads(text)["epsilon"] == 1.0
    # one cost object for every protocol: the same figures as the report, wall times per phase
    assert isinstance(r.costs, Costs) and "costs" not in d
    assert r.costs["online"]["bits"] == r.online_bits
    assert r.costs["offline"]["bits"] == r.offline_bits and r.costs["online"]["rounds"] == r.rounds
    # the result records the spec it ran, which runs again to the same release
    assert d["spec"]["protocol"] == name and d["spec"]["execution"]["seed"] == 1
    again = flat_protocol(name, X, kernel, epsilon=1.0, seed=1, **bins)
    assert BaselineSpec.from_dict(d["spec"]) == BaselineSpec.of(name, kernel, epsilon=1.0, seed=1,
                                                               **bins)
    assert again.estimate == r.estimate and again.spec == r.spec
    if not bins:                               # a protocol that does not discretize: refused
        with pytest.raises(ValueError, match=f"bins does not apply to protocol '{name}'"):
            flat_protocol(name, X, kernel, epsilon=1.0, bins=4)


def test_umpc_mapping_and_privacy_off_json():
    X = correlated_pairs(40)
    r = flat_protocol("umpc", X, "kendall", epsilon=math.inf, seed=2, edges="all",
                      threat_model="hf", evaluate=True)
    assert r.params["threat_model"] == "hf" and r.params["edges"] == 40 * 39 // 2
    assert r.estimate == pytest.approx(r.evaluation["u_discretized"], abs=1e-9)
    assert r.to_dict()["epsilon"] == "inf"
    assert "committee" in r.trust


def test_register_for_later_protocols():
    info = ProtocolInfo("test-proto", lambda *a, **k: None, "d", "central", "t" * 50, "auc",
                        "p")
    register(info)
    try:
        with pytest.raises(ValueError, match="already registered"):
            register(info)
        with pytest.raises(TypeError, match="ProtocolInfo"):
            register("bell-2pc")
    finally:
        PROTOCOLS.pop("test-proto")


def test_bank_kendall_costs():
    path = shared_data("bank", "bank.csv")
    from ustat.data import load_csv, normalize
    raw, _ = load_csv(path, columns=["age", "balance"])
    X, _ = normalize(raw[:500], [(18, 95), (-8019, 102127)])
    r = flat_protocol("bell-ldp", X, "kendall", epsilon=1.0, bins=64, seed=1)
    assert r.online_bits == 500 * 12 and r.params["domain"] == 4096


def test_benchmark_quick_json():
    shared_data("bank", "bank.csv")
    pytest.importorskip("sklearn")
    spec = importlib.util.spec_from_file_location(
        "bench_baselines", os.path.join(REPO, "benchmarks", "baselines.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        assert mod.main(["--json", "--quick", "--runs", "2"]) == 0
    out = json.loads(buf.getvalue())
    for p in ("bell-ldp", "ghazi", "ghazi-sm", "umpc", "bell-2pc"):
        for k in ("mse", "online_bits", "seconds", "rounds"):
            assert f"{p}_{k}" in out
    for p in ("bell-auc", "fedauc-rr", "fedauc-lap", "umpc"):
        assert f"auc_{p}_mse" in out
    assert out["bell-ldp_online_bits"] == out["kendall_n"] * 8      # T = 16^2: 8 bits
    assert np.isfinite(out["umpc_mse"]) and out["quick"]
    assert out["bell-2pc_n_pairs"] == out["kendall_n"] // 2 and out["bell-2pc_gc_runs"] == 1
