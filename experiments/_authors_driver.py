"""Run the Sinh-Ramon authors' code on given inputs: a standalone driver (stdlib and numpy only).

Started by :mod:`experiments.authors_code` in a subprocess whose working
directory is a checkout of github.com/anonguest1398/federated-U-statistics
at the pinned commit (first on ``sys.path``); nothing of theirs is copied
into this repository. Usage::

    python _authors_driver.py JOBS.json

JOBS.json: ``{"data": {name: path of a .npy}, "runs": [run, ...]}``; each run
is a dict with ``kind``, ``seed`` (a string) and the kind's parameters. One
JSON line per run and protocol goes to stdout: the run's fields plus
``protocol``, ``estimate``, ``real`` (their ``compute_real_U``, computed once
per data set and kernel), ``sq_err`` and ``seconds`` (kind ``ghazi`` gives
two lines, Ghazi and GhaziSM, from one decomposition, as their
``comparison.py`` does).

What the driver adds around their functions, and nothing else:

* seeding: their code draws from Python's ``random``, numpy's global state
  and an unseeded ``np.random.default_rng()``; each run seeds the first two
  from its seed string and makes ``default_rng()`` without a seed return a
  generator seeded from it, so that runs are reproducible;
* ``experiments.load_data``: their ``kendall_ghazi`` imports a function
  ``get_data_power_consumption`` that their ``load_data.py`` does not define
  (an ImportError at the pinned commit); the driver installs a stub module
  under that name so that the import succeeds (the function is not used);
* the kernels, as their ``experiments/comparison.py`` defines them;
* for kind ``umpc``, the Laplace draw their U-MPC adds to the mean, recorded by
  wrapping ``np.random.laplace`` (the draw is unchanged): the line then also
  has ``noise`` and ``sampling_err`` = estimate - noise - real, the error of
  their sampled pairs alone (issue 38: which part of their error is which).
"""

import hashlib
import json
import math
import os
import random
import sys
import time
import types

import numpy as np

HERE = os.getcwd()
if HERE not in sys.path:
    sys.path.insert(0, HERE)


def _stub_load_data():
    pkg = types.ModuleType("experiments")
    pkg.__path__ = []
    mod = types.ModuleType("experiments.load_data")
    mod.get_data_power_consumption = None
    sys.modules["experiments"] = pkg
    sys.modules["experiments.load_data"] = mod


def _seed(seed: str) -> None:
    x = int(hashlib.sha256(seed.encode()).hexdigest()[:16], 16)
    random.seed(x)
    np.random.seed(x % 2 ** 32)
    counter = [0]
    orig = _seed.orig

    def default_rng(seed=None, *a, **kw):
        if seed is None:
            counter[0] += 1
            seed = [x % 2 ** 32, counter[0]]
        return orig(seed, *a, **kw)
    np.random.default_rng = default_rng


_seed.orig = np.random.default_rng


def _sign(x):
    if x < 0:
        return -1
    if x == 0:
        return 0
    return 1


KERNELS = {
    "gini": lambda a, b: abs(a - b),
    "duplicate": lambda a, b: a == b,
    "kendall": lambda a, b: _sign(a[0] - b[0]) * _sign(a[1] - b[1]),
}


def run_one(job: dict, data: dict) -> dict:
    """Their estimates for one run, by protocol (modules imported lazily: only what a job needs)."""
    kind = job["kind"]
    X = data[job["data"]]
    if job.get("subset") is not None:                       # as their select_random
        X = X[np.random.choice(len(X), int(job["subset"]), False)]
    n = len(X)
    f = KERNELS[job["kernel"]]
    if kind == "umpc":
        from protocols import our
        drawn = []
        laplace = np.random.laplace

        def recorded(*a, **kw):
            x = laplace(*a, **kw)
            drawn.append(float(np.asarray(x).reshape(-1)[0]))
            return x
        np.random.laplace = recorded
        m = int(job["edges"])
        if job["sampler"] == "balanced":
            est = our.ours_balanced(n, m, X, job["epsilon"], f, 40, 14, False)
        elif job["sampler"] == "wo":
            est = our.ours_wo_repl(n, m, X, job["epsilon"], f)
        else:
            est = our.ours_bernoulli(n, job["alpha"], X, job["epsilon"], f)
        np.random.laplace = laplace
        if len(drawn) == 1:
            return {kind: float(np.asarray(est).reshape(-1)[0]), "noise": drawn[0]}
    elif kind == "bell":
        if job["kernel"] == "kendall":
            from protocols.kendall.kendall_bell import kendall_bell
            est = kendall_bell(n, int(job["t"]), X, [0.0, 1.0], job["epsilon"], f)
        else:
            from protocols.bell import bell_method
            est = bell_method(n, int(job["t"]), X, [0.0, 1.0], job["epsilon"], f)
    elif kind == "ghazi":                        # both estimates, as their comparison.py
        _stub_load_data()
        from protocols.kendall import kendall_ghazi as kg
        gh, L, R, m, ll = kg.kendall_ghazi(n, job["epsilon"], X, [0.0, 1.0], int(job["t"]), f)
        sm = kg.kendall_ghazi_shuffle(n, job["epsilon"], X, int(job["t"]), L, R, m, ll)
        return {"ghazi": float(np.asarray(gh).reshape(-1)[0]),
                "ghazi-sm": float(np.asarray(sm).reshape(-1)[0])}
    else:
        raise ValueError(f"unknown job kind {kind!r}")
    return {kind: float(np.asarray(est).reshape(-1)[0])}


def main(argv) -> int:
    with open(argv[1]) as f:
        spec = json.load(f)
    data = {k: np.load(v) for k, v in spec["data"].items()}
    reals: dict = {}
    from protocols.real import compute_real_U
    for job in spec["runs"]:
        _seed(job["seed"])
        X = data[job["data"]]
        if job.get("subset") is not None:
            # the subset is drawn first, from the seeded state, then the estimate from the same
            # state (run_one draws the same subset: it reseeds)
            idx = np.random.choice(len(X), int(job["subset"]), False)
            sub = X[idx]
            real = float(np.asarray(compute_real_U(sub, len(sub), KERNELS[job["kernel"]])))
            _seed(job["seed"])
        else:
            key = (job["data"], job["kernel"])
            if key not in reals:
                reals[key] = float(np.asarray(compute_real_U(X, len(X),
                                                             KERNELS[job["kernel"]])))
            real = reals[key]
        t = time.perf_counter()
        ests = run_one(job, data)
        secs = time.perf_counter() - t
        noise = ests.pop("noise", None)
        for proto, est in ests.items():
            out = {**job, "protocol": proto, "estimate": est, "real": real,
                   "sq_err": (est - real) ** 2 if math.isfinite(est) else None, "seconds": secs}
            if noise is not None:
                out.update(noise=noise, sampling_err=est - noise - real)
            print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
