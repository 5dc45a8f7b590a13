"""The ``justicia`` engine: group selection rates of a decision tree or a linear model over a modelled feature
distribution.

The engine class is in ``engine.py``; the rest of this package is its own mathematics. Names of ``engine.py`` are
read through this package lazily (``from fairaudit.engines.justicia import Justicia``), so importing one of its modules does
not load the others.
"""
from pathlib import Path

from fairaudit.core.registry import engine_names

__getattr__ = engine_names(__name__, Path(__file__).parent)
