"""The engine registry: name → module and class, loaded on first use (like ``fairaudit.cli.COMMANDS``).

An engine module declares its engine without importing its solver (z3, torch, pgmpy are imported inside
``run``), and its options in its package's ``options.py`` (``declared_options``), so listing the engines, their
options and their headers is cheap (the options without importing the engine at all). ``available()`` says which can
run on this machine and why not. Adding an engine: one module implementing ``fairaudit.core.engine.Engine``
and one line here; ``fairaudit.testing.check_engine`` checks it honours the contract.
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from functools import lru_cache

from fairaudit.base.errors import FairauditError

# name -> "module:Class"; the first is the default engine
REGISTRY = {
    "monitor": "fairaudit.engines.monitor.engine:Monitor",
    "dataset": "fairaudit.engines.dataset.engine:DatasetEngine",
    "fairsquare": "fairaudit.engines.fairsquare.engine:FairSquare",
    "justicia": "fairaudit.engines.justicia.engine:Justicia",
    "fvgm": "fairaudit.engines.fvgm.engine:FVGM",
    "fairquant": "fairaudit.engines.fairquant.engine:FairQuantEngine",
}
DEFAULT = next(iter(REGISTRY))
EXACT = "dataset"  # the engine that gives the given rows' own values exactly (the threshold slider's)
# the engine that audits decision streams read in pieces: big files out of core, live logs, Dask partitions
STREAMING = "monitor"


@lru_cache(maxsize=None)
def get(name: str):
    """The engine called ``name`` (``FairauditError`` naming the engines there are)."""
    if name not in REGISTRY:
        raise FairauditError(f"unknown engine {name!r}; engines: {', '.join(REGISTRY)}")
    module, cls = REGISTRY[name].split(":")
    return getattr(importlib.import_module(module), cls)()


def names() -> tuple[str, ...]:
    return tuple(REGISTRY)


def all_engines() -> list:
    return [get(name) for name in REGISTRY]


@dataclass(frozen=True)
class Availability:
    name: str
    available: bool
    reason: str | None = None  # why not, when it is not


def available() -> list[Availability]:
    """Each engine and whether it can run here: an engine whose solver package is missing says which."""
    out = []
    for name in REGISTRY:
        try:
            engine = get(name)
        except ImportError as err:
            out.append(Availability(name, False, f"cannot be loaded here: {err}"))
            continue
        missing = [pkg for pkg in getattr(engine, "packages", ()) if importlib.util.find_spec(pkg) is None]
        out.append(Availability(name, not missing,
                                f"needs the Python package(s) {', '.join(missing)}" if missing else None))
    return out


def _declarations(name: str) -> tuple[str, tuple]:
    """``(title, options)`` of the engine called ``name``: from its package's ``options.py`` (``TITLE``,
    ``OPTIONS``) without importing the engine; an engine that has no such module (one module plus one registry
    line) from the engine itself."""
    if name not in REGISTRY:
        raise FairauditError(f"unknown engine {name!r}; engines: {', '.join(REGISTRY)}")
    module = REGISTRY[name].split(":")[0]
    declared = f"{module.rsplit('.', 1)[0]}.options" if "." in module else None
    try:
        found = declared is not None and importlib.util.find_spec(declared) is not None
    except (ImportError, ValueError):  # the engine's module is not in a package
        found = False
    if found:
        options = importlib.import_module(declared)
        return options.TITLE, tuple(options.OPTIONS)
    engine = get(name)
    return engine.title, tuple(engine.options)


def declared_title(name: str) -> str:
    """The title of the engine called ``name`` (its ``title``), without importing the engine (``_declarations``)."""
    return _declarations(name)[0]


def declared_options(name: str) -> tuple:
    """The options the engine called ``name`` declares (its ``options``, not the common ones), without importing
    the engine (``_declarations``; ``FairauditError`` naming the engines there are)."""
    return _declarations(name)[1]


def header_options(name: str) -> tuple:
    """The options of the engine called ``name`` that a spec file may set with ``# name: value``."""
    return tuple(o for o in declared_options(name) if o.header)


def header_names() -> tuple[str, ...]:
    """Every option any engine lets a spec file set with ``# name: value``."""
    seen: list[str] = []
    for name in REGISTRY:
        for option in header_options(name):
            if option.name not in seen:
                seen.append(option.name)
    return tuple(seen)


def engine_names(package: str, folder):
    """The module ``__getattr__`` of an engine package (``package``: its name, ``folder``: its directory): the names of
    its ``engine.py``, read on first use, so that importing one of the package's modules does not load the others
    (``from fairaudit.engines.monitor import Monitor``). A name that is a module of the package is not forwarded."""
    from pathlib import Path

    def __getattr__(name):
        if name.startswith("__") or (Path(folder) / f"{name}.py").exists():
            raise AttributeError(name)
        return getattr(importlib.import_module(f"{package}.engine"), name)

    return __getattr__
