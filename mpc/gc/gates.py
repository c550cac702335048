"""Gate and party codes of boolean circuits (:mod:`mpc.gc.circuit`, :mod:`mpc.gc.schedule`)."""

XOR, AND, INV, EQW, EQ = 0, 1, 2, 3, 4
GATE_NAMES = ("XOR", "AND", "INV", "EQW", "EQ")
GATE_CODES = {name: code for code, name in enumerate(GATE_NAMES)}
GARBLER, EVALUATOR = 0, 1
PARTY_NAMES = {GARBLER: "garbler", EVALUATOR: "evaluator"}
