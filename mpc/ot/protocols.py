"""Batched OT between many (sender, receiver) pairs: random, chosen-message, correlated.

API (all functions take the session first and return numpy arrays)::

    correlated_ot(session, senders, receivers, choices, delta, *, rng_sender, rng_receiver)
        -> (q, t)              # uint8 (P, m, 16), t = q ^ choices[..., None] * delta[:, None]
    random_ot(session, senders, receivers, choices, *, rng_sender, rng_receiver, length=16)
        -> (m0, m1, mc)                 # uint8 (P, m, length), mc = m_{choices}
    chosen_ot(session, senders, receivers, choices, m0, m1, *, rng_sender, rng_receiver)
        -> mc                           # uint8 (P, m, L): the receiver's m_{choices}
    base_ot(session, senders, receivers, choices, *, rng_sender, rng_receiver)
        -> (k0, k1, kc)                 # random OT by Chou-Orlandi only (no extension)
    ot_cost(senders, receivers, m, kind, ...) -> {"bits", "rounds", "messages"}

Optional keywords of all four: ``method`` ("auto", "base", "iknp"),
``crossover`` (OTs per pair from which "auto" extends), ``group`` (the base
OT's curve backend, :mod:`mpc.ot.group`), ``offline`` (None: the caller's
phase decides; True/False: charge to offline/online).

One call runs ``P`` OT *instances*, instance p between ``senders[p]`` and
``receivers[p]`` (party ids on ``session.net``) with ``m`` OTs each, the
receiver's choice bits in ``choices[p]``. ``delta[p]`` is the sender's offset
for instance p (lsb ``delta[p, 0] & 1`` must be 1, as free-XOR with
point-and-permute needs). Instances with the same ordered pair form one
*group* sharing one setup. Per group with ``M = (instances in the group) * m``
OTs the method is (``method="auto"``):

* ``M < crossover``: direct base OTs (Chou-Orlandi over secp256k1,
  :mod:`mpc.ot.base`), one public-key OT per OT;
* ``M >= crossover``: IKNP extension (:mod:`mpc.ot.iknp`) from 128 base
  OTs with the roles reversed.

``crossover`` defaults to :data:`DEFAULT_CROSSOVER` = 128 OTs: a base OT
costs about 0.13 ms and an extended OT well under a microsecond
(``benchmarks/ot.py`` measures both), so extension's 128 base OTs pay for
themselves from about 128 OTs per pair (the benchmark's straight-line fit of
seconds per pair against M put the crossing at M = 128.5 on this machine). In
bits, extension is dearer below M = 248 (264 M versus 128 * 264 + 128 M);
time is the scarcer resource here.

Last step, per OT, from the keys k0, k1 (sender) and k_c (receiver):

* random OT: ``(m0, m1) = (k0, k1)``, ``mc = k_c`` (the 128-bit keys,
  expanded by the fixed-key AES PRG when ``length > 16``);
* chosen OT: the sender sends ``y_b = m_b ^ k_b`` (b = 0, 1), the receiver
  outputs ``y_c ^ k_c``;
* correlated OT: the sender sends ``d = k0 ^ k1 ^ delta_p`` and outputs
  ``q = k0``; the receiver outputs ``t = k_c ^ c d``. An IKNP group whose
  instances share one delta skips this step: IKNP runs with its base choice
  bits s = delta and outputs its rows q_j, t_j = q_j ^ c_j delta as they are
  (no hash, nothing more sent), the free correlated OT of EMP's IKNP.

Communication, per group with M OTs (A = one encoded point = 264 bits):

================  ===========================  ==================================
kind              direct (M < crossover)       IKNP (M >= crossover)
================  ===========================  ==================================
random            264 + 264 M                  264 + 128 * 264 + 128 M
chosen, L bytes   264 + 264 M + 16 L M         264 + 128 * 264 + 128 M + 16 L M
correlated        264 + 264 M + 128 M          264 + 128 * 264 + 128 M, plus 128 M
                                               if its instances' deltas differ
================  ===========================  ==================================

Messages: one per group and step (A, the B points, the IKNP matrix, the
corrections). Rounds: every step is one explicit ``net.round()`` block shared
by all groups, so a call takes the most any group needs: A (1), B (2), the
IKNP matrix and the direct groups' corrections (3), the IKNP groups'
corrections (4). Random: 2 if every group is direct, else 3; chosen: 3 if
every group is direct, else 4; correlated: 3, or 4 if an IKNP group has
distinct deltas. An empty batch sends nothing. :func:`ot_cost` evaluates
these formulas and the tests check them against the network's counts.

Processes: every side computes with its own secrets and what it received
(:mod:`mpc.ot.base`, :mod:`mpc.ot.iknp`), and every message carries
its bytes: the B points (33 bytes each), the IKNP matrix (a pair's M
columns: M / 8 bytes per row, or M bits when M is not a multiple of 8), the
corrections. In a run of several processes the outputs of a party held
elsewhere are zero or meaningless; each party's are exact.

Threat model: static semi-honest adversary corrupting the sender or the
receiver of a pair (IKNP's passive security; Chou-Orlandi's caveats in
:mod:`mpc.ot.base`); private authenticated channels; no dealer: OT is the
dealer-free source of correlated randomness. ``rng_sender`` serves every
sender's secrets and ``rng_receiver`` every receiver's (one stream per side
for the whole batch, as in the other simulated protocols of the toolkit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from mpc.ot.engine import Options, Request, run
from mpc.ot.group import POINT_BITS, get_group
from mpc.ot.iknp import KAPPA
from mpc.ot.validate import (
    check_choices,
    check_delta,
    check_length,
    check_messages,
    check_method,
    check_offline,
    check_pairs,
    check_rng,
)

if TYPE_CHECKING:
    from mpc.arith.rng import RngLike
    from mpc.session import Session

DEFAULT_CROSSOVER = 128


def _prepare(session, senders, receivers, choices, rng_sender, rng_receiver, method, crossover,
             group, offline):
    net = getattr(session, "net", None)
    if net is None:
        raise TypeError(f"session must have a network .net (mpc.session.Session), got "
                        f"{type(session).__name__}")
    s, r = check_pairs(net, senders, receivers)
    c = check_choices(choices, s.size)
    method, crossover = check_method(method, crossover)
    get_group(group)                      # validates the name, or hints at the missing extra
    return (s, r, c, check_rng(rng_sender, "rng_sender"),
            check_rng(rng_receiver, "rng_receiver"),
            Options(method, crossover, group, check_offline(offline)))


def correlated_ot(session: Session, senders: ArrayLike, receivers: ArrayLike,
                  choices: ArrayLike, delta: ArrayLike, *, rng_sender: RngLike,
                  rng_receiver: RngLike, method: str = "auto",
                  crossover: int = DEFAULT_CROSSOVER, group: str | None = None,
                  offline: bool | None = None,
                  distinct_deltas: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Correlated OT for free-XOR labels: ``t = q ^ choices * delta`` per instance.

    Returns ``(q, t)``, both ``uint8 (P, m, 16)``: ``q`` is the sender's
    (pseudorandom) zero-strings, ``t`` the receiver's. Cost and rounds: see
    the module docstring (IKNP with one delta per pair: 128 bits per OT plus
    the pair's 128 base OTs, 3 rounds).

    Which instances of a pair share one delta decides the steps (and rounds),
    so it must be public: ``distinct_deltas=True`` says that every instance
    has its own (only a pair's lone instance then skips the last step; no
    delta value is read for it, as :func:`mpc.gc.yao.yao` uses it); None
    reads the pattern from ``delta``, which every process of a run must then
    pass with the same pattern (the sender's values, or the same public
    stand-in).
    """
    s, r, c, rs, rr, options = _prepare(
        session, senders, receivers, choices, rng_sender, rng_receiver, method, crossover,
        group, offline)
    d = check_delta(delta, s.size)
    if distinct_deltas is not None and not isinstance(distinct_deltas, bool):
        raise TypeError(f"distinct_deltas must be None or a bool, got {distinct_deltas!r}")
    if c.size == 0:
        return (np.zeros(c.shape + (16,), np.uint8),) * 2
    plan, out = run(session, s, r, c, rs, rr,
                    Request("correlated", delta=d, distinct_deltas=distinct_deltas), options)
    return plan.unflat(out.a), plan.unflat(out.b)


