"""The seeded commands whose releases must not change when code is reshaped.

Each entry is (name, argv) for ``ustat`` (run in-process by
:mod:`tests.releases.test_releases`, ``--json --no-progress`` appended).
``DATA`` is replaced by the shared data folder (``../shared/data``), ``HERE``
by this folder (``hl.csv``: 2,000 made-up (probability, outcome) rows).
The recorded outputs in ``recorded/`` come from the commit named in
``recorded/COMMIT``: ``python -m tests.releases.record`` writes them.
"""

BANK = "DATA/bank/bank.csv"
HEART = "DATA/heart-disease/heart.csv"

SEED = ["--seed", "golden"]

COMMANDS = [
    # U-MPC: each kernel family, both threat models, both backends, both noise methods
    ("gini-dis-mpc", ["estimate", "gini", "--n", "300", *SEED]),
    ("gini-polya", ["estimate", "gini", "--n", "300", "--noise-method", "polya", *SEED]),
    ("kendall-bank", ["estimate", "kendall", "--csv", BANK, "--columns", "age,balance",
                      "--bounds", "18:95,-8019:102127", "--edges", "0.5n", *SEED]),
    ("kendall-gc", ["estimate", "kendall", "--n", "120", "--backend", "gc", *SEED]),
    ("kendall-gc-mpc", ["estimate", "kendall", "--n", "16", "--backend", "gc",
                        "--noise-method", "mpc", *SEED]),
    ("auc-hf", ["estimate", "auc", "--n", "400", "--threat-model", "hf", *SEED]),
    ("auc-hf-polya", ["estimate", "auc", "--n", "400", "--threat-model", "hf",
                      "--noise-method", "polya", *SEED]),
    ("auc-bank", ["estimate", "auc", "--csv", BANK, "--columns", "duration,y",
                  "--bounds", "0:5000", "--edges", "0.5n", *SEED]),
    ("duplicate", ["estimate", "duplicate", "--n", "300", *SEED]),
    ("renyi2", ["estimate", "renyi2", "--n", "300", *SEED]),
    ("rand", ["estimate", "rand", "--n", "300", *SEED]),
    ("triples", ["estimate", "triples", "--n", "90", *SEED]),
    ("vus", ["estimate", "vus", "--n", "90", *SEED]),
    ("gini-uniform-edges", ["estimate", "gini", "--n", "300", "--sampler", "uniform",
                            "--edges", "3n", "--bits", "48", *SEED]),
    ("kendall-processes", ["estimate", "kendall", "--n", "200", "--processes", "2", *SEED]),
    ("gini-processes-hf", ["estimate", "gini", "--n", "200", "--processes", "3",
                           "--threat-model", "hf", *SEED]),
    ("kendall-dis-colluders", ["estimate", "kendall", "--n", "200", "--noise-method", "polya",
                               "--max-colluders", "50", *SEED]),
    # the ECDF family
    ("ecdf-bank", ["ecdf", "--csv", BANK, "--column", "age", "--bounds", "18:95",
                   "--thresholds", "78", *SEED]),
    ("ecdf-split-l2", ["ecdf", "--csv", BANK, "--column", "age", "--bounds", "18:95",
                       "--thresholds", "40", "--noise", "split", "--smooth", "l2", *SEED]),
    ("ecdf-mpc", ["ecdf", "--n", "300", "--bounds", "0:1", "--thresholds", "16",
                  "--noise", "mpc", *SEED]),
    ("ecdf-pointwise", ["ecdf", "--n", "300", "--bounds", "0:1", "--thresholds", "16",
                        "--backend", "pointwise", "--servers", "3", *SEED]),
    ("ecdf-processes", ["ecdf", "--n", "300", "--bounds", "0:1", "--thresholds", "32",
                        "--processes", "2", *SEED]),
    ("quantile-bank", ["quantile", "--csv", BANK, "--column", "balance",
                       "--bounds", "-8019:102127", "--thresholds", "1024",
                       "--q", "0.1,0.5,0.9", *SEED]),
    ("roc-bank", ["roc", "--csv", BANK, "--score", "duration", "--label", "y",
                  "--positive", "yes", "--bounds", "0:5000", "--thresholds", "64", *SEED]),
    ("hl", ["hl", "--csv", "HERE/hl.csv", "--prob", "prob", "--label", "y", "--groups", "5",
            *SEED]),
    ("roc-processes", ["roc", "--csv", "HERE/hl.csv", "--score", "prob", "--label", "y",
                       "--bounds", "0:1", "--thresholds", "32", "--processes", "3", *SEED]),
    # the baselines
    ("bell-ldp", ["estimate", "kendall", "--n", "300", "--protocol", "bell-ldp", *SEED]),
    ("bell-auc", ["estimate", "auc", "--n", "300", "--protocol", "bell-auc", *SEED]),
    ("bell-2pc", ["estimate", "gini", "--n", "40", "--protocol", "bell-2pc", *SEED]),
    ("ghazi", ["estimate", "kendall", "--n", "300", "--protocol", "ghazi", *SEED]),
    ("ghazi-sm", ["estimate", "gini", "--n", "200", "--protocol", "ghazi-sm", *SEED]),
    ("fedauc-rr", ["estimate", "auc", "--n", "300", "--protocol", "fedauc-rr", *SEED]),
    ("fedauc-lap", ["estimate", "auc", "--n", "300", "--protocol", "fedauc-lap", *SEED]),
    ("ghazi-processes", ["estimate", "kendall", "--n", "200", "--protocol", "ghazi",
                         "--processes", "2", *SEED]),
]
