"""Exact DP samplers, distributed noise protocols and DP accounting.

Layer: ``noise`` imports only ``mpc`` (never ``fss`` or ``ustat``).
Modules, bottom up: :mod:`noise.samplers` (exact samplers on the integers,
CSPRNG-driven), :mod:`noise.accounting` (calibration, composition, budget),
:mod:`noise.privacy_loss` (exact privacy loss of Polya-difference noise),
:mod:`noise.collusion` (who may collude: the noise split and its cost),
:mod:`noise.distributed` (shared noise protocols on an ``mpc`` session; the
Gaussian-type ones in :mod:`noise.gaussian_shares`), :mod:`noise.mpc_sampler`
and :mod:`noise.mpc_noise` (one discrete Laplace sampled inside MPC from the
contributors' coins), :mod:`noise.audit` (empirical DP audit of the split
against a colluding coalition).
"""

from . import accounting, collusion, privacy_loss, samplers  # noqa: F401

__all__ = ["samplers", "accounting", "privacy_loss", "collusion", "distributed", "audit",
           "mpc_sampler", "mpc_noise"]


def __getattr__(name):  # lazy: distributed and audit need the full mpc session layer
    if name in ("distributed", "audit", "gaussian_shares", "mpc_sampler", "mpc_noise"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(name)
