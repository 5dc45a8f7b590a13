"""Certified threshold repair: what would make a specification pass (``fairaudit repair``, ``fairaudit.repair(...)``).

One decision threshold on a model's score for everyone (the default) — or, as an explicit choice, one per group
(``PER_GROUP_CAVEAT``: unlawful in US employment decisions, restricted in credit) — chosen on one part of the audited
rows for the user's objective (accuracy, or keeping the share of favourable decisions) among the repairs worth
adopting, then certified on the other part by one look at it (``docs/methods/repair.md``). One job per module:

* ``candidates``: the thresholds tried (quantiles of each group's scores, the model's own threshold);
* ``search``: the specification's exact value and margin for many threshold combinations at once, and the search;
* ``select``: which candidates are worth adopting (refusing the degenerate ones), and which few to certify together;
* ``wording``: the legal caveat of group-specific thresholds and the status of a verdict, said in one place;
* ``model``: the repaired model (a ``fairaudit.models.thresholds.ThresholdModel``) and how it is saved;
* ``result``: ``RepairResult``, its JSON;
* ``repair``: ``repair()``, which puts them together.

The package is ``fairaudit.repairs``; ``fairaudit.repair(...)`` is the function (``fairaudit.api.repair``).
"""
from __future__ import annotations

from fairaudit.repairs.repair import MODES, OBJECTIVES, repair
from fairaudit.repairs.result import Candidate, Point, RepairResult, Rows
from fairaudit.repairs.wording import PER_GROUP_CAVEAT

__all__ = ["repair", "RepairResult", "Point", "Rows", "Candidate", "OBJECTIVES", "MODES", "PER_GROUP_CAVEAT"]
