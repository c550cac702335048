"""BaselineSpec: what each protocol declares (defaults, checks, flags), validation naming the
field, an option of one protocol refused for another, the round trip through JSON, and the
shape of the API (no signature probing, at most 12 parameters per public function)."""

import ast
import json
import math
import os

import pytest

from tests.conftest import REPO
from ustat.baselines import PROTOCOLS, BaselineSpec, ProtocolInfo, register
from ustat.baselines.options import Option, integer
from ustat.baselines.spec import UNIVERSAL
from ustat.specs import UMPCSpec

from ._data import correlated_pairs


def test_each_protocol_takes_its_declared_options_with_their_defaults():
    s = BaselineSpec.of("bell-2pc", "kendall")
    assert (s.encoding.bins, s.options.pairs, s.options.noise_bits, s.options.engine) == \
        (64, 1, 40, "gc")
    assert s.privacy.delta == 1e-8 and s.privacy.aux_epsilon_fraction == 0.1
    assert s.encoding.bits is None and s.options.dim is None       # not taken by bell-2pc
    lap = BaselineSpec.of("fedauc-lap", "auc")
    assert lap.privacy.delta == 1e-6 and lap.options.allocation == "adaptive"
    assert lap.encoding.bits is None and lap.encoding.frac_bits == 14   # ring chosen from M
    assert BaselineSpec.of("ghazi", "kendall").encoding.bits == 40
    u = BaselineSpec.of("umpc", "kendall")
    assert (u.umpc.threat_model, u.umpc.edges, u.umpc.sampler) == ("dis", "2n", "balanced")
    for info in PROTOCOLS.values():
        spec = BaselineSpec.of(info.name, "auc" if info.kernels == "auc" else "kendall")
        assert set(spec.takes()) == set(UNIVERSAL) | {o.name for o in info.options}


