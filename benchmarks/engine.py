"""Engine throughput: Beaver, sharing, CSPRNG, permutation, network accounting at 10^6-10^7 parties.

Usage: python benchmarks/engine.py [--json] [--quick]

Every timing is the median of 3 warm calls after one cold call (cold apart
where it differs). Keys: beaver_mults_per_s (2 parties, online phase, batch
10^6), sharing_elems_per_s (2-of-2 additive sharing, batch 10^6),
csprng_bytes_per_s, permutation_4e6_seconds (a uniform permutation of
4 * 10^6 elements, the stub shuffle of BalancedSamp at n = 10^6),
aggregation_1e6_seconds (10^6 parties each send one ring element to the
aggregator, network accounting and the aggregator's sum included) with the
measured bits of that round, and accounting_ns_per_message: network
accounting of 16 chunks of 2^17 edge messages at random ids among 10^7
parties, sent on local sub-networks, absorbed (the U-MPC merge path) and reported:
the cost per message, one report's O(n) included
(accounting_ns_per_message_1e5: the same at 10^5 parties; the growth between
the two is cache misses on larger counters and that report, not a per-send
O(n) term).
With --quick the aggregation runs at 10^5 parties and aggregation_1e6_seconds
is scaled linearly (aggregation_parties says which); the permutation has
4 * 10^5 elements and the accounting compares 10^5 and 10^6 parties.
"""

from __future__ import annotations

import _common  # noqa: F401  (puts the repo root on sys.path)
import numpy as np
from _common import cold_and_warm, emit, parse_args

from mpc.arith.rng import CSPRNG
from mpc.arith.sharing import additive_share
from mpc.comm.network import Network
from mpc.protocols.beaver import multiply
from mpc.session import Session


def accounting(n_parties: int, chunks: int = 16, chunk: int = 1 << 17) -> float:
    """Seconds per message of sending 2-member edge traffic in chunks and absorbing it."""
    g = CSPRNG(1)
    edges = g.integers(n_parties, (chunks, chunk, 2))
    payload = np.zeros(chunk, np.uint64)

    def run():
        net = Network(n_parties)
        with net.parallel():
            for c in range(chunks):
                sub = Network(2 * chunk)
                slots = np.arange(2 * chunk).reshape(chunk, 2)
                with sub.phase("sharing"), sub.round():
                    sub.send(slots[:, 0], slots[:, 1], payload, 40)
                    sub.send(slots[:, 1], slots[:, 0], payload, 40)
                with sub.phase("computing"):
                    sub.send_bits(sub.role("dealer"), slots[:, 0], 6800, offline=True)
                    sub.send(slots[:, 0], slots[:, 1], payload, 40)
                with net.lane():
                    net.absorb(sub.traffic().compress(2), edges[c].ravel())
        return net.report()

    _, warm, _ = cold_and_warm(run)
    return warm / (chunks * chunk * 4)


def main(argv=None):
    args = parse_args(__doc__.splitlines()[0], argv)
    n = 10**5 if args.quick else 10**6
    s = Session(2)
    r, h = s.ring, np.array([0, 1])
    x = additive_share(r, s.rng.ring_elements(r, n), 2, s.rng)
    y = additive_share(r, s.rng.ring_elements(r, n), 2, s.rng)
    triples = s.dealer.beaver_triples(h, (n,))
    _, t_mul, _ = cold_and_warm(lambda: multiply(s, x, y, h, triples))
    _, t_share, _ = cold_and_warm(lambda: additive_share(r, x[0], 2, s.rng))
    nbytes = 16 * n
    _, t_rng, _ = cold_and_warm(lambda: s.rng.bytes_array(nbytes))
    _, t_perm, _ = cold_and_warm(lambda: s.rng.permutation(4 * n))

    n_agg = 10**5 if args.quick else 10**6
    agg = Session(n_agg)
    values = agg.rng.ring_elements(agg.ring, n_agg)
    aggregator = agg.net.role("aggregator")

    def aggregation():
        with agg.net.phase("aggregation"):
            agg.net.send(agg.net.parties, aggregator, values, agg.ring.bits)
        agg.ring.sum(values)

    _, t_agg, _ = cold_and_warm(aggregation)
    agg.net.reset()
    aggregation()
    big, small = (10**6, 10**5) if args.quick else (10**7, 10**5)
    result = {
        "batch": n,
        "bits": r.bits,
        "beaver_mults_per_s": n / t_mul,
        "sharing_elems_per_s": n / t_share,
        "csprng_bytes_per_s": nbytes / t_rng,
        "permutation_4e6_seconds" if not args.quick else "permutation_4e5_seconds": t_perm,
        "aggregation_parties": n_agg,
        "aggregation_1e6_seconds": t_agg * (10**6 / n_agg),
        "aggregation_bits": agg.net.report()["online"]["bits"],
        "accounting_parties": big,
        "accounting_ns_per_message": 1e9 * accounting(big),
        "accounting_ns_per_message_1e5": 1e9 * accounting(small),
    }
    emit(result, args.json)


if __name__ == "__main__":
    main()
