"""Shared fixtures: seeded (insecure, reproducible) generators and data paths."""

import os

import pytest

from mpc.arith.rng import CSPRNG

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_DATA = os.path.normpath(os.path.join(REPO, "..", "shared", "data"))


@pytest.fixture
def rng():
    return CSPRNG(seed=20261121)


def shared_data(*parts):
    """Path under ../shared/data, or skip the test with the reason."""
    path = os.path.join(SHARED_DATA, *parts)
    if not os.path.exists(path):
        pytest.skip(f"shared data not available: {path} (clone with ../shared beside the repo)")
    return path
