"""Old import paths (before 0.2, CHANGELOG.md) kept working for one release: ``import fairaudit.run`` gives
``fairaudit.core.driver`` with a ``DeprecationWarning`` naming the new path. A package's submodules follow it
(``fairaudit.commands.audit`` → ``fairaudit.cli.audit``)."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

MOVED = {
    "fairaudit._paths": "fairaudit.base.paths",
    "fairaudit.bounds.allocation": "fairaudit.core.allocation",
    "fairaudit.bounds.directed": "fairaudit.engines.monitor.directed",
    "fairaudit.bounds.eprocess": "fairaudit.engines.monitor.eprocess",
    "fairaudit.bounds.fairquant": "fairaudit.engines.fairquant.analysis",
    "fairaudit.bounds.justicia": "fairaudit.engines.justicia.rates",
    "fairaudit.bounds.polytope": "fairaudit.engines.fairsquare.polytope",
    "fairaudit.bounds.subset_sum": "fairaudit.engines.fvgm.subset_sum",
    "fairaudit.bounds.volume": "fairaudit.engines.fairsquare.volume",
    "fairaudit.claim": "fairaudit.core.claim",
    "fairaudit.commands": "fairaudit.cli",
    "fairaudit.counterexamples": "fairaudit.core.counterexamples",
    "fairaudit.counterexamples_view": "fairaudit.core.counterexamples_view",
    "fairaudit.engines.base": "fairaudit.core.engine",
    "fairaudit.engines.distributed": "fairaudit.engines.monitor.distributed",
    "fairaudit.engines.halves": "fairaudit.engines.monitor.halves",
    "fairaudit.engines.live": "fairaudit.engines.monitor.live",
    "fairaudit.engines.observations": "fairaudit.core.observations",
    "fairaudit.engines.stream": "fairaudit.engines.monitor.stream",
    "fairaudit.errors": "fairaudit.base.errors",
    "fairaudit.evaluate": "fairaudit.core.evaluate",
    "fairaudit.explain": "fairaudit.core.explain",
    "fairaudit.findings": "fairaudit.core.findings",
    "fairaudit.findings_view": "fairaudit.core.findings_view",
    "fairaudit.fulltrace": "fairaudit.core.fulltrace",
    "fairaudit.group_metrics": "fairaudit.core.group_metrics",
    "fairaudit.guarantee": "fairaudit.core.guarantee",
    "fairaudit.inputs": "fairaudit.core.inputs",
    "fairaudit.limits": "fairaudit.base.limits",
    "fairaudit.livelog": "fairaudit.engines.monitor.livelog",
    "fairaudit.models.bn": "fairaudit.engines.fvgm.network",
    "fairaudit.numbers": "fairaudit.base.numbers",
    "fairaudit.outofcore": "fairaudit.engines.monitor.outofcore",
    "fairaudit.outputs": "fairaudit.core.outputs",
    "fairaudit.preflight": "fairaudit.core.preflight",
    "fairaudit.programs.generate": "fairaudit.engines.fairsquare.generate",
    "fairaudit.programs.paths": "fairaudit.engines.fairsquare.paths",
    "fairaudit.progress": "fairaudit.base.progress",
    "fairaudit.run": "fairaudit.core.driver",
    "fairaudit.suggest": "fairaudit.core.suggest",
    "fairaudit.trace": "fairaudit.core.trace",
}


def new_name(old: str) -> str | None:
    """Where the module ``old`` lives now (None: it did not move)."""
    for prefix in sorted(MOVED, key=len, reverse=True):
        if old == prefix or old.startswith(prefix + "."):
            return MOVED[prefix] + old[len(prefix):]
    return None


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        warnings.warn(f"{module.__name__} moved to {self.target} (fairaudit 0.2); the old path goes in 0.3",
                      DeprecationWarning, stacklevel=2)
        sys.modules[module.__name__] = importlib.import_module(self.target)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        new = new_name(fullname) if fullname.startswith("fairaudit.") else None
        return None if new in (None, fullname) else importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
