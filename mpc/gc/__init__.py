"""Garbled-circuit two-party computation with oblivious transfer (dealer-free).

Modules, bottom up (each imports only those before it):
``gates`` (gate and party codes) -> ``schedule`` (vectorized evaluation order)
-> ``circuit`` (immutable circuits)
-> ``encoding`` (bits <-> ints/bytes) -> ``plain`` (plaintext evaluator, the
test oracle) -> ``bristol`` (Bristol Fashion / old Bristol files) ->
``builder`` (integer circuits with few ANDs) -> ``blocks`` (instance blocks
and their threads) -> ``garble`` (half-gates with free-XOR, fixed-key AES TCCR
hash) -> ``local`` (garbling / evaluating the instances of this process) ->
``yao`` (Yao's protocol, in one process or several, with the oblivious
transfer of :mod:`mpc.ot`) -> ``provider`` (:class:`GarbledCircuits`: Yao as a
comparison provider of secure values, given to a session).
See ``docs/internals/gc.md``.
"""

from mpc.gc.bristol import (
    format_bristol,
    parse_bristol,
    parse_bristol_old,
    read_bristol,
    read_bristol_old,
    write_bristol,
)
from mpc.gc.builder import CircuitBuilder, Word
from mpc.gc.circuit import Circuit
from mpc.gc.encoding import bits_to_bytes, bits_to_int, bytes_to_bits, int_to_bits
from mpc.gc.garble import GarbledCircuit, GarblerKeys, decode, evaluate_garbled, random_delta
from mpc.gc.gates import AND, EQ, EQW, EVALUATOR, GARBLER, INV, XOR
from mpc.gc.plain import evaluate
from mpc.gc.provider import GarbledCircuits
from mpc.gc.yao import OUTPUT_MODES, YaoResult, additive_circuit

# The functions ``garble.garble`` and ``yao.yao`` are not re-exported: their
# names are those of their modules (``from mpc.gc.garble import garble``,
# ``from mpc.gc.yao import yao``).

__all__ = [
    "AND", "EQ", "EQW", "EVALUATOR", "GARBLER", "INV", "OUTPUT_MODES", "XOR", "Circuit",
    "CircuitBuilder", "GarbledCircuit", "GarbledCircuits", "GarblerKeys", "Word", "YaoResult",
    "additive_circuit", "bits_to_bytes", "bits_to_int", "bytes_to_bits", "decode", "evaluate",
    "evaluate_garbled", "format_bristol", "int_to_bits", "parse_bristol", "parse_bristol_old",
    "random_delta", "read_bristol", "read_bristol_old", "write_bristol",
]
