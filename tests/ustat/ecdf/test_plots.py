"""The ROC plot draws the simultaneous band the release reports (roc_band in the JSON)."""

import numpy as np
import pytest

from tests.api import flat_roc

matplotlib = pytest.importorskip("matplotlib")


def test_the_roc_plot_draws_the_released_band(tmp_path, monkeypatch):
    matplotlib.use("Agg")
    from matplotlib.axes import Axes

    from ustat.ecdf.plots import plot_roc

    g = np.random.default_rng(4)
    y = (g.random(3000) < 0.4).astype(int)
    s = np.clip(g.normal(0.4 + 0.2 * y, 0.15), 0, 1)
    r = flat_roc(s, y, np.linspace(0, 1, 32), 2.0, bounds=(0, 1), backend="central", seed=5)
    iv = r.intervals
    fills = []
    real_fill = Axes.fill

    def spy(self, *args, **kw):
        fills.append((np.asarray(args[0]), np.asarray(args[1]), kw.get("label", "")))
        return real_fill(self, *args, **kw)

    monkeypatch.setattr(Axes, "fill", spy)
    out = plot_roc(tmp_path / "roc.png", r, score="s", label="y")
    assert (tmp_path / "roc.png").stat().st_size > 0 and out == tmp_path / "roc.png"
    (x, yv, label), = fills
    assert "simultaneous band" in label and "95%" in label
    n = len(iv["fpr_lo"])
    assert np.allclose(x[:n], iv["fpr_lo"]) and np.allclose(yv[:n], iv["tpr_hi"])
    assert np.allclose(x[n:], np.asarray(iv["fpr_hi"])[::-1])
    assert np.allclose(yv[n:], np.asarray(iv["tpr_lo"])[::-1])
    assert np.all(np.asarray(iv["tpr_hi"]) >= np.asarray(iv["tpr_lo"]))
