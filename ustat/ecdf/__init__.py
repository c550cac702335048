"""Private empirical CDFs, quantiles, ROC curves and Hosmer-Lemeshow tests.

Barczewski, Mawass, Ramon, "Differentially Private Empirical Cumulative
Distribution Functions": tree noise on integer counts (Section 3.1), answered
by two FSS servers holding party-generated DCF keys (Section 4.2) or by one
secure aggregation per query (Section 4.1); smoothing (Section 3.2), the
inverse ECDF (Algorithm 1), ROC/AUC and the Hosmer-Lemeshow test (Section 5).

Modules, bottom up: :mod:`.thresholds` (grids, grid ranks), :mod:`.tree`
(tree, sensitivity, exact node noise, accuracy), :mod:`.servers` (FSS
servers), :mod:`.pointwise` (per-query secure aggregation), :mod:`.release`
(deploy / release / backends), :mod:`.smoothing`, :mod:`.quantiles`,
:mod:`.roc`, :mod:`.hosmer_lemeshow`, :mod:`.plots`, :mod:`.cli`.
Layer: imports ``mpc``, ``fss``, ``noise`` only (scipy, clarabel and
matplotlib lazily, for smoothing and plots).
"""

from .hosmer_lemeshow import HLResult, chi2_sf, private_hosmer_lemeshow
from .quantiles import histogram, quantiles
from .release import BACKENDS, Deployment, ECDFRelease, deploy, release
from .roc import ROCRelease, private_roc
from .smoothing import MissingDependency, isotonic, smooth
from .thresholds import check_thresholds, geometric, grid_rank, regular
from .tree import Tree, TreeNoise, best_branching, draw_noise, interval_sensitivity

__all__ = [
    "BACKENDS", "Deployment", "ECDFRelease", "deploy", "release", "quantiles", "histogram",
    "smooth", "isotonic", "private_roc", "ROCRelease", "private_hosmer_lemeshow", "HLResult",
    "chi2_sf", "Tree", "TreeNoise", "draw_noise", "interval_sensitivity", "best_branching",
    "check_thresholds", "regular", "geometric", "grid_rank", "MissingDependency",
]
