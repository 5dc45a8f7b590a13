"""The scan's driver: ``scan(data, ...)`` over every row at once, ``ScanStream`` for a growing log (chunks).

``scan`` resolves the data and the decisions the way ``fairaudit.audit`` does (``fairaudit.core.inputs.Inputs``:
``pred`` or ``model``, ``where``, ``rows``), orders the audited rows as the monitor does
(``fairaudit.engines.monitor.engine.stream_positions``: shuffled with ``seed``, or as given), codes each row's
category of every attribute (``fairaudit.subgroups.cells``), counts every cell of every table, shares Δ among the
intervals (``fairaudit.subgroups.allocation``, from the final row counts) and builds the tables
(``fairaudit.subgroups.intervals``) and the result (``fairaudit.subgroups.result``), with the intervals at a few
looks over the stream (``history``: the convergence plot).

``ScanStream`` takes chunks of a log as they arrive (``update(frame, decisions, labels)``) and answers a
``ScanResult`` at every look (``result()``); the δ split is fixed at the first look, with a reserve for cells first
seen later, so that every look is covered by the same guarantee.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from fairaudit.base.errors import FairauditError
from fairaudit.subgroups import allocation as alloc_mod
from fairaudit.subgroups import cells as cells_mod
from fairaudit.subgroups import intervals as iv
from fairaudit.subgroups import looks as looks_mod
from fairaudit.subgroups import wording
from fairaudit.subgroups.result import Cell, Estimate, ScanResult, Table

RATES = ("selection", "scoring")
LOOKS = 1  # ``looks``: record the intervals at the looks of ``fairaudit.subgroups.looks`` (0: only the final ones)
PIECE_ROWS = 1 << 20  # rows coded and counted at a time


@dataclass(frozen=True)
class Settings:
    """The scan's options, checked (``settings``)."""

    depth: int = 2
    delta: float = 0.05
    mode: str = "anytime"
    bound: str = "mixture"
    threshold: float = 0.8
    min_share: float = 0.02
    rate_kind: str = "selection"
    allocation: str = "decisive"


def settings(depth=2, delta=0.05, mode="anytime", bound="mixture", threshold=0.8, min_share=0.02,
             rate="selection", allocation="decisive") -> Settings:
    """``Settings`` from the given options; a bad one is a ``FairauditError`` (one line)."""
    from fairaudit.bounds.concentration import BOUND_ALIASES, BOUNDS

    try:
        depth_i = int(depth)
    except (TypeError, ValueError):
        raise FairauditError(f"depth must be a whole number ≥ 1, got {depth!r}") from None
    if depth_i != depth or depth_i < 1:
        raise FairauditError(f"depth must be a whole number ≥ 1, got {depth!r}")
    for name, value, lo, hi, lo_open, hi_open in (("delta", delta, 0, 1, True, True),
                                                  ("threshold", threshold, 0, 1, True, False),
                                                  ("min-share", min_share, 0, 1, False, True)):
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise FairauditError(f"{name} must be a number, got {value!r}") from None
        if not (x > lo if lo_open else x >= lo) or not (x < hi if hi_open else x <= hi):
            raise FairauditError(f"{name} must be in {'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}, "
                                 f"got {value!r}")
    if mode not in iv.MODES:
        raise FairauditError(f"unknown mode {mode!r}; choose one of: {', '.join(iv.MODES)}")
    if bound not in BOUNDS and bound not in BOUND_ALIASES:
        raise FairauditError(f"unknown bound {bound!r}; choose one of: {', '.join(BOUNDS)}")
    if rate not in RATES:
        raise FairauditError(f"unknown rate {rate!r}; choose one of: {', '.join(RATES)}")
    if allocation not in alloc_mod.SCHEMES:
        raise FairauditError(f"unknown allocation {allocation!r}; choose one of: {', '.join(alloc_mod.SCHEMES)}")
    return Settings(depth_i, float(delta), mode, BOUND_ALIASES.get(bound, bound), float(threshold),
                    float(min_share), rate, allocation)


