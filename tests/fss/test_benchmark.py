import contextlib
import importlib.util
import io
import json
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_benchmark_quick_json_smoke():
    spec = importlib.util.spec_from_file_location("bench_fss",
                                                  os.path.join(REPO, "benchmarks", "fss.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        assert mod.main(["--json", "--quick", "--batch-log2", "7", "--repeat", "1"]) == 0
    out = json.loads(buf.getvalue())
    for k in ("dcf_keygen_per_s", "dcf_eval_per_s", "sycret_keygen_per_s", "sycret_eval_per_s",
              "keygen_ratio", "eval_ratio", "dcf_key_bits", "lt_gate_per_s",
              "lt_gate_online_bits_per_party", "keygen_ratio_serialized", "eval_ratio_serialized",
              "eval_ratio_batch1", "eval_ratio_batch64", "aes_ecb_blocks_per_s",
              "dcf_eval_aes_bound_share", "dcf_keygen_aes_bound_share", "dcf_eval_workers_speedup",
              "dcf_keygen_workers_speedup", "dcf_eval_cold_per_s", "dcf_keygen_cold_per_s",
              "fss_kernels", "load_avg_start", "load_avg_end"):
        assert k in out
    assert out["dcf_correct"] and out["lt_gate_correct"]
    assert out["lt_gate_online_bits_per_party"] == 40 and out["lt_gate_online_rounds"] == 1
    assert out["dcf_key_bits"] == 128 + 32 * (130 + 40) + 40
    assert out["lt_gate_key_bits"] == 6800
    assert out["lt_gate_offline_bits_per_instance"] == 2 * 6800 + 4 * 40
    assert out["dcf_eval_aes_bound_share"] > 0 and out["dcf_keygen_aes_bound_share"] > 0
    if out["fss_kernels"] != "numpy":            # the numpy peer is measured in the same run
        assert out["dcf_keygen_numpy_per_s"] > 0 and out["dcf_eval_speedup_vs_numpy"] > 0
