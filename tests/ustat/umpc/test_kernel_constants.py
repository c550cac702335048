"""Issue 40, silent case 5: ``ops.const`` means the same on the dealer and the gc backend;
without ``scale`` it raises on both where inputs and outputs have different scales."""

import numpy as np
import pytest

from ustat.kernels import Kernel
from ustat.specs import UMPCSpec
from ustat.umpc import run_umpc


def _kernel(scale):
    def plain(X):
        return (X[:, 0, 0] + X[:, 1, 0] > 1.0).astype(float)

    def secure(ops, x):
        one = ops.const(1.0) if scale is None else ops.const(1.0, scale=scale)
        return ops.to_fixed(ops.greater_than(ops.add(x[0][0], x[1][0]), one))

    return Kernel("sum_above_one", 2, 1, plain, secure, (0.0, 1.0), "[x + y > 1]",
                  encoding="order")


XS = np.random.default_rng(3).random(120)


@pytest.mark.parametrize("backend", ["dealer", "gc"])
def test_a_constant_at_the_input_scale_means_the_same_on_both_backends(backend):
    spec = UMPCSpec.of(_kernel("input"), epsilon=float("inf"), seed=1, backend=backend)
    r = run_umpc(XS, spec, evaluate=True)
    assert r.estimate == r.evaluation["u_incomplete"]
    assert 0.2 < r.estimate < 0.8                       # not the constant's 1.0


@pytest.mark.parametrize("backend", ["dealer", "gc"])
def test_an_ambiguous_constant_raises_on_both_backends(backend):
    spec = UMPCSpec.of(_kernel(None), epsilon=float("inf"), seed=1, backend=backend)
    with pytest.raises(ValueError, match=r"ops.const\(1.0\) is ambiguous"):
        run_umpc(XS, spec)
