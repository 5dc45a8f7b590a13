"""The ``monitor`` engine (AVOIR): a stream of decisions, anytime-valid bounds on every ``E[...]``.

The engine class is in ``engine.py``; the rest of this package is its own mathematics. Names of ``engine.py`` are
read through this package lazily (``from fairaudit.engines.monitor import Monitor``), so importing one of its modules does
not load the others.
"""
from importlib import import_module
from pathlib import Path


def __getattr__(name):
    if name.startswith("__") or (Path(__file__).parent / f"{name}.py").exists():  # a module of its own
        raise AttributeError(name)
    return getattr(import_module("fairaudit.engines.monitor.engine"), name)
