"""Six protocols written with secure values (issue 40), each one program that runs in one process
(the simulator) or in three party processes (each party its own; the dealer in a fourth).

- ``argmax``: the index of the largest of three parties' values, over 10^4 instances.
- ``median_sort`` / ``median_search``: the median of three parties' 1,000 integers, exact: a
  Batcher sort of all 3,000, or a binary search on the value (both middle ranks at once).
- ``mean_var``: mean and variance of 3,000 fixed-point values, 64-bit ring, 1e-6 relative.
- ``logistic_step``: one gradient step of logistic regression on vertically split data
  (parties 0 and 1 hold two features each, party 2 the labels), 1e-4 against numpy.
- ``dp_count``: a count released with discrete Laplace noise sampled inside MPC
  (:mod:`noise.mpc_noise`): released minus true equals the drawn noise.

The Wilcoxon signed-rank kernel through ``run_umpc`` is ``examples/mpc_wilcoxon.py``.
Run: ``python examples/mpc_protocols.py [--processes 3]``.
"""

from __future__ import annotations

import argparse
import sys
import time

import _paths  # noqa: F401
import numpy as np

from mpc.run.launch import launch
from mpc.session import Session

#: each party its own process, and the dealer its own (in a party's process it would see the
#: masks of every value that party holds)
GROUPS_3 = [[0], [1], [2], ["dealer"]]
PARTIES = [0, 1, 2]


def _session(rt, bits: int = 40, frac_bits: int = 14, seed=None) -> Session:
    return Session(3, runtime=rt, roles=("dealer",), bits=bits, frac_bits=frac_bits, seed=seed)


def argmax(rt, data, seed=None):
    """``data`` (3, m): the party holding the largest value, per instance."""
    s = _session(rt, seed=seed)
    x = s.input(data, by=PARTIES, bound=2**20)
    return s.output(x.argmax(axis=0), to=PARTIES)


def median_sort(rt, data, seed=None):
    """The median of all values (the mean of the two middle ones for an even count), exact:
    Batcher's network on the 3 m values, then the middle ranks."""
    s = _session(rt, seed=seed)
    x = s.input(data, by=PARTIES, bound=2**14).reshape(data.size)
    y = x.sort()
    k = data.size // 2
    med = y[k] if data.size % 2 else (y[k - 1] + y[k]) * 0.5
    return s.output(med, to=PARTIES)


