"""AES-128 by two-party computation: party 0 holds the key, party 1 the plaintext.

Yao's protocol with half-gates garbling and correlated OT on the simulated
network (semi-honest, no dealer). Party 1 learns the ciphertext; party 0
learns nothing. Prints the result and the communication report.
Needs ../shared/data/circuits/aes_128.txt (Bristol Fashion; README, "The examples").
"""

import time

import _paths

from mpc.gc import bits_to_bytes, bytes_to_bits, read_bristol
from mpc.gc.yao import yao
from mpc.session import Session

aes = read_bristol(_paths.need(_paths.AES))  # input 0 (key): garbler, input 1 (block): evaluator
key = bytes.fromhex("000102030405060708090a0b0c0d0e0f")      # party 0's secret
block = bytes.fromhex("00112233445566778899aabbccddeeff")    # party 1's secret

session = Session(2)
t = time.perf_counter()
res = yao(session, aes, garblers=[0], evaluators=[1],
          garbler_inputs=[bytes_to_bits(key)], evaluator_inputs=[bytes_to_bits(block)],
          output="evaluator")
elapsed = time.perf_counter() - t
ct = bits_to_bytes(res.evaluator[0])[0].tobytes()
print(f"ciphertext (party 1): {ct.hex()}   (FIPS-197: 69c4e0d86a7b0430d8cdb78070b4c55a)")
print(f"{aes.n_and} AND gates, end to end {elapsed * 1000:.0f} ms (OT included)")
m = res.costs["measured"]
print(f"offline: {m['offline']['bits'] / 8e3:.1f} kB in {m['offline']['rounds']} rounds "
      f"(garbled tables {res.costs['per_instance']['tables'] / 8e3:.1f} kB, "
      f"OT {m['ot']['bits'] / 8e3:.1f} kB)")
print(f"online:  {m['online']['bits'] / 8e3:.1f} kB in {m['online']['rounds']} rounds "
      f"(128 garbler labels, 128 evaluator labels by OT)")
print("network report:", session.net.report()["phases"]["yao"])
