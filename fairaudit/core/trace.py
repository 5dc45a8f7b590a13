"""The trace (one row per (step, node)) and the audit result with its JSON form (DESIGN.md "Audit result").

``Trace`` stores the table column-wise as numpy arrays of shape (checks, nodes), which keeps a long
stream cheap (48,842 rows checked every 5 observations ≈ 10k checks × a dozen nodes). ``to_frame()``
gives the tidy pandas table with columns ``step node estimate lo hi delta verdict n certified unfair
undecided evalue evalue_target``: ``n`` is set on leaves only, ``certified unfair undecided`` on ``Fair`` nodes only,
``evalue`` / ``evalue_target`` (the e-value of a comparison's own test and the 1/β it certifies at,
``fairaudit.core.evaluate.NodeEvidence``) on comparisons an engine tested as a whole only (NaN elsewhere; in JSON the keys
are written on those comparisons' rows and ``final`` only);
``verdict`` is ``"true" / "false" / "unknown"`` on boolean nodes and None on terms. ``step`` is the
number of observations (monitor) or iterations (verifiers) processed at that check.

JSON (``AuditResult.to_json``): the contract of DESIGN.md. Floats are written at full precision (the shortest
text that reads back as the same float64, so the JSON holds exactly the values computed and a bound is never
rounded); a node whose value the engine knows as an exact fraction (the dataset engine's counts on rows, justicia's
exact rates, and the arithmetic above them: ``fairaudit.core.evaluate``, ``LeafValue.exact``) also carries it as text
in its ``final``, ``"exact": "617/4361"`` (``AuditResult.exact``); NaN is written as ``null``
and ±∞ (e.g. the interval of a division by an interval containing 0) as the strings ``"inf"`` /
``"-inf"``. Every check of the result's trace is written by default; ``trace_every=k`` keeps every k-th check plus
the stop step and the last check. The driver builds that trace with ``TraceBuilder``: by default a bounded display
subsample of a long run's checks that keeps the decisions exactly (``info["checks"]`` counts them all,
``info["trace_kept"]`` the rows kept, ``info["verdict_changes_dropped"]`` the verdict changes left out of a trace
that kept flipping; ``fairaudit.core.fulltrace`` writes every check to Parquet on request). ``AuditResult.from_json``
reads it back; ``from_json(to_json(r)).to_json() == r.to_json()``.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from fairaudit.bounds.rules import FALSE, TRUE, UNKNOWN
from fairaudit.core.counterexamples import Counterexamples
from fairaudit.core.findings import Findings
from fairaudit.core.guarantee import Guarantee, format_interval, verdict_sentence
from fairaudit.base.numbers import count, json_number

NO_VERDICT = -2  # term nodes
_VERDICT_CODES = {"true": TRUE, "false": FALSE, "unknown": UNKNOWN, None: NO_VERDICT}
_VERDICT_TEXT = {TRUE: "true", FALSE: "false", UNKNOWN: "unknown", NO_VERDICT: None}
FLOAT_COLUMNS = ("estimate", "lo", "hi", "delta")
FAIR_COLUMNS = ("certified", "unfair", "undecided")
# comparisons decided by an engine's own test (``fairaudit.core.evaluate.NodeEvidence``): its e-value and the value 1/β it
# must reach; NaN elsewhere
EVIDENCE_COLUMNS = ("evalue", "evalue_target")


def verdict_text(code) -> str | None:
    return _VERDICT_TEXT[int(code)]


@dataclass
class NodeInfo:
    id: str
    parent: str | None
    text: str
    kind: str
    children: tuple[str, ...] = ()
    name: str | None = None
    op: str | None = None  # a comparison's or operator's symbol ("<=", "/", "and" ...); None for leaves
    value: float | None = None  # a constant's value
    range: tuple[float, float] | None = None  # a leaf that averages an amount: its declared or derived range


@dataclass
class Trace:
    """Column-wise trace: ``steps`` (K,), ``node_ids`` (N), float arrays (K, N), ``verdict`` int8 (K, N)."""

    steps: np.ndarray
    node_ids: list[str]
    estimate: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    delta: np.ndarray
    verdict: np.ndarray
    n: np.ndarray
    certified: np.ndarray
    unfair: np.ndarray
    undecided: np.ndarray
    evalue: np.ndarray | None = None  # EVIDENCE_COLUMNS (None: all NaN)
    evalue_target: np.ndarray | None = None

    def __post_init__(self):
        for name in EVIDENCE_COLUMNS:
            if getattr(self, name) is None:
                setattr(self, name, np.full(np.shape(self.estimate), np.nan))

    @classmethod
    def empty(cls, node_ids) -> "Trace":
        z = np.zeros((0, len(node_ids)))
        return cls(np.zeros(0, dtype=np.int64), list(node_ids), z, z, z, z, z.astype(np.int8), z, z, z, z)

    @classmethod
    def from_values(cls, steps, node_ids, values) -> "Trace":
        """From ``evaluate()`` output (node id → NodeValue with arrays of shape (K,))."""
        steps = np.asarray(steps, dtype=np.int64)
        k = len(steps)

        def col(attr, default=np.nan, dtype=float):  # filled a node (a row) at a time, then turned to (step, node)
            out = np.full((len(node_ids), k), default, dtype=dtype)
            for j, nid in enumerate(node_ids):
                v = getattr(values[nid], attr)
                if v is not None:
                    out[j] = v  # a value per step, or one for all (broadcast)
            return np.ascontiguousarray(out.T)

        verdict = col("verdict", NO_VERDICT, np.int8)
        return cls(steps, list(node_ids), col("estimate"), col("lo"), col("hi"), col("delta"), verdict,
                   col("n"), col("certified"), col("unfair"), col("undecided"), col("evalue"), col("evalue_target"))

    @classmethod
    def concat(cls, parts: list["Trace"]) -> "Trace":
        parts = [p for p in parts if len(p.steps)] or parts[:1]
        first = parts[0]
        cat = lambda a: np.concatenate([getattr(p, a) for p in parts])  # noqa: E731
        return cls(cat("steps"), first.node_ids, cat("estimate"), cat("lo"), cat("hi"), cat("delta"),
                   cat("verdict"), cat("n"), cat("certified"), cat("unfair"), cat("undecided"), cat("evalue"),
                   cat("evalue_target"))

    def __len__(self) -> int:
        return len(self.steps)

    def verdict_step(self) -> int | None:
        """The first step from which the root kept its last verdict to the end (None when it is undecided)."""
        if not len(self) or self.verdict[-1, 0] == UNKNOWN:
            return None
        other = np.flatnonzero(self.verdict[:, 0] != self.verdict[-1, 0])
        return int(self.steps[0 if not len(other) else other[-1] + 1])

    def column(self, node_id: str) -> int:
        return self.node_ids.index(node_id)

    def row(self, check: int, node_id: str) -> dict:
        j = self.column(node_id)
        out = {"step": int(self.steps[check]), "node": node_id}
        for name in FLOAT_COLUMNS:
            out[name] = float(getattr(self, name)[check, j])
        out["verdict"] = verdict_text(self.verdict[check, j])
        for name in ("n",) + FAIR_COLUMNS + EVIDENCE_COLUMNS:
            out[name] = float(getattr(self, name)[check, j])
        return out

    def to_frame(self) -> pd.DataFrame:
        k, m = self.estimate.shape
        verdicts = np.array(["false", "true", "unknown", None], dtype=object)
        codes = self.verdict.ravel().astype(int)
        frame = pd.DataFrame({
            "step": np.repeat(self.steps, m),
            "node": np.tile(np.array(self.node_ids, dtype=object), k),
            **{name: getattr(self, name).ravel() for name in FLOAT_COLUMNS},
            "verdict": verdicts[np.select([codes == FALSE, codes == TRUE, codes == UNKNOWN], [0, 1, 2], 3)],
            "n": self.n.ravel(),
            **{name: getattr(self, name).ravel() for name in FAIR_COLUMNS + EVIDENCE_COLUMNS},
        })
        return frame


# how the display trace is thinned (``TraceBuilder(points=...)``)
LOG_RATIO = 1.06  # the log grid keeps the first check of every 6 % growth of the step: ≤ 475 rows to 10¹² steps
DISPLAY_CELLS = 5_000  # the default display trace holds about this many (check, node) cells, whatever the stream
# (with full-precision floats its JSON stays under about 1 MB, verdict changes included)
ROOT_CHANGES = 50  # the display trace keeps the root's first this many verdict changes (and its last) ...
NODE_CHANGES = 50  # ... and the first this many changes of the other nodes together (and every node's first and last)
_PIN, _LOG, _GRID, _TAIL = 1, 2, 4, 8  # why a row is kept: the stop / the first check, the log grid, the uniform
# grid, the last check so far (a verdict change kept holds its row and the check before it by a reference count)


def display_points(n_nodes: int) -> int:
    """The default number of uniformly spaced checks the display trace keeps for a tree of ``n_nodes`` nodes (the
    log grid and every verdict change come on top): the JSON of a result stays under about 1 MB."""
    return max(100, min(2000, DISPLAY_CELLS // max(1, n_nodes)))


def thinning_note(info) -> str | None:
    """The sentence saying how many verdict changes the display trace leaves out (``info`` of a result), or None."""
    dropped = (info or {}).get("verdict_changes_dropped")
    if not dropped:
        return None
    total = (info or {}).get("verdict_changes")
    of = f" of {int(total):,}" if total else ""
    return (f"{int(dropped):,}{of} verdict changes of the nodes are not in the display trace (it keeps the first "
            f"and last change of every node, the root's first {ROOT_CHANGES} and the other nodes' first "
            f"{NODE_CHANGES}); the verdict, the stop step and the final values are those of every check, and "
            "--full-trace PATH writes every check")


class TraceBuilder:
    """The trace of a run, built part by part in amortised constant time per check.

    ``points=None`` keeps every check. ``points=P`` keeps a bounded, shape-preserving subsample for display, so
    that a stream of any length costs memory and JSON bounded in its length: verdict changes, each with the check
    before it (so a change is drawn at its exact step) — the first and the last change of every node, the root's
    first ``ROOT_CHANGES`` changes and the first ``NODE_CHANGES`` changes of the other nodes (together) —, the steps
    passed as ``pin`` (the stop step), the first check, the last check, the first check of every ``LOG_RATIO``
    growth of the step (the steep start of a confidence sequence) and a uniform grid of at most ``P`` checks (every
    ``stride``-th, the stride doubling when the grid fills up). That keeps the stop step, ``verdict_step`` (the
    root's last change) and every decision of a stream that behaves (a decided root does not change back unless
    the guarantee's assumption is broken) exact, and the trace strictly bounded when verdicts keep flipping (a node
    at its threshold, drift): at most about ``P`` + the log grid + 2 × (2 × nodes + ``ROOT_CHANGES`` +
    ``NODE_CHANGES``) rows, whatever the stream's length. ``changes`` counts every verdict change of every node,
    ``changes_dropped`` those the display trace does not show exactly (a change whose check or the check before it
    is not kept). ``checks`` counts every check appended. ``view()`` is the trace so far; a later ``append`` never
    changes a trace it gave."""

    _COLUMNS = FLOAT_COLUMNS + ("n",) + FAIR_COLUMNS + EVIDENCE_COLUMNS

    def __init__(self, node_ids, points: int | None = None):
        self.node_ids = list(node_ids)
        self.points = None if points is None or points <= 0 else max(2, int(points))
        self.size = 0
        self.checks = 0
        self.stride = 1
        self._steps = np.zeros(0, dtype=np.int64)
        self._index = np.zeros(0, dtype=np.int64)
        self._why = np.zeros(0, dtype=np.uint8)
        self._refs = np.zeros(0, dtype=np.int32)  # how many kept verdict changes hold the row
        self._nchg = np.zeros(0, dtype=np.int32)  # how many nodes' verdicts change at the row's check
        self.changes = 0
        self._first_change = np.full(len(self.node_ids), -1, dtype=np.int64)  # per node: the check index
        self._last_change = np.full(len(self.node_ids), -1, dtype=np.int64)
        self._root_changes = 0  # the root's changes kept as such (up to ROOT_CHANGES)
        self._node_changes = 0  # the other nodes' changes kept as such (up to NODE_CHANGES)
        self._cols = {name: np.zeros((0, len(self.node_ids))) for name in self._COLUMNS}
        self._verdict = np.zeros((0, len(self.node_ids)), dtype=np.int8)
        self._prev_verdict: np.ndarray | None = None
        self._prev_cell = -1

    def _kept(self) -> np.ndarray:
        return (self._why[:self.size] != 0) | (self._refs[:self.size] > 0)

    @property
    def thinned(self) -> bool:
        return np.count_nonzero(self._kept()) < self.checks

    @property
    def changes_dropped(self) -> int:
        """The verdict changes (of any node) the display trace does not show at their exact step."""
        if self.points is None:
            return 0
        keep = self._kept()
        index, nchg = self._index[:self.size][keep], self._nchg[:self.size][keep]
        shown = np.isin(index - 1, index)  # the check before the row is kept too
        return int(self.changes - nchg[shown].sum())

    @property
    def last_step(self) -> int | None:
        return int(self._steps[self.size - 1]) if self.size else None

    def _grow(self, need: int) -> None:
        capacity = max(need, 2 * len(self._steps), 64)
        def grown(a):  # noqa: E306
            out = np.empty((capacity,) + a.shape[1:], dtype=a.dtype)
            out[:self.size] = a[:self.size]
            return out
        self._steps, self._index, self._why = grown(self._steps), grown(self._index), grown(self._why)
        self._refs, self._nchg = grown(self._refs), grown(self._nchg)
        self._cols = {name: grown(a) for name, a in self._cols.items()}
        self._verdict = grown(self._verdict)

    def _changes(self, part: Trace) -> np.ndarray:
        """(checks, nodes): whether the node's verdict at the check differs from the check before."""
        before = part.verdict[:1] if self._prev_verdict is None else self._prev_verdict[None, :]
        return np.diff(np.concatenate([before, part.verdict]), axis=0) != 0

    def _held(self, changed: np.ndarray) -> tuple[np.ndarray, int, list[int]]:
        """Which verdict changes of a part are kept: the reference count of each of its rows, the count added to
        the check before the part (the builder's last row) and the checks (indices) of changes no longer kept (a
        node's former last change)."""
        k = len(changed)
        refs = np.zeros(k + 1, dtype=np.int32)  # refs[0]: the check before the part
        release: list[int] = []
        for j in np.flatnonzero(changed.any(axis=0)):
            rows = np.flatnonzero(changed[:, j])
            held = [rows[-1]]
            if self._first_change[j] < 0:
                self._first_change[j] = self.checks + rows[0]
                held.append(rows[0])
            if j == 0 and self._root_changes < ROOT_CHANGES:
                take = rows[:ROOT_CHANGES - self._root_changes]
                self._root_changes += len(take)
                held.extend(take)
            elif j != 0 and self._node_changes < NODE_CHANGES:
                take = rows[:NODE_CHANGES - self._node_changes]
                self._node_changes += len(take)
                held.extend(take)
            if self._last_change[j] >= 0:
                release.append(int(self._last_change[j]))
            self._last_change[j] = self.checks + rows[-1]
            held = np.asarray(held, dtype=np.int64)
            np.add.at(refs, held + 1, 1)
            np.add.at(refs, held, 1)  # the check before each change
        return refs[1:], int(refs[0]), release

    def _why_kept(self, part: Trace, pin) -> np.ndarray:
        k = len(part)
        index = self.checks + np.arange(k)
        why = np.zeros(k, dtype=np.uint8)
        if self.checks == 0:
            why[0] |= _PIN
        if len(pin):
            why[np.isin(part.steps, np.asarray(list(pin), dtype=np.int64))] |= _PIN
        cell = np.floor(np.log(np.maximum(part.steps, 1)) / math.log(LOG_RATIO)).astype(np.int64)
        fresh = np.diff(np.concatenate([[self._prev_cell], cell])) != 0
        why[fresh] |= _LOG
        why[index % self.stride == 0] |= _GRID
        why[-1] |= _TAIL
        self._prev_cell = int(cell[-1])
        return why

    def append(self, part: Trace, pin=()) -> None:
        k = len(part)
        if not k:
            return
        changed = self._changes(part)
        nchg = np.count_nonzero(changed, axis=1).astype(np.int32)
        self.changes += int(nchg.sum())
        carry, release = 0, []
        if self.points is None:
            rows, why, refs = np.arange(k), np.full(k, _GRID, dtype=np.uint8), np.zeros(k, dtype=np.int32)
        else:
            why = self._why_kept(part, pin)
            refs, carry, release = self._held(changed)
            rows = np.flatnonzero((why != 0) | (refs > 0))
            why, refs = why[rows], refs[rows]
        self._prev_verdict = part.verdict[-1].copy()
        if carry:  # the check before the part is the builder's last row (the last check is always kept)
            self._refs[self.size - 1] += carry
        if release:  # a node's former last change and the check before it, still rows of the builder
            at = np.searchsorted(self._index[:self.size], np.asarray(release, dtype=np.int64))
            np.subtract.at(self._refs, at, 1)
            np.subtract.at(self._refs, at - 1, 1)
        m = len(rows)
        if self.size + m > len(self._steps):
            self._grow(self.size + m)
        at = slice(self.size, self.size + m)
        self._steps[at] = part.steps[rows]
        self._index[at] = self.checks + rows
        self._why[at] = why
        self._refs[at] = refs
        self._nchg[at] = nchg[rows]
        for name in self._COLUMNS:
            self._cols[name][at] = getattr(part, name)[rows]
        self._verdict[at] = part.verdict[rows]
        self.size += m
        self.checks += k
        if self.points is not None:
            self._why[:self.size - 1] &= ~np.uint8(_TAIL)
            self._thin()

    def _thin(self) -> None:
        """Double the uniform grid's stride while it holds more than ``points`` checks. The rows no longer kept for
        any reason (a former last check, grid rows off the new stride) stay until they are ``points`` many, then
        the kept rows are copied to new arrays: rows already handed out by ``view()`` never change."""
        n = self.size
        grid = (self._why[:n] & _GRID) != 0  # as bools: ``_GRID & True`` would be 4 & 1 = 0
        if np.count_nonzero(grid) > self.points:
            while np.count_nonzero(grid) > self.points:
                self.stride *= 2
                grid = grid & ((self._index[:n] % self.stride) == 0)
            # a fresh array: the old one may be shared with a view
            self._why = np.concatenate([(self._why[:n] & ~np.uint8(_GRID)) | (grid.astype(np.uint8) * np.uint8(_GRID)),
                                        self._why[n:]])
        keep = self._kept()
        if n - np.count_nonzero(keep) <= self.points:
            return
        rows = np.flatnonzero(keep)
        m = len(rows)
        fresh = lambda a: np.concatenate([a[rows], np.empty((max(64, 2 * m) - m,) + a.shape[1:], a.dtype)])  # noqa
        self._steps, self._index, self._why = fresh(self._steps), fresh(self._index), fresh(self._why)
        self._refs, self._nchg = fresh(self._refs), fresh(self._nchg)
        self._cols = {name: fresh(a) for name, a in self._cols.items()}
        self._verdict = fresh(self._verdict)
        self.size = m

    def view(self) -> Trace:
        """The trace so far: the rows kept (a view: a later ``append`` never changes it)."""
        n = self.size
        keep = self._kept()
        if self.points is None or keep.all():
            return self._view(slice(0, n))
        return self._view(np.flatnonzero(keep))

    def _view(self, rows) -> Trace:
        c = {name: a[rows] for name, a in self._cols.items()}
        return Trace(self._steps[rows], self.node_ids, c["estimate"], c["lo"], c["hi"], c["delta"],
                     self._verdict[rows], c["n"], c["certified"], c["unfair"], c["undecided"], c["evalue"],
                     c["evalue_target"])