def median_search(rt, data, seed=None):
    """The same median by binary search on the value: for the ranks k and k + 1 at once, the
    largest t with #{v <= t} < rank, one bit per step (16 steps for |v| <= 2^14)."""
    s = _session(rt, seed=seed)
    bound = 2**14
    x = s.input(data, by=PARTIES, bound=bound).reshape(data.size)
    n = data.size
    ranks = np.array([(n + 1) // 2, n // 2 + 1])              # the two middle ranks (1-based)
    both = np.stack([x, x])                                   # (2, n): one row per rank
    t = both[:, 0] * 0 - (bound + 1)                          # below every value
    for j in reversed(range((2 * bound + 1).bit_length())):
        cand = t + 2**j
        below = (both <= cand.reshape(2, 1)).sum(axis=1) < ranks
        t = (t + below * 2**j).assume_bound(bound + 2**j + 1)
    lo_hi = t + 1
    return s.output((lo_hi[0] + lo_hi[1]) * 0.5, to=PARTIES)


def mean_var(rt, data, seed=None):
    """Mean and (population) variance of all values: 64-bit ring, 20 fractional bits."""
    s = _session(rt, bits=64, frac_bits=20, seed=seed)
    x = s.input(data, by=PARTIES, bound=200, frac_bits=20)
    return s.output(x.mean(), to=PARTIES), s.output(x.var(), to=PARTIES)


def logistic_step(rt, f0, f1, labels, w0, lr, seed=None):
    """w0 - lr X^T (sigmoid(X w0) - y) / n for X = [f0 | f1] (parties 0 and 1) and y (party 2):
    the data stay secret, w0 and lr are public, the new weights are opened."""
    s = _session(rt, bits=64, frac_bits=20, seed=seed)
    n = labels.size
    x0 = s.input(f0[None], by=[0], holders=PARTIES, bound=4, frac_bits=20)[0]
    x1 = s.input(f1[None], by=[1], holders=PARTIES, bound=4, frac_bits=20)[0]
    y = s.input(labels[None], by=[2], holders=PARTIES, bound=1)[0]
    X = np.concatenate([x0, x1], axis=1)                      # (n, d), secure
    z = (X * w0).sum(axis=1).assume_bound(4 * float(np.abs(w0).sum()))
    r = z.sigmoid() - y
    grad = (X * r.reshape(n, 1)).sum(axis=0) / n
    return s.output(-(grad * lr) + w0, to=PARTIES)


def dp_count(rt, data, threshold, epsilon, seed=None, reveal_noise=False):
    """#{v > threshold} + DLap noise of scale 1 / epsilon sampled inside MPC by the three
    parties (epsilon-DP against any two of them with the aggregator; delta <= 2^-40). With
    ``reveal_noise`` (tests only) the noise is opened too."""
    from mpc.values import SecureArray
    from noise.mpc_noise import mpc_dlap_noises
    s = _session(rt, seed=seed)
    x = s.input(data, by=PARTIES, bound=2**14)
    count = (x > threshold).sum()
    ns = mpc_dlap_noises(s, [(epsilon, 1.0)])[0]
    noise = SecureArray(s, ns.shares, ns.parties, frac_bits=s.fp.frac_bits,
                        bound=1 << (s.ring.bits - 3))
    released = s.output(count + noise, to=PARTIES)
    return released, (s.output(noise, to=PARTIES) if reveal_noise else None)


def run(program, *args, processes: int = 1, **kw):
    """``program`` in one process (its value) or in three (party 0's value)."""
    if processes == 1:
        return program(None, *args, **kw)
    if processes != 3:
        raise ValueError("processes must be 1 or 3")
    res = launch(program, *args, groups=GROUPS_3, kwargs_for=lambda r: kw, timeout=60)
    return res[0].value


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, default=1, choices=(1, 3))
    args = ap.parse_args(argv)
    P = args.processes
    rng = np.random.default_rng(2026)
    ints = rng.integers(-10**4, 10**4, size=(3, 1000))
    checks = []
    t = time.perf_counter()
    inst = rng.integers(0, 1000, size=(3, 10**4))
    checks.append(("argmax over 10^4", np.array_equal(run(argmax, inst, processes=P),
                                                      np.argmax(inst, axis=0))))
    checks.append(("median (sort)", run(median_sort, ints, processes=P) == np.median(ints)))
    checks.append(("median (search)", run(median_search, ints, processes=P) == np.median(ints)))
    vals = rng.normal(50, 10, size=(3, 1000))
    m, v = run(mean_var, vals, processes=P)
    checks.append(("mean, var (1e-6)", abs(m / vals.mean() - 1) < 1e-6
                   and abs(v / vals.var() - 1) < 1e-6))
    f0, f1 = rng.uniform(-1, 1, size=(2, 500, 2))
    lab = (f0[:, 0] + f1[:, 1] + rng.normal(0, 0.5, 500) > 0).astype(np.int64)
    w0, lr = np.array([0.1, -0.2, 0.3, 0.05]), 0.5
    w1 = run(logistic_step, f0, f1, lab, w0, lr, processes=P)
    checks.append(("logistic step (1e-4)", np.max(np.abs(w1 - numpy_logistic_step(
        f0, f1, lab, w0, lr))) < 1e-4))
    rel, noise = run(dp_count, ints, 0, 1.0, processes=P, reveal_noise=True)
    checks.append(("DP count: released - true = noise",
                   rel - np.sum(ints > 0) == noise))
    for name, ok in checks:
        print(f"{name:36s} {'ok' if ok else 'WRONG'}")
    print(f"{P} process(es), {time.perf_counter() - t:.1f} s")
    return 0 if all(ok for _, ok in checks) else 1


def numpy_logistic_step(f0, f1, labels, w0, lr):
    """The same step in numpy (the reference)."""
    X = np.concatenate([f0, f1], axis=1)
    p = 1 / (1 + np.exp(-(X @ w0)))
    return w0 - lr * X.T @ (p - labels) / labels.size


if __name__ == "__main__":
    sys.exit(main())
