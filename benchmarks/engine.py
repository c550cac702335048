"""Engine throughput: Beaver multiplication, sharing, CSPRNG, a 10^6-party aggregation.

Usage: python benchmarks/engine.py [--json] [--quick]

Keys: beaver_mults_per_s (2 parties, online phase, batch 10^6),
sharing_elems_per_s (2-of-2 additive sharing, batch 10^6), csprng_bytes_per_s,
aggregation_1e6_seconds (10^6 parties each send one ring element to the
aggregator, network accounting and the aggregator's sum included), plus the
measured bits of that round. With --quick the aggregation runs at 10^5 parties and
aggregation_1e6_seconds is scaled linearly (aggregation_parties says which).
"""

from __future__ import annotations

import _common  # noqa: F401  (puts the repo root on sys.path)
import numpy as np

from _common import best_of, emit, parse_args
from mpc.beaver import multiply
from mpc.session import Session
from mpc.sharing import additive_share


def main(argv=None):
    args = parse_args(__doc__.splitlines()[0], argv)
    n = 10**5 if args.quick else 10**6
    s = Session(2)
    r, h = s.ring, np.array([0, 1])
    x = additive_share(r, s.rng.ring_elements(r, n), 2, s.rng)
    y = additive_share(r, s.rng.ring_elements(r, n), 2, s.rng)
    triples = s.dealer.beaver_triples(h, (n,))
    t_mul = best_of(lambda: multiply(s, x, y, h, triples))
    t_share = best_of(lambda: additive_share(r, x[0], 2, s.rng))
    nbytes = 16 * n
    t_rng = best_of(lambda: s.rng.bytes_array(nbytes))

    n_agg = 10**5 if args.quick else 10**6
    agg = Session(n_agg)
    values = agg.rng.ring_elements(agg.ring, n_agg)
    aggregator = agg.net.role("aggregator")

    def aggregation():
        with agg.net.phase("aggregation"):
            agg.net.send(agg.net.parties, aggregator, values, agg.ring.bits)
        agg.ring.sum(values)

    t_agg = best_of(aggregation)
    agg.net.reset()
    aggregation()
    result = {
        "batch": n,
        "bits": r.bits,
        "beaver_mults_per_s": n / t_mul,
        "sharing_elems_per_s": n / t_share,
        "csprng_bytes_per_s": nbytes / t_rng,
        "aggregation_parties": n_agg,
        "aggregation_1e6_seconds": t_agg * (10**6 / n_agg),
        "aggregation_bits": agg.net.report()["online"]["bits"],
    }
    emit(result, args.json)


if __name__ == "__main__":
    main()
