"""Bristol Fashion circuit files (read and write) and the old Bristol format (read).

Bristol Fashion (SCALE-MAMBA / MP-SPDZ, ``nigelsmart.github.io/MPC.html``)::

    <ngates> <nwires>
    <niv> <bits_1> ... <bits_niv>
    <nov> <bits_1> ... <bits_nov>

    2 1 <a> <b> <out> XOR|AND
    1 1 <a> <out> INV|EQW
    1 1 <0|1> <out> EQ
    2m m <a_1..a_m> <b_1..b_m> <out_1..out_m> MAND

Inputs are wires ``0 .. sum(bits_in)-1`` in group order, outputs the last
``sum(bits_out)`` wires; within a group wire ``i`` is bit ``i`` (LSB first).
Blank lines are skipped. The old Bristol format (Tillich-Smart) has the
header ``<ngates> <nwires>`` / ``<n1> <n2> <nout>``, two input groups and one
output group, and the same gate lines.

Malformed files raise ``ValueError`` naming the line: wrong header or gate
counts, a wire count more than twice what the inputs and gates can set
(checked before anything of that size is allocated), unknown gate, wrong
arity, non-integer fields, wire out of range, a wire used before it is set
or never set, cycles, duplicate assignment.
Files with two input groups get ``input_parties = (GARBLER, EVALUATOR)``
(first group the garbler's); otherwise parties are left unassigned.
"""

from __future__ import annotations

import os

import numpy as np

from mpc.gc.circuit import Circuit, CircuitError
from mpc.gc.gates import AND, EQ, EQW, EVALUATOR, GARBLER, GATE_CODES, GATE_NAMES, INV, XOR

_ARITY = {XOR: (2, 1), AND: (2, 1), INV: (1, 1), EQW: (1, 1), EQ: (1, 1)}


def read_bristol(path: str | os.PathLike[str]) -> Circuit:
    """Read a Bristol Fashion file (name taken from the file name)."""
    with open(path, encoding="ascii") as f:
        text = f.read()
    return parse_bristol(text, name=os.path.splitext(os.path.basename(path))[0])


def read_bristol_old(path: str | os.PathLike[str]) -> Circuit:
    """Read an old-format Bristol file (two inputs, one output)."""
    with open(path, encoding="ascii") as f:
        text = f.read()
    return parse_bristol_old(text, name=os.path.splitext(os.path.basename(path))[0])


def _lines(text: str):
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    split = (line.split() for line in text.splitlines())
    return [(i + 1, t) for i, t in enumerate(split) if t]


def _ints(tokens, lineno, what):
    try:
        vals = [int(t) for t in tokens]
    except ValueError:
        raise ValueError(f"line {lineno}: {what} must be integers, got {' '.join(tokens)!r}") \
            from None
    if any(v < 0 for v in vals):
        raise ValueError(f"line {lineno}: {what} must be non-negative, got {' '.join(tokens)!r}")
    return vals


def _header_counts(lines, pos, what):
    if pos >= len(lines):
        raise ValueError(f"line {lines[-1][0] if lines else 1}: missing the {what} line")
    lineno, toks = lines[pos]
    vals = _ints(toks, lineno, what)
    if not vals or len(vals) != vals[0] + 1:
        raise ValueError(f"line {lineno}: {what} line must be '<count> <bits_1> ... <bits_count>'"
                         f", got {' '.join(toks)!r}")
    if any(v == 0 for v in vals[1:]):
        raise ValueError(f"line {lineno}: {what} widths must be positive")
    return vals[1:]


def parse_bristol(text: str, name: str = "") -> Circuit:
    """Parse Bristol Fashion text (see the module docstring)."""
    lines = _lines(text)
    if not lines:
        raise ValueError("line 1: empty circuit file")
    lineno, toks = lines[0]
    head = _ints(toks, lineno, "header '<ngates> <nwires>'")
    if len(head) != 2:
        raise ValueError(f"line {lineno}: header must be '<ngates> <nwires>', "
                         f"got {' '.join(toks)!r}")
    ngates, nwires = head
    in_bits = _header_counts(lines, 1, "input")
    out_bits = _header_counts(lines, 2, "output")
    n_in, n_out = sum(in_bits), sum(out_bits)
    if n_in + n_out > nwires:
        raise ValueError(f"line {lines[2][0]}: {n_in} input and {n_out} output wires do not fit "
                         f"in {nwires} wires")
    gates, line_of = _parse_gates(lines[3:], ngates)
    _check_wire_count(nwires, n_in, gates, lineno)
    inputs = np.split(np.arange(n_in), np.cumsum(in_bits)[:-1])
    outputs = np.split(np.arange(nwires - n_out, nwires), np.cumsum(out_bits)[:-1])
    parties = (GARBLER, EVALUATOR) if len(in_bits) == 2 else None
    return _build(nwires, gates, line_of, inputs, outputs, parties, name, lines[2][0])


