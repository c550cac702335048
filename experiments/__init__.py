"""Reproductions of the papers' tables and figures, one script per table or figure.

Run one: ``python -m experiments.<script> [--quick] [--out DIR]``; all of them:
``python -m experiments.run_all``. Each writes ``<script>.csv``, one or more
PNGs and ``<script>.md`` (the paper's numbers beside ours) to ``--out``
(default ``experiments/results``). See ``experiments/README.md``.
"""
