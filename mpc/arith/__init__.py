"""Arithmetic: the ring Z_2^l and fixed point, prime fields, the CSPRNG, secret sharing.

Pure functions on numpy arrays; no parties, no network. Imports nothing of
the toolkit.
"""
