"""Exact DP samplers, distributed noise protocols and DP accounting.

Layer: ``noise`` imports only ``mpc`` (never ``fss`` or ``ustat``).
Modules, bottom up (a module imports only those before it):
:mod:`noise.samplers` (exact samplers on the integers, CSPRNG-driven),
:mod:`noise.accounting` (calibration, composition, budget),
:mod:`noise.budget_file` (a privacy budget kept in a file),
:mod:`noise.privacy_loss` (exact privacy loss of Polya-difference noise),
:mod:`noise.collusion` (who may collude: the noise split and its cost),
:mod:`noise.shares` (:class:`~noise.shares.NoiseShares`, what every noise
protocol returns, and the calibration they share), :mod:`noise.committee`
(the M_HF committee protocol), :mod:`noise.gaussian_shares` (coin-flipping
binomial, summed discrete Gaussians), :mod:`noise.mpc_sampler` and
:mod:`noise.mpc_noise` (one discrete Laplace sampled inside MPC from the
contributors' coins), :mod:`noise.distributed` (the discrete Laplace
protocols on an ``mpc`` session and the entry point
:func:`~noise.distributed.shared_dlap_noise`), :mod:`noise.audit` (empirical
DP audit of the split against a colluding coalition).

``import noise`` loads the samplers and the accounting only (they need
nothing of ``mpc`` but its CSPRNG). The protocol modules (committee,
gaussian_shares, mpc_sampler, mpc_noise, distributed, audit) load ``mpc``'s
network, dealer, Beaver and GMW layers (12 more modules), which
``import noise`` would otherwise pay for every user of a sampler: import
them by name (``from noise import distributed``). Measured on the 2-core
VM (fastest of 21 fresh interpreters, beyond numpy): ``import noise``
52 ms, every noise module 88 ms.
"""

from . import accounting, collusion, privacy_loss, samplers

__all__ = ["accounting", "collusion", "privacy_loss", "samplers"]
