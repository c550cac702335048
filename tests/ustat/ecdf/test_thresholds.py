import numpy as np
import pytest

from ustat.ecdf import thresholds as th


def test_grid_rank_encodes_the_comparison_exactly():
    tau = np.array([-1.5, 0.0, 0.25, 3.0])
    x = np.array([-2, -1.5, -1.4, 0.0, 0.1, 0.25, 2.9, 3.0, 5.0])
    r = th.grid_rank(x, tau)
    assert np.array_equal(r[:, None] <= np.arange(4)[None, :], x[:, None] <= tau[None, :])
    with pytest.raises(ValueError, match="row 2 is NaN"):
        th.grid_rank([0.0, np.nan], tau)


def test_grids():
    assert np.allclose(th.regular((0, 1), n=5), [0, 0.25, 0.5, 0.75, 1])
    assert np.array_equal(th.regular((0, 1), n=1), [1.0])
    g = th.regular((0.05, 1), psi=0.25)
    assert np.allclose(g, [0.25, 0.5, 0.75, 1.0])
    geo = th.geometric((1, 1000), n=4)
    assert np.allclose(geo, [1, 10, 100, 1000])
    assert th.geometric((1, 100), psi=np.log(10))[-1] == 100
    with pytest.raises(ValueError, match="positive lower bound"):
        th.geometric((0, 1), n=3)
    with pytest.raises(ValueError, match="exactly one of"):
        th.regular((0, 1))
    with pytest.raises(ValueError, match="lo < hi"):
        th.regular((1, 1), n=3)


@pytest.mark.parametrize("tau,bounds,msg", [
    ([0.0, 2.0, 1.0], None, "sorted increasingly: threshold 3"),
    ([0.0, 1.0, 1.0], None, "distinct: threshold 3 duplicates threshold 2"),
    ([0.0, 5.0], (0, 1), "threshold 2 .5.0. is outside the public bounds"),
    ([], None, "N = 0"),
    ([0.0, np.inf], None, "not finite"),
])
def test_bad_thresholds(tau, bounds, msg):
    with pytest.raises(ValueError, match=msg):
        th.check_thresholds(tau, bounds)


def test_thresholds_file(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("# grid\n0.5\n\n1.5  # upper\n")
    assert np.array_equal(th.from_file(f), [0.5, 1.5])
    f.write_text("1\nabc\n")
    with pytest.raises(ValueError, match="line 2: not a number"):
        th.from_file(f)
    f.write_text("# nothing\n")
    with pytest.raises(ValueError, match="N = 0"):
        th.from_file(f)
    with pytest.raises(ValueError, match="n must be >= 1"):
        th.regular((0, 1), n=0)
