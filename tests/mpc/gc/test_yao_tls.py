"""Yao on the AES-128 Bristol circuit between two processes over TLS 1.3, against pycryptodome."""

import os

import numpy as np
import pytest

pytest.importorskip("cryptography")

from Crypto.Cipher import AES

from mpc.gc import bits_to_bytes, bytes_to_bits, read_bristol
from mpc.gc.yao import yao
from mpc.run.launch import launch
from mpc.session import Session

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
AES_PATH = os.path.join(ROOT, "..", "shared", "data", "circuits", "aes_128.txt")


def _aes(rt, path, keys, blocks):
    """Party 0 (garbler) holds the keys, party 1 (evaluator) the blocks; 1 learns the
    ciphertexts."""
    circuit = read_bristol(path)
    s = Session(2, runtime=rt)
    n = len(keys)
    res = yao(s, circuit, garblers=np.zeros(n, int), evaluators=np.ones(n, int),
              garbler_inputs=[bytes_to_bits(keys)], evaluator_inputs=[bytes_to_bits(blocks)],
              output="evaluator")
    if not s.is_local(1):
        return None
    return bits_to_bytes(res.evaluator[0])


def test_aes_128_by_yao_between_two_tls_processes_is_pycryptodomes():
    if not os.path.exists(AES_PATH):
        pytest.skip("../shared/data/circuits/aes_128.txt is absent")
    rng = np.random.default_rng(27)
    keys = rng.integers(0, 256, size=(4, 16), dtype=np.uint8)
    blocks = rng.integers(0, 256, size=(4, 16), dtype=np.uint8)
    # two processes; Yao uses no dealer (OT), the session's roles only need a place
    res = launch(_aes, AES_PATH, keys, blocks, groups=[[0, "dealer"], [1, "aggregator"]],
                 tls=True, timeout=30)
    got = res[1].value
    for i in range(4):
        want = AES.new(keys[i].tobytes(), AES.MODE_ECB).encrypt(blocks[i].tobytes())
        assert got[i].tobytes() == want
    assert res[0].value is None
    w = res[0].wire
    assert w["tls"] and w["tcp_bytes_sent"] >= w["payload_bytes_sent"] > 0
