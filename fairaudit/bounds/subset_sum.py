"""Exact stochastic subset sum over a discrete Bayesian network (FVGM core, issue 15; notes Part A).

Question: ``Pr[ Σ_v w_v(X_v) ≥ τ | evidence ]`` for a linear classifier whose weights are given per (variable, state)
(a one-hot column's weight, or a bin's weight ``w_c·μ_b`` for a discretised numeric feature), under the joint
distribution of a ``DiscreteBN``.

Algorithm: variable elimination along a topological order, carrying as DP state the pair (values of the already
decided variables that some later variable still reads as a parent — the "frontier" —, partial score). States with
the same frontier and partial score are merged (this is the memoisation of notes A4/A5, generalised: the FVGM
artifact enumerates all 2^|V| network paths without memoising; here only the frontier is kept, so a chain costs
O(n·k·#scores)). A categorical variable (a binned numeric feature included) is ONE chance variable:
``dp ← Σ_b Pr[b | parents] · dp(score + w_b)`` — bins are mutually exclusive (notes A8 trap).

Pruning (notes A4 "suffix bounds"): once no evidence variable is left, a state whose partial score plus the minimum
reachable suffix already meets τ is accepted with all its mass, and one whose partial score plus the maximum suffix
cannot reach τ is rejected.

Groups: a compound group is EVIDENCE (``A = a`` fixed, its weight added), run once per group; the rate is
accepted/(accepted+rejected), i.e. a proper conditional even if an evidence variable had parents. Because every value
of every protected attribute is enumerated, the greedy ∃/∀ trap of notes A5/A12.3 (a protected attribute that is a
network parent) cannot occur: max/min are taken over the exact per-group rates.

Tie convention: ``strict=False`` is FVGM's ``score ≥ τ``; ``strict=True`` is scikit-learn's ``score > τ``
(``decision_function > 0`` with ``τ = −intercept``). Exact with ``Fraction`` weights and probabilities.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from typing import Any, Hashable, Mapping, Sequence

from fairaudit.models.bn import DiscreteBN

__all__ = ["Stopped", "positive_rate", "rate_bounds", "group_rates", "GroupMetrics", "group_metrics", "equalized_odds", "fairness_influence",
           "weights_from_columns"]

Weights = Mapping[str, Mapping[Hashable, Any]]


def _w(weights: Weights, v: str, s: Hashable):
    return weights.get(v, {}).get(s, 0)


def _order(bn: DiscreteBN, evidence: Mapping[str, Hashable]) -> list[str]:
    """Topological; evidence roots first (notes A5 ordering heuristic: choice variables first), then the rest."""
    roots = [v for v in bn.order if v in evidence and not bn.parents[v]]
    return roots + [v for v in bn.order if v not in roots]


class Stopped(Exception):
    """``should_stop()`` returned True during a computation."""


def positive_rate(bn: DiscreteBN, weights: Weights, tau, evidence: Mapping[str, Hashable] | None = None, *,
                  strict: bool = False, should_stop=None):
    """``Pr[score ≥ τ | evidence]`` (``>`` if strict). ``None`` if the evidence has probability 0. ``should_stop``
    (optional, no argument) is asked after each variable; True raises ``Stopped``."""
    # evidence: v -> one state, or a set/frozenset of allowed states (``col in (...)``)
    allowed = {}
    for v, s in dict(evidence or {}).items():
        ss = set(s) if isinstance(s, (set, frozenset)) else {s}
        if v not in bn.states or not ss or not ss <= set(bn.states[v]):
            raise ValueError(f"evidence {v}={s!r} is not a state (set of states) of the network")
        allowed[v] = [x for x in bn.states[v] if x in ss]
    evidence = allowed
    unknown = [v for v in weights if v not in bn.states]
    if unknown:
        raise ValueError(f"the classifier reads variables outside the network: {unknown}")
    order = _order(bn, evidence)
    n = len(order)
    pos = {v: i for i, v in enumerate(order)}
    last_use = {v: max([pos[c] for c in bn.children(v)], default=-1) for v in order}
    # suffix ranges of the score
    lo = [0] * (n + 1); hi = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        v = order[i]
        vals = [_w(weights, v, s) for s in evidence.get(v, bn.states[v])]
        lo[i] = lo[i + 1] + min(vals); hi[i] = hi[i + 1] + max(vals)
    last_ev = max([pos[v] for v in evidence], default=-1)

    def meets(score) -> bool:
        return score > tau if strict else score >= tau

    accepted = 0
    rejected = 0
    frontier: tuple[str, ...] = ()
    table: dict[tuple, Any] = {((), 0): 1}
    for i, v in enumerate(order):
        if should_stop is not None and should_stop():
            raise Stopped()
        pa = bn.parents[v]
        idx = [frontier.index(p) for p in pa]
        new_frontier = tuple(x for x in frontier + (v,) if last_use[x] > i)
        keep = [j for j, x in enumerate(frontier + (v,)) if last_use[x] > i]
        states = evidence.get(v, bn.states[v])
        new: dict[tuple, Any] = {}
        for (fvals, score), mass in table.items():
            row = bn.cpts[v][tuple(fvals[j] for j in idx)]
            for s in states:
                q = row[bn.states[v].index(s)]
                if not q:
                    continue
                full = fvals + (s,)
                key = (tuple(full[j] for j in keep), score + _w(weights, v, s))
                new[key] = new.get(key, 0) + mass * q
        frontier = new_frontier
        table = {}
        if i >= last_ev:  # suffix-bound pruning is valid only once no evidence factor is pending
            for key, mass in new.items():
                score = key[1]
                if meets(score + lo[i + 1]):
                    accepted += mass
                elif not meets(score + hi[i + 1]):
                    rejected += mass
                else:
                    table[key] = mass
        else:
            table = new
        if not table:
            break
    for (_, score), mass in table.items():  # only reached without pruning (empty suffix)
        if meets(score):
            accepted += mass
        else:
            rejected += mass
    total = accepted + rejected
    if not total:
        return None
    return accepted / total


def group_rates(bn: DiscreteBN, weights: Weights, tau, protected: Sequence[str], *,
                evidence: Mapping[str, Hashable] | None = None, strict: bool = False) -> dict[tuple, Any]:
    """Exact positive rate of every compound group (one value per protected attribute, in ``protected`` order);
    groups of probability 0 are left out."""
    out = {}
    for a in product(*(bn.states[p] for p in protected)):
        ev = dict(evidence or {}); ev.update(zip(protected, a))
        r = positive_rate(bn, weights, tau, ev, strict=strict)
        if r is not None:
            out[a] = r
    return out


@dataclass(frozen=True)
class GroupMetrics:
    rates: dict
    a_max: tuple
    a_min: tuple
    max: Any
    min: Any
    sp: Any   # max − min (lower is fairer)
    di: Any   # min / max (higher is fairer); 1 when max == min (0/0 included)


def group_metrics(rates: Mapping[tuple, Any]) -> GroupMetrics:
    if not rates:
        raise ValueError("no group has positive probability")
    a_max = max(rates, key=lambda a: rates[a]); a_min = min(rates, key=lambda a: rates[a])
    hi, lo = rates[a_max], rates[a_min]
    di = 1 if hi == lo else (lo / hi if hi else None)
    return GroupMetrics(dict(rates), a_max, a_min, hi, lo, hi - lo, di)


def equalized_odds(bn: DiscreteBN, weights: Weights, tau, protected: Sequence[str], label: str, *,
                   strict: bool = False) -> tuple[Any, dict]:
    """EO = max over label values y of (max_a − min_a) Pr[Ŷ=1 | A=a, Y=y] (notes A2.3), with the label a variable of
    the same network (conditioned as evidence; one network, not the artifact's re-learnt per-label networks)."""
    gaps = {}
    for y in bn.states[label]:
        gaps[y] = group_metrics(group_rates(bn, weights, tau, protected, evidence={label: y}, strict=strict))
    return max(g.sp for g in gaps.values()), gaps


def fairness_influence(bn: DiscreteBN, weights: Weights, tau, protected: Sequence[str], feature: str, *,
                       replacement: str = "uniform", strict: bool = False) -> dict:
    """FIF of one feature (notes A2.6/A9). The feature's CPT is replaced — "uniform": uniform over its states;
    "marginal": its overall (group-independent) marginal — its incoming edges are dropped and its children KEEP their
    CPTs. Returns ``{"groups": {a: p_a(D) − p_a(D')}, "sp": SP(D) − SP(D'), "di": ...}``: a positive value means the
    feature raises the quantity."""
    if feature in protected:
        raise ValueError("the influence of a protected attribute is not defined here")
    k = len(bn.states[feature])
    if replacement == "uniform":
        dist = tuple(Fraction(1, k) for _ in range(k))
    elif replacement == "marginal":
        dist = bn.marginal(feature)
    else:
        raise ValueError(f"unknown replacement {replacement!r}")
    before = group_metrics(group_rates(bn, weights, tau, protected, strict=strict))
    after = group_metrics(group_rates(bn.with_cpt(feature, dist), weights, tau, protected, strict=strict))
    di = None if before.di is None or after.di is None else before.di - after.di
    return {"groups": {a: before.rates[a] - after.rates[a] for a in before.rates if a in after.rates},
            "sp": before.sp - after.sp, "di": di, "before": before, "after": after}


def weights_from_columns(coef: Mapping[str, Any], column_state: Mapping[str, tuple[str, Hashable]]) -> dict:
    """Per-(variable, state) weights from an encoding's column coefficients: ``column_state[col] = (variable,
    state)``; a binned numeric column's coefficient should already be ``w_c·μ_b``. Columns of one variable add up."""
    out: dict[str, dict] = {}
    for col, w in coef.items():
        v, s = column_state[col]
        out.setdefault(v, {})
        out[v][s] = out[v].get(s, 0) + w
    return out


def _grid(weights: Weights, step, rounding) -> dict:
    return {v: {s: rounding(Fraction(w) / step) for s, w in ws.items()} for v, ws in weights.items()}


def rate_bounds(bn: DiscreteBN, weights: Weights, tau, evidence: Mapping[str, Hashable] | None = None, *,
                strict: bool = False, step=Fraction(1, 100), should_stop=None) -> tuple[Any, Any] | None:
    """Sound ``(lower, upper)`` bounds on ``positive_rate`` for real (float) weights, in pseudo-polynomial time.

    Exact sums of real weights rarely coincide, so the exact DP's states grow as the product of the state counts (a
    chain of 10 five-state variables: 12 s; with integer weights 0.01 s). Here every weight is rounded DOWN (lower)
    and UP (upper) to a multiple of ``step`` — the FVGM idea of integer weights (notes A8), but without its
    truncation error: ``Σ⌊w/h⌋·h ≤ Σw ≤ Σ⌈w/h⌉·h``, so ``{Σ⌊w/h⌋·h ≥ τ} ⊆ {Σw ≥ τ} ⊆ {Σ⌈w/h⌉·h ≥ τ}`` (same for
    ``>``). The gap shrinks with ``step``; a refinement loop halves it. ``None`` if the evidence has probability 0."""
    import math
    step = Fraction(step)
    t = Fraction(tau) / step
    lo = positive_rate(bn, _grid(weights, step, math.floor), t, evidence, strict=strict, should_stop=should_stop)
    hi = positive_rate(bn, _grid(weights, step, math.ceil), t, evidence, strict=strict, should_stop=should_stop)
    return None if lo is None else (lo, hi)
