"""The ECDF family's specs (ustat.specs.ecdf): validated once, each error naming its field;
flat keywords sorted into groups; to_dict / from_dict and TOML (deploy.toml) round trips; the
spec a release records rebuilds the release; the flags of the commands build the same spec."""

import json
import math

import numpy as np
import pytest

from ustat.specs import (
    ECDFDesign,
    ECDFExecution,
    ECDFPrecision,
    ECDFPrivacy,
    ECDFSpec,
    HLSpec,
    QuantileSpec,
    ROCSpec,
)
from ustat.specs.ecdf import MAX_AUC_HALFWIDTH, MAX_DETECTABLE, MAX_QUANTILE_HALFWIDTH

TAU = (0.0, 0.25, 0.5, 1.0)


def test_flat_keywords_go_to_their_groups():
    s = ECDFSpec.of(thresholds=78, bounds=(18, 95), epsilon=0.5, noise_mode="split",
                    branching="auto", backend="pointwise", servers=3, seed="s", smooth="l2",
                    confidence=0.9)
    assert s.privacy == ECDFPrivacy(0.5, "split", "exact")
    assert s.precision == ECDFPrecision(32, (18.0, 95.0), False)
    assert s.design == ECDFDesign(78, "regular", "auto")
    assert s.execution == ECDFExecution("pointwise", 3, "s")
    assert (s.smooth, s.confidence, s.epsilon, s.seed) == ("l2", 0.9, 0.5, "s")
    assert s.replace(epsilon=2.0).privacy.epsilon == 2.0 and s.privacy.epsilon == 0.5
    q = QuantileSpec.of([0.25, 0.5], thresholds=np.linspace(0, 1, 5))
    assert q.q == (0.25, 0.5) and q.design.thresholds == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert q.max_halfwidth == MAX_QUANTILE_HALFWIDTH
    assert ROCSpec.of(thresholds=TAU).max_auc_halfwidth == MAX_AUC_HALFWIDTH
    h = HLSpec.of(groups=5, n_thresholds=64, epsilon=2.0)
    assert (h.design.groups, h.design.n_thresholds, h.precision.bits) == (5, 64, 48)
    assert h.max_detectable == MAX_DETECTABLE and h.null == "calibrated"
    assert ROCSpec.of(thresholds=TAU, max_auc_halfwidth=None).max_auc_halfwidth == math.inf
    with pytest.raises(TypeError, match="has no field 'n_thresholds'"):
        ECDFSpec.of(thresholds=TAU, n_thresholds=8)


