"""Counterexamples to individual fairness: individuals whose decision changes when only the protected attribute
changes, kept per ``Fair[...]`` leaf of a specification.

Engines that find them put a ``Counterexamples`` in ``LeafBatch.counterexamples`` (the last one given wins); the
driver copies it to ``AuditResult.counterexamples`` and the JSON; the dashboard, the PDF and the CLI draw it
(``fairaudit.core.counterexamples_view``) without knowing which engine made it. Each leaf keeps a bounded sample of
its counterexamples (the first found, deterministically) and the total count; ``where`` says where they were
looked for — ``DOMAIN`` (any individual of the model's input domain, whether or not anyone like it exists) or
``ROWS`` (the audited rows themselves).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

DOMAIN = "over the input domain"
ROWS = "among the audited rows"
KEEP = 100  # counterexamples kept per leaf (the total counts them all)


def _plain(v):
    """A feature value as JSON can hold it (numpy scalars → Python; NaN → None)."""
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


@dataclass(frozen=True)
class Counterexample:
    """One individual: its features other than the protected attribute (decoded to the dataset's categories),
    and for each compared value of the attribute (``LeafCounterexamples.values``, same order) the model's
    decision (1 favourable, 0 not) and score (None when not known). ``row`` is the audited row's position in the
    dataset (0-based) when the individual is one of them, ``own`` its own value of the attribute (None when the
    individual is not a row of the data)."""

    individual: tuple[tuple[str, object], ...]
    decisions: tuple[int, ...]
    scores: tuple[float | None, ...] | None = None
    row: int | None = None
    own: object = None

    def to_dict(self) -> dict:
        return {"individual": {k: _plain(v) for k, v in self.individual},
                "decisions": [int(d) for d in self.decisions],
                "scores": None if self.scores is None else [None if s is None else round(float(s), 6)
                                                            for s in self.scores],
                "row": None if self.row is None else int(self.row), "own": _plain(self.own)}

    @classmethod
    def from_dict(cls, d: dict) -> "Counterexample":
        scores = d.get("scores")
        return cls(tuple((str(k), v) for k, v in (d.get("individual") or {}).items()),
                   tuple(int(x) for x in d.get("decisions", ())),
                   None if scores is None else tuple(None if s is None else float(s) for s in scores),
                   d.get("row"), d.get("own"))


@dataclass(frozen=True)
class LeafCounterexamples:
    """The counterexamples of one ``Fair[attribute]`` leaf (``leaf`` its canonical text): ``examples`` (at most
    ``KEEP``, the first found) of ``total`` found, ``where`` they were looked for (``DOMAIN`` or ``ROWS``),
    ``about`` the engine's words on how they were found and checked."""

    leaf: str
    attribute: str
    values: tuple
    examples: tuple[Counterexample, ...] = ()
    total: int = 0
    where: str = DOMAIN
    about: str = ""

    def to_dict(self) -> dict:
        return {"leaf": self.leaf, "attribute": self.attribute, "values": [_plain(v) for v in self.values],
                "examples": [c.to_dict() for c in self.examples], "total": int(self.total), "where": self.where,
                "about": self.about}

    @classmethod
    def from_dict(cls, d: dict) -> "LeafCounterexamples":
        return cls(str(d["leaf"]), str(d["attribute"]), tuple(d.get("values", ())),
                   tuple(Counterexample.from_dict(c) for c in d.get("examples", ())), int(d.get("total", 0)),
                   d.get("where", DOMAIN), d.get("about", ""))


@dataclass(frozen=True)
class Counterexamples:
    """Every ``Fair[...]`` leaf's counterexamples (a leaf that was searched and had none has ``total`` 0)."""

    leaves: tuple[LeafCounterexamples, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.leaves)

    def get(self, leaf: str) -> LeafCounterexamples | None:
        """The entry of the leaf whose canonical text is ``leaf`` (None when it has none)."""
        return next((c for c in self.leaves if c.leaf == leaf), None)

    def to_dict(self) -> dict:
        return {"leaves": [c.to_dict() for c in self.leaves]}

    @classmethod
    def from_dict(cls, data: dict | None) -> "Counterexamples":
        if not data:
            return cls()
        return cls(tuple(LeafCounterexamples.from_dict(c) for c in data.get("leaves", ())))
