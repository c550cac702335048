"""Shared pieces of the FedAUC scripts (Sun et al.): data, client columns, Monte Carlo.

Data (a disclosed substitute: Criteo is not in the data directory): UCI
Diabetes 130-US (readmitted at all is positive, 46%), scikit-learn logistic
regression scores cross-fitted on two random halves (every record has an
out-of-sample score), M = 101,766 records: the role of the paper's "small"
Criteo evaluation set (M = 458,407, 25.6% positive). The paper's 10x larger
set (Table 6, Fig. 1a) is checked as the same 10x relation between a random
tenth of Diabetes (M = 10,177) and all of it.

Client columns: the paper's columns are numbers of clients K on Criteo,
i.e. average records per client (spc) 45,840 ... 1. The comparisons the
paper draws depend on spc (the Laplace noise of a client grows with its
ranks, RR's does not depend on clients), so ours keep the spc: K = M / spc
rounded (at least 2), and K = M for one record per client.

Monte Carlo: every run draws the release of steps 3-4 from the ranks the
server computes (:func:`ustat.baselines.fedauc.ranks_of`,
:func:`~ustat.baselines.fedauc.rr_release`,
:func:`~ustat.baselines.fedauc.lap_release`; the protocol calls the same
functions between its network rounds), with a fresh IID partition per run
(public coins), as the protocol does. One real protocol run per setting
gives the measured costs (network counters).
"""

from __future__ import annotations

import math

import numpy as np

from experiments import _common as C  # noqa: N812 - the codebase's short capital module alias

#: The paper's Criteo sets (Table 4): M, P.
CRITEO = {"small": (458407, 117317), "large": (4584062, 1173981)}
#: The columns of Tables 1, 2 and 7: number of clients on Criteo and records per client.
PAPER_K = [10, 458, 1000, 4584, 45840, 100000, 458407]
PAPER_SPC = [45840.0, 1000.0, 458.4, 100.0, 10.0, 4.6, 1.0]
#: The budget split of the non-adaptive variants (Tables 1, 2, 7: alpha = 0.5).
ALPHA = 0.5

#: Method keys -> (label, protocol keywords for fedauc-lap, partition).
METHODS = {
    "global": ("GlobalLaplace", {"allocation": "global", "alpha": ALPHA}, "iid"),
    "local-iid": ("LocalLaplace (IID)", {"allocation": "fixed", "alpha": ALPHA}, "iid"),
    "local-noniid": ("LocalLaplace (non-IID)", {"allocation": "fixed", "alpha": ALPHA}, "noniid"),
    "adaptive-iid": ("LocalLaplace adaptive (IID)", {"allocation": "adaptive"}, "iid"),
    "adaptive-noniid": ("LocalLaplace adaptive (non-IID)", {"allocation": "adaptive"}, "noniid"),
}


def our_clients(M: int, spc: float) -> int:
    """K for our data at the paper's records per client (one record each: K = M)."""
    return M if spc == 1 else max(2, int(round(M / spc)))


def dataset(run, limit_quick: int = 3000):
    """(scores, labels) of the main set: Diabetes cross-fitted (quick mode: a random subset).

    The same scores in every FedAUC script (the seed does not name the script).
    """
    return C.crossfit_dataset("diabetes", f"{run.seed}:fedauc:scores",
                              limit=limit_quick if run.quick else None)


def tenth(run, scores, y):
    """A random tenth of the records (public coins): the 10x smaller set of Table 6 / Fig. 1a."""
    _, keep = C.split(y.size, f"{run.seed}:fedauc:tenth", int(round(y.size / 10)))
    return scores[keep], y[keep]


class Release:
    """The FedAUC release on fixed data: ranks once, one Monte Carlo draw per call."""

    def __init__(self, scores, y):
        from ustat.baselines import fedauc

        self.scores = np.asarray(scores, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.int64)
        self.M = self.y.size
        self.ranks = fedauc.ranks_of(self.scores)

    def owner(self, K: int, partition: str, rng):
        from ustat.baselines import fedauc

        if K == self.M:
            return np.arange(self.M)
        return fedauc.assign_clients(self.scores, K, partition, rng.derive("partition"))

    def rr(self, eps: float, seed) -> dict:
        """One FedAUC_RR draw (one record per client: RR does not depend on the clients)."""
        from mpc.arith.rng import CSPRNG
        from ustat.baselines import fedauc

        rng = CSPRNG(seed)
        owner = np.arange(self.M)
        stats = fedauc.rr_statistics(self.ranks, self.y, owner, self.M, eps,
                                     rng.derive("label-randomizers"))
        return fedauc.rr_release(self.ranks, eps, sums=stats.sum(axis=0))

    def lap(self, eps: float, K: int, partition: str, seed, **kw) -> dict:
        """One FedAUC_Lap draw with K clients (``kw``: allocation, alpha, beta, exact_counts)."""
        from mpc.arith.rng import CSPRNG
        from ustat.baselines import fedauc

        rng = CSPRNG(seed)
        owner = self.owner(K, partition, rng)
        stats, theory = fedauc.lap_statistics(self.ranks, self.y, owner, K, eps,
                                              rng=rng.derive("client-noise"),
                                              noise=fedauc.LapNoise(**kw))
        return fedauc.lap_release(self.ranks, eps, sums=stats.sum(axis=0), theory=theory)


def protocol_run(scores, y, protocol: str, eps: float, seed, **kw):
    """One real protocol run on the simulated network (its costs)."""
    from ustat.baselines import BaselineSpec, run_protocol

    X = np.column_stack([scores, np.asarray(y, dtype=np.float64)])
    return run_protocol(X, BaselineSpec.of(protocol, "auc", epsilon=eps, seed=seed, **kw))


def std_cell(values) -> tuple[float, float]:
    """The paper's metric over runs: the standard deviation of the AUC, with its s.e."""
    return C.std_se(values)


def scale_to(M: int, P: int, ref=CRITEO["small"]) -> float:
    """std(ours) / std(Criteo) predicted by eqs. (7)-(9): sqrt(M^3) / (P N) at fixed epsilon."""
    def f(m, p):
        return math.sqrt(m ** 3) / (p * (m - p))
    return f(M, P) / f(*ref)


def auc_truth(scores, y) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, scores))
