"""The search: which thresholds keep the most accuracy (or favourable decisions) while the specification holds with a
margin, on the search rows only.

**Exact values, linear cost.** Every ``E[event | given]`` leaf of the specification is a ratio of two counts over the
rows, and each row's contribution depends on that row alone — on its decision among the rest. So the rows are
observed twice with ``fairaudit.core.observations.observe``, the function the dataset engine reads rows with: once as
if every decision were unfavourable, once as if every one were favourable. For a group and a threshold ``t`` a leaf's
numerator and denominator are then the rows below ``t`` counted from the first observation plus the rows at or above
``t`` counted from the second (prefix sums over the group's rows sorted by score: a threshold costs one binary
search). A combination of one threshold per group adds its groups' counts, and the leaf's value is
Σ numerator / Σ denominator — the dataset engine's value for those decisions. The values of many combinations go to
``fairaudit.core.evaluate.evaluate`` at once (it is vectorised over a leading axis).

**The margin** of the specification (its robustness): a comparison ``l op r`` has margin ``l − r`` for
``>``/``≥``, ``r − l`` for ``<``/``≤``, ``−|l − r|`` for ``==`` and ``|l − r|`` for ``!=`` (how far inside its
satisfied side); ``and`` takes the least of its parts, ``or`` the greatest, ``not`` the negation. A set of
thresholds is *feasible* when each comparison's margin (read through the ``and``/``or``/``not`` above it) reaches
the margin required of it (``fairaudit.repairs.margin``: a fixed number, or sized for each set of thresholds from its
own rates so that the certificate can certify it on the certification rows).

**Which combinations.** Every combination of the groups' candidates when there are at most ``EXHAUSTIVE_LIMIT``;
otherwise coordinate ascent: from the best single threshold, each group's threshold in turn is set to its best
candidate with the others held, until no group changes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairaudit.core.evaluate import LeafValue, compile_spec, evaluate
from fairaudit.core.observations import observe
from fairaudit.repairs.margin import Fixed

EXHAUSTIVE_LIMIT = 200_000  # combinations tried one by one at most; beyond, coordinate ascent
ASCENT_ROUNDS = 50  # coordinate ascent stops after this many rounds over the groups (it stops sooner when stable)
CURVE_POINTS = 100  # the most points of the curve (the Pareto front of margin and objective)
CHUNK = 50_000  # combinations evaluated per call of ``evaluate`` (memory)


@dataclass
class Cell:
    """The rows of one group (positions into the search rows) and their counts as functions of its threshold."""

    name: str | None
    sorted_scores: np.ndarray
    below: np.ndarray  # (n + 1, m): the quantities summed over the first j rows (by score), decided unfavourably
    above: np.ndarray  # (n + 1, m): the same, decided favourably

    def counts(self, thresholds) -> np.ndarray:
        """``(len(thresholds), m)``: every quantity summed over the group's rows, each row decided ``score ≥ t``."""
        j = np.searchsorted(self.sorted_scores, np.asarray(thresholds, dtype=float), side="left")
        return self.below[j] + (self.above[-1] - self.above[j])


@dataclass
class Evaluated:
    """The search rows' values of many combinations: the specification's ``margin`` (raw) and ``slack`` (the
    margin less the required one: feasible where ≥ 0), ``accuracy`` (None without labels), ``favourable`` share,
    and every node's estimate (``nodes``: node id → array)."""

    margin: np.ndarray
    slack: np.ndarray
    accuracy: np.ndarray | None
    favourable: np.ndarray
    nodes: dict
    need: dict | None = None  # node id → the margin required of each comparison (``fairaudit.repairs.margin``)
    rates: dict | None = None  # leaf key → its rate per combination (NaN: no row)
    counts: dict | None = None  # leaf key → its number of rows per combination
    closeness: np.ndarray | None = None  # 1 − |favourable share − the target share| (``Search.target``)