_num = json_number  # the JSON number rule (fairaudit.base.numbers)


def _unnum(x) -> float:
    if x is None:
        return math.nan
    if isinstance(x, str):
        return float(x)  # "inf" / "-inf"
    return float(x)


@dataclass
class AuditResult:
    """What every audit returns, whichever engine ran (built by the driver, ``fairaudit.core.driver``).

    ``spec`` is the canonical text; ``tree`` the parsed ``Spec`` when available. Every front end reads the
    typed fields: ``guarantee`` (what the verdict is worth, ``fairaudit.core.guarantee.Guarantee``), ``unit`` (what
    a step counts), ``complete`` (False when the run was stopped or ran out of time; ``timed_out`` says which),
    ``verdict_step``, ``warnings``, ``assumption_broken``, ``rows`` (which rows were audited) and ``provenance``
    (what identifies the data and the model), ``findings`` (``fairaudit.core.findings.Findings``: per-group rates,
    group metrics, feature influences, the modelled graph; empty for most engines), ``counterexamples``
    (``fairaudit.core.counterexamples.Counterexamples``: individuals a Fair[...] leaf's decision changes for), ``exact``
    (node id → the node's value at the last check as an exact fraction ``"k/n"``, where the engine has one).
    ``info`` holds engine facts that no front end needs to understand (δ allocation, solver calls, timings). All
    of it is written to JSON.
    """

    spec: str
    engine: str
    options: dict
    verdict: str
    stop_step: int | None
    steps: int
    node_info: list[NodeInfo]
    trace_table: Trace
    guarantee: Guarantee | None = None
    unit: str = "steps"
    complete: bool = True
    timed_out: bool = False
    verdict_step: int | None = None
    warnings: list = field(default_factory=list)
    assumption_broken: bool = False
    rows: dict | None = None
    provenance: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    findings: Findings = field(default_factory=Findings)
    counterexamples: Counterexamples = field(default_factory=Counterexamples)
    exact: dict = field(default_factory=dict)  # node id → its value at the last check as an exact fraction, "k/n"
    tree: object = field(default=None, repr=False, compare=False)
    # what the verdict is about ("rows", "population", "modelled", "program", "domain": ``fairaudit.core.claim``); the
    # population check of a modelled-distribution engine (``fairaudit.core.claim.population_check``); why a verdict
    # on a threshold chosen from these data is exploratory (``fairaudit.core.claim.exploratory_state``), else None
    scope: str | None = None
    population: dict | None = None
    exploratory: dict | None = None

    def __post_init__(self):
        if self.guarantee is None:  # a hand-built result: the exact/sound/probabilistic kind from its δ option
            delta = float((self.options or {}).get("delta", 0.0) or 0.0)
            self.guarantee = Guarantee("probabilistic", delta) if delta > 0 else Guarantee("sound")
        self.warnings = [str(w) for w in self.warnings]
        if self.verdict_step is None and self.verdict in ("true", "false"):
            self.verdict_step = self.trace_table.verdict_step() if len(self.trace_table) else self.stop_step

    # ------------------------------------------------------------------ views
    @property
    def root(self) -> str:
        return self.node_info[0].id

    @property
    def trace(self) -> pd.DataFrame:
        """The per-(step, node) table (a new DataFrame each call)."""
        return self.trace_table.to_frame()

    def to_frame(self) -> pd.DataFrame:
        return self.trace_table.to_frame()

    def by_node(self, node_id: str) -> pd.DataFrame:
        """One node's rows, in step order."""
        t = self.trace_table
        j = t.column(node_id)
        verdicts = [verdict_text(v) for v in t.verdict[:, j]]
        data = {"step": t.steps, **{c: getattr(t, c)[:, j] for c in FLOAT_COLUMNS}, "verdict": verdicts,
                "n": t.n[:, j], **{c: getattr(t, c)[:, j] for c in FAIR_COLUMNS + EVIDENCE_COLUMNS}}
        return pd.DataFrame(data)

    def final_values(self, node_id: str) -> dict:
        """A node's values at the last check (the ``final`` object of the JSON contract)."""
        t = self.trace_table
        if not len(t):
            return {"estimate": math.nan, "lo": math.nan, "hi": math.nan, "delta": math.nan, "verdict": None}
        row = t.row(len(t) - 1, node_id)
        out = {k: row[k] for k in ("estimate", "lo", "hi", "delta", "verdict")}
        info = self.node(node_id)
        if info.kind in ("expect", "fair"):
            out["n"] = row["n"]
        if info.kind == "fair":
            out.update({k: row[k] for k in FAIR_COLUMNS})
        if info.kind == "cmp" and self.has_evalue(node_id):
            out.update({k: row[k] for k in EVIDENCE_COLUMNS})
        if node_id in self.exact:
            out["exact"] = self.exact[node_id]
        return out

    def has_evalue(self, node_id: str) -> bool:
        """Was this comparison tested by its engine's own test (an e-value column) at some check?"""
        t = self.trace_table
        return bool(len(t)) and bool((~np.isnan(t.evalue[:, t.column(node_id)])).any())

    def evidence_text(self, node_id: str) -> str | None:
        """Why a comparison is decided although its interval still straddles its threshold: "decided by the joint
        test: e-value 41 ≥ 1/β = 20" (None when its interval decides it, or it is undecided)."""
        from fairaudit.core.guarantee import evidence_note

        info = self.node(node_id)
        if info.kind != "cmp" or not self.has_evalue(node_id):
            return None
        return evidence_note(self.final_values(node_id), info.op)

    @property
    def final(self) -> pd.DataFrame:
        """Per-node final values, indexed by node id (columns id-ordered as in ``nodes``)."""
        rows = []
        for info in self.node_info:
            row = {"node": info.id, "kind": info.kind, "text": info.text}
            row.update(self.final_values(info.id))
            rows.append(row)
        return pd.DataFrame(rows).set_index("node")

    def node(self, node_id: str) -> NodeInfo:
        for info in self.node_info:
            if info.id == node_id:
                return info
        raise KeyError(node_id)

    @property
    def nodes(self) -> list[dict]:
        return [{"id": i.id, "parent": i.parent, "text": i.text, "kind": i.kind,
                 **({"op": i.op} if i.op is not None else {}), **({"value": i.value} if i.value is not None else {}),
                 **({"name": i.name} if i.name else {}), **({"range": list(i.range)} if i.range else {}),
                 "final": self.final_values(i.id)}
                for i in self.node_info]

    @property
    def shown_nodes(self) -> list[dict]:
        """``nodes`` as the tree and a node's badge show them, with the headline's verdicts: on a modelled
        distribution's result, each claim as the population check decides it (``fairaudit.core.claim``); on an
        exploratory result (a threshold chosen from these data) the claims whose verdict rests on that threshold
        read "exploratory", never certified or violated: the comparison whose threshold was chosen and the
        and/or/not nodes above it (their verdict depends on its); a comparison the choice did not touch keeps its
        own verdict. When no mark names a comparison of this tree, every decided claim is exploratory."""
        nodes = self.nodes
        check = (self.population or {}).get("nodes") if self.scope == "modelled" else None
        if check:  # a modelled distribution's result: the claims as the population check decides them (the headline's)
            for node in nodes:
                final = node.get("final") or {}
                got = (check.get(node["id"]) or {}).get("verdict")
                if node["kind"] in ("cmp", "and", "or", "not") and got is not None:
                    node["final"] = {**final, "verdict": got}
        if not self.exploratory:
            return nodes
        from fairaudit.core.claim import chosen_thresholds

        parent = {n["id"]: n.get("parent") for n in nodes}
        touched = set()
        for node_id in chosen_thresholds(self):  # each chosen comparison and its ancestors
            while node_id is not None and node_id not in touched:
                touched.add(node_id)
                node_id = parent.get(node_id)
        for node in nodes:
            final = node.get("final") or {}
            if (node["kind"] in ("cmp", "and", "or", "not") and final.get("verdict") in ("true", "false")
                    and (not touched or node["id"] in touched)):
                node["final"] = {**final, "verdict": "exploratory"}
        return nodes

    # ------------------------------------------------------------------ summaries
    def worst_node(self) -> dict | None:
        """The comparison that matters (``fairaudit.core.focus``: the one rule the headline, the CLI's ``worst:``
        line, the tree's default selection and the PDF share): ``{id, text, verdict, estimate, lo, hi, margin,
        rule}`` at the last check (``rule``: the words of the rule that chose it); None without comparisons."""
        from fairaudit.core.focus import focus

        found = focus(self)
        if found is None:
            return None
        info, f = self.node(found.id), self.final_values(found.id)
        return {"id": info.id, "text": info.text, "verdict": f["verdict"], "estimate": f["estimate"], "lo": f["lo"],
                "hi": f["hi"], "margin": found.margin, "rule": found.words}

    @property
    def guarantee_delta(self) -> float:
        """The probability that the verdict is wrong is at most this (0 for sound and exact guarantees)."""
        return float(self.guarantee.delta) if self.guarantee.kind == "probabilistic" else 0.0

    @property
    def guarantee_note(self) -> str | None:
        """Why the guarantee is weaker than asked for, or None when it is not."""
        return self.guarantee.note

    @property
    def claim(self):
        """The headline: what the evidence supports about what the user asked (``fairaudit.core.claim.Claim``)."""
        from fairaudit.core.claim import claim

        return claim(self)

    @property
    def sentence(self) -> str:
        """The headline (``claim``) with why the guarantee is weaker than asked, if it is: the line the CLI, the
        dashboard and the PDF print."""
        c = self.claim
        note = c.guarantee.note if c.guarantee is self.guarantee else None
        return c.headline + (f" ({note})" if note and c.verdict in ("true", "false") else "")

    @property
    def headline(self) -> str:
        """The headline verdict and its guarantee: "certified true with probability ≥ 0.95 after 870
        observations", "undecided for the population: …" (``fairaudit.core.claim``)."""
        return self.claim.headline

    @property
    def summary(self) -> str:
        """The verdict in plain words, for a manager (``fairaudit.core.claim.summary_sentence``)."""
        return self.claim.summary

    @property
    def scope_sentence(self) -> str:
        """The engine's own verdict on its scope and its guarantee (the headline's second line when they differ)."""
        return verdict_sentence(self.verdict, self.guarantee, at=self.verdict_step, steps=self.steps,
                                unit=self.unit, reason=self.undecided_reason() if self.verdict not in
                                ("true", "false") else "", with_note=True)

    @property
    def rows_text(self) -> str | None:
        """Which rows were audited, e.g. "8,141 held-out rows (not used to train the model)"; None if unknown."""
        return self.rows.get("text") if isinstance(self.rows, dict) else None

    @property
    def assumption(self) -> str | None:
        """What the guarantee assumes (None for engines that need nothing)."""
        return self.guarantee.assumes

    def worst_summary(self) -> str | None:
        """The worst comparison in one line: "sex_parity (n1) <text>: violated; left side 0.31 in [0.27, 0.35]"
        (the CLI, the dashboard and the PDF say it this way); None for a spec without comparisons."""
        worst = self.worst_node()
        if worst is None:
            return None
        info = self.node(worst["id"])
        name = f"{info.name} " if info.name else ""
        verdict = {"true": "certified", "false": "violated"}.get(worst["verdict"], "undecided")
        if self.scope == "modelled":  # the engine's own verdict: about its model, not the population
            verdict += " for the modelled distribution"
        line = f"{name}({worst['id']}) {worst['text']}: {verdict}"
        if len(info.children) == 2 and self.node(info.children[0]).kind == "fair":  # its rates, never a midpoint
            from fairaudit.core.explain import fair_text

            line += f"; left side {fair_text(self.final_values(info.children[0]))}"
        elif len(info.children) == 2:
            left = self.final_values(info.children[0])
            interval = format_interval(left["lo"], left["hi"])
            line += f"; left side {_fmt(left['estimate'])}" + (f" in {interval}" if interval.startswith("[") else "")
        return line

    @property
    def stopped_reason(self) -> str | None:
        """Why the run ended before its end (None when it is complete)."""
        if self.complete:
            return None
        if (self.info or {}).get("failed"):  # a live log that could not be read on (``fairaudit.engines.monitor.livelog.failed``)
            return (f"the live log could not be read on after {count(self.steps, self.unit)} "
                    f"({(self.info or {})['failed']}); the verdict so far covers only the rows before that and is "
                    "not the log's final answer")
        if (self.info or {}).get("snapshot"):  # a live log's audit so far, while it is still watched
            return (f"a snapshot after {count(self.steps, self.unit)} while the log is still watched; the verdict so "
                    "far keeps its guarantee")
        if self.timed_out:
            budget = (self.options or {}).get("time_budget")
            rounds = (self.info or {}).get("rounds")  # the refinement engines' last complete round (``ROUNDS``)
            again = (f"; reached {count(rounds, 'rounds')}; rerun with --rounds {rounds} to reproduce these bounds"
                     if isinstance(rounds, int) and not isinstance(rounds, bool) else "")
            return (f"the time budget{f' of {budget:g} s' if isinstance(budget, (int, float)) else ''} ran out "
                    f"after {count(self.steps, self.unit)}; the verdict so far keeps its guarantee{again}")
        return f"stopped on request after {count(self.steps, self.unit)}; the verdict so far keeps its guarantee"

    def undecided_reason(self) -> str:
        """``": <comparison> ..."`` saying why the furthest comparison is not decided, or ""."""
        worst = self.worst_node()
        if worst is None:
            return ""
        info = self.node(worst["id"])
        name = f"{info.name}: " if info.name else ""
        if len(info.children) != 2:
            return f": {name}{worst['text']} is {worst['verdict']}"
        left, right = (self.final_values(c) for c in info.children)
        left_text = self.node(info.children[0]).text
        if _finite(right["lo"]) and right["lo"] == right["hi"]:
            return (f": {name}{left_text} lies in [{_fmt(left['lo'])}, {_fmt(left['hi'])}], which still contains "
                    f"the threshold {_fmt(right['lo'])}")
        return (f": {name}{left_text} lies in [{_fmt(left['lo'])}, {_fmt(left['hi'])}] and "
                f"{self.node(info.children[1]).text} in [{_fmt(right['lo'])}, {_fmt(right['hi'])}]; "
                "the intervals are still too wide to compare")

    # ------------------------------------------------------------------ JSON
    def to_dict(self, *, trace_every: int = 1) -> dict:
        t = self.trace_table
        keep = np.arange(len(t))
        if trace_every > 1 and len(t):
            mask = (keep % trace_every == 0)
            mask[-1] = True
            if self.stop_step is not None:
                mask |= t.steps == self.stop_step
            keep = keep[mask]
        kinds = {i.id: i.kind for i in self.node_info}
        tested = [kinds[nid] == "cmp" and self.has_evalue(nid) for nid in t.node_ids]
        rows = []
        for c in keep:
            step = int(t.steps[c])
            for j, nid in enumerate(t.node_ids):
                row = {"step": step, "node": nid}
                for name in FLOAT_COLUMNS:
                    row[name] = _num(getattr(t, name)[c, j])
                row["verdict"] = verdict_text(t.verdict[c, j])
                if kinds[nid] in ("expect", "fair"):
                    row["n"] = _num(t.n[c, j])
                if kinds[nid] == "fair":
                    for name in FAIR_COLUMNS:
                        row[name] = _num(getattr(t, name)[c, j])
                if tested[j]:
                    for name in EVIDENCE_COLUMNS:
                        row[name] = _num(getattr(t, name)[c, j])
                rows.append(row)
        nodes = []
        for node in self.nodes:
            node = dict(node)
            node["final"] = {k: (_num(v) if k not in ("verdict", "exact") else v) for k, v in node["final"].items()}
            nodes.append(node)
        claim = self.claim
        return {"spec": self.spec, "engine": self.engine, "options": _jsonable(self.options),
                "verdict": claim.verdict, "status": claim.status, "summary": claim.summary,
                "headline": claim.to_dict(), "scope": {"about": self.scope or claim.scope, "verdict": self.verdict},
                "population": _jsonable(self.population), "exploratory": _jsonable(self.exploratory),
                "stop_step": self.stop_step, "steps": self.steps,
                "verdict_step": self.verdict_step, "guarantee": self.guarantee.to_dict(), "unit": self.unit,
                "complete": self.complete, "timed_out": self.timed_out, "warnings": list(self.warnings),
                "assumption_broken": self.assumption_broken, "rows": _jsonable(self.rows),
                "provenance": _jsonable(self.provenance), "nodes": nodes, "trace": rows,
                "findings": _jsonable(self.findings.to_dict()),
                "counterexamples": _jsonable(self.counterexamples.to_dict()), "info": _jsonable(self.info)}

    def to_json(self, path=None, *, trace_every: int = 1) -> str:
        text = json.dumps(self.to_dict(trace_every=trace_every), separators=(",", ":"))
        if path is not None:
            from fairaudit.base.files import write_atomically

            write_atomically(path, text.encode("utf-8"), what="audit result")
        return text

    @classmethod
    def from_json(cls, source) -> "AuditResult":
        """From a JSON string, a path, or an already-decoded dict."""
        if isinstance(source, dict):
            data = source
        else:
            text = str(source)
            if not text.lstrip().startswith("{"):
                text = Path(text).read_text(encoding="utf-8")
            data = json.loads(text)
        children: dict[str, list[str]] = {n["id"]: [] for n in data["nodes"]}
        for n in data["nodes"]:
            if n["parent"] is not None:
                children[n["parent"]].append(n["id"])
        infos = [NodeInfo(n["id"], n["parent"], n["text"], n["kind"], tuple(children[n["id"]]), n.get("name"),
                          n.get("op"), n.get("value"), tuple(n["range"]) if n.get("range") else None)
                 for n in data["nodes"]]
        infos = _with_ops(infos, data.get("spec"))
        ids = [i.id for i in infos]
        steps = sorted({r["step"] for r in data["trace"]})
        index = {s: i for i, s in enumerate(steps)}
        k, m = len(steps), len(ids)
        cols = {name: np.full((k, m), np.nan) for name in FLOAT_COLUMNS + ("n",) + FAIR_COLUMNS + EVIDENCE_COLUMNS}
        verdict = np.full((k, m), NO_VERDICT, dtype=np.int8)
        col_of = {nid: j for j, nid in enumerate(ids)}
        for r in data["trace"]:
            c, j = index[r["step"]], col_of[r["node"]]
            for name in cols:
                if name in r:
                    cols[name][c, j] = _unnum(r[name])
            verdict[c, j] = _VERDICT_CODES[r.get("verdict")]
        trace = Trace(np.array(steps, dtype=np.int64), ids, cols["estimate"], cols["lo"], cols["hi"], cols["delta"],
                      verdict, cols["n"], cols["certified"], cols["unfair"], cols["undecided"], cols["evalue"],
                      cols["evalue_target"])
        info = dict(data.get("info") or {})
        guarantee = Guarantee.from_dict(data.get("guarantee"))
        if guarantee is None:  # written before results carried a typed guarantee (monitor only)
            delta = float(info.get("guarantee_delta") or data.get("options", {}).get("delta") or 0.0)
            guarantee = (Guarantee("probabilistic", delta, assumes=info.get("assumption")) if delta > 0
                         else Guarantee("sound"))
        scope = data.get("scope") if isinstance(data.get("scope"), dict) else {}
        return cls(data["spec"], data["engine"], data.get("options", {}), scope.get("verdict", data["verdict"]),
                   data.get("stop_step"),
                   data.get("steps", 0), infos, trace, guarantee=guarantee,
                   unit=data.get("unit") or info.get("unit") or "steps",
                   complete=bool(data.get("complete", info.get("complete", True))),
                   timed_out=bool(data.get("timed_out", info.get("timed_out", False))),
                   verdict_step=data.get("verdict_step", info.get("verdict_step")),
                   warnings=list(data.get("warnings", info.get("warnings", []))),
                   assumption_broken=bool(data.get("assumption_broken", info.get("assumption_broken", False))),
                   rows=data.get("rows", info.get("rows")),
                   provenance=data.get("provenance") or {k: info[k] for k in ("dataset", "model") if k in info},
                   info=info, findings=Findings.from_dict(data.get("findings")),
                   counterexamples=Counterexamples.from_dict(data.get("counterexamples")),
                   scope=scope.get("about"), population=data.get("population"),
                   exploratory=data.get("exploratory"),
                   exact={n["id"]: n["final"]["exact"] for n in data["nodes"] if "exact" in (n.get("final") or {})})


