"""Communication as a protocol sees it: the network that counts every bit and round,
traffic tallies, cost reports, and which process holds which participant.

The simulator's network lives here; it reaches other processes only through
a link it is given (:mod:`mpc.run.routing`), never through socket code.
"""