def random_ot(session: Session, senders: ArrayLike, receivers: ArrayLike, choices: ArrayLike,
              *, rng_sender: RngLike, rng_receiver: RngLike, length: int = 16,
              method: str = "auto", crossover: int = DEFAULT_CROSSOVER, group: str | None = None,
              offline: bool | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random OT: the sender gets random ``(m0, m1)``, the receiver ``m_{choices}``.

    Returns ``(m0, m1, mc)``, each ``uint8 (P, m, length)``. The receiver's
    choices are inputs (draw them from its CSPRNG for a fully random OT).
    Cost: see the module docstring (IKNP: 128 bits per OT, 3 rounds).
    """
    s, r, c, rs, rr, options = _prepare(
        session, senders, receivers, choices, rng_sender, rng_receiver, method, crossover,
        group, offline)
    length = check_length(length)
    if c.size == 0:
        return (np.zeros(c.shape + (length,), np.uint8),) * 3
    plan, out = run(session, s, r, c, rs, rr, Request("random", length=length), options)
    return plan.unflat(out.a), plan.unflat(out.b), plan.unflat(out.c)


def chosen_ot(session: Session, senders: ArrayLike, receivers: ArrayLike, choices: ArrayLike,
              m0: ArrayLike, m1: ArrayLike, *, rng_sender: RngLike, rng_receiver: RngLike,
              method: str = "auto", crossover: int = DEFAULT_CROSSOVER, group: str | None = None,
              offline: bool | None = None) -> np.ndarray:
    """Chosen-message 1-out-of-2 OT: the receiver gets ``m0`` or ``m1`` by its choice.

    ``m0``, ``m1``: ``uint8 (P, m, L)``. Returns the receiver's ``uint8 (P, m, L)``.
    Cost: the random OT's plus ``16 L`` bits per OT and one round.
    """
    s, r, c, rs, rr, options = _prepare(
        session, senders, receivers, choices, rng_sender, rng_receiver, method, crossover,
        group, offline)
    m0, m1 = check_messages(m0, m1, s.size, c.shape[1])
    if c.size == 0:
        return np.zeros(m0.shape, np.uint8)
    plan, out = run(session, s, r, c, rs, rr,
                    Request("chosen", length=m0.shape[2], m0=m0, m1=m1), options)
    return plan.unflat(out.c)


def base_ot(session: Session, senders: ArrayLike, receivers: ArrayLike, choices: ArrayLike, *,
            rng_sender: RngLike, rng_receiver: RngLike, group: str | None = None,
            offline: bool | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random OT by Chou-Orlandi base OTs only (no extension), batched over pairs.

    Returns the 128-bit keys ``(k0, k1, kc)``, each ``uint8 (P, m, 16)``.
    Cost per ordered pair with M OTs: 264 + 264 M bits, 2 rounds
    (:mod:`mpc.ot.base`).
    """
    return random_ot(session, senders, receivers, choices, rng_sender=rng_sender,
                     rng_receiver=rng_receiver, method="base", group=group, offline=offline)


def ot_cost(senders: ArrayLike, receivers: ArrayLike, m: int, kind: str, *, length: int = 16,
            method: str = "auto", crossover: int = DEFAULT_CROSSOVER,
            delta: ArrayLike | None = None) -> dict[str, int]:
    """The formula for the bits, messages and rounds one call sends (module docstring).

    ``kind``: "random", "chosen" (``length`` = L bytes) or "correlated"
    (``delta`` decides which IKNP groups share one delta; ``None``: all do).
    """
    if kind not in ("random", "chosen", "correlated"):
        raise ValueError(f"kind must be 'random', 'chosen' or 'correlated', got {kind!r}")
    s = np.asarray(senders, dtype=np.int64)
    r = np.asarray(receivers, dtype=np.int64)
    if s.size == 0 or m == 0:
        return {"bits": 0, "messages": 0, "rounds": 0}
    key = s * (int(max(s.max(), r.max())) + 1) + r
    _, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    M = cnt.astype(np.int64) * m
    iknp = crossover <= M if method == "auto" else np.full(M.size, method == "iknp")
    extra = np.zeros(M.size, dtype=bool)             # IKNP groups that need the last step
    if kind == "chosen":
        extra = iknp.copy()
    elif kind == "correlated" and delta is not None:
        d = np.asarray(delta)
        order = np.argsort(inv, kind="stable")
        first = np.concatenate([[0], np.cumsum(cnt)[:-1]])
        same = np.all(d[order] == d[order][np.repeat(first, cnt)], axis=1)
        extra = iknp & ~np.logical_and.reduceat(same, first)
    last = {"random": 0, "chosen": 16 * length, "correlated": 128}[kind]
    base = POINT_BITS + np.where(iknp, KAPPA * POINT_BITS + KAPPA * M, POINT_BITS * M)
    bits = base + np.where(~iknp | extra, last * M, 0)
    messages = 2 + iknp + ((~iknp | extra) & (last > 0))
    if kind == "random":  # noqa: SIM108 - two plain ternaries read better than a nested one
        rounds = 3 if iknp.any() else 2
    else:
        rounds = 4 if extra.any() else 3
    return {"bits": int(bits.sum()), "messages": int(messages.sum()), "rounds": rounds}
