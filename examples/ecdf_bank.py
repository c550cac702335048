"""Private ECDF, quantiles and histogram of UCI Bank `age` (or synthetic), epsilon = 1.

Two FSS servers hold one DCF key per customer (uploaded once); every
threshold query reuses the same tree noise, so the whole curve, its
smoothing, any number of quantiles and the histogram cost epsilon once.
"""

import os
import tempfile

import _paths
import numpy as np

from mpc.arith.rng import CSPRNG
from ustat.data import load_csv
from ustat.ecdf import Tree, histogram, quantiles, release, smooth
from ustat.ecdf.quantiles import interpolated_quantiles
from ustat.specs import ECDFSpec

if _paths.have(_paths.BANK):
    x = load_csv(_paths.BANK, columns=["age"])[0][:, 0]
    source = "UCI Bank (bank.csv), column age"
else:
    x = np.round(18 + 60 * CSPRNG().random(4521) ** 1.5)
    source = "synthetic ages"
bounds = (18, 95)                                   # public bounds
tau = np.arange(18, 96, dtype=float)                # one threshold per year of age
spec = ECDFSpec.of(thresholds=tau, bounds=bounds, epsilon=1.0, backend="fss")
rel = release(x, spec, evaluate=True)      # the simulator; LocalProcesses(P): P processes
acc = rel.account
print(f"{source}: n = {rel.n}, {tau.size} thresholds, epsilon = {acc['epsilon']:.3g}")
print(f"  tree: {acc['levels']} levels, node scale {acc['node_scale']:.3g}, "
      f"noise {acc['noise_mode']}; "
      f"expected squared error per point {acc['mse']:.2e} (counts: {acc['mse_counts']:.0f})")
rep = rel.communication
print(f"  traffic: {rep['offline']['bits'] / 8e6:.2f} MB of keys (offline), "
      f"{rep['online']['bits'] / 8e3:.1f} kB for {tau.size} queries in "
      f"{rep['online']['rounds']} rounds")
iv = rel.intervals(0.95)                                # from the release's node-noise law
print(f"  uncertainty: noise std {iv['noise_std']:.4f} per point; 95% pointwise "
      f"+-{iv['pointwise_halfwidth_counts'] / rel.n:.4f}, simultaneous band "
      f"+-{iv['band_halfwidth_counts'] / rel.n:.4f}; F(40) = {rel.values[22]:.4f} in "
      f"[{iv['pointwise_lo'][22]:.4f}, {iv['pointwise_hi'][22]:.4f}] "
      f"(true {rel.exact[22] / rel.n:.4f})")
F = smooth(rel.values, Tree(tau.size), "l2")            # post-processing, no epsilon
exact = rel.exact / rel.n
print(f"  max |F - F_true|: noisy {np.abs(rel.values - exact).max():.4f}, "
      f"smoothed (l2) {np.abs(F - exact).max():.4f}")
q = [0.1, 0.25, 0.5, 0.75, 0.9]
print("  quantiles (private / true):",
      ", ".join(f"q{p:g} = {a:g}/{b:g}" for p, a, b in
                zip(q, quantiles(F, q, thresholds=tau), np.quantile(x, q, method="inverted_cdf"))))
qi = rel.quantile_intervals(q)
print("  95% CIs of the quantiles:", ", ".join(f"q{p:g} in [{a:g}, {b:g}]"
                                             for p, a, b in zip(q, qi["lo"], qi["hi"])))
print("  interpolated (grouped-data) quantiles, 95% CIs:",
      ", ".join(f"q{p:g} = {v:.2f} in [{a:.2f}, {b:.2f}]" for p, v, a, b in
                zip(q, interpolated_quantiles(F, q, tau), qi["interpolated_lo"],
                    qi["interpolated_hi"])))
edges, h = histogram(F * rel.n, tau, bins=7)
print("  7 bins (upper edge: private count):",
      ", ".join(f"{e:g}: {c:.0f}" for e, c in zip(edges, h)))
try:
    from ustat.ecdf.plots import plot_ecdf
    path = plot_ecdf(os.path.join(tempfile.gettempdir(), "ecdf_bank_age.png"), tau, rel.values,
                     n=rel.n, epsilon=1.0, column="age (years)", smoothed=F, smoothing="l2",
                     exact=exact, bins=7, backend="fss")
    print(f"  plot: {path}")
except ImportError as exc:
    print(f"  (no plot: {exc})")
