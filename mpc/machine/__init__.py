"""This machine: worker threads for block loops, and how freed memory is kept for reuse.

Imports nothing of the toolkit.
"""
