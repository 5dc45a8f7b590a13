"""Discrete Bayesian networks over categorical (already discretised) features, for the FVGM engine (issue 15).

A numeric feature is discretised *before* it reaches this module and is ONE categorical variable whose states are its
bins (exactly one bin is on), never a set of independent Boolean bins (the FVGM artifact's modelling error, notes A8).

Structure: hill climbing (implemented here, after pgmpy's HillClimbSearch) with a BIC (default) or K2 score, with every edge INTO a protected attribute forbidden
(notes A5/A8: choice variables have no parents). Parameters: maximum likelihood, computed here from counts as exact
``Fraction``s (an unseen parent configuration gets the uniform distribution, as pgmpy's MLE does).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import product
from typing import Any, Hashable, Mapping, Sequence

__all__ = ["DiscreteBN", "learn_structure", "fit_mle", "learn_bn"]


@dataclass
class DiscreteBN:
    """``states[v]``: the ordered states of variable v; ``parents[v]``: its parents (in a fixed order);
    ``cpts[v][parent_values_tuple]``: the distribution of v as a sequence of probabilities aligned with ``states[v]``.
    Probabilities may be ``Fraction`` (exact) or ``float``."""
    states: dict[str, tuple]
    parents: dict[str, tuple[str, ...]]
    cpts: dict[str, dict[tuple, tuple]]
    order: list[str] = field(default_factory=list)

    def __post_init__(self):
        for v in self.states:
            self.parents.setdefault(v, ())
        if not self.order:
            self.order = self.topological_order()
        self.validate()

    @property
    def variables(self) -> list[str]:
        return list(self.order)

    def topological_order(self) -> list[str]:
        done: list[str] = []
        seen: set[str] = set()
        pending = list(self.states)
        while pending:
            progressed = False
            for v in list(pending):
                if all(p in seen for p in self.parents[v]):
                    done.append(v); seen.add(v); pending.remove(v); progressed = True
            if not progressed:
                raise ValueError(f"the network has a cycle among {pending}")
        return done

    def validate(self) -> None:
        for v, pa in self.parents.items():
            if v not in self.states:
                raise ValueError(f"parents given for unknown variable {v!r}")
            for p in pa:
                if p not in self.states:
                    raise ValueError(f"unknown parent {p!r} of {v!r}")
            table = self.cpts.get(v)
            if table is None:
                raise ValueError(f"no CPT for {v!r}")
            for u in product(*(self.states[p] for p in pa)):
                dist = table.get(tuple(u))
                if dist is None or len(dist) != len(self.states[v]):
                    raise ValueError(f"CPT of {v!r} lacks a distribution of length {len(self.states[v])} for parents {u}")
                if any(q < 0 for q in dist) or abs(float(sum(dist)) - 1.0) > 1e-9:
                    raise ValueError(f"CPT row of {v!r} for parents {u} is not a distribution: {dist}")

    def prob(self, v: str, value: Hashable, assignment: Mapping[str, Hashable]) -> Any:
        u = tuple(assignment[p] for p in self.parents[v])
        return self.cpts[v][u][self.states[v].index(value)]

    def joint(self, assignment: Mapping[str, Hashable]) -> Any:
        out = 1
        for v in self.order:
            out = out * self.prob(v, assignment[v], assignment)
        return out

    def children(self, v: str) -> list[str]:
        return [c for c in self.order if v in self.parents[c]]

    def marginal(self, v: str) -> tuple:
        """Exact marginal of v by enumeration of its ancestors (small networks: tests, FIF)."""
        anc: list[str] = []
        stack = [v]
        while stack:
            x = stack.pop()
            for p in self.parents[x]:
                if p not in anc:
                    anc.append(p); stack.append(p)
        anc = [x for x in self.order if x in anc]
        acc = [0] * len(self.states[v])
        for vals in product(*(self.states[x] for x in anc)):
            a = dict(zip(anc, vals))
            w = 1
            for x in anc:
                w = w * self.prob(x, a[x], a)
            row = self.cpts[v][tuple(a[p] for p in self.parents[v])]
            for i, q in enumerate(row):
                acc[i] = acc[i] + w * q
        return tuple(acc)

    def with_cpt(self, v: str, dist: Sequence) -> "DiscreteBN":
        """A copy where v has no parents and the distribution ``dist``; its children keep their CPTs (they still read
        the new value of v)."""
        parents = dict(self.parents); parents[v] = ()
        cpts = dict(self.cpts); cpts[v] = {(): tuple(dist)}
        return DiscreteBN(dict(self.states), parents, cpts, order=list(self.order))

    def with_parent_fixed(self, v: str, parent: str, value: Hashable) -> "DiscreteBN":
        """A copy where v reads ``parent`` as if it were ``value`` (the edge parent → v is cut: every row of v's CPT
        is the row with ``parent = value``, the other parents kept); the rest of the network is unchanged."""
        pa = self.parents[v]
        i = pa.index(parent)
        table = {u: self.cpts[v][u[:i] + (value,) + u[i + 1:]] for u in self.cpts[v]}
        cpts = dict(self.cpts); cpts[v] = table
        return DiscreteBN(dict(self.states), dict(self.parents), cpts, order=list(self.order))

    def sample(self, n: int, rng: random.Random) -> list[dict]:
        out = []
        for _ in range(n):
            a: dict = {}
            for v in self.order:
                row = self.cpts[v][tuple(a[p] for p in self.parents[v])]
                a[v] = rng.choices(self.states[v], weights=[float(q) for q in row])[0]
            out.append(a)
        return out


def learn_structure(frame, protected: Sequence[str], *, score: str = "bic", max_indegree: int | None = 5,
                    max_iter: int = 1_000_000, fixed_parents: Mapping[str, Sequence[str]] | None = None,
                    sinks: Sequence[str] = ()) -> dict[str, tuple[str, ...]]:
    """Hill-climbing structure search over the categorical columns of ``frame``; no edge into a protected
    column. ``score``: "bic" or "k2". ``fixed_parents`` skips the search (a given structure)."""
    cols = [str(c) for c in frame.columns]
    if fixed_parents is not None:
        parents = {c: tuple(fixed_parents.get(c, ())) for c in cols}
    else:
        parents = _hill_climb(frame.astype(str), cols, set(protected), score, max_indegree, max_iter, set(sinks))
    for s in protected:
        if parents.get(s):
            raise ValueError(f"protected attribute {s!r} has parents {parents[s]} (edges into it are forbidden)")
    return parents


def _hill_climb(data, cols, protected, score, max_indegree, max_iter, sinks=frozenset()) -> dict[str, tuple[str, ...]]:
    """Greedy hill climbing over DAGs from the empty graph (as pgmpy's HillClimbSearch, without its tabu list):
    each iteration applies the single edge addition, removal or reversal that raises the decomposable score most,
    until none raises it by more than 1e-8. Edges into a protected column are never considered; at most
    ``max_indegree`` parents; no edge out of a column of ``sinks`` (the label: a child of the features). Scores: BIC (log-likelihood − ½·log N per free parameter) or K2 (Cooper & Herskovits).
    Implemented here (numpy counts, local scores cached) — about 100× faster than importing and running pgmpy."""
    import math as _m

    import numpy as np

    if score not in ("bic", "k2"):
        raise ValueError(f"unknown structure score {score!r} (bic or k2)")
    codes, card = {}, {}
    for c in cols:
        vals, inv = np.unique(data[c].to_numpy(), return_inverse=True)
        codes[c], card[c] = inv.reshape(-1).astype(np.int64), len(vals)
    n = len(data)
    logn = _m.log(max(n, 1))
    cache: dict = {}
    lgamma = np.vectorize(_m.lgamma, otypes=[float])

    def local(v, pa):
        key = (v, pa)
        got = cache.get(key)
        if got is not None:
            return got
        r = card[v]
        cfg = np.zeros(n, dtype=np.int64)
        q = 1
        for p in pa:
            cfg = cfg * card[p] + codes[p]
            q *= card[p]
        _, cfg = np.unique(cfg, return_inverse=True)  # observed configurations only
        m = int(cfg.max()) + 1 if n else 1
        counts = np.bincount(cfg.reshape(-1) * r + codes[v], minlength=m * r).reshape(m, r).astype(float)
        nj = counts.sum(axis=1, keepdims=True)
        if score == "bic":
            nz = counts > 0
            ll = float((counts[nz] * np.log(counts[nz] / np.broadcast_to(nj, counts.shape)[nz])).sum())
            val = ll - 0.5 * logn * (r - 1) * q
        else:
            val = float((_m.lgamma(r) - lgamma(nj[:, 0] + r)).sum() + lgamma(counts + 1).sum())
        cache[key] = val
        return val

    parents: dict[str, tuple[str, ...]] = {c: () for c in cols}
    cap = len(cols) if max_indegree is None else int(max_indegree)

    def reaches(src, dst) -> bool:  # a directed path src → … → dst in the current graph
        kids: dict = {}
        for c, pa in parents.items():
            for p in pa:
                kids.setdefault(p, []).append(c)
        stack, seen = [src], {src}
        while stack:
            x = stack.pop()
            if x == dst:
                return True
            for y in kids.get(x, ()):
                if y not in seen:
                    seen.add(y); stack.append(y)
        return False

    def with_(pa, x):
        return tuple(sorted(pa + (x,)))

    def without(pa, x):
        return tuple(p for p in pa if p != x)

    for _ in range(max_iter):
        best, op = 1e-8, None
        for u in cols:
            for v in cols:
                if u == v:
                    continue
                if u in parents[v]:
                    # removal
                    d = local(v, without(parents[v], u)) - local(v, parents[v])
                    if d > best:
                        best, op = d, ("del", u, v)
                    # reversal u→v into v→u
                    if u not in protected and v not in sinks and len(parents[u]) < cap:
                        parents[v] = without(parents[v], u)
                        cyclic = reaches(u, v)
                        parents[v] = with_(parents[v], u)
                        if not cyclic:
                            d = (local(v, without(parents[v], u)) - local(v, parents[v])
                                 + local(u, with_(parents[u], v)) - local(u, parents[u]))
                            if d > best:
                                best, op = d, ("rev", u, v)
                elif v not in protected and u not in sinks and v not in parents[u] and len(parents[v]) < cap \
                        and not reaches(v, u):
                    d = local(v, with_(parents[v], u)) - local(v, parents[v])
                    if d > best:
                        best, op = d, ("add", u, v)
        if op is None:
            break
        kind, u, v = op
        if kind == "add":
            parents[v] = with_(parents[v], u)
        elif kind == "del":
            parents[v] = without(parents[v], u)
        else:
            parents[v] = without(parents[v], u)
            parents[u] = with_(parents[u], v)
    return parents


def fit_mle(frame, parents: Mapping[str, Sequence[str]], states: Mapping[str, Sequence] | None = None) -> DiscreteBN:
    """Maximum-likelihood CPTs as exact fractions of counts; an unseen parent configuration gets the uniform row."""
    cols = [str(c) for c in frame.columns]
    st = {c: tuple(states[c]) if states and c in states else tuple(sorted(frame[c].unique(), key=str)) for c in cols}
    rows = frame[cols].itertuples(index=False, name=None)
    records = [dict(zip(cols, r)) for r in rows]
    cpts: dict[str, dict[tuple, tuple]] = {}
    for v in cols:
        pa = tuple(parents.get(v, ()))
        counts: dict[tuple, list[int]] = {}
        for r in records:
            counts.setdefault(tuple(r[p] for p in pa), [0] * len(st[v]))[st[v].index(r[v])] += 1
        table = {}
        for u in product(*(st[p] for p in pa)):
            c = counts.get(tuple(u))
            n = sum(c) if c else 0
            table[tuple(u)] = (tuple(Fraction(k, n) for k in c) if n else
                               tuple(Fraction(1, len(st[v])) for _ in st[v]))
        cpts[v] = table
    return DiscreteBN(st, {v: tuple(parents.get(v, ())) for v in cols}, cpts)


def learn_bn(frame, protected: Sequence[str], **kw) -> DiscreteBN:
    """Structure (hill climbing, no edge into a protected column) + maximum-likelihood parameters."""
    states = kw.pop("states", None)
    return fit_mle(frame, learn_structure(frame, protected, **kw), states)


# ---------------------------------------------------------------------------------------------- model bridge
@dataclass(frozen=True)
class Binning:
    """A numeric column as ONE categorical variable: ``states[i]`` covers ``[edges[i], edges[i+1])`` (the last bin
    is closed) and stands for the value ``values[i]``. ``exact``: every state is one observed value (no error)."""
    states: tuple
    edges: tuple
    values: tuple
    exact: bool


def discretise(frame, encoding, *, bins: int = 5, value: str = "mean"):
    """The columns of ``encoding`` as categorical variables: categorical columns as they are; a numeric column with at
    most ``bins`` distinct values keeps its values as states (exact); otherwise ``bins`` equal-width bins (FVGM
    artifact) whose representative value is the mean of the column's values in the bin (``value="mean"``, the
    paper's μ_i) or the bin's midpoint (``"mid"``, the artifact's). Missing numeric values take the encoding's fill.
    Returns ``(categorical frame, {numeric column: Binning})``."""
    import numpy as np
    import pandas as pd
    out = {}
    binnings: dict[str, Binning] = {}
    for c in encoding.columns:
        s = frame[c.name]
        if c.kind != "numeric":
            out[c.name] = s.astype(object)
            continue
        x = pd.to_numeric(s, errors="coerce").fillna(c.fill).to_numpy(dtype=float)
        uniq = np.unique(x)
        if len(uniq) <= bins:
            states = tuple(f"={_num(u)}" for u in uniq)
            idx = np.searchsorted(uniq, x)
            binnings[c.name] = Binning(states, tuple(float(u) for u in uniq), tuple(float(u) for u in uniq), True)
        else:
            lo, hi = float(x.min()), float(x.max())
            edges = np.linspace(lo, hi, bins + 1)
            idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, bins - 1)
            ends = _labels(edges)
            states = tuple(f"[{ends[i]}, {ends[i + 1]}{']' if i == bins - 1 else ')'}" for i in range(bins))
            if value == "mid":
                vals = tuple(float((edges[i] + edges[i + 1]) / 2) for i in range(bins))
            elif value == "mean":
                vals = tuple(float(x[idx == i].mean()) if (idx == i).any() else float((edges[i] + edges[i + 1]) / 2)
                             for i in range(bins))
            else:
                raise ValueError(f"unknown bin value {value!r}")
            binnings[c.name] = Binning(states, tuple(float(e) for e in edges), vals, False)
        out[c.name] = pd.Series([states[i] for i in idx], index=frame.index, dtype=object)
    return pd.DataFrame(out, index=frame.index), binnings


def linear_weights(form, binnings: Mapping[str, Binning]) -> tuple[dict, float, bool]:
    """A ``LinearForm`` (margin = w·x + b, favourable iff > 0) as per-(variable, state) weights over the discretised
    variables: a categorical state gets its indicator's weight (an unknown value encodes as zeros: weight 0); a
    numeric bin gets ``w·value``. Returns ``(weights, τ = −b, strict=True)`` for ``fairaudit.engines.fvgm.subset_sum``."""
    weights: dict[str, dict] = {}
    for c, idx in zip(form.encoding.columns, form.encoding.mapping.values()):
        if c.kind == "numeric":
            w = float(form.weights[idx[0]])
            b = binnings[c.name]
            weights[c.name] = {s: w * v for s, v in zip(b.states, b.values)}
        else:
            weights[c.name] = {v: float(form.weights[j]) for v, j in zip(c.values, idx)}
    return weights, -float(form.bias), True


def _num(x) -> str:
    """A value in a state's name: short (``%g``) when that reads back as the same number, else the shortest
    round-trip form — two distinct values never share a name (1000001 and 1000002 are not both "1e+06")."""
    short = f"{float(x):g}"
    if float(short) == float(x):
        return short
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def _labels(values) -> list[str]:
    """Bin edges as short text: the fewest significant digits (at least 4) that keep every edge distinct —
    "[1.6, 2.4)" rather than "[1.6, 2.4000000000000004)"; a bin's name only has to tell it apart."""
    values = [float(v) for v in values]
    for digits in range(4, 18):
        out = [f"{v:.{digits}g}" for v in values]
        if len(set(out)) == len(set(values)):
            return out
    return [repr(v) for v in values]