class Search:
    """The counts of the search rows (module doc): ``spec`` over ``frame`` (the search rows), their ``scores`` and
    ``labels`` (None: no labels), split into cells by ``groups`` (each row's group name, None: no group)."""

    def __init__(self, spec, frame, scores, labels, groups, *, requirement=None):
        self.spec = spec
        self.compiled = compile_spec(spec)
        self.keys = list(self.compiled.leaf_keys)
        self.rows = len(frame)
        self.has_labels = labels is not None
        scores = np.asarray(scores, dtype=float)
        columns = []
        for d in (0, 1):
            pred = np.full(len(frame), d, dtype=np.int8)
            obs = observe(spec, frame, pred=pred, label=labels, score=scores)
            per_row = []
            for key in self.keys:
                mask = obs.masks[key].astype(bool)
                per_row += [(obs.values[key].astype(bool) & mask).astype(np.int64), mask.astype(np.int64)]
            per_row.append((np.asarray(labels) == d).astype(np.int64) if labels is not None
                           else np.zeros(len(frame), dtype=np.int64))
            per_row.append(np.full(len(frame), d, dtype=np.int64))
            columns.append(np.stack(per_row, axis=1) if len(frame) else np.zeros((0, len(per_row)), np.int64))
        self.width = columns[0].shape[1]
        self.per_row = columns  # (rows, m) per decision 0 / 1, in the search rows' order
        codes, uniques = pd.factorize(pd.Series(groups, dtype=object), use_na_sentinel=True)  # None: code -1
        self.cells: dict = {}
        for code, name in sorted(enumerate(uniques), key=lambda item: str(item[1])):
            self.cells[name] = self._cell(name, np.flatnonzero(codes == code), scores, columns)
        if (codes < 0).any():  # the rows of no group
            self.cells[None] = self._cell(None, np.flatnonzero(codes < 0), scores, columns)
        self.everyone = self._cell("all", np.arange(len(frame)), scores, columns)
        self.cmps = [nid for nid in self.compiled.postorder if self.compiled.nodes[nid].kind == "cmp"]
        self.requirement = Fixed(0.0) if requirement is None else requirement  # ``fairaudit.repairs.margin``
        self.target = None  # the favourable share the "favourable" objective keeps (the original's), once known

    @staticmethod
    def _cell(name, where, scores, columns) -> Cell:
        order = where[np.argsort(scores[where], kind="stable")]
        zero = np.zeros((1, columns[0].shape[1]), dtype=np.int64)
        below = np.concatenate([zero, np.cumsum(columns[0][order], axis=0)])
        above = np.concatenate([zero, np.cumsum(columns[1][order], axis=0)])
        return Cell(name, scores[order], below, above)

    @property
    def group_names(self) -> list:
        return [g for g in self.cells if g is not None]

    # ------------------------------------------------------------------ values of combinations
    def values(self, totals: np.ndarray) -> Evaluated:
        """The values of combinations whose summed quantities are ``totals`` (``(N, m)``)."""
        out = [self._values(totals[i:i + CHUNK]) for i in range(0, max(len(totals), 1), CHUNK)]
        if len(out) == 1:
            return out[0]
        return _concat(out)

    def _values(self, totals: np.ndarray) -> Evaluated:
        totals = np.asarray(totals, dtype=float)
        leaves, rates, counts = {}, {}, {}
        with np.errstate(invalid="ignore", divide="ignore"):
            for i, key in enumerate(self.keys):
                num, den = totals[:, 2 * i], totals[:, 2 * i + 1]
                value = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
                leaves[key], rates[key], counts[key] = LeafValue(value, value, value), value, den
        nodes = evaluate(self.spec, leaves) if self.keys else {}
        estimates = {nid: np.asarray(v.estimate, dtype=float) for nid, v in nodes.items()}
        need = {nid: np.broadcast_to(np.asarray(v, dtype=float), (len(totals),))
                for nid, v in self.requirement.need(self, rates, counts).items()}
        margin = self.robustness(estimates, {nid: 0.0 for nid in self.cmps})
        slack = self.robustness(estimates, need)
        rows = max(self.rows, 1)
        accuracy = totals[:, -2] / rows if self.has_labels else None
        favourable = totals[:, -1] / rows
        closeness = None if self.target is None else 1.0 - np.abs(favourable - self.target)
        return Evaluated(margin, slack, accuracy, favourable, estimates, need, rates, counts, closeness)

    def robustness(self, estimates: dict, need: dict) -> np.ndarray:
        """The specification's margin from every comparison's ``l − r`` (``estimates``), each comparison's margin
        less ``need[id]`` (module doc); NaN (a leaf without rows) counts as −∞."""
        cs = self.compiled

        def walk(nid: str, negated: bool) -> np.ndarray:
            tn = cs.nodes[nid]
            if tn.kind == "cmp":
                d = estimates[nid]
                op = tn.node.op
                m = {">": d, ">=": d, "<": -d, "<=": -d, "==": -np.abs(d), "!=": np.abs(d)}[op]
                m = -m if negated else m
                return np.where(np.isnan(m), -np.inf, m - need.get(nid, 0.0))
            if tn.kind == "not":
                return walk(tn.children[0], not negated)
            parts = [walk(c, negated) for c in tn.children]
            least = (tn.kind == "and") != negated
            return np.minimum.reduce(parts) if least else np.maximum.reduce(parts)

        return walk(cs.root, False)

    # ------------------------------------------------------------------ one set of thresholds
    def point(self, thresholds: dict, default: float) -> Evaluated:
        """The values of one set of thresholds: each group's rows decided by its threshold (``thresholds``: group
        name → threshold), the rows of no group or of a group not named by ``default``."""
        totals = np.zeros((1, self.width))
        for name, cell in self.cells.items():
            totals += cell.counts([thresholds.get(name, default) if name is not None else default])
        return self.values(totals)

    def decided(self, decisions: np.ndarray) -> Evaluated:
        """The values of the given decisions of the search rows (the original model's, which need not be a
        threshold of its score): each row counted from the observation of its own decision."""
        d = np.asarray(decisions).astype(bool)
        totals = np.where(d[:, None], self.per_row[1], self.per_row[0]).sum(axis=0, keepdims=True)
        return self.values(totals)

    # ------------------------------------------------------------------ the search
    def search(self, candidates: dict, default: float, objective: str) -> "Found":
        """The best combination of one candidate per group (``candidates``: group name → sorted thresholds; the
        rows of no group decided by ``default``), and every combination tried, for the curve."""
        names = [g for g in self.group_names if g in candidates]
        fixed = np.zeros(self.width)
        for name, cell in self.cells.items():
            if name not in names:
                fixed += cell.counts([default])[0]
        tables = [self.cells[g].counts(candidates[g]) for g in names]
        sizes = [len(candidates[g]) for g in names]
        total = math.prod(sizes)  # a Python integer: no overflow
        if total <= EXHAUSTIVE_LIMIT:
            idx = np.indices(sizes).reshape(len(sizes), -1).T if sizes else np.zeros((1, 0), dtype=int)
            totals = fixed + sum((tables[k][idx[:, k]] for k in range(len(names))), np.zeros((len(idx), self.width)))
            values = self.values(totals)
            best = pick(values, objective)
            return Found(names, candidates, idx, values, best, "exhaustive", default)
        return self._ascent(names, candidates, tables, fixed, default, objective)

    def _ascent(self, names, candidates, tables, fixed, default, objective) -> "Found":
        start = np.array([int(np.argmin(np.abs(candidates[g] - default))) for g in names])
        seen_idx, seen_values = [], []
        current = start.copy()
        for _ in range(ASCENT_ROUNDS):
            changed = False
            for k in range(len(names)):
                others = fixed + sum((tables[j][current[j]] for j in range(len(names)) if j != k), np.zeros(self.width))
                totals = others + tables[k]
                idx = np.repeat(current[None, :], len(tables[k]), axis=0)
                idx[:, k] = np.arange(len(tables[k]))
                values = self.values(totals)
                seen_idx.append(idx)
                seen_values.append(values)
                best = pick(values, objective)
                if best != current[k]:
                    current[k], changed = best, True
            if not changed:
                break
        idx = np.concatenate(seen_idx)
        values = _concat(seen_values)
        at = np.flatnonzero((idx == current).all(axis=1))[0]
        return Found(names, candidates, idx, values, int(at), "coordinate ascent", default)