@pytest.mark.parametrize("kind,fields,error,message", [
    (ECDFSpec, dict(thresholds=TAU, epsilon=0), ValueError, "epsilon must be > 0"),
    (ECDFSpec, dict(thresholds=TAU, epsilon="1"), TypeError, "epsilon must be a positive"),
    (ECDFSpec, dict(thresholds=TAU, noise_mode="central"), ValueError, "noise_mode must be"),
    (ECDFSpec, dict(thresholds=TAU, sensitivity="loose"), ValueError, "sensitivity must be"),
    (ECDFSpec, dict(thresholds=TAU, bits=65), ValueError, "bits must be in 2..64"),
    (ECDFSpec, dict(thresholds=TAU, bounds=(1, 0)), ValueError, "bounds must be finite"),
    (ECDFSpec, dict(thresholds=TAU, clip=True), ValueError, "clip clips the values"),
    (ECDFSpec, dict(thresholds=0, bounds=(0, 1)), ValueError, "thresholds must be >= 1"),
    (ECDFSpec, dict(thresholds=[0.5, 0.2]), ValueError, "thresholds must be sorted"),
    (ECDFSpec, dict(thresholds=[0.2, 0.2]), ValueError, "thresholds must be distinct"),
    (ECDFSpec, dict(thresholds=[]), ValueError, "thresholds: N = 0"),
    (ECDFSpec, dict(thresholds=[0.5, 2.0], bounds=(0, 1)), ValueError,
     "thresholds: threshold 2 .* outside the public bounds"),
    (ECDFSpec, dict(thresholds=16), ValueError, "thresholds: 16 thresholds are placed within"),
    (ECDFSpec, dict(thresholds=TAU, grid="geometric"), ValueError, "grid 'geometric' places"),
    (ECDFSpec, dict(thresholds=8, bounds=(0, 1), grid="geometric"), ValueError,
     "grid 'geometric' needs a positive lower bound"),
    (ECDFSpec, dict(thresholds=TAU, branching=1), ValueError, "branching must be in 2..64"),
    (ECDFSpec, dict(thresholds=TAU, branching="3"), TypeError, "branching must be an integer"),
    (ECDFSpec, dict(thresholds=TAU, branching=3, sensitivity="paper"), ValueError,
     "sensitivity 'paper'"),
    (ECDFSpec, dict(thresholds=TAU, backend="cloud"), ValueError, "backend must be one of"),
    (ECDFSpec, dict(thresholds=TAU, servers=3), ValueError, "servers: backend 'fss' needs"),
    (ECDFSpec, dict(thresholds=TAU, servers=1, backend="pointwise"), ValueError,
     "servers must be in 2..64"),
    (ECDFSpec, dict(thresholds=TAU, backend="central", noise_mode="split"), ValueError,
     "noise_mode applies to backend"),
    (ECDFSpec, dict(thresholds=TAU, seed=1.5), TypeError, "seed must be an int, a str"),
    (ECDFSpec, dict(thresholds=TAU, smooth="l3"), ValueError, "smooth must be one of"),
    (ECDFSpec, dict(thresholds=TAU, confidence=1.0), ValueError, "confidence must be a level"),
    (QuantileSpec, dict(q=[0.5, 1.5], thresholds=TAU), ValueError, r"q: level 1.5 is not in"),
    (QuantileSpec, dict(q=[], thresholds=TAU), ValueError, "q: give at least one"),
    (QuantileSpec, dict(q=[0.5], thresholds=TAU, max_halfwidth=0), ValueError,
     "max_halfwidth must be a positive"),
    (ROCSpec, dict(thresholds=TAU, max_auc_halfwidth=-1), ValueError,
     "max_auc_halfwidth must be a positive"),
    (HLSpec, dict(groups=2), ValueError, "groups must be in 3..1024"),
    (HLSpec, dict(groups=20, n_thresholds=16), ValueError, "groups must be in 3..16"),
    (HLSpec, dict(groups=4.0), TypeError, "groups must be an integer"),
    (HLSpec, dict(n_thresholds=0), ValueError, "n_thresholds must be >= 1"),
    (HLSpec, dict(null="any"), ValueError, "null must be one of"),
    (HLSpec, dict(max_detectable=0.0), ValueError, "max_detectable must be a positive"),
    (HLSpec, dict(backend="central", noise_mode="mpc"), ValueError, "noise_mode applies"),
])
def test_every_mistake_names_its_field(kind, fields, error, message):
    fields = dict(fields)
    top = (fields.pop("q"),) if "q" in fields else ()
    with pytest.raises(error, match=message):
        kind.of(*top, **fields)


SPECS = [
    ECDFSpec.of(thresholds=78, bounds=(18, 95), epsilon=1.0, seed="golden"),
    ECDFSpec.of(thresholds=np.linspace(0, 1, 7), epsilon=math.inf, backend="pointwise",
                servers=3, noise_mode="mpc", branching="auto", smooth="l1", seed=7),
    ECDFSpec.of(thresholds=16, bounds=(1, 100), grid="geometric", clip=True, bits=40,
                backend="central", sensitivity="paper", confidence=0.8),
    QuantileSpec.of([0.1, 0.5, 0.9], thresholds=1024, bounds=(-8019, 102127), seed="s"),
    QuantileSpec.of([0.5], thresholds=TAU, max_halfwidth=None, smooth="isotonic"),
    ROCSpec.of(thresholds=64, bounds=(0, 5000), epsilon=2.0, noise_mode="split"),
    ROCSpec.of(thresholds=TAU, max_auc_halfwidth=math.inf),
    HLSpec.of(groups=5, n_thresholds=64, epsilon=20.0, seed=6, null="fitted"),
    HLSpec.of(max_detectable=None, sensitivity="paper", backend="central"),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: type(s).__name__)
def test_to_dict_from_dict_and_json_round_trips(spec):
    d = spec.to_dict()
    assert type(spec).from_dict(d) == spec
    assert type(spec).from_dict(json.loads(json.dumps(d))) == spec     # a report's spec field
    assert str(spec).startswith(type(spec).__name__)
    with pytest.raises(ValueError, match="unknown field 'colour'"):
        type(spec).from_dict(dict(d, colour=1))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: type(s).__name__)
def test_toml_round_trip_through_deploy_toml(tmp_path, spec):
    """deploy.toml's [run.spec] is what to_dict writes (None values left out, inf as TOML's
    inf); the configuration gives back the same spec."""
    from ustat.deploy import Job, load
    from ustat.deploy.config import dump

    command = {ECDFSpec: "ecdf", QuantileSpec: "quantile", ROCSpec: "roc",
               HLSpec: "hl"}[type(spec)]
    doc = {"deployment": {"name": "t", "session": 1},
           "run": Job(command, spec, {"columns": "x" if command in ("ecdf", "quantile")
                                      else "x,y"}).to_dict(4),
           "participant": [{"name": "host-0", "role": "parties", "parties": "0-3",
                            "address": "127.0.0.1:7000"},
                           {"name": "analyst", "role": "analyst",
                            "address": "127.0.0.1:7001"}]}
    (tmp_path / "deploy.toml").write_text(dump(doc))
    cfg = load(str(tmp_path))
    assert cfg.command == command and "args" not in cfg.run
    assert cfg.spec() == spec


