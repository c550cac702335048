"""UMPCSpec: validated once (errors name the field), grouped, printable, serializable."""

import math

import pytest

from ustat.kernels import Kernel, get
from ustat.specs import Design, Execution, Precision, Privacy, UMPCSpec


def test_flat_keywords_land_in_their_groups():
    s = UMPCSpec.of("kendall", epsilon=2.0, threat_model="hf", bits=48, edges="4n",
                    backend="gc", seed=3, confidence=0.9, committee_size=50)
    assert s.privacy == Privacy(epsilon=2.0, threat_model="hf", committee_size=50)
    assert s.precision == Precision(bits=48) and s.design == Design(edges="4n")
    assert s.execution == Execution(backend="gc", seed=3) and s.confidence == 0.9
    assert s.replace(epsilon=1.0).privacy.threat_model == "hf"
    assert s.replace(epsilon=1.0).privacy.epsilon == 1.0 and s.privacy.epsilon == 2.0
    with pytest.raises(TypeError, match="UMPCSpec has no field 'workers'"):
        UMPCSpec.of("kendall", workers=2)          # where a run executes is not in its spec


@pytest.mark.parametrize("flat,match", [
    ({"epsilon": 0}, "epsilon must be > 0"),
    ({"epsilon": "1"}, "epsilon must be a positive number"),
    ({"threat_model": "x"}, "threat_model must be one of"),
    ({"noise_method": "gauss"}, "noise_method must be 'mpc' or 'polya'"),
    ({"max_colluders": -1}, "max_colluders must be >= 0"),
    ({"committee_size": 0}, "committee_size must be >= 1"),
    ({"aux_epsilon_fraction": 1.0}, r"aux_epsilon_fraction must be in \(0, 1\)"),
    ({"bits": 40.0}, "bits must be an integer"),
    ({"resolution": -1}, "resolution must be a positive number"),
    ({"bounds": [(0, 1), (2, 1)]}, r"bounds\[1\] must be finite with hi > lo"),
    ({"bounds": [(0, 1)]}, r"bounds must give one \(lo, hi\) per column \(2\)"),
    ({"edges": "2x"}, "edges must be like '2n'"),
    ({"edges": 0}, "edges must be >= 1"),
    ({"sampler": "random"}, "sampler must be one of"),
    ({"backend": "he"}, "backend must be one of"),
    ({"chunk_size": 0}, "chunk_size must be a positive integer"),
    ({"seed": 1.5}, "seed must be an int, a str or None"),
    ({"confidence": 1}, r"confidence must be a level in \(0, 1\)"),
])
def test_every_field_is_checked_once_naming_it(flat, match):
    with pytest.raises((ValueError, TypeError), match=match):
        UMPCSpec.of("kendall", **flat)


def test_unknown_kernel_is_refused():
    with pytest.raises(ValueError, match="unknown kernel"):
        UMPCSpec.of("kendal")


def test_round_trip_through_plain_values():
    s = UMPCSpec.of("auc", epsilon=math.inf, bounds=[(0, 5000), None], edges=300,
                    max_colluders="all", seed="x", noise_method="polya")
    d = s.to_dict()
    assert d["kernel"] == "auc" and d["precision"]["bounds"] == [[0.0, 5000.0], None]
    assert UMPCSpec.from_dict(d) == s
    assert UMPCSpec.from_dict({"kernel": "auc"}) == UMPCSpec("auc")     # defaults fill in
    with pytest.raises(ValueError, match=r"UMPCSpec.privacy: unknown field 'eps'"):
        UMPCSpec.from_dict({"kernel": "auc", "privacy": {"eps": 1}})
    with pytest.raises(ValueError, match=r"where.privacy: epsilon must be > 0"):
        UMPCSpec.from_dict({"kernel": "auc", "privacy": {"epsilon": -1}}, "where")


def test_round_trip_through_deploy_toml(tmp_path):
    """deploy.toml stores a spec: the TOML writer and reader give the same spec back (a
    categorical column's bounds, None, written as [] since TOML has no null)."""
    from ustat.deploy.config import Job, _toml, dump

    s = UMPCSpec.of("auc", epsilon=1.5, bounds=[(0.25, 5000), None], committee_fail=1e-12,
                    threat_model="hf", seed=7)
    doc = {"deployment": {"name": "t", "session": 1}, "run": Job("estimate", s).to_dict(10),
           "participant": []}
    path = tmp_path / "d.toml"
    path.write_text(dump(doc))
    back = _toml().loads(path.read_text())["run"]
    assert back["command"] == "estimate" and back["parties"] == 10
    assert UMPCSpec.from_dict(back["spec"]) == s


def test_printable_one_line_per_group():
    text = str(UMPCSpec.of("gini", epsilon=0.5))
    lines = text.splitlines()
    assert lines[0] == "UMPCSpec(kernel=gini, confidence=0.95, tie_aware=False)"
    assert [ln.split(":")[0].strip() for ln in lines[1:]] == ["privacy", "precision", "design",
                                                             "execution"]
    assert "epsilon=0.5" in lines[1]


def test_a_custom_kernel_stays_an_object_and_serializes_by_name():
    k = Kernel("near", 2, 1, get("gini").plain, get("gini").secure, (0.0, 1.0), "test")
    s = UMPCSpec.of(k, epsilon=1.0)
    assert s.kernel is k and s.kern is k and s.to_dict()["kernel"] == "near"
    assert UMPCSpec.of(get("gini")).kernel == "gini"      # a registered one: by its name
