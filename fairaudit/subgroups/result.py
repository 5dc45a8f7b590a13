"""What a scan returns: ``ScanResult`` (tables of ``Cell``s, ranked, with the guarantee) and its stable JSON.

Everything a front end shows is a field here (the dashboard's "Groups" page, the PDF section, the CLI table and the
CSV templates read it; none recomputes a number):

``ScanResult``
    ``attributes`` (the scanned columns, binned ones included), ``depth``, ``delta`` (Δ), ``mode`` (anytime /
    one-look / exact), ``bound``, ``threshold`` (4/5), ``min_share`` (2 %), ``rate_kind`` (selection / scoring),
    ``label`` (or None), ``rows`` (rows scanned), ``data`` / ``source`` / ``decision`` / ``date`` (what and when),
    ``order`` / ``seed``, ``bins`` (edges of binned attributes), ``tables`` (``Table``), ``cells`` (every cell of
    every table, ranked by the upper end of the impact ratio's interval, excluded cells last), ``guarantee`` (one
    sentence a signer can read), ``assumption``, ``scope`` ("population" or "rows"), ``allocation`` (the δ split),
    ``warnings``, ``history`` (the intervals at looks over the stream: the convergence plot; may be None),
    ``event`` (the decision in the specification language: ``pred``, or ``score > MEDIAN`` for the scoring rate),
    ``rows_record`` (which rows: ``policy`` held-out / all, ``audited``, ``total`` rows of the file,
    ``held_out_share``, ``split_seed``, ``where``), ``data_hash`` / ``hash_of`` (the data's SHA-256 and of what).
    ``rows_line()``: "1,250 rows: the held-out 25 % of hiring.csv (5,000 rows)".
    Methods: ``certified_below()``, ``certified_above()``, ``undecided()``, ``excluded()``, ``exit_code``,
    ``reference`` (the most-selected cell of the deepest first table), ``cell(id)``, ``spec_for(cell)`` (the
    one-click specification), ``frame()`` (every cell as a DataFrame row), ``to_dict()`` / ``to_json()`` /
    ``ScanResult.from_json()``.
``Table``
    ``attributes``, ``rows`` (of known category), ``unknown`` (rows with a missing category), ``reference`` (the
    id of the most-selected reference cell, or None), ``cells`` (in category order).
``Cell``
    ``id`` ("sex=Female|race=Black"), ``table`` (attribute names), ``groups`` ({attribute: category}),
    ``conditions`` ({attribute: spec condition}), ``rows``, ``share`` (of all rows), ``selected``, ``rate``,
    ``impact_ratio`` (an ``Estimate`` or None when excluded), ``tpr`` / ``fpr`` (with a label), ``flag``,
    ``delta`` (the δ of its rate interval), ``reference`` (its table's most-selected cell's id), ``is_reference``,
    ``more_rows`` (undecided: the projected rows to decide it, −1 beyond the projection; else None), ``rank``.
``Estimate``
    ``estimate``, ``lo``, ``hi`` and, in exact mode, ``exact`` (the fraction as text, "699/1175").
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from fairaudit.base.numbers import json_number, json_unnumber
from fairaudit.core.outputs import SCAN_FORMAT

FORMAT = SCAN_FORMAT + "1"  # the JSON's "format" (how an output check knows a scan result)


@dataclass
class Estimate:
    estimate: float
    lo: float
    hi: float
    exact: str | None = None

    def to_dict(self) -> dict:
        out = {"estimate": json_number(self.estimate), "lo": json_number(self.lo), "hi": json_number(self.hi)}
        if self.exact is not None:
            out["exact"] = self.exact
        return out

    @classmethod
    def from_dict(cls, d: dict | None) -> "Estimate | None":
        if d is None:
            return None
        return cls(json_unnumber(d["estimate"]), json_unnumber(d["lo"]), json_unnumber(d["hi"]), d.get("exact"))


@dataclass
class Cell:
    id: str
    table: tuple[str, ...]
    groups: dict
    conditions: dict
    rows: int
    share: float
    selected: int
    rate: Estimate
    impact_ratio: Estimate | None
    flag: str
    delta: float
    reference: str | None = None
    is_reference: bool = False
    tpr: Estimate | None = None
    fpr: Estimate | None = None
    more_rows: int | None = None
    rank: int = 0

    @property
    def depth(self) -> int:
        return len(self.table)

    @property
    def condition(self) -> str:
        """The cell as a condition of the specification language: ``sex == "Female" and race == "Black"``."""
        return " and ".join(self.conditions[a] for a in self.table)

    @property
    def name(self) -> str:
        """What a reader sees: ``Female × Black``."""
        return " × ".join(str(self.groups[a]) for a in self.table)

    def to_dict(self) -> dict:
        out = {"id": self.id, "table": list(self.table), "groups": dict(self.groups), "rows": int(self.rows),
               "share": json_number(self.share), "selected": int(self.selected), "rate": self.rate.to_dict(),
               "impact_ratio": None if self.impact_ratio is None else self.impact_ratio.to_dict(),
               "flag": self.flag, "delta": json_number(self.delta), "reference": self.reference,
               "is_reference": bool(self.is_reference), "condition": self.condition,
               "conditions": dict(self.conditions), "more_rows": self.more_rows, "rank": int(self.rank)}
        if self.tpr is not None:
            out["tpr"] = self.tpr.to_dict()
        if self.fpr is not None:
            out["fpr"] = self.fpr.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "Cell":
        return cls(d["id"], tuple(d["table"]), dict(d["groups"]), dict(d.get("conditions") or {}), int(d["rows"]),
                   json_unnumber(d["share"]), int(d["selected"]), Estimate.from_dict(d["rate"]),
                   Estimate.from_dict(d.get("impact_ratio")), d["flag"], json_unnumber(d["delta"]),
                   d.get("reference"), bool(d.get("is_reference")), Estimate.from_dict(d.get("tpr")),
                   Estimate.from_dict(d.get("fpr")), d.get("more_rows"), int(d.get("rank", 0)))


@dataclass
class Table:
    attributes: tuple[str, ...]
    rows: int
    unknown: int
    reference: str | None
    cells: list[Cell]

    @property
    def name(self) -> str:
        return " × ".join(self.attributes)

    def to_dict(self) -> dict:
        return {"attributes": list(self.attributes), "rows": int(self.rows), "unknown": int(self.unknown),
                "reference": self.reference, "cells": [c.id for c in self.cells]}


@dataclass
class ScanResult:
    attributes: list[str]
    depth: int
    delta: float
    mode: str
    bound: str
    threshold: float
    min_share: float
    rate_kind: str
    label: str | None
    rows: int
    tables: list[Table]
    cells: list[Cell]
    guarantee: str
    assumption: str
    scope: str
    data: str | None = None
    source: str | None = None
    decision: str | None = None
    date: str | None = None
    order: str | None = None
    seed: int | None = None
    bins: dict = field(default_factory=dict)
    allocation: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    history: dict | None = None
    event: str = "pred"  # the decision as an event of the specification language (scoring: "score > MEDIAN")
    rows_record: dict = field(default_factory=dict)  # which rows: policy, audited, total, held_out_share, split_seed
    data_hash: str | None = None  # SHA-256 of the data (``hash_of`` says of what: a file's bytes, or the rows)
    hash_of: str | None = None

    # ------------------------------------------------------------------------------------------------ reading
    def _flagged(self, flag: str) -> list[Cell]:
        return [c for c in self.cells if c.flag == flag]

    def certified_below(self) -> list[Cell]:
        return self._flagged("certified_below")

    def certified_above(self) -> list[Cell]:
        return self._flagged("certified_above")

    def undecided(self) -> list[Cell]:
        return self._flagged("undecided")

    def excluded(self) -> list[Cell]:
        return self._flagged("excluded")

    @property
    def exit_code(self) -> int:
        """1: some cell certified below the threshold; 3: none, but some undecided; 0: every (not excluded) cell
        certified above."""
        if self.certified_below():
            return 1
        return 3 if self.undecided() else 0

    def rows_line(self) -> str:
        """Which rows were scanned, in words: "1,250 rows: the held-out 25 % of hiring.csv (5,000 rows)"."""
        import os

        r = self.rows_record or {}
        name = os.path.basename(str(self.source)) if self.source and self.source != "built-in" else None
        name = name or self.data or "the data"
        total = r.get("total")
        where = f", those matching {r['where']}" if r.get("where") else ""
        if r.get("policy") == "held-out" and r.get("held_out_share") is not None and total:
            what = (f"the held-out {100 * float(r['held_out_share']):g} % of {name} ({int(total):,} rows; split seed "
                    f"{r.get('split_seed')}: the rows the model was not trained on)")
        elif r.get("policy") == "held-out" and total:
            what = f"held-out rows of {name} ({int(total):,} rows)"
        elif total:
            what = f"all {int(total):,} rows of {name}" if not where and int(total) == self.rows else \
                f"rows of {name} ({int(total):,} rows)"
        else:
            what = f"the rows of {name}"
        return f"{self.rows:,} rows: {what}{where}"

    def cell(self, cell_id: str) -> Cell:
        for c in self.cells:
            if c.id == cell_id:
                return c
        raise KeyError(cell_id)

    @property
    def reference(self) -> Cell | None:
        """The most-selected cell of the first table of the greatest depth (sex × race for sex, race at depth 2)."""
        deepest = max((t for t in self.tables), key=lambda t: len(t.attributes), default=None)
        if deepest is None or deepest.reference is None:
            return None
        return self.cell(deepest.reference)

    def spec_for(self, cell: Cell | str, threshold: float | None = None) -> str | None:
        """The specification that audits ``cell``'s impact ratio against its table's reference cell:
        ``E[pred | sex == "Female" and race == "Black"] / E[pred | sex == "Male" and race == "White"] >= 0.8``
        (None for a reference cell or one without a ratio)."""
        from fairaudit.spec.printer import format_number

        cell = self.cell(cell) if isinstance(cell, str) else cell
        if cell.reference is None or cell.is_reference or cell.impact_ratio is None:
            return None
        ref = self.cell(cell.reference)
        value = self.threshold if threshold is None else threshold
        return f"E[{self.event} | {cell.condition}] / E[{self.event} | {ref.condition}] >= {format_number(float(value))}"

    def frame(self):
        """Every cell as one row of a pandas DataFrame, in rank order (the dashboard's sortable table and heatmap):
        rank, id, table, depth, one column per attribute (its category, None outside the cell's table), rows, share,
        selected, rate / rate_lo / rate_hi, ratio / ratio_lo / ratio_hi (NaN when excluded), flag, more_rows,
        is_reference, reference, condition."""
        import pandas as pd

        nan = float("nan")
        rows = []
        for c in self.cells:
            r = c.impact_ratio
            rows.append({"rank": c.rank, "id": c.id, "table": " × ".join(c.table), "depth": c.depth,
                         **{a: c.groups.get(a) for a in self.attributes}, "rows": c.rows, "share": c.share,
                         "selected": c.selected, "rate": c.rate.estimate, "rate_lo": c.rate.lo,
                         "rate_hi": c.rate.hi, "ratio": r.estimate if r else nan, "ratio_lo": r.lo if r else nan,
                         "ratio_hi": r.hi if r else nan, "flag": c.flag, "more_rows": c.more_rows,
                         "is_reference": c.is_reference, "reference": c.reference, "condition": c.condition})
        return pd.DataFrame(rows)

    # ------------------------------------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        ref = self.reference
        return {"format": FORMAT,
                "scan": {"attributes": list(self.attributes), "depth": int(self.depth),
                         "delta": json_number(self.delta), "mode": self.mode, "bound": self.bound,
                         "threshold": json_number(self.threshold), "min_share": json_number(self.min_share),
                         "rate": self.rate_kind, "label": self.label, "rows": int(self.rows), "data": self.data,
                         "source": self.source, "decision": self.decision, "date": self.date, "order": self.order,
                         "seed": self.seed, "bins": {k: list(v) for k, v in self.bins.items()},
                         "allocation": self.allocation, "event": self.event,
                         "rows_record": dict(self.rows_record), "data_hash": self.data_hash, "hash_of": self.hash_of},
                "guarantee": self.guarantee, "assumption": self.assumption, "scope": self.scope,
                "reference": None if ref is None else ref.to_dict(),
                "tables": [t.to_dict() for t in self.tables],
                "unknown": {" × ".join(t.attributes): int(t.unknown) for t in self.tables},
                "summary": {"certified_below": [c.id for c in self.certified_below()],
                            "certified_above": [c.id for c in self.certified_above()],
                            "undecided": [c.id for c in self.undecided()],
                            "excluded": [c.id for c in self.excluded()], "exit_code": self.exit_code},
                "cells": [c.to_dict() for c in self.cells],
                "warnings": list(self.warnings),
                "history": _history_json(self.history)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, source) -> "ScanResult":
        """From a JSON string or an already-decoded dict (``to_json``'s output)."""
        d = json.loads(source) if isinstance(source, (str, bytes)) else source
        s = d["scan"]
        cells = [Cell.from_dict(c) for c in d["cells"]]
        by_id = {c.id: c for c in cells}
        tables = [Table(tuple(t["attributes"]), int(t["rows"]), int(t["unknown"]), t.get("reference"),
                        [by_id[i] for i in t["cells"]]) for t in d["tables"]]
        return cls(list(s["attributes"]), int(s["depth"]), json_unnumber(s["delta"]), s["mode"], s["bound"],
                   json_unnumber(s["threshold"]), json_unnumber(s["min_share"]), s["rate"], s.get("label"),
                   int(s["rows"]), tables, cells, d["guarantee"], d["assumption"], d["scope"], s.get("data"),
                   s.get("source"), s.get("decision"), s.get("date"), s.get("order"), s.get("seed"),
                   {k: tuple(v) for k, v in (s.get("bins") or {}).items()}, dict(s.get("allocation") or {}),
                   list(d.get("warnings") or []), _history_back(d.get("history")), s.get("event", "pred"),
                   dict(s.get("rows_record") or {}), s.get("data_hash"), s.get("hash_of"))


def _history_json(history: dict | None):
    if history is None:
        return None
    return {"rows": [int(r) for r in history["rows"]],
            "cells": {cid: {k: [json_number(x) for x in v] for k, v in series.items()}
                      for cid, series in history["cells"].items()}}


def _history_back(history: dict | None):
    if history is None:
        return None
    return {"rows": list(history["rows"]),
            "cells": {cid: {k: [json_unnumber(x) for x in v] for k, v in series.items()}
                      for cid, series in history["cells"].items()}}


def percent(x: float, digits: int = 1) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.{digits}f}%"