def _concat(parts: list) -> Evaluated:
    cat = (lambda xs: None if xs[0] is None else np.concatenate(xs))  # noqa: E731
    def joined(name):
        first = getattr(parts[0], name)
        return None if first is None else {k: np.concatenate([np.broadcast_to(getattr(p, name)[k], p.margin.shape)
                                                              for p in parts]) for k in first}

    return Evaluated(cat([p.margin for p in parts]), cat([p.slack for p in parts]), cat([p.accuracy for p in parts]),
                     cat([p.favourable for p in parts]),
                     {nid: np.concatenate([p.nodes[nid] for p in parts]) for nid in parts[0].nodes}, joined("need"),
                     joined("rates"), joined("counts"), cat([p.closeness for p in parts]))


def concat(parts: list) -> Evaluated:
    """The values of several searches' combinations, one after the other."""
    return _concat(parts)


def objective_values(values: Evaluated, objective: str) -> np.ndarray:
    """What each combination is worth (higher is better): its accuracy, or for ``favourable`` how close its
    favourable share stays to the original's (``Search.target``; the share itself before that is known)."""
    if objective == "accuracy":
        return values.accuracy
    return values.favourable if values.closeness is None else values.closeness


def pick(values: Evaluated, objective: str) -> int:
    """The best combination: among the feasible ones (slack ≥ 0) the highest objective, then the largest slack;
    when none is feasible, the largest slack, then the highest objective."""
    goal = objective_values(values, objective)
    feasible = values.slack >= 0
    if feasible.any():
        order = np.lexsort((values.slack, np.where(feasible, goal, -np.inf)))
    else:
        order = np.lexsort((goal, values.slack))
    return int(order[-1])


