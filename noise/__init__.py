"""Exact DP samplers, distributed noise protocols and DP accounting.

Layer: ``noise`` imports only ``mpc`` (never ``fss`` or ``ustat``).
Modules, bottom up: :mod:`noise.samplers` (exact samplers on the integers,
CSPRNG-driven), :mod:`noise.accounting` (calibration, composition, budget),
:mod:`noise.distributed` (shared noise protocols on an ``mpc`` session).
"""

from . import accounting, samplers  # noqa: F401

__all__ = ["samplers", "accounting", "distributed"]


def __getattr__(name):  # lazy: distributed needs the full mpc session layer
    if name == "distributed":
        import importlib
        return importlib.import_module(".distributed", __name__)
    raise AttributeError(name)
