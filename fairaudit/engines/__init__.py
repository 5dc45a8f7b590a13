"""The engines, one package each: ``monitor`` (AVOIR with VeriFair's bounds), ``dataset`` (exact on the given rows),
``fairsquare``, ``justicia``, ``fvgm`` and ``fairquant``. Each package holds its engine class (``engine.py``) and its
own mathematics; what several engines share lives in ``fairaudit.bounds`` and ``fairaudit.core``.

The registry (name → engine, loaded on first use) is ``fairaudit.core.registry``, re-exported here. Adding an engine
is one package with a class implementing ``fairaudit.core.engine.Engine``, its options in the package's
``options.py`` (``OPTIONS``, read without importing the engine) and one line in that registry;
``fairaudit.testing.check_engine`` checks it honours the contract.
"""
from fairaudit.core.registry import (DEFAULT, REGISTRY, STREAMING, Availability, all_engines, available,
                                     declared_options, declared_title, get, header_names, header_options, names)

__all__ = ["DEFAULT", "REGISTRY", "STREAMING", "Availability", "all_engines", "available", "declared_options",
           "declared_title", "get", "header_names", "header_options", "names"]