def parse_bristol_old(text: str, name: str = "") -> Circuit:
    """Parse old-format Bristol text (``<ngates> <nwires>`` / ``<n1> <n2> <nout>``)."""
    lines = _lines(text)
    if len(lines) < 2:
        raise ValueError(f"line {len(lines) + 1}: old Bristol format needs two header lines")
    (l1, t1), (l2, t2) = lines[0], lines[1]
    head = _ints(t1, l1, "header '<ngates> <nwires>'")
    if len(head) != 2:
        raise ValueError(f"line {l1}: header must be '<ngates> <nwires>', got {' '.join(t1)!r}")
    sizes = _ints(t2, l2, "header '<n1> <n2> <nout>'")
    if len(sizes) != 3 or min(sizes) == 0:
        raise ValueError(f"line {l2}: header must be '<n1> <n2> <nout>' (positive), "
                         f"got {' '.join(t2)!r}")
    ngates, nwires = head
    n1, n2, nout = sizes
    if n1 + n2 + nout > nwires:
        raise ValueError(f"line {l2}: {n1 + n2} input and {nout} output wires do not fit in "
                         f"{nwires} wires")
    gates, line_of = _parse_gates(lines[2:], ngates)
    _check_wire_count(nwires, n1 + n2, gates, l1)
    inputs = (np.arange(n1), np.arange(n1, n1 + n2))
    outputs = (np.arange(nwires - nout, nwires),)
    return _build(nwires, gates, line_of, inputs, outputs, (GARBLER, EVALUATOR), name, l2)


def _check_wire_count(nwires, n_in, gates, lineno):
    """Refuse a wire count the file cannot back before anything of that size is allocated.

    Every wire is set by an input or a gate output; a few unused wires are tolerated (as
    before), but a header claiming more than twice the wires the file can set (10^12 wires
    for a handful of gates) is an error, not a MemoryError.
    """
    settable = n_in + len(gates[3])
    if nwires > 2 * settable:
        raise ValueError(f"line {lineno}: header says {nwires} wires, but the {n_in} input "
                         f"wires and {len(gates[3])} gate outputs set at most {settable}")


def _parse_gates(lines, ngates):
    """Gate lines -> (ops, in0, in1, out) lists and the line number of each gate."""
    if len(lines) != ngates:
        where = lines[ngates][0] if len(lines) > ngates else (lines[-1][0] if lines else 3)
        raise ValueError(f"line {where}: header says {ngates} gates, file has {len(lines)} "
                         f"gate lines")
    ops, in0, in1, out, line_of = [], [], [], [], []
    binary = {"XOR": XOR, "AND": AND}
    for lineno, t in lines:
        if len(t) == 6 and t[5] in binary and t[0] == "2" and t[1] == "1":
            try:
                a, b, o = int(t[2]), int(t[3]), int(t[4])
            except ValueError:
                _ints(t[2:5], lineno, "wire numbers")   # raises with the line
            ops.append(binary[t[5]])
            in0.append(a)
            in1.append(b)
            out.append(o)
            line_of.append(lineno)
            continue
        _parse_other(t, lineno, ops, in0, in1, out, line_of)
    return (ops, in0, in1, out), line_of


