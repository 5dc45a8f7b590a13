"""Certified threshold repair: what would make a specification pass (``fairaudit repair``, ``fairaudit.repair(...)``).

Group-specific (or one global) decision thresholds on a model's score, chosen on one part of the audited rows with the
least loss of accuracy or of favourable decisions, then certified by the monitor on the other part
(``docs/methods/repair.md``). One job per module:

* ``candidates``: the thresholds tried (quantiles of each group's scores, the model's own threshold);
* ``search``: the specification's exact value and margin for many threshold combinations at once, and the search;
* ``model``: the repaired model (a ``fairaudit.models.thresholds.ThresholdModel``) and how it is saved;
* ``result``: ``RepairResult``, its JSON;
* ``repair``: ``repair()``, which puts them together.

The package is ``fairaudit.repairs``; ``fairaudit.repair(...)`` is the function (``fairaudit.api.repair``).
"""
from __future__ import annotations

from fairaudit.repairs.repair import MODES, OBJECTIVES, repair
from fairaudit.repairs.result import Point, RepairResult, Rows

__all__ = ["repair", "RepairResult", "Point", "Rows", "OBJECTIVES", "MODES"]
