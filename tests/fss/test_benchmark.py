import contextlib
import importlib.util
import io
import json
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_benchmark_quick_json_smoke():
    spec = importlib.util.spec_from_file_location("bench_fss", os.path.join(REPO, "benchmarks", "fss.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        assert mod.main(["--json", "--quick", "--batch-log2", "6"]) == 0
    out = json.loads(buf.getvalue())
    for k in ("dcf_keygen_per_s", "dcf_eval_per_s", "sycret_keygen_per_s", "sycret_eval_per_s",
              "keygen_ratio", "eval_ratio", "dcf_key_bits", "lt_gate_per_s",
              "lt_gate_online_bits_per_party"):
        assert k in out
    assert out["dcf_correct"] and out["lt_gate_correct"]
    assert out["lt_gate_online_bits_per_party"] == 40 and out["lt_gate_online_rounds"] == 1
    assert out["dcf_key_bits"] == 128 + 32 * (130 + 40) + 40