def _escaped(text: str) -> str:
    """``text`` with a backslash before each ``\\``, ``|`` and ``=`` (a part of a cell id)."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("=", "\\=")


class Scanner:
    """The counts of every table so far and what turns them into a ``ScanResult`` (shared by every route).

    The rows are counted once, in the finest cells (every attribute at once) and per look slot
    (``fairaudit.subgroups.looks``; one slot when no history is kept), by the one counting kernel
    (``fairaudit.core.counting.count_cells``); pieces counted anywhere are merged by adding (``add_counts``); every
    table is a sum over the finest cells (``fairaudit.subgroups.cells.table_counts``)."""

    def __init__(self, attributes: list, opts: Settings, has_label: bool, reserve: float = 0.0, looks: int = 1):
        from fairaudit.core.counting import CellCounts

        self.attributes, self.opts, self.has_label = attributes, opts, has_label
        self.tables = cells_mod.tables(len(attributes), opts.depth)
        self.joint = CellCounts.zero(len(attributes), looks)
        self.total = 0
        self.interval = iv.interval_function(opts.mode, opts.bound)
        self.allocation = alloc_mod.Allocation(opts.delta, len(self.tables), alloc_mod.metric_shares(has_label),
                                               reserve=reserve)
        self.allocated = False
        self._counts = None

    def add(self, codes: np.ndarray, decisions: np.ndarray, labels: np.ndarray | None = None, look=None,
            weights=None) -> None:
        """Count a piece of rows: their attribute ``codes``, 0/1 ``decisions`` and ``labels``, look slots
        (``look``) and ``weights`` (rows a grouped count stands for)."""
        from fairaudit.core.counting import count_cells

        outcome = 2 * np.asarray(decisions, dtype=np.int64)
        if labels is not None:
            outcome += np.asarray(labels, dtype=np.int64)
        self.add_counts(count_cells(codes, outcome, look, self.joint.looks, weights))

    def add_counts(self, counts) -> None:
        """Merge a piece counted elsewhere (a ``CellCounts`` of these attributes' codes)."""
        self.joint = self.joint + counts
        self.total = self.joint.rows
        self._counts = None

    @property
    def counts(self) -> list:
        """Every table's ``TableCounts`` (cells in reading order)."""
        if self._counts is None:
            ranks = [a.ranks() for a in self.attributes]
            self._counts = [cells_mod.table_counts(self.joint, table, ranks)[0] for table in self.tables]
        return self._counts

    def allocate(self) -> None:
        """Fix every cell's δ from the row counts so far (never a decision or an outcome)."""
        for i, tc in enumerate(self.counts):
            self.allocation.set_table(i, tc.keys, tc.counts[:, 0], self.total, min_share=self.opts.min_share,
                                      threshold=self.opts.threshold, interval=self.interval,
                                      scheme=self.opts.allocation)
        self.allocated = True

    def cell_id(self, table, key) -> str:
        """The cell's id, ``name=value|name=value``: a backslash before a ``\\``, ``|`` or ``=`` of a name or a value,
        so that no two cells share an id (a category ``M|race=a`` is not the cell of ``M`` and ``a``)."""
        return "|".join(f"{_escaped(self.attributes[a].name)}={_escaped(self.attributes[a].label(int(c)))}"
                        for a, c in zip(table, key))

    def table_values(self, i: int, counts=None, total=None, metrics: bool = True) -> dict:
        """Every number of table ``i`` (its rates, ratios, flags, δ), from ``counts`` (default: the counts so far);
        ``metrics=False`` leaves out TPR and FPR."""
        tc = self.counts[i] if counts is None else counts
        total = self.total if total is None else total
        o, c = self.opts, tc.counts
        n, s = c[:, 0], c[:, 1]
        d = self.allocation.deltas(i, tc.keys, "rate")
        est, lo, hi = iv.rate_intervals(s, n, d, self.interval)
        share = n / max(total, 1)
        reference = share >= o.min_share
        r_est, r_lo, r_hi, best = iv.ratio_intervals(est, lo, hi, reference)
        out = {"keys": tc.keys, "n": n, "s": s, "delta": d, "est": est, "lo": lo, "hi": hi, "share": share,
               "reference": reference, "r_est": r_est, "r_lo": r_lo, "r_hi": r_hi, "best": best,
               "flags": iv.flags(r_lo, r_hi, reference, o.threshold), "unknown": tc.unknown}
        if self.has_label and metrics:
            for metric, (nn, ss) in (("tpr", (c[:, 2], c[:, 3])), ("fpr", (c[:, 4], c[:, 5]))):
                out[metric] = iv.rate_intervals(ss, nn, self.allocation.deltas(i, tc.keys, metric), self.interval)
        return out

    def build(self, meta: dict, history: dict | None = None) -> ScanResult:
        """The ``ScanResult`` of the counts so far (``meta``: data, source, decision, date, order, seed, bins,
        assumption sentence, warnings)."""
        if not self.allocated:
            self.allocate()
        o = self.opts
        tables, all_cells, notes = [], [], []
        for i, table in enumerate(self.tables):
            v = self.table_values(i)
            if len(v["n"]) and not v["reference"].any():
                notes.append(f"table {' × '.join(self.attributes[a].name for a in table)}: every cell is under the "
                             f"minimum share ({100 * o.min_share:g}% of the rows): no impact ratio")
            undecided = v["flags"] == "undecided"
            more = (iv.more_rows(v["s"], v["n"], v["delta"], v["reference"], o.threshold, self.interval, self.total,
                                 undecided) if o.mode != "exact" else np.zeros(len(v["n"]), dtype=np.int64))
            names = tuple(self.attributes[a].name for a in table)
            ids = [self.cell_id(table, key) for key in v["keys"].tolist()]
            ref_id = ids[v["best"]] if v["best"] >= 0 else None
            made = []
            for j, key in enumerate(v["keys"].tolist()):
                excluded = v["flags"][j] == "excluded"
                rate = Estimate(float(v["est"][j]), float(v["lo"][j]), float(v["hi"][j]),
                                _fraction(v["s"][j], v["n"][j]) if o.mode == "exact" else None)
                ratio = None
                if not excluded:
                    exact = None
                    if o.mode == "exact" and v["best"] >= 0:
                        exact = _fraction(int(v["s"][j]) * int(v["n"][v["best"]]),
                                          int(v["n"][j]) * int(v["s"][v["best"]]))
                    ratio = Estimate(float(v["r_est"][j]), float(v["r_lo"][j]), float(v["r_hi"][j]), exact)
                extra = {}
                if self.has_label:
                    for metric in ("tpr", "fpr"):
                        e, lo, hi = v[metric]
                        col = (2, 3) if metric == "tpr" else (4, 5)
                        cnt = self.counts[i].counts[j]
                        extra[metric] = Estimate(float(e[j]), float(lo[j]), float(hi[j]),
                                                 _fraction(cnt[col[1]], cnt[col[0]]) if o.mode == "exact" else None)
                made.append(Cell(
                    id=ids[j], table=names,
                    groups={self.attributes[a].name: self.attributes[a].label(int(code)) for a, code in zip(table, key)},
                    conditions={self.attributes[a].name: self.attributes[a].condition(int(code))
                                for a, code in zip(table, key)},
                    rows=int(v["n"][j]), share=float(v["share"][j]), selected=int(v["s"][j]), rate=rate,
                    impact_ratio=ratio, flag=str(v["flags"][j]), delta=float(v["delta"][j]),
                    reference=ref_id, is_reference=(j == v["best"]),
                    more_rows=int(more[j]) if v["flags"][j] == "undecided" and o.mode != "exact" else None,
                    **extra))
            tables.append(Table(names, int(v["n"].sum()), int(v["unknown"]), ref_id, made))
            all_cells += made
        order = sorted(range(len(all_cells)), key=lambda k: _rank_key(all_cells[k], k))
        ranked = [all_cells[k] for k in order]
        for r, cell in enumerate(ranked, 1):
            cell.rank = r
        quantile = any(a.binned and meta.get("bins", {}).get(a.name) == "quantile" for a in self.attributes)
        sentence = wording.guarantee(o.mode, o.delta, len(all_cells), len(tables), self.total, o.rate_kind,
                                     quantile_bins=quantile)
        return ScanResult(
            attributes=[a.name for a in self.attributes], depth=o.depth, delta=o.delta, mode=o.mode, bound=o.bound,
            threshold=o.threshold, min_share=o.min_share, rate_kind=o.rate_kind,
            label=meta.get("label"), rows=self.total, tables=tables, cells=ranked, guarantee=sentence,
            assumption=wording.assumption(o.mode, meta.get("order_sentence")),
            scope="rows" if o.mode == "exact" else "population", data=meta.get("data"), source=meta.get("source"),
            decision=meta.get("decision"), date=meta.get("date") or _now(), order=meta.get("order"),
            seed=meta.get("seed"), bins={a.name: a.edges for a in self.attributes if a.binned},
            allocation={"scheme": o.allocation, "tables": len(tables), "per_table": self.allocation.table_delta,
                        "spent": self.allocation.spent(), "reserve": self.allocation.reserve,
                        "metrics": dict(self.allocation.shares)},
            warnings=list(meta.get("warnings") or []) + notes, history=history, event=meta.get("event", "pred"),
            rows_record=dict(meta.get("rows_record") or {}), data_hash=meta.get("data_hash"),
            hash_of=meta.get("hash_of"))


def _rank_key(cell: Cell, k: int):
    """Excluded cells last; then by the upper end of the ratio's interval, its estimate, the table's depth."""
    if cell.impact_ratio is None:
        return (1, 0.0, 0.0, cell.depth, k)
    hi, est = cell.impact_ratio.hi, cell.impact_ratio.estimate
    return (0, np.inf if np.isnan(hi) else hi, np.inf if np.isnan(est) else est, cell.depth, k)


def _fraction(num, den) -> str | None:
    return None if int(den) == 0 else str(Fraction(int(num), int(den)))


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def make_attributes(frame: pd.DataFrame, protected, bins: dict | None) -> tuple[list, dict]:
    """``(attributes, how each binned one was cut: "quantile" / "edges")``: the protected columns as they are, then
    the binned numeric ones; an unknown column, a repeated one or a non-numeric binned one is an error."""
    if isinstance(protected, str):  # "sex" or "sex, race"
        protected = [name.strip() for name in protected.split(",") if name.strip()]
    names = list(protected or [])
    bins = dict(bins or {})
    if not names and not bins:
        raise FairauditError("give at least one protected attribute (or a binned numeric one) to scan")
    seen = set()
    for name in names + list(bins):
        if name not in frame.columns:
            close = _close(name, list(frame.columns))
            raise FairauditError(f"unknown column {name!r}{close}")
        if name in seen:
            raise FairauditError(f"column {name!r} is given twice (as a protected attribute and binned, or twice)")
        seen.add(name)
    attributes = [cells_mod.Attribute(name) for name in names]
    how = {}
    for name, spec in bins.items():
        if not pd.api.types.is_numeric_dtype(frame[name]):
            raise FairauditError(f"bins for {name}: the column is not numeric (scan it as a protected attribute)")
        attributes.append(cells_mod.binned(name, frame[name], spec))
        how[name] = "quantile" if isinstance(spec, (int, np.integer)) else "edges"
    return attributes, how


def _close(name: str, names: list[str]) -> str:
    import difflib

    found = difflib.get_close_matches(name, names, n=1)
    return f" (did you mean {found[0]!r}?)" if found else f"; columns: {', '.join(names[:12])}"


def scan(data, protected=None, *, depth: int = 2, bins: dict | None = None, pred: str | None = None, model=None,
         label: str | None = None, where: str | None = None, rows: str | None = None, delta: float = 0.05,
         mode: str = "anytime", threshold: float = 0.8, min_share: float = 0.02, bound: str = "mixture",
         order: str = "shuffle", seed: int = 0, rate: str = "selection", allocation: str = "decisive",
         looks: int = LOOKS, trust_pickle: bool = False, trusted_types=(), include_protected: bool = False
         ) -> ScanResult:
    """Scan every cell of every intersection of up to ``depth`` of the ``protected`` attributes (default: the
    dataset's own) and the ``bins`` ({column: number of quantile bins or the edges}) for its selection rate and its
    impact ratio to its table's most-selected cell, each with an interval; every interval holds at once with
    probability ≥ 1 − ``delta`` (``mode``: anytime / one-look / exact; see ``docs/methods/scan.md``).

    ``data``: a ``Dataset``, a built-in name or a file; the decision: ``pred`` (a condition over the rows, true =
    selected) or ``model`` (as ``fairaudit.audit``); ``rate="scoring"``: the share of a cell whose score is above the
    median score of all scanned rows (LL144's scoring rate). ``label``: a binary outcome column; TPR and FPR per cell
    are then added (Δ shared with them). ``order``/``seed``: the monitor's row order (the looks of ``history``).
    ``threshold`` (0.8) and ``min_share`` (0.02): the four-fifths rule and LL144's 2 % exclusion."""
    from fairaudit import data as data_module
    from fairaudit.core.inputs import Inputs
    from fairaudit.engines.monitor.engine import ORDERS, order_assumption
    from fairaudit.spec.printer import format_number

    opts = settings(depth, delta, mode, bound, threshold, min_share, rate, allocation)
    if order not in ORDERS:
        raise FairauditError(f"unknown order {order!r}; choose one of: {', '.join(ORDERS)}")
    if pred is None and model is None:
        raise FairauditError("give the decision: pred (a condition over the rows, true = selected) or a model")
    if where:
        _check_where(where)
    if isinstance(data, (str, bytes)) or hasattr(data, "__fspath__"):
        dataset = data_module.resolve(data, label=label)
    else:
        dataset = data
        if label is not None and label != dataset.schema.label:
            if label not in dataset.frame.columns:
                raise FairauditError(f"unknown column {label!r}{_close(label, list(dataset.frame.columns))}")
            dataset = data_module.with_roles(dataset, label=label)
    attributes, how = make_attributes(dataset.frame, dataset.schema.protected if protected is None else protected,
                                      bins)
    if where:
        check_filter(where, dataset)
    inputs = Inputs.build(dataset, model=model, pred=pred, where=where, rows=rows, seed=seed,
                          trust_pickle=trust_pickle, trusted_types=trusted_types,
                          include_protected=include_protected)
    from fairaudit.models.expression import require_yes_no

    require_yes_no(inputs.model, "the scan")
    audited = None if inputs.positions is None else np.asarray(inputs.positions, dtype=np.int64)  # file order
    n = len(dataset) if audited is None else len(audited)
    pick = (lambda a: np.asarray(a)) if audited is None else (lambda a: np.asarray(a)[audited])  # noqa: E731
    if rate == "scoring":
        if inputs.scores is None:
            raise FairauditError("the scoring rate needs a model with a score")
        scores = pick(np.asarray(inputs.scores, dtype=float))
        median = float(np.median(scores))
        decisions = (scores > median).astype(np.int8)
    else:
        decisions = pick(np.asarray(inputs.decisions, dtype=np.int8))
    labels = None if label is None else pick(np.asarray(dataset.labels, dtype=np.int8))
    history_wanted = opts.mode != "one-look" and bool(looks)
    scanner = Scanner(attributes, opts, labels is not None, looks=looks_mod.LOOKS if history_wanted else 1)
    columns = dataset.frame[[a.name for a in attributes]]
    for start in range(0, n, PIECE_ROWS):  # the audited rows in pieces: memory bounded by a piece, not the rows
        stop = min(start + PIECE_ROWS, n)
        piece = columns.iloc[start:stop] if audited is None else columns.iloc[audited[start:stop]]
        slot = looks_mod.look_of(start, stop - start, order, seed) if history_wanted else None
        scanner.add(cells_mod.encode(piece, attributes), decisions[start:stop],
                    None if labels is None else labels[start:stop], look=slot)
    scanner.allocate()  # from the final row counts: a function of the group labels alone
    described = inputs.describe()
    meta = {"data": getattr(dataset, "name", None), "source": getattr(dataset, "source", None),
            "decision": (f"pred: {pred}" if pred is not None else f"model: {described.get('model')}")
            + (" (scoring rate: above the median score)" if rate == "scoring" else ""),
            "order": order, "seed": int(seed), "label": label, "bins": how,
            "event": "pred" if rate == "selection" else f"score > {format_number(median)}",
            "order_sentence": order_assumption(order, int(seed)) if opts.mode == "anytime" else None,
            "warnings": list(inputs.warnings) + _bin_warnings(how),
            "rows_record": {**{k: v for k, v in (inputs.rows or {}).items()
                               if k in ("policy", "audited", "total", "held_out_share", "split_seed")},
                            "where": where or None},
            "data_hash": _data_hash(dataset), "hash_of": getattr(dataset, "hash_of", None)}
    return scanner.build(meta, history(scanner) if history_wanted else None)


def _data_hash(dataset) -> str | None:
    try:
        return dataset.content_hash
    except Exception:  # noqa: BLE001 - a dataset that cannot be hashed is reported without a hash
        return None


def _check_where(where: str) -> None:
    """A row filter may not read the decision: keeping rows by what was decided for them would bias every rate."""
    from fairaudit.spec import parse_event
    from fairaudit.spec.ast import event_names

    for name in event_names(parse_event(where)):
        if not getattr(name, "column", False) and name.name in ("pred", "score"):
            raise FairauditError(f"the row filter {where!r} reads the decision ({name.name}): the scan's rates are "
                                 "about the rows a filter keeps, so it may read the rows' columns, not what was "
                                 "decided for them")


def check_filter(where: str, dataset) -> list[str]:
    """The row filter validated against the data's columns and values, on every route (a dataset in memory, a log's
    ``FileDataset``): an unknown column or a value the column never takes is a one-line error — a typo must not
    silently change which rows are scanned; the warnings are returned."""
    from fairaudit.spec import parse_event, validate_event

    try:
        event = parse_event(where)
    except FairauditError as err:
        raise FairauditError(f"row filter: {err}") from None
    found = validate_event(event, dataset.schema, None)
    errors = [d for d in found if d.severity == "error"]
    if errors:
        at = f"{errors[0].line}:{errors[0].column}: " if errors[0].line is not None else ""
        raise FairauditError(f"row filter: {at}{errors[0].message}")
    return [d.message for d in found if d.severity == "warning"]


def _bin_warnings(how: dict) -> list[str]:
    return [f"{name}: quantile bins computed from these rows; the intervals treat their edges as fixed"
            for name, kind in how.items() if kind == "quantile"]


def look_points(total: int, looks: int = 24, first: int = looks_mod.FIRST_LOOK) -> np.ndarray:
    """A geometric grid of ``looks`` prefix lengths ending at ``total`` (a harness's own looks)."""
    if total <= 0:
        return np.zeros(0, dtype=np.int64)
    first = min(first, total)
    return np.unique(np.round(np.geomspace(first, total, max(int(looks), 1))).astype(np.int64))


def history(scanner: Scanner) -> dict:
    """Every cell's rate and ratio intervals at each look over the stream (``fairaudit.subgroups.looks``), with the
    δ fixed from the final counts (valid at every look: the allocation depends on the group labels only): the
    prefix counts of each table are cumulative sums over the finest cells' look slots, and one confidence-sequence
    call per table gives every look at once."""
    slots, points = looks_mod.chosen(scanner.joint.counts.sum(axis=(0, 2)))
    min_share = scanner.opts.min_share
    ranks = [a.ranks() for a in scanner.attributes]
    series = {}
    for i, table in enumerate(scanner.tables):
        counts, per_look = cells_mod.table_counts(scanner.joint, table, ranks, cumulative=True)
        keys = counts.keys
        if not len(keys) or per_look is None:
            continue
        n = per_look[:, slots, 0].T.astype(float)  # looks × cells
        s = per_look[:, slots, 1].T.astype(float)
        delta = np.broadcast_to(scanner.allocation.deltas(i, keys, "rate")[None, :], n.shape)
        est, lo, hi = iv.rate_intervals(s, n, delta, scanner.interval)
        reference = (n > 0) & (n / points[:, None].astype(float) >= min_share)
        r_est, r_lo, r_hi = iv.ratio_intervals_by_row(est, lo, hi, reference)
        for j, key in enumerate(keys.tolist()):
            series[scanner.cell_id(table, key)] = {
                "rate": est[:, j].tolist(), "rate_lo": lo[:, j].tolist(), "rate_hi": hi[:, j].tolist(),
                "ratio": r_est[:, j].tolist(), "ratio_lo": r_lo[:, j].tolist(), "ratio_hi": r_hi[:, j].tolist()}
    return {"rows": [int(t) for t in points], "cells": series}


class ScanStream:
    """A scan of a growing log: ``update(frame, decisions, labels)`` for each chunk as it arrives (``frame`` holds
    the attribute columns, ``decisions`` 0/1, ``labels`` 0/1 when ``label`` was named), ``result()`` at any look.

    The δ split is fixed at the first ``result()`` (from the row counts then: ask for it after a burn-in of a few
    thousand rows), and ``NEW_CELL_RESERVE`` of every table's share is kept for cells first seen later; quantile
    ``bins`` are cut on the first chunk (give edges for bins that do not depend on it; a later value outside the
    edges is of unknown category). ``result()`` at every look
    holds at once with probability ≥ 1 − Δ (``anytime`` mode; ``exact`` describes the rows so far)."""

    def __init__(self, protected, *, depth: int = 2, bins: dict | None = None, label: str | None = None,
                 delta: float = 0.05, mode: str = "anytime", threshold: float = 0.8, min_share: float = 0.02,
                 bound: str = "mixture", rate: str = "selection", allocation: str = "decisive",
                 data: str | None = None, decision: str | None = None):
        if mode == "one-look":
            raise FairauditError("a growing log is looked at again and again: use the anytime mode (or exact, about "
                                 "the rows so far), not one-look")
        self.opts = settings(depth, delta, mode, bound, threshold, min_share, rate, allocation)
        self.protected, self.bins, self.label = protected, dict(bins or {}), label
        self.meta = {"data": data, "source": data, "decision": decision, "order": "given", "seed": None,
                     "label": label, "warnings": []}
        self.scanner: Scanner | None = None

    def update(self, frame: pd.DataFrame, decisions, labels=None) -> None:
        decisions = np.asarray(decisions, dtype=np.int8)
        if len(decisions) != len(frame):
            raise FairauditError(f"{len(decisions):,} decisions for {len(frame):,} rows")
        if (labels is None) != (self.label is None):
            raise FairauditError("give labels with every chunk when the stream has a label column, else none")
        if self.scanner is not None:
            missing = [a.name for a in self.scanner.attributes if a.name not in frame.columns]
            if missing:
                raise FairauditError(f"the chunk has no column {missing[0]!r} (every chunk needs the scanned columns)")
        if self.scanner is None:
            from fairaudit.engines.monitor.engine import order_assumption

            attributes, how = make_attributes(frame, self.protected, self.bins)
            self.meta.update(bins=how, order_sentence=order_assumption("given", 0),
                             warnings=[w.replace("these rows", "the first chunk") for w in _bin_warnings(how)])
            reserve = alloc_mod.NEW_CELL_RESERVE if self.opts.mode == "anytime" else 0.0
            self.scanner = Scanner(attributes, self.opts, labels is not None, reserve=reserve)
        codes = cells_mod.encode(frame, self.scanner.attributes)
        self.scanner.add(codes, decisions, None if labels is None else np.asarray(labels, dtype=np.int8))

    @property
    def rows(self) -> int:
        return 0 if self.scanner is None else self.scanner.total

    def result(self) -> ScanResult:
        if self.scanner is None or not self.scanner.total:
            raise FairauditError("no rows yet: update the scan with a chunk first")
        if self.opts.mode == "exact":  # about the rows so far: no δ to fix
            self.scanner.allocate()
        return self.scanner.build(self.meta)
