"""Half-gates garbling with free-XOR, batched over instances (each with its own Delta).

Scheme (Zahur, Rosulek, Evans, "Two halves make a whole", EUROCRYPT 2015,
with free-XOR, Kolesnikov-Schneider 2008, and point-and-permute):

* Every wire ``w`` of instance ``p`` has a zero-label ``W0`` (128 bits); the
  one-label is ``W0 ^ Delta_p``. ``Delta_p`` is the instance's global offset,
  uniform with its least significant bit set, so ``lsb(W0) != lsb(W1)`` and
  the lsb of an active label is its *permute bit*.
* XOR: ``C0 = A0 ^ B0``; NOT: ``C0 = A0 ^ Delta`` (the evaluator copies its
  label); no ciphertext, no hashing.
* AND gate ``j`` with ``pa = lsb(A0)``, ``pb = lsb(B0)``, tweaks ``2j``, ``2j+1``::

      T_G = H(A0, 2j) ^ H(A1, 2j) ^ pb*Delta      W_G0 = H(A0, 2j) ^ pa*T_G
      T_E = H(B0, 2j+1) ^ H(B1, 2j+1) ^ A0        W_E0 = H(B0, 2j+1) ^ pb*(T_E ^ A0)
      C0  = W_G0 ^ W_E0;  the table is (T_G, T_E): 2 x 128 bits.

  The evaluator with active labels ``A``, ``B`` (``sa = lsb(A)``, ``sb = lsb(B)``)
  computes ``C = H(A, 2j) ^ sa*T_G ^ H(B, 2j+1) ^ sb*(T_E ^ A)``.
* Decoding: the output bit is ``lsb(C) ^ lsb(C0)``; ``lsb(C0)`` is the
  decoding bit the garbler publishes (or keeps, for XOR-shared outputs).

Hash. ``H(x, i) = pi(pi(x) ^ i) ^ pi(x)``: fixed-key AES-128 ``pi`` in the
tweakable circular correlation-robust (TCCR) construction of Guo, Katz, Wang,
Yu (IEEE S&P 2020, "Efficient and secure multiparty computation from
fixed-key block ciphers", section 7.4; 2 AES blocks per hash). The tweak of
AND gate ``j``'s hashes in instance ``p`` is the 128-bit block
``(g, g ^ t_p)`` with ``g = 2j`` or ``2j+1`` and ``t_p`` the instance tweak
(default ``p``): unique per gate, hash and instance. We do not use the
one-call form ``pi(sigma(x) ^ i) ^ sigma(x)``: it is not tweakable-CCR, since
the queries ``(x, i)`` and ``(x ^ sigma^-1(i ^ i'), i')`` hit the same AES
input and their outputs differ by the known ``i ^ i'``.

Security assumption: fixed-key AES is modelled as a random permutation
(the key is public and constant); then ``H`` is TCCR (GKWY20, theorem for
TMMO), which is what half-gates garbling needs for privacy against a
semi-honest evaluator (ZRE15, theorem 1 with the hash instantiated as in
GKWY20, section 6). Each instance's ``Delta`` is independent, so instances
are independent garblings.

Cost per AND gate and instance: 4 hashes = 8 AES blocks to garble, 2 hashes
= 4 AES blocks to evaluate, 256 bits of table. XOR/NOT/copies: no AES and
no table. Batching: per schedule step (:mod:`mpc.gc.schedule`), one pair of
``encrypt`` calls covers all AND gates of the step in all instances; labels
are ``uint64 (slots, P, 2)`` word pairs, the byte form ``uint8 (..., 16)``
is the same memory (little-endian: byte 0 holds the lsb).

Cores: instances are garbled and evaluated in cache-sized blocks, and the
blocks run on ``workers`` threads (:mod:`mpc.gc.blocks`, :mod:`mpc.machine.threads`;
AES and the numpy steps release the GIL). Delta and every zero-label are drawn before the
blocks run and each block writes its own instances' slice of the tables and
labels, so results are bit-identical for any ``workers``. Threads, not
processes: a process would send its tables back (256 bits per AND gate and
instance, as much as it garbled); ``benchmarks/gc.py`` measures both.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from Crypto.Cipher import AES
from numpy.typing import ArrayLike

from mpc.gc.blocks import blocks, run_blocks
from mpc.gc.circuit import Circuit
from mpc.gc.schedule import ONE_SLOT, STEP_AND, ZERO_SLOT

if TYPE_CHECKING:
    from mpc.arith.rng import CSPRNG

_U64 = np.uint64
_ONE = _U64(1)
_FIXED_KEY = hashlib.sha256(b"ustat-toolkit gc fixed-key AES TCCR hash v1").digest()[:16]
_local = threading.local()          # one cipher object per thread


def _aes(buf: np.ndarray, out: np.ndarray) -> None:
    """Fixed-key AES-ECB of the C-contiguous ``buf`` into ``out`` (may be ``buf``)."""
    cipher = getattr(_local, "cipher", None)
    if cipher is None:
        cipher = _local.cipher = AES.new(_FIXED_KEY, AES.MODE_ECB)
    cipher.encrypt(buf.data.cast("B"), output=out.data.cast("B"))


def tccr_hash(x: np.ndarray, tweak: np.ndarray) -> np.ndarray:
    """``H(x, i) = pi(pi(x) ^ i) ^ pi(x)`` for blocks ``uint64 (..., 2)`` (reference form)."""
    x = np.ascontiguousarray(x, dtype=_U64)
    y = np.empty_like(x)
    _aes(x, y)
    z = y ^ np.asarray(tweak, dtype=_U64)
    _aes(np.ascontiguousarray(z), z)
    return z ^ y


# -- label formats --------------------------------------------------------------------

def as_labels(labels: ArrayLike, name: str = "labels") -> np.ndarray:
    """Labels as ``uint64 (..., 2)``: accepts that or bytes ``uint8 (..., 16)`` (a view)."""
    a = np.asarray(labels)
    if a.dtype == np.uint8 and a.ndim >= 1 and a.shape[-1] == 16:
        return np.ascontiguousarray(a).view("<u8").astype(_U64, copy=False)
    if a.dtype == _U64 and a.ndim >= 1 and a.shape[-1] == 2:
        return a
    raise ValueError(f"{name} must be uint8 (..., 16) or uint64 (..., 2) labels, "
                     f"got {a.dtype} {a.shape}")


def label_bytes(labels: np.ndarray) -> np.ndarray:
    """``uint64 (..., 2)`` labels as ``uint8 (..., 16)`` (little-endian words, lsb in byte 0)."""
    a = np.ascontiguousarray(labels, dtype="<u8")
    return a.view(np.uint8)


def lsb(labels: np.ndarray) -> np.ndarray:
    """Permute bits: ``uint8`` lsb of each ``uint64 (..., 2)`` label."""
    return (labels[..., 0] & _ONE).astype(np.uint8)


def xor_where(labels: np.ndarray, bits: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """``labels ^ bits * Delta``: labels ``(P, n, 2)``, bits ``(P, n)``, delta ``(P, 2)``."""
    out = np.empty(labels.shape, dtype=_U64)
    m = bits.astype(_U64)
    for w in (0, 1):  # the two 64-bit words
        np.multiply(m, delta[:, None, w], out=out[..., w])
        np.bitwise_xor(out[..., w], labels[..., w], out=out[..., w])
    return out


def random_delta(rng: CSPRNG, n_instances: int) -> np.ndarray:
    """``n_instances`` offsets ``uint64 (P, 2)``, uniform with lsb 1 (from a CSPRNG)."""
    d = rng.uint64((int(n_instances), 2))
    d[:, 0] |= _ONE
    return d


# -- results ----------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class GarbledCircuit:
    """What the evaluator receives for P instances: the AND tables and the tweaks.

    ``tables``: ``uint64 (n_and, 2, P, 2)``: AND gate (schedule order),
    (T_G, T_E), instance, 64-bit word. ``tweaks``: instance tweaks ``uint64 (P,)``
    (public). :meth:`per_instance` gives the ``(P, n_and, 2, 2)`` view sent.
    """

    circuit: Circuit
    tables: np.ndarray
    tweaks: np.ndarray

    @property
    def n_instances(self) -> int:
        return int(self.tweaks.size)

    @property
    def table_bits(self) -> int:
        """Bits of garbled tables per instance: 256 per AND gate."""
        return 256 * self.circuit.schedule.n_and

    def per_instance(self) -> np.ndarray:
        return self.tables.transpose(2, 0, 1, 3)


@dataclass(frozen=True, eq=False)
class GarblerKeys:
    """The garbler's secrets for P instances.

    ``delta``: ``uint64 (P, 2)``; ``input_zero``: zero-labels of all input
    bits ``uint64 (P, n_input_bits, 2)`` (groups concatenated);
    ``decode_bits``: ``uint8 (P, n_output_bits)``, lsb of the output zero-labels.
    """

    circuit: Circuit
    delta: np.ndarray
    input_zero: np.ndarray
    decode_bits: np.ndarray

    def group_zero(self, group: int) -> np.ndarray:
        """Zero-labels ``(P, width, 2)`` of input group ``group``."""
        off = np.concatenate([[0], np.cumsum(self.circuit.input_widths)])
        return self.input_zero[:, off[group]:off[group + 1]]

    def encode(self, group: int, bits: ArrayLike) -> np.ndarray:
        """Active labels ``W0 ^ bit * Delta`` for the bits ``(P, width)`` of input ``group``."""
        zero = self.group_zero(group)
        b = np.asarray(bits, dtype=np.uint8)
        if b.shape != zero.shape[:2]:
            raise ValueError(f"bits for input group {group} must have shape {zero.shape[:2]}, "
                             f"got {b.shape}")
        return xor_where(zero, b, self.delta)


# -- garbling ---------------------------------------------------------------------------

def garble(circuit: Circuit, delta: int | np.ndarray, *, rng: CSPRNG | None = None,
           input_zero: dict[int, np.ndarray] | None = None, tweaks: np.ndarray | None = None,
           workers: int | None = None) -> tuple[GarbledCircuit, GarblerKeys]:
    """Garble P instances of ``circuit``; returns ``(GarbledCircuit, GarblerKeys)``.

    Parameters
    ----------
    delta : int P, or offsets ``(P, 16)`` uint8 / ``(P, 2)`` uint64 with lsb 1
        One global offset per instance (drawn from ``rng`` when an int).
    rng : mpc.arith.rng.CSPRNG
        Source of Delta and of the zero-labels not given in ``input_zero``.
    input_zero : dict {input group index: labels (P, width, 16|2)}, optional
        Pre-set zero-labels for chosen input groups (e.g. the OT sender's
        strings ``q``); the other input zero-labels are drawn from ``rng``.
        Every zero-label used (drawn or given) is returned in ``GarblerKeys``.
    tweaks : uint64 (P,), optional
        Instance tweaks (default ``arange(P)``).
    workers : threads for the blocks of instances (None: all cores when the
        circuit's AND layers are wide enough, see :mod:`mpc.gc.blocks`, else 1);
        results do not depend on it.

    Cost: 8 AES blocks per AND gate and instance; tables 256 bits per AND.
    """
    if not isinstance(circuit, Circuit):
        raise TypeError(f"circuit must be a Circuit, got {type(circuit).__name__}")
    D = _delta(delta, rng)
    P = D.shape[0]
    tw = _tweaks(tweaks, P)
    sched = circuit.schedule
    zero_in = _input_zero(circuit, P, input_zero, rng)
    tables = np.empty((sched.n_and, 2, P, 2), dtype=_U64)
    out_zero = np.empty((sched.output_slots.size, P, 2), dtype=_U64)

    tweaks4 = _gate_tweaks(sched, 4)

    def lane(spans):
        for p0, p1, labels, ws in blocks(sched, 4, spans, tweaks4):
            labels[sched.input_slots] = zero_in[p0:p1].transpose(1, 0, 2)
            labels[ZERO_SLOT] = 0
            labels[ONE_SLOT] = D[p0:p1]
            inst = _instance_block(tw[p0:p1])
            tab = tables[:, :, p0:p1]
            for st in sched.steps:
                if st.kind == STEP_AND:
                    _garble_and(labels, st, D[p0:p1], inst, tab, ws)
                else:
                    _xor_step(labels, st, ws)
            out_zero[:, p0:p1] = labels[sched.output_slots]

    run_blocks(lane, sched, P, workers)
    decode = lsb(out_zero).T.copy()
    return (GarbledCircuit(circuit, tables, tw),
            GarblerKeys(circuit, D, zero_in, decode))


def evaluate_garbled(garbled: GarbledCircuit, input_labels: np.ndarray | Sequence[np.ndarray], *,
                     workers: int | None = None) -> np.ndarray:
    """Evaluate P garbled instances; returns the active output labels ``uint64 (P, n_out, 2)``.

    ``input_labels``: active labels of all input bits, ``(P, n_input_bits, 16|2)``
    (groups concatenated), or a list with one ``(P, width, 16|2)`` per group.
    ``workers``: threads, as in :func:`garble`.
    Cost: 4 AES blocks per AND gate and instance.
    """
    if not isinstance(garbled, GarbledCircuit):
        raise TypeError(f"garbled must be a GarbledCircuit, got {type(garbled).__name__}")
    c = garbled.circuit
    P = garbled.n_instances
    groups = _check_input_labels(c, input_labels, P)
    sched = c.schedule
    slots = np.split(sched.input_slots, np.cumsum(c.input_widths)[:-1]) if c.inputs else []
    out = np.empty((P, sched.output_slots.size, 2), dtype=_U64)

    tweaks2 = _gate_tweaks(sched, 2)

    def lane(spans):
        for p0, p1, labels, ws in blocks(sched, 2, spans, tweaks2):
            for sl, lab in zip(slots, groups):
                labels[sl] = lab[p0:p1].transpose(1, 0, 2)
            labels[ZERO_SLOT] = 0
            labels[ONE_SLOT] = 0
            inst = _instance_block(garbled.tweaks[p0:p1])
            tab = garbled.tables[:, :, p0:p1]
            for st in sched.steps:
                if st.kind == STEP_AND:
                    _eval_and(labels, st, inst, tab, ws)
                else:
                    _xor_step(labels, st, ws)
            out[p0:p1] = labels[sched.output_slots].transpose(1, 0, 2)

    run_blocks(lane, sched, P, workers)
    return out


def decode(output_labels: ArrayLike, decode_bits: ArrayLike) -> np.ndarray:
    """Output bits ``uint8 (P, n_out)``: ``lsb(active label) ^ decoding bit``."""
    lab = as_labels(output_labels, "output_labels")
    d = np.asarray(decode_bits, dtype=np.uint8)
    if d.shape != lab.shape[:-1]:
        raise ValueError(f"decode_bits must have shape {lab.shape[:-1]}, got {d.shape}")
    return lsb(lab) ^ d


# -- internals -------------------------------------------------------------------------

def _delta(delta, rng) -> np.ndarray:
    if isinstance(delta, (int, np.integer)) and not isinstance(delta, bool):
        if delta < 0:
            raise ValueError(f"delta as a count of instances must be >= 0, got {delta}")
        if rng is None:
            raise ValueError("rng is required to draw delta")
        return random_delta(rng, int(delta))
    D = as_labels(delta, "delta")
    if D.ndim != 2:
        raise ValueError(f"delta must have shape (P, 16) or (P, 2), got {np.shape(delta)}")
    if D.size and not np.all(D[:, 0] & _ONE):
        raise ValueError("delta must have its least significant bit set in every instance")
    return np.ascontiguousarray(D)


def _tweaks(tweaks, P: int) -> np.ndarray:
    if tweaks is None:
        return np.arange(P, dtype=_U64)
    t = np.asarray(tweaks)
    if t.dtype.kind not in "iu" or t.shape != (P,):
        raise ValueError(f"tweaks must be an integer array of shape ({P},), "
                         f"got {t.dtype} {t.shape}")
    return t.astype(_U64)


def _input_zero(circuit: Circuit, P: int, preset, rng) -> np.ndarray:
    widths = circuit.input_widths
    preset = {} if preset is None else dict(preset)
    for g in preset:
        if not isinstance(g, (int, np.integer)) or not 0 <= g < len(widths):
            raise ValueError(f"input_zero keys must be input group indices 0..{len(widths) - 1}, "
                             f"got {g!r}")
    missing = sum(w for g, w in enumerate(widths) if g not in preset)
    if missing and rng is None:
        raise ValueError("rng is required to draw input zero-labels")
    out = np.empty((P, sum(widths), 2), dtype=_U64)
    pos = 0
    for g, w in enumerate(widths):
        if g in preset:
            lab = as_labels(preset[g], f"input_zero[{g}]")
            if lab.shape != (P, w, 2):
                raise ValueError(f"input_zero[{g}] must have shape ({P}, {w}, 16|2), "
                                 f"got {np.shape(preset[g])}")
            out[:, pos:pos + w] = lab
        else:
            out[:, pos:pos + w] = rng.uint64((P, w, 2))
        pos += w
    return out


def _check_input_labels(c: Circuit, input_labels, P: int) -> list:
    """Input labels as one ``uint64 (P, width, 2)`` array per group (views, no copy)."""
    widths = c.input_widths
    if isinstance(input_labels, (list, tuple)):
        if len(input_labels) != len(widths):
            raise ValueError(f"input_labels must give {len(widths)} groups, "
                             f"got {len(input_labels)}")
        groups = []
        for g, (lab, w) in enumerate(zip(input_labels, widths)):
            a = as_labels(lab, f"input_labels[{g}]")
            if a.shape != (P, w, 2):
                raise ValueError(f"input_labels[{g}] must have shape ({P}, {w}, 16|2), "
                                 f"got {np.shape(lab)}")
            groups.append(a)
        return groups
    a = as_labels(input_labels, "input_labels")
    if a.shape != (P, c.n_input_bits, 2):
        raise ValueError(f"input_labels must have shape ({P}, {c.n_input_bits}, 16|2), "
                         f"got {np.shape(input_labels)}")
    return np.split(a, np.cumsum(widths)[:-1], axis=1) if widths else []


def _instance_block(tweaks: np.ndarray) -> np.ndarray:
    blk = np.zeros((tweaks.size, 2), dtype=_U64)
    blk[:, 1] = tweaks
    return blk


def _xor_step(labels, st, ws):
    k = st.size
    t = ws.blocks(ws.m1, 2, k, ws.P, 2)
    np.take(labels, st.ab, axis=0, out=t.reshape(2 * k, ws.P, 2))
    np.bitwise_xor(t[0], t[1], out=t[0])
    labels[st.o] = t[0]


def _lsb_mask(src, out):
    """``out[..., :] = -(lsb of src[..., 0])``: all-ones where the permute bit is 1."""
    lo = out[..., 0]
    np.bitwise_and(src[..., 0], _ONE, out=lo)
    np.negative(lo, out=lo)
    out[..., 1] = lo


def _gate_tweaks(sched, h: int) -> dict:
    """Per AND step, the gate part ``g`` of the tweaks of its ``h`` hash rows ``(h, k, 1, 1)``.

    Rows are [A0, B0, A1, B1] when garbling (h = 4), [A, B] when evaluating
    (h = 2): ``g = 2j`` for the A hashes and ``2j + 1`` for the B hashes.
    """
    out = {}
    for st in sched.steps:
        if st.kind == STEP_AND:
            g = 2 * (st.t0 + np.arange(st.size, dtype=_U64))
            hb = np.tile(np.arange(2, dtype=_U64), h // 2)       # A rows +0, B rows +1
            out[st.t0] = (g[None, :] + hb[:, None])[:, :, None, None].copy()
    return out


def _hash_step(x, y, z, inst, gate):
    """``z = H(x, tweak)`` for x of shape (h, k, P, 2); y keeps pi(x).

    The tweak of row (r, j, p) is the block ``(g, g ^ t_p)``: ``inst`` holds
    ``(0, t_p)`` per instance, ``gate`` the ``g`` of each row and gate (XORed
    into both words).
    """
    _aes(x, y)
    np.bitwise_xor(y, inst, out=z)
    np.bitwise_xor(z, gate, out=z)
    _aes(z, z)
    np.bitwise_xor(z, y, out=z)


def _and_step_inputs(labels, st, inst, tables, ws, delta=None):
    """Gather an AND step's input labels, hash them, build the permute-bit masks.

    Rows of ``x``: [A0, B0, A1, B1] when garbling (``delta`` given), [A, B]
    when evaluating; ``h`` holds their hashes. Returns
    ``(x, y, h, mask_a, mask_b, T_G, T_E)`` (``y`` is free scratch; T_G and
    T_E are the step's table rows).
    """
    k, P = st.size, ws.P
    rows = 2 if delta is None else 4
    x, y, h = (ws.blocks(buf, rows, k, P, 2) for buf in (ws.x, ws.y, ws.z))
    np.take(labels, st.ab, axis=0, out=x[:2].reshape(2 * k, P, 2))
    if delta is not None:
        np.bitwise_xor(x[:2], delta, out=x[2:])
    _hash_step(x, y, h, inst, ws.tweaks[st.t0])
    ma = ws.blocks(ws.m1, k, P, 2)
    mb = ws.blocks(ws.m2, k, P, 2)
    _lsb_mask(x[0], ma)
    _lsb_mask(x[1], mb)
    return x, y, h, ma, mb, tables[st.t0:st.t0 + k, 0], tables[st.t0:st.t0 + k, 1]


def _garble_and(labels, st, D, inst, tables, ws):
    x, y, h, ma, mb, tg, te = _and_step_inputs(labels, st, inst, tables, ws, D)
    # h = [H(A0), H(B0), H(A1), H(B1)]
    np.bitwise_xor(h[0], h[2], out=tg)
    np.bitwise_and(mb, D, out=y[0])
    np.bitwise_xor(tg, y[0], out=tg)                 # T_G = H(A0) ^ H(A1) ^ pb*Delta
    np.bitwise_and(ma, tg, out=y[1])
    np.bitwise_xor(h[0], y[1], out=y[1])             # W_G0 = H(A0) ^ pa*T_G
    np.bitwise_xor(h[1], h[3], out=y[2])             # H(B0) ^ H(B1)
    np.bitwise_xor(y[2], x[0], out=te)               # T_E = H(B0) ^ H(B1) ^ A0
    np.bitwise_and(mb, y[2], out=y[2])
    np.bitwise_xor(h[1], y[2], out=y[2])             # W_E0 = H(B0) ^ pb*(T_E ^ A0)
    np.bitwise_xor(y[1], y[2], out=y[1])             # C0
    labels[st.o] = y[1]


def _eval_and(labels, st, inst, tables, ws):
    x, y, h, sa, sb, tg, te = _and_step_inputs(labels, st, inst, tables, ws)
    np.bitwise_and(sa, tg, out=sa)
    np.bitwise_xor(h[0], sa, out=h[0])               # W_G = H(A) ^ sa*T_G
    np.bitwise_xor(te, x[0], out=y[0])
    np.bitwise_and(sb, y[0], out=sb)
    np.bitwise_xor(h[1], sb, out=h[1])               # W_E = H(B) ^ sb*(T_E ^ A)
    np.bitwise_xor(h[0], h[1], out=h[0])
    labels[st.o] = h[0]
