"""Private U-statistics: kernels, hypergraph sampling, the U-MPC protocol, the CLI."""

__version__ = "0.1.0"