def test_a_bad_stored_spec_is_named_with_the_file(tmp_path):
    from ustat.deploy.config import Config

    cfg = Config("dep/deploy.toml", "t", 1, {"command": "roc", "spec": {"design": {
        "thresholds": [0.5, 0.2]}}}, [])
    with pytest.raises(ValueError, match=r"dep/deploy.toml: \[run.spec\].design: thresholds "
                                         "must be sorted"):
        cfg.spec()


def test_a_release_records_the_spec_it_ran():
    from ustat.ecdf import private_hosmer_lemeshow, private_quantiles, private_roc, release

    g = np.random.default_rng(3)
    x = g.random(200)
    y = (g.random(200) < x).astype(int)
    e = ECDFSpec.of(thresholds=16, bounds=(0, 1), epsilon=2.0, seed=1)
    rel = release(x, e)
    assert ECDFSpec.from_dict(rel.spec) == e
    again = release(x, ECDFSpec.from_dict(rel.spec))
    assert np.array_equal(again.counts, rel.counts)                 # the spec rebuilds it
    q = QuantileSpec.of([0.5], thresholds=16, bounds=(0, 1), epsilon=8.0, seed=1)
    assert QuantileSpec.from_dict(private_quantiles(x, q).spec) == q
    r = ROCSpec.of(thresholds=16, bounds=(0, 1), epsilon=8.0, seed=1)
    assert ROCSpec.from_dict(private_roc(x, y, r).spec) == r
    h = HLSpec.of(groups=4, n_thresholds=32, epsilon=20.0, seed=1)
    assert HLSpec.from_dict(private_hosmer_lemeshow(x, y, h).spec) == h


def test_the_api_refuses_a_spec_of_another_statistic():
    from ustat.ecdf import private_hosmer_lemeshow, private_roc, release

    x = np.linspace(0, 1, 50)
    with pytest.raises(TypeError, match=r"spec must be a ustat\.specs\.ECDFSpec"):
        release(x, HLSpec())
    with pytest.raises(TypeError, match=r"spec must be a ustat\.specs\.ROCSpec"):
        private_roc(x, np.zeros(50, int), ECDFSpec.of(thresholds=TAU))
    with pytest.raises(TypeError, match=r"spec must be a ustat\.specs\.HLSpec"):
        private_hosmer_lemeshow(x, np.zeros(50, int), ROCSpec.of(thresholds=TAU))


@pytest.mark.parametrize("argv,kind,want", [
    (["ecdf", "--n", "50", "--thresholds", "16", "--noise", "split", "--branching", "auto",
      "--smooth", "isotonic", "--seed", "3", "--confidence", "0.9"], ECDFSpec,
     dict(thresholds=16, bounds=(0.0, 1.0), noise_mode="split", branching="auto",
          smooth="isotonic", seed="3", confidence=0.9)),
    (["quantile", "--n", "500", "--thresholds", "8", "--q", "0.5", "--epsilon", "4",
      "--backend", "pointwise", "--servers", "3"], QuantileSpec,
     dict(thresholds=8, bounds=(0.0, 1.0), epsilon=4.0, backend="pointwise", servers=3,
          noise_mode="each")),
])
def test_the_json_spec_is_the_spec_the_flags_build(capsys, argv, kind, want):
    from ustat.cli import main

    assert main(argv + ["--json", "--no-progress"]) == 0
    out = json.loads(capsys.readouterr().out)
    spec = kind.from_dict(out["spec"])
    top = (tuple(float(v) for v in out["q"]),) if kind is QuantileSpec else ()
    assert spec == kind.of(*top, **want)


def test_the_commands_report_spec_mistakes_under_their_flags(capsys):
    from ustat.cli import main

    assert main(["ecdf", "--n", "50", "--thresholds", "8", "--bounds", "0:1", "--grid",
                 "geometric", "--no-progress"]) == 2
    assert "--grid: grid 'geometric' needs a positive lower bound" in capsys.readouterr().err
    assert main(["hl", "--csv", "x.csv", "--prob", "p", "--label", "y", "--groups", "2",
                 "--no-progress"]) == 2
    assert "No such file" in capsys.readouterr().err           # the data first, as before
