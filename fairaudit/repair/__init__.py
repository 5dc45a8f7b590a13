"""Certified threshold repair: what would make a specification pass (``fairaudit repair``, ``fairaudit.repair(...)``).

Group-specific (or one global) decision thresholds on a model's score, chosen on one part of the audited rows with the
least loss of accuracy or of favourable decisions, then certified by the monitor on the other part
(``docs/methods/repair.md``). One job per module:

* ``candidates``: the thresholds tried (quantiles of each group's scores, the model's own threshold);
* ``search``: the specification's exact value and margin for many threshold combinations at once, and the search;
* ``model``: the repaired model (a ``fairaudit.models.thresholds.ThresholdModel``) and how it is saved;
* ``result``: ``RepairResult``, its JSON;
* ``repair``: ``repair()``, which puts them together.

``fairaudit.repair`` is this package, and calling it is calling ``repair()``: ``fairaudit.repair(data, spec, model)``
(the package and the function share the name the issue gave both, so the package is callable).
"""
from __future__ import annotations

import sys
import types

from fairaudit.repair.repair import MODES, OBJECTIVES, repair
from fairaudit.repair.result import Point, RepairResult, Rows

__all__ = ["repair", "RepairResult", "Point", "Rows", "OBJECTIVES", "MODES"]


class _CallablePackage(types.ModuleType):
    """This package, callable as ``repair()`` (module doc)."""

    def __call__(self, *args, **kwargs) -> RepairResult:
        return repair(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
