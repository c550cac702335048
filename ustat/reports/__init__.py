"""Release reports: the dict a command prints with ``--json`` and its text, for every statistic.

The ``ustat`` command (:mod:`ustat.cli`) and a deployment's receiving role
(:mod:`ustat.deploy`) build the same report from a result and the spec it
ran, so a seeded deployment prints what the one-process command prints.

- :mod:`.common`: numbers and sizes as text, the data description, the budget line;
- :mod:`.umpc`: ``ustat estimate`` (U-MPC);
- :mod:`.baselines`: ``ustat estimate --protocol NAME`` (the protocols of :mod:`ustat.baselines`);
- :mod:`.ecdf`: ``ustat ecdf``, ``quantile``, ``roc``, ``hl`` (the ECDF family).
"""
