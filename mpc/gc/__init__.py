"""Garbled-circuit two-party computation with oblivious transfer (dealer-free)."""