@pytest.mark.parametrize("name, flat, err, msg", [
    ("bell-ldp", {"bins": 1}, ValueError, "bins must be >= 2"),
    ("bell-ldp", {"bins": 2.5}, TypeError, "bins must be an integer"),
    ("bell-auc", {"bins": 48}, ValueError, "bins must be a power of two"),
    ("bell-2pc", {"engine": "fss"}, ValueError, "engine must be 'gc' or 'plain'"),
    ("bell-2pc", {"pairs": 0}, ValueError, "pairs must be >= 1"),
    ("bell-2pc", {"pairs": "some"}, TypeError, "pairs must be a positive integer or 'all'"),
    ("bell-2pc", {"noise_bits": 4}, ValueError, "noise_bits must be in [8, 62]"),
    ("bell-2pc", {"pairs": "all", "delta": 2.0}, ValueError,
     "delta must be in (0, 1) for pairs='all'"),
    ("ghazi", {"aux_epsilon_fraction": 1.5}, ValueError, "aux_epsilon_fraction must be in (0, 1)"),
    ("ghazi", {"dim": 0}, ValueError, "dim must be >= 1"),
    ("ghazi", {"factorization": "svd"}, ValueError, "factorization must be 'jl' or 'exact'"),
    ("ghazi-sm", {"materialize_limit": -1}, ValueError, "materialize_limit must be >= 0"),
    ("ghazi", {"levels": "many"}, TypeError, "levels must be an int or a dict"),
    ("ghazi", {"levels": {0: 0}}, ValueError, "levels[0] must be >= 1"),
    ("fedauc-lap", {"mechanism": "cauchy"}, ValueError, "mechanism must be"),
    ("fedauc-lap", {"allocation": "fixed", "alpha": 1.0}, ValueError, "alpha must be in (0, 1)"),
    ("fedauc-lap", {"exact_counts": True}, ValueError, "exact_counts applies"),
    ("fedauc-lap", {"mechanism": "gaussian", "delta": 0.0}, ValueError, "delta must be in"),
    ("fedauc-rr", {"partition": "x"}, ValueError, "partition must be 'iid' or 'noniid'"),
    ("bell-ldp", {"epsilon": 0.0}, ValueError, "epsilon must be > 0"),
    ("bell-ldp", {"seed": 1.5}, TypeError, "seed must be an int, a str or None"),
    ("umpc", {"threat_model": "x"}, ValueError, "threat_model must be one of"),
    ("umpc", {"edges": "lots"}, ValueError, "edges must be like '2n'"),
])
def test_validation_names_the_field(name, flat, err, msg):
    kernel = "auc" if PROTOCOLS[name].kernels == "auc" else "kendall"
    with pytest.raises(err, match=msg.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        BaselineSpec.of(name, kernel, **flat)


def test_protocol_and_kernel_are_checked():
    with pytest.raises(ValueError, match="unknown protocol 'nope'; available: umpc, "):
        BaselineSpec.of("nope", "kendall")
    with pytest.raises(ValueError, match="degree-2 U-statistics only; kernel 'triples'"):
        BaselineSpec.of("ghazi", "triples")
    with pytest.raises(ValueError, match="computes only the AUC"):
        BaselineSpec.of("bell-auc", "gini")
    with pytest.raises(ValueError, match="unknown kernel 'nope'"):
        BaselineSpec.of("ghazi", "nope")
    with pytest.raises(TypeError, match="has no field 'colour'"):
        BaselineSpec.of("ghazi", "kendall", colour="red")
    with pytest.raises(TypeError, match="privacy must be a Privacy"):
        BaselineSpec("ghazi", "kendall", privacy={"epsilon": 1.0})


@pytest.mark.parametrize("name, flat, takers", [
    ("bell-ldp", {"pairs": 2}, "bell-2pc"),
    ("fedauc-rr", {"bins": 8}, "bell-ldp, bell-auc, ghazi, ghazi-sm, bell-2pc"),
    ("ghazi", {"edges": "3n"}, "no protocol"),         # U-MPC's: the umpc entry only
    ("bell-2pc", {"bits": 48}, "bell-ldp, bell-auc, ghazi, ghazi-sm, fedauc-rr, fedauc-lap"),
    ("bell-ldp", {"aux_epsilon_fraction": 0.2}, "ghazi, ghazi-sm, bell-2pc"),
    ("umpc", {"dim": 8}, "ghazi, ghazi-sm"),
    ("bell-auc", {"delta": 1e-6}, "fedauc-lap, bell-2pc"),
])
def test_an_option_of_one_protocol_is_refused_for_another(name, flat, takers):
    kernel = "auc" if PROTOCOLS[name].kernels == "auc" else "kendall"
    (field,) = flat
    with pytest.raises(ValueError, match=f"{field} does not apply to protocol '{name}' "
                                         fr"\(it applies to {takers}\)"):
        BaselineSpec.of(name, kernel, **flat)


@pytest.mark.parametrize("name, kernel, flat", [
    ("bell-ldp", "rand", {"bins": 8, "levels": {1: 3, 0: 4}, "seed": "s"}),
    ("bell-auc", "auc", {"bins": 16, "threshold": 3.5, "ties": "zero", "epsilon": math.inf}),
    ("ghazi", "auc", {"dim": 12, "sparsity": 2, "aux_epsilon_fraction": 0.2, "frac_bits": 12}),
    ("ghazi-sm", "gini", {"messages": 4, "materialize_limit": 0, "diag_epsilon_fraction": 0.3}),
    ("fedauc-rr", "auc", {"clients": 7, "partition": "noniid", "bits": 48}),
    ("fedauc-lap", "auc", {"mechanism": "gaussian", "delta": 1e-7, "allocation": "global",
                           "alpha": 0.25, "exact_counts": True, "grid_bits": 10}),
    ("bell-2pc", "kendall", {"pairs": "all", "delta": 1e-5, "engine": "plain",
                             "noise_bits": 24}),
    ("umpc", "kendall", {"threat_model": "hf", "edges": "all", "bounds": [(0, 10), (-1, 1)],
                         "noise_method": "polya", "bits": 48}),
])
def test_round_trip_through_json(name, kernel, flat):
    spec = BaselineSpec.of(name, kernel, **flat)
    d = json.loads(json.dumps(spec.to_dict()))
    again = BaselineSpec.from_dict(d)
    assert again == spec and again.to_dict() == spec.to_dict()
    assert d["protocol"] == name and d["kernel"] == kernel
    taken = set(spec.takes())
    assert all(f in taken for group in d.values() if isinstance(group, dict) for f in group)
    text = str(spec)
    assert text.startswith(f"BaselineSpec(protocol={name}, kernel={kernel})")
    assert all(f"{k}=" in text for k in flat if k != "epsilon")
    with pytest.raises(ValueError, match=r"BaselineSpec\.options: unknown field 'color'"):
        BaselineSpec.from_dict({**d, "options": {"color": 1}})


def test_levels_and_bounds_are_normalized():
    s = BaselineSpec.of("bell-ldp", "rand", levels={"1": 3, 0: 4})      # JSON's string keys
    assert s.encoding.levels == ((0, 4), (1, 3))
    assert BaselineSpec.of("bell-ldp", "rand", levels=5).encoding.levels == 5
    u = BaselineSpec.of("umpc", "kendall", bounds=[[0, 10], [-1, 1]])
    assert u.umpc.bounds == ((0.0, 10.0), (-1.0, 1.0))


def test_replace_and_the_umpc_conversion():
    s = BaselineSpec.of("bell-2pc", "kendall", bins=16)
    t = s.replace(pairs="all", delta=1e-5)
    assert t.options.pairs == "all" and t.encoding.bins == 16 and s.options.pairs == 1
    with pytest.raises(ValueError, match="does not apply to protocol 'bell-ldp'"):
        s.replace(protocol="bell-ldp")             # a resolved spec carries its defaults
    from ustat.baselines.umpc_protocol import umpc_spec

    u = BaselineSpec.of("umpc", "auc", epsilon=2.0, seed=3, threat_model="hf", bits=48,
                        aux_epsilon_fraction=0.3, edges="4n")
    assert umpc_spec(u) == UMPCSpec.of("auc", epsilon=2.0, seed=3, threat_model="hf", bits=48,
                                       aux_epsilon_fraction=0.3, edges="4n")


def test_a_protocol_registered_later_declares_its_options_to_the_spec():
    info = ProtocolInfo("test-spec-proto", lambda *a, **k: None, "d", "central", "t" * 50,
                        "auc", "p", options=(Option("grid_bits", 3, integer("grid_bits"), None,
                                                    "a grid"),))
    register(info)
    try:
        assert BaselineSpec.of("test-spec-proto", "auc").options.grid_bits == 3
        with pytest.raises(ValueError, match="grid_bits must be >= 1"):
            BaselineSpec.of("test-spec-proto", "auc", grid_bits=0)
        with pytest.raises(ValueError, match="bins does not apply to protocol 'test-spec-"):
            BaselineSpec.of("test-spec-proto", "auc", bins=4)
    finally:
        PROTOCOLS.pop("test-spec-proto")


def test_declarations_name_spec_fields_and_flags_of_the_parser():
    from ustat.cli import build_parser

    fields = BaselineSpec.flat_names()
    parser = build_parser()._subparsers._group_actions[0].choices["estimate"]
    cli = {s for a in parser._actions for s in a.option_strings}
    flag_of = {}
    for info in PROTOCOLS.values():
        names = [o.name for o in info.options]
        assert len(names) == len(set(names)) and not set(names) & set(UNIVERSAL)
        for opt in info.options:
            assert opt.name in fields and opt.help, (info.name, opt.name)
            if opt.flag is not None:
                assert opt.flag in cli and flag_of.setdefault(opt.name, opt.flag) == opt.flag


def test_the_run_records_the_spec_it_ran():
    X = correlated_pairs(40)
    from ustat.baselines import run_protocol

    spec = BaselineSpec.of("ghazi", "kendall", bins=4, seed=7, factorization="exact")
    res = run_protocol(X, spec)
    assert res.spec == spec.to_dict() and res.to_dict()["spec"] == spec.to_dict()
    assert run_protocol(X, BaselineSpec.from_dict(res.spec)).estimate == res.estimate
    with pytest.raises(TypeError, match=r"spec must be a ustat\.specs\.BaselineSpec"):
        run_protocol(X, UMPCSpec.of("kendall"))


def _public_functions(path):
    with open(path) as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                not node.name.startswith("_"):
            a = node.args
            count = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) \
                + bool(a.kwarg) - (1 if a.args and a.args[0].arg in ("self", "cls") else 0)
            yield node.name, count


MODULES = [os.path.join("ustat", "baselines", f) for f in
           sorted(os.listdir(os.path.join(REPO, "ustat", "baselines"))) if f.endswith(".py")]
MODULES += ["ustat/baselines/spec.py", "ustat/reports/baselines.py", "ustat/cli/protocols.py"]


@pytest.mark.parametrize("module", MODULES)
def test_no_public_function_takes_more_than_12_parameters_nor_probes_signatures(module):
    path = os.path.join(REPO, module)
    wide = [(name, n) for name, n in _public_functions(path) if n > 12]
    assert not wide, wide
    with open(path) as f:
        assert "inspect" not in f.read().replace("inspected", "")
