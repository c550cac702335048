"""Private empirical CDFs, quantiles, ROC curves and Hosmer-Lemeshow tests.

Barczewski, Mawass, Ramon, "Differentially Private Empirical Cumulative
Distribution Functions": tree noise on integer counts (Section 3.1), answered
by two FSS servers holding party-generated DCF keys (Section 4.2) or by one
secure aggregation per query (Section 4.1); smoothing (Section 3.2), the
inverse ECDF (Algorithm 1), ROC/AUC and the Hosmer-Lemeshow test (Section 5).

Every statistic takes its data, a spec (:mod:`ustat.specs.ecdf`: privacy, precision,
the threshold grid, execution options) and an executor (:mod:`ustat.executors`; the
simulator by default)::

    from ustat.ecdf import release
    from ustat.specs import ECDFSpec
    rel = release(ages, ECDFSpec.of(thresholds=78, bounds=(18, 95), epsilon=1.0))
    rel = release(ages, spec, LocalProcesses(4))     # parties, servers, analyst: 4 processes

Each builds one SPMD program (``ecdf_program``, ``quantile_program``, ``roc_program``,
``hl_program``) that the executor runs; none spreads itself over processes.

Modules, bottom up: :mod:`.thresholds` (grids, grid ranks), :mod:`.sensitivity`,
:mod:`.noise_law`, :mod:`.tree` (tree, sensitivity, exact node noise, accuracy),
:mod:`.servers` (FSS servers), :mod:`.node_noise` (noise sampled inside MPC),
:mod:`.pointwise` (per-query secure aggregation), :mod:`.intervals`, :mod:`.smoothing`,
:mod:`.release` (deploy / release / backends), :mod:`.quantiles`, :mod:`.roc`,
:mod:`.hl_test`, :mod:`.hosmer_lemeshow`, :mod:`.plots`. Layer: imports ``mpc``, ``fss``,
``noise``, :mod:`ustat.specs` and :mod:`ustat.executors` only (scipy, clarabel and
matplotlib lazily, for smoothing and plots); the command line is :mod:`ustat.cli.ecdf`,
the reports :mod:`ustat.reports.ecdf`.
"""

from ..specs.ecdf import ECDFSpec, HLSpec, QuantileSpec, ROCSpec
from .hosmer_lemeshow import HLResult, chi2_sf, hl_program, private_hosmer_lemeshow
from .quantiles import QuantileRelease, histogram, private_quantiles, quantile_program, quantiles
from .release import BACKENDS, Deployment, ECDFRelease, deploy, ecdf_program, release
from .roc import ROCRelease, private_roc, roc_program
from .smoothing import MissingDependencyError, isotonic, smooth
from .thresholds import check_thresholds, geometric, grid_rank, regular
from .tree import Tree, TreeNoise, best_branching, draw_noise, interval_sensitivity

__all__ = [
    "BACKENDS",
    "Deployment",
    "ECDFRelease",
    "ECDFSpec",
    "HLResult",
    "HLSpec",
    "MissingDependencyError",
    "QuantileRelease",
    "QuantileSpec",
    "ROCRelease",
    "ROCSpec",
    "Tree",
    "TreeNoise",
    "best_branching",
    "check_thresholds",
    "chi2_sf",
    "deploy",
    "draw_noise",
    "ecdf_program",
    "geometric",
    "grid_rank",
    "histogram",
    "hl_program",
    "interval_sensitivity",
    "isotonic",
    "private_hosmer_lemeshow",
    "private_quantiles",
    "private_roc",
    "quantile_program",
    "quantiles",
    "regular",
    "release",
    "roc_program",
    "smooth",
]
