"""The ``fairquant`` engine: certified / unfair / undecided rates of individual fairness for a ReLU network.

The engine class is in ``engine.py``; the rest of this package is its own mathematics. Names of ``engine.py`` are
read through this package lazily (``from fairaudit.engines.fairquant import FairQuantEngine``), so importing one of its modules does
not load the others.
"""
from pathlib import Path

from fairaudit.core.registry import engine_names

__getattr__ = engine_names(__name__, Path(__file__).parent)