@dataclass
class Found:
    """A search's outcome: the groups searched (``names``), their ``candidates``, every combination tried (``idx``:
    one candidate index per group) with its ``values``, the ``best`` one's row, the ``method`` and the ``default``
    threshold of the rows of no group."""

    names: list
    candidates: dict
    idx: np.ndarray
    values: Evaluated
    best: int
    method: str
    default: float

    def thresholds(self, row: int) -> dict:
        return {g: float(self.candidates[g][self.idx[row, k]]) for k, g in enumerate(self.names)}

    @property
    def feasible(self) -> bool:
        return bool(self.values.slack[self.best] >= 0)

    def front(self, objective: str) -> np.ndarray:
        """The rows of the Pareto front of (margin, objective): no other combination has both a larger margin and a
        higher objective; at most ``CURVE_POINTS``, from the largest margin down."""
        margin = self.values.margin
        goal = objective_values(self.values, objective)
        ok = np.isfinite(margin) & np.isfinite(goal)
        rows = np.flatnonzero(ok)
        if not len(rows):
            return rows
        rows = rows[np.lexsort((-goal[rows], -margin[rows]))]  # margin descending, then objective descending
        keep, best = [], -np.inf
        for r in rows:
            if goal[r] > best:
                keep.append(r)
                best = goal[r]
        keep = np.asarray(keep)
        if len(keep) > CURVE_POINTS:
            keep = keep[np.unique(np.linspace(0, len(keep) - 1, CURVE_POINTS).round().astype(int))]
        return keep
