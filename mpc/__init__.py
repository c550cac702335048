"""The engine: ring Z_2^l, fields, sharing, CSPRNG, simulated network, dealer, Beaver.

Modules, bottom up (a module imports only those above it in this list):
``ring`` -> ``rng`` -> ``field`` -> ``sharing`` -> ``network`` -> ``dealer`` ->
``beaver`` -> ``session``; ``threads`` (worker threads for block loops) and ``memory``
import none of them. ``mpc`` imports nothing else of the toolkit.
"""

__version__ = "0.1.0"