def _finite(x) -> bool:
    return x is not None and isinstance(x, (int, float, np.floating)) and math.isfinite(float(x))


def _fmt(x) -> str:
    from fairaudit.base.numbers import clean

    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{clean(x):.4g}"


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return _num(float(value))
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    return value


def node_infos(spec) -> list[NodeInfo]:
    """``NodeInfo`` records for a parsed ``Spec`` (a leaf that averages an amount with its range)."""
    from fairaudit.spec.quantities import leaf_ranges

    ranges = leaf_ranges(spec) if hasattr(spec, "ranges") else {}
    return [NodeInfo(tn.id, tn.parent, tn.text, tn.kind, tuple(tn.children), getattr(tn, "name", None),
                     _OPS.get(tn.kind, getattr(tn.node, "op", None)),
                     float(tn.node.value) if tn.kind == "const" else None,
                     ranges.get(tn.text) if tn.kind == "expect" else None) for tn in spec.nodes]


_OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "neg": "-", "and": "and", "or": "or", "not": "not"}


def _with_ops(infos: list[NodeInfo], spec_text) -> list[NodeInfo]:
    """A result written before nodes carried ``op`` and ``value``: take them from its parsed ``spec`` text (the
    nodes are that tree in pre-order), once, here, so that no reader re-parses a node's text. Left as they are
    when the text no longer parses or its tree is not the nodes' tree."""
    missing = any((i.op is None and (i.kind == "cmp" or i.kind in _OPS)) or (i.kind == "const" and i.value is None)
                  for i in infos)
    if not missing or not spec_text:
        return infos
    from dataclasses import replace

    from fairaudit.base.errors import FairauditError
    from fairaudit.spec import parse

    try:
        parsed = node_infos(parse(str(spec_text)))
    except (FairauditError, ValueError, RecursionError):
        return infos
    if [(p.id, p.kind) for p in parsed] != [(i.id, i.kind) for i in infos]:
        return infos
    return [replace(i, op=i.op if i.op is not None else p.op, value=i.value if i.value is not None else p.value)
            for i, p in zip(infos, parsed)]
