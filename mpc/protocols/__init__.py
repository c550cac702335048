"""Protocols on shares: the trusted dealer, Beaver multiplication, the p-party comparison
circuit and GMW on XOR shares.
"""