def _parse_other(t, lineno, ops, in0, in1, out, line_of):
    if len(t) < 4:
        raise ValueError(f"line {lineno}: gate line too short: {' '.join(t)!r}")
    kind = t[-1]
    nin, nout = _ints(t[:2], lineno, "gate input/output counts")
    if len(t) != 3 + nin + nout:
        raise ValueError(f"line {lineno}: gate line must have {nin} inputs and {nout} outputs "
                         f"then a gate name, got {' '.join(t)!r}")
    wires = _ints(t[2:-1], lineno, "wire numbers")
    if kind == "MAND":
        if nin != 2 * nout or nout == 0:
            raise ValueError(f"line {lineno}: MAND needs 2m inputs and m outputs, got {nin} {nout}")
        m = nout
        ops.extend([AND] * m), in0.extend(wires[:m]), in1.extend(wires[m:2 * m])
        out.extend(wires[2 * m:]), line_of.extend([lineno] * m)
        return
    if kind not in GATE_CODES:
        raise ValueError(f"line {lineno}: unknown gate {kind!r} (known: "
                         f"{', '.join(GATE_NAMES)}, MAND)")
    code = GATE_CODES[kind]
    if (nin, nout) != _ARITY[code]:
        raise ValueError(f"line {lineno}: {kind} takes {_ARITY[code][0]} input(s) and 1 output, "
                         f"got {nin} {nout}")
    ops.append(code), in0.append(wires[0]), out.append(wires[-1]), line_of.append(lineno)
    in1.append(wires[1] if nin == 2 else -1)


def _build(nwires, gates, line_of, inputs, outputs, parties, name, header_line):
    ops, in0, in1, out = gates
    try:
        return Circuit(nwires, ops, in0, in1, out, inputs, outputs, parties, name)
    except CircuitError as e:
        where = line_of[e.gate] if e.gate is not None else header_line
        msg = str(e).split(": ", 1)[1] if e.gate is not None else str(e)
        raise ValueError(f"line {where}: {msg}") from None


def format_bristol(c: Circuit) -> str:
    """Bristol Fashion text for ``c`` (wires renumbered: inputs first, outputs last).

    An output wire that is also an input, repeats another output, or is set
    by an ``EQ``/``EQW`` chain is copied to its output position with ``EQW``.
    """
    in_wires = np.concatenate(c.inputs) if c.inputs else np.zeros(0, np.int64)
    out_wires = np.concatenate(c.outputs) if c.outputs else np.zeros(0, np.int64)
    n_in, n_out, g = in_wires.size, out_wires.size, c.n_gates
    # outputs produced directly by a gate (first occurrence only) keep that gate
    first = np.zeros(out_wires.size, dtype=bool)
    if out_wires.size:
        _, idx = np.unique(out_wires, return_index=True)
        first[idx] = True
    setter = np.full(c.n_wires, -1, dtype=np.int64)
    setter[c.out] = np.arange(g)
    direct = first & (setter[out_wires] >= 0)
    n_copies = int((~direct).sum())
    n_internal = g - int(direct.sum())
    total = n_in + n_internal + n_out
    new = np.full(c.n_wires, -1, dtype=np.int64)
    new[in_wires] = np.arange(n_in)
    out_pos = total - n_out + np.arange(n_out)
    new[out_wires[direct]] = out_pos[direct]
    internal = np.setdiff1d(c.out, out_wires[direct], assume_unique=True)
    internal = np.sort(internal)
    new[internal] = n_in + np.arange(internal.size)
    lines = [f"{g + n_copies} {total}",
             " ".join([str(len(c.inputs))] + [str(x) for x in c.input_widths]) + " ",
             " ".join([str(len(c.outputs))] + [str(x) for x in c.output_widths]) + " ", ""]
    for op, a, b, o in zip(c.ops.tolist(), c.in0.tolist(), c.in1.tolist(), c.out.tolist()):
        if op in (XOR, AND):
            lines.append(f"2 1 {new[a]} {new[b]} {new[o]} {GATE_NAMES[op]}")
        elif op == EQ:
            lines.append(f"1 1 {a} {new[o]} EQ")
        else:
            lines.append(f"1 1 {new[a]} {new[o]} {GATE_NAMES[op]}")
    for w, pos in zip(out_wires[~direct].tolist(), out_pos[~direct].tolist()):
        lines.append(f"1 1 {new[w]} {pos} EQW")
    return "\n".join(lines) + "\n"


def write_bristol(c: Circuit, path: str | os.PathLike[str]) -> None:
    """Write ``c`` as a Bristol Fashion file."""
    with open(path, "w", encoding="ascii") as f:
        f.write(format_bristol(c))
