"""PNG plots of private ECDFs, histograms, ROC curves and HL tables (matplotlib, extra ``plots``).

Every figure names its axes with units, says epsilon in the title, and in
evaluation mode draws the true curve beside the private one. A missing
matplotlib raises :class:`~ustat.ecdf.smoothing.MissingDependencyError` with a
one-line install hint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .quantiles import histogram
from .smoothing import MissingDependencyError

if TYPE_CHECKING:
    import os

    from numpy.typing import ArrayLike

    from .hosmer_lemeshow import HLResult
    from .roc import ROCRelease

__all__ = ["plot_ecdf", "plot_hl", "plot_roc"]


def _plt():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError("plots need matplotlib: pip install 'ustat-mpc[plots]' "
                                "(or pip install matplotlib)") from None
    return plt


def _eps_text(eps) -> str:
    return "epsilon = inf (no noise)" if eps == float("inf") else f"epsilon = {eps:.3g}"


def plot_ecdf(path: str | os.PathLike[str], thresholds: ArrayLike, noisy: ArrayLike, *, n: int,
              epsilon: float, column: str = "value", smoothed: ArrayLike | None = None,
              smoothing: str | None = None, exact: ArrayLike | None = None, bins: int = 20,
              backend: str = "") -> str | os.PathLike[str]:
    """Two panels: the ECDF (private, smoothed, true) and a histogram derived from it.

    ``noisy``/``smoothed``/``exact``: ECDF values in [0, 1] at ``thresholds``.
    """
    plt = _plt()
    tau = np.asarray(thresholds, np.float64)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    ax.step(tau, noisy, where="post", color="tab:orange", lw=1, alpha=0.8,
            label="private (tree noise)")
    if smoothed is not None:
        ax.step(tau, smoothed, where="post", color="tab:blue", lw=1.6,
                label=f"private, smoothed ({smoothing})")
    if exact is not None:
        ax.step(tau, exact, where="post", color="black", lw=1, ls="--", label="true ECDF")
    ax.set_xlabel(f"{column} (threshold, data units)")
    ax.set_ylabel(f"F(t) = fraction of records with {column} <= t")
    ax.set_ylim(-0.05, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(f"Private ECDF of {column} (n = {n}, {_eps_text(epsilon)})", fontsize=10)
    bins = max(1, min(int(bins), tau.size))
    src = smoothed if smoothed is not None else noisy
    edges, h = histogram(np.asarray(src) * n, tau, bins)
    left = np.concatenate([[tau[0]], edges[:-1]])
    width = edges - left
    bx.bar(left, h, width=width, align="edge", color="tab:blue", alpha=0.6, edgecolor="white",
           label="private" + (f" ({smoothing})" if smoothed is not None else ""))
    if exact is not None:
        _, he = histogram(np.asarray(exact) * n, tau, bins)
        bx.step(np.append(left, edges[-1]), np.append(he, he[-1]), where="post", color="black",
                lw=1, ls="--", label="true")
    bx.set_xlabel(f"{column} (bin, data units)")
    bx.set_ylabel("records per bin")
    bx.grid(alpha=0.3)
    bx.legend(fontsize=8)
    bx.set_title(f"DP histogram from the same release ({bins} bins, no extra epsilon)",
                 fontsize=10)
    if backend:
        fig.text(0.01, 0.01, f"backend: {backend}", fontsize=7, color="gray")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_roc(path: str | os.PathLike[str], roc: ROCRelease, *, score: str = "score",
             label: str = "label", positive: str | None = None) -> str | os.PathLike[str]:
    """The private ROC curve with its simultaneous band (the released ``roc_band``), beside
    the true one (evaluation mode) and the diagonal."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.4, 5.2))
    ax.plot([0, 1], [0, 1], color="gray", lw=0.8, ls=":", label="chance (AUC 0.5)")
    iv = roc.intervals or {}
    if all(k in iv for k in ("fpr_lo", "fpr_hi", "tpr_lo", "tpr_hi")):
        upper = np.column_stack([iv["fpr_lo"], iv["tpr_hi"]])       # the band's outer corners
        lower = np.column_stack([iv["fpr_hi"], iv["tpr_lo"]])[::-1]
        level = iv.get("confidence")
        what = f"{level:.0%} " if isinstance(level, float) else ""
        ax.fill(*np.vstack([upper, lower]).T, color="tab:blue", alpha=0.15, lw=0,
                label=f"{what}simultaneous band")
    name = "private" + (f", smoothed ({roc.smoothing})" if roc.smoothing else "")
    ax.plot(roc.fpr, roc.tpr, color="tab:blue", lw=1.5, label=f"{name}: AUC {roc.auc:.3f}")
    if roc.exact is not None:
        ax.plot(roc.exact["fpr"], roc.exact["tpr"], color="black", lw=1, ls="--",
                label=f"true: AUC {roc.exact['auc']:.3f}")
    ax.set_xlabel("false positive rate (fraction of negatives with score > t)")
    ax.set_ylabel("true positive rate (fraction of positives with score > t)")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    pos = f" = {positive}" if positive is not None else ""
    ax.set_title(f"ROC of {score} for {label}{pos} ({_eps_text(roc.account['epsilon_requested'])})",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_hl(path: str | os.PathLike[str], hl: HLResult, *,
            prob: str = "probability") -> str | os.PathLike[str]:
    """Observed vs expected positives per HL group (private bars, true markers)."""
    plt = _plt()
    Q = hl.groups
    x = np.arange(1, Q + 1)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.bar(x - 0.2, hl.table["E1"], width=0.4, color="tab:gray",
           label="expected positives (private)")
    ax.bar(x + 0.2, hl.table["O1"], width=0.4, color="tab:blue",
           label="observed positives (private)")
    if hl.exact is not None:
        ax.plot(x - 0.2, hl.exact["table"]["E1"], "k_", ms=14, mew=2,
                label=f"expected (true: exact groups, H = {hl.exact['statistic']:.3g})")
        ax.plot(x + 0.2, hl.exact["table"]["O1"], "r_", ms=14, mew=2, label="observed (true)")
    ax.set_xlabel(f"group (deciles of {prob} when Q = 10; 1 = lowest)")
    ax.set_ylabel("positives in the group (records)")
    ax.set_xticks(x)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    ax.set_title(f"Hosmer-Lemeshow: H = {hl.statistic:.3g}, p = {hl.p_value:.3g} "
                 f"({_eps_text(hl.account['epsilon_requested'])})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
