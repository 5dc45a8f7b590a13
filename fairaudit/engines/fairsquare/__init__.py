"""The ``fairsquare`` engine: sound bounds on every ``E[...]`` of a spec over a population program.

The engine class is in ``engine.py``; the rest of this package is its own mathematics. Names of ``engine.py`` are
read through this package lazily (``from fairaudit.engines.fairsquare import FairSquare``), so importing one of its modules does
not load the others.
"""
from pathlib import Path

from fairaudit.core.registry import engine_names

__getattr__ = engine_names(__name__, Path(__file__).parent)
