"""Private Hosmer-Lemeshow test of a logistic regression on UCI Bank (or synthetic), epsilon = 5.

Algorithm 2 of Barczewski, Mawass, Ramon: group edges from the private ECDF
of the predicted probabilities, then 4 Q noisy sums; epsilon' = epsilon /
(Delta + 8) with Delta the tree sensitivity (the paper's L + 1 is 1 looser).
"""

import _paths  # noqa: F401 - puts the repository on sys.path (imported for that effect)
from ecdf_scores import bank_scores

from ustat.ecdf import private_hosmer_lemeshow
from ustat.specs import HLSpec

p, y, source = bank_scores()
r = private_hosmer_lemeshow(p, y, HLSpec.of(groups=10, epsilon=5.0, backend="fss"),
                            evaluate=True)
a = r.account
print(f"{source}: n = {p.size}, Q = {r.groups}")
print(f"  private H = {r.statistic:.2f}, p = {r.p_value:.3g} (null '{r.null}', DP noise in the "
      f"null; noise sd {r.noise_sd:.3g} per group; detects a miscalibration of "
      f"{r.detectable_miscalibration:.3f} half the time)   "
      f"(true H = {r.exact['statistic']:.2f}, p = {r.exact['p_value']:.3g})")
print(f"  epsilon = {a['epsilon']:.3g} = tree {a['tree_epsilon']:.3g} "
      f"+ sums {a['sums_epsilon']:.3g}")
print("  group edges:", ", ".join(f"{e:.3f}" for e in r.edges))
print("  observed / expected positives:",
      ", ".join(f"{o:.0f}/{e:.0f}" for o, e in zip(r.table["O1"], r.table["E1"])))
if r.clamped:
    print(f"  note: {r.clamped} noisy expectation(s) below 0 were taken as 0 in the variances")
