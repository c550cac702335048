"""Plot helpers of the experiment scripts: backend, axes, legends outside the data, paper markers.

Every figure is saved by :func:`save_png`, which writes the run's provenance
(commit, command, seed) into the PNG's metadata (key ``provenance``) and as
a small grey line above the figure, and keeps legends placed outside the axes in the image.
Values taken from a paper are drawn with :func:`paper_style`: hollow markers,
one marker shape per epsilon, labelled as the paper's.
"""

from __future__ import annotations

import json

#: One marker per epsilon for the papers' values (hollow), so that epsilons are told apart.
PAPER_MARKERS = ["D", "v", "s", "^", "P", "X", "*", "<", ">", "p", "h"]


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def subplots(nrows=1, ncols=1, **kw):
    """``pyplot.subplots`` with constrained layout (room for legends outside the axes)."""
    return pyplot().subplots(nrows, ncols, layout="constrained", **kw)


def _tick(v) -> str:
    from experiments._common import fmt

    return fmt(v)


def eps_axis(ax, values) -> None:
    """A log x axis with one plain tick label per value (no crowded minor labels)."""
    ax.set_xscale("log")
    ax.set_xticks(list(values))
    ax.set_xticklabels([_tick(v) for v in values])
    ax.xaxis.set_minor_locator(pyplot().NullLocator())


def legend_outside(ax, fontsize=7, **kw):
    """The axes' legend to the right of the axes (never over the data)."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    return ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                     fontsize=fontsize, borderaxespad=0.0, frameon=False, **kw)


def dress(ax, title, xlabel, ylabel, *, eps=None, logy=False, grid="both"):
    """Title, axis labels, a log epsilon axis (``eps``: its tick values), a grid, the legend
    outside: what every panel of the experiments needs."""
    if logy:
        ax.set_yscale("log")
    if eps is not None:
        eps_axis(ax, eps)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, which=grid)
    legend_outside(ax)


def legend_below(fig, axes, ncol=4, fontsize=7):
    """One legend for the whole figure below the axes (labels of all axes, deduplicated)."""
    seen, handles, labels = set(), [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in seen:
                seen.add(lab)
                handles.append(h)
                labels.append(lab)
    return fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                      ncol=ncol, fontsize=fontsize, frameon=False)


def paper_style(eps, eps_values, color="black", ms=7) -> dict:
    """Plot keywords for a paper value at ``eps``: a hollow marker, one shape per epsilon."""
    values = sorted(set(eps_values))
    marker = PAPER_MARKERS[values.index(eps) % len(PAPER_MARKERS)] if eps in values else "D"
    return dict(ls="none", marker=marker, mfc="none", mew=1.4, ms=ms, color=color)


def paper_legend(ax, eps_values, source: str, symbol="epsilon"):
    """Legend entries (grey, no data) explaining the paper's markers per epsilon."""
    for e in sorted(set(eps_values)):
        ax.plot([], [], **paper_style(e, eps_values, color="grey"),
                label=f"paper ({source}), {symbol} = {_tick(e)}")


def save_png(run, fig, suffix: str = ".png") -> str:
    """Save ``fig`` as ``<out>/<name><suffix>`` with the run's provenance; closes it."""
    prov = run.provenance()
    fig.text(0.0, 1.0, f"{prov['command']}  |  commit {prov['commit'][:12]}  |  seed "
             f"{prov['seed']}", fontsize=6, color="grey", ha="left", va="bottom",
             transform=fig.transFigure)
    path = run.path(suffix)
    fig.savefig(path, dpi=110, bbox_inches="tight",
                metadata={"provenance": json.dumps(prov, sort_keys=True),
                          "Software": "ustat-mpc experiments"})
    pyplot().close(fig)
    return path
