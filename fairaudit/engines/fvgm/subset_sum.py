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

import math
from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from typing import Any, Hashable, Mapping, Sequence

from fairaudit.engines.fvgm.network import DiscreteBN

__all__ = ["Stopped", "positive_rate", "rate_bounds", "group_rate_bounds", "GroupBounds", "influence_bounds", "network_marginal", "path_effect_bounds", "group_rates", "GroupMetrics", "group_metrics", "equalized_odds", "fairness_influence",
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


# ---------------------------------------------------------------------------------------------- fast grid bounds
# Real weights, floats, one pass for every group.
#
# 1. The grid. Every weight is shifted by its variable's smallest weight (``w'_s = w_s − min_s w_s``, τ' = τ − Σ min)
#    and rounded DOWN to a multiple of the step h: ``k_s = ⌊w'_s / h⌋`` (exact, in Fractions). With
#    ``r_s = w'_s − k_s·h ∈ [0, h)`` and ``R = Σ_v max_s r_s``, every individual's score satisfies
#    ``K·h ≤ S' ≤ K·h + R`` (K = Σ k). Hence {K·h ≥ τ'} ⊆ {S' ≥ τ'} ⊆ {K·h ≥ τ' − R} (and the same with ">"): ONE
#    distribution of the integer K per group gives a lower and an upper bound.
# 2. The distribution of K is computed by variable elimination (the frontier of notes A4/A5) with, per frontier
#    configuration, a numpy array of probability masses indexed by K (a shift-and-add per state of each variable).
#    The protected attributes are never eliminated, so the last table holds P(group, K = j) for every compound
#    group at once; evidence restricts a variable's states (their probability is taken as 0).
# 3. Floating point, made rigorous. Every quantity is a sum of products of non-negative numbers (the CPT entries,
#    rounded once each to the nearest float). In IEEE double arithmetic with unit roundoff u = 2^-53, a value that
#    went through at most D roundings along any path satisfies |x̂ − x| ≤ γ_D·x + ε with γ_D = D·u / (1 − D·u)
#    (Higham, Accuracy and Stability of Numerical Algorithms, Lemma 3.1/3.3; sums of non-negative terms in ANY
#    order, so numpy's pairwise/blocked summation is covered) and ε an absolute term for gradual underflow: each
#    multiplication may lose at most 2^-1075 absolutely, and later factors are ≤ 1 (× (1 + γ_D) ≤ 2), so
#    ε ≤ (number of multiplications) · 2^-1074. Per eliminated variable the depth grows by at most 1 (CPT entry
#    rounded) + 1 (the product) + g (adding the g rows merged into one configuration) + k (adding the k states'
#    shifted arrays); the final sums use ``math.fsum`` (correctly rounded: + 1). ``_Masses.interval`` turns an
#    estimate x̂ into [(x̂ − ε)/(1 + γ), (x̂ + ε)/(1 − γ)], and a rate a/(a + r) is bounded by the monotone formula
#    a⁻/(a⁻ + r⁺) ≤ a/(a + r) ≤ a⁺/(a⁺ + r⁻) — all in exact Fractions. The bounds are therefore sound for the
#    network's exact probabilities; the margin is about 1e-13 here (negligible next to the grid's gap).

MAX_CELLS = 50_000_000  # floats held by one DP table (400 MB)


class TooLarge(ValueError):
    """A DP table would exceed ``MAX_CELLS``."""


_U = Fraction(1, 2 ** 53)
_TINY = Fraction(1, 2 ** 1074)


def _grid(weights: Weights, bn: DiscreteBN, step: Fraction):
    """``(k[v][state], shift, R)``: integer weights ⌊(w − min w)/h⌋ for every state of every variable the
    classifier reads (missing states weigh 0), ``shift = Σ_v min_s w_s`` and ``R = Σ_v max_s r_s``."""
    ints: dict[str, dict] = {}
    shift = Fraction(0)
    resid = Fraction(0)
    for v, ws in weights.items():
        if v not in bn.states:
            raise ValueError(f"the classifier reads variables outside the network: {[v]}")
        full = {s: Fraction(ws.get(s, 0)) for s in bn.states[v]}
        m = min(full.values())
        shift += m
        ks, rmax = {}, Fraction(0)
        for s, w in full.items():
            k = math.floor((w - m) / step)
            ks[s] = k
            rmax = max(rmax, w - m - k * step)
        ints[v] = ks
        resid += rmax
    return ints, shift, resid


def _threshold(t: Fraction, strict: bool) -> int:
    """The least integer K with ``K ≥ t`` (``K > t`` if strict)."""
    return math.floor(t) + 1 if strict else math.ceil(t)


def _elimination_order(bn: DiscreteBN, keep: Sequence[str], spread: Mapping[str, int] | None = None,
                       max_joint: int = 4096) -> list[tuple[str, ...]]:
    """Steps of the DP: a topological order of the variables, grouped into joint steps, chosen greedily to keep
    the frontier (the configurations carried) small. A step is one variable, or a variable with its children whose
    other parents are already decided (e.g. a 206-state charge description with its 2-state charge degree: the
    description never enters the frontier). Ties: the step widening the score range least goes first (wide
    variables late keep the arrays short)."""
    done: set[str] = set()
    steps: list[tuple[str, ...]] = []
    pos = {v: i for i, v in enumerate(bn.order)}
    kids = {v: bn.children(v) for v in bn.order}
    keep = set(keep)
    spread = spread or {}

    def frontier_size(after):
        size = 1
        for x in after:
            if x in keep or any(c not in after for c in kids[x]):
                size *= len(bn.states[x])
        return size

    # variables with no parent, no child and not kept change no frontier: they go last, the widest at the very end
    # (the score arrays stay short meanwhile, and the last one is read off by look-ups, see ``_Masses``)
    isolated = sorted((v for v in bn.order if not bn.parents[v] and not kids[v] and v not in keep),
                      key=lambda v: (spread.get(v, 0), pos[v]))
    done.update(isolated)
    while len(done) < len(bn.order):
        ready = [v for v in bn.order if v not in done and all(p in done for p in bn.parents[v])]
        cands = []
        for v in ready:
            cands.append((v,))
            joint = [c for c in kids[v] if all(p in done or p == v for p in bn.parents[c])]
            if joint:
                size = len(bn.states[v])
                group = [v]
                for c in joint:
                    if size * len(bn.states[c]) <= max_joint:
                        group.append(c); size *= len(bn.states[c])
                if len(group) > 1:
                    cands.append(tuple(group))
        step = min(cands, key=lambda g: (frontier_size(done | set(g)),
                                         sum(spread.get(x, 0) for x in g),
                                         math.prod(len(bn.states[x]) for x in g), pos[g[0]]))
        steps.append(step); done.update(step)
    return steps + [(v,) for v in isolated]


@dataclass
class _Masses:
    """The last table of the DP: ``arrays[i][j]`` ≈ P(keep = configs[i], evidence, K_table = start + j), and
    optionally a last (isolated) variable not yet added: ``tail = (shifts, probabilities)``, K = K_table + shift.
    Masses above/below a threshold are read from cumulative sums (sequential: at most L more roundings each)."""
    keep: tuple
    configs: list
    arrays: Any          # numpy (n_configs × L)
    start: int
    depth: int
    mults: int
    tail: Any = None

    def __post_init__(self):
        import numpy as np
        L = self.arrays.shape[1]
        z = np.zeros((self.arrays.shape[0], 1))
        # below[:, j] = Σ_{i<j} a[:, i]; above[:, j] = Σ_{i≥j} a[:, i] (both sums of non-negative terms)
        self.below = np.concatenate([z, np.cumsum(self.arrays, axis=1)], axis=1)
        self.above = np.concatenate([np.cumsum(self.arrays[:, ::-1], axis=1)[:, ::-1], z], axis=1)
        shifts, probs = self.tail if self.tail is not None else ([0], [1.0])
        self.shifts, self.probs = list(shifts), [float(q) for q in probs]
        self.depth += L + 3  # cumulative sums, the tail's rounded probability and product (+ the final fsum below)
        self.mults += 2 * self.arrays.shape[0] * len(self.shifts)

    def interval(self, x: float) -> tuple[Fraction, Fraction]:
        d = self.depth + 1  # + the final fsum
        gamma = d * _U / (1 - d * _U)
        eps = self.mults * _TINY
        x = Fraction(x)
        return max(Fraction(0), (x - eps) / (1 + gamma)), (x + eps) / (1 - gamma)

    def split(self, rows, t: int) -> tuple[float, float]:
        """``(mass with K ≥ t, mass with K < t)`` over the given rows (fsum: correctly rounded)."""
        L = self.arrays.shape[1]
        up, down = [], []
        for sh, q in zip(self.shifts, self.probs):
            j = min(max(t - sh - self.start, 0), L)
            up.append(q * self.above[rows, j]); down.append(q * self.below[rows, j])
        import numpy as np
        return math.fsum(np.concatenate(up)), math.fsum(np.concatenate(down))

    def row_mass(self, i) -> float:
        return math.fsum(q * self.above[i, 0] for q in self.probs)

    def rate(self, rows, t_lo: int, t_hi: int):
        """Sound bounds on P(K ≥ t_lo | rows) and P(K ≥ t_hi | rows) combined as (lower, upper); None if the rows'
        mass is 0."""
        a_lo, r_lo = self.split(rows, t_lo)
        a_hi, r_hi = self.split(rows, t_hi)
        if a_lo + r_lo == 0:
            return None
        a1, r1 = self.interval(a_lo)[0], self.interval(r_lo)[1]
        a2, r2 = self.interval(a_hi)[1], self.interval(r_hi)[0]
        lower = a1 / (a1 + r1) if a1 + r1 else Fraction(0)
        upper = a2 / (a2 + r2) if a2 + r2 else Fraction(1)
        return lower, min(Fraction(1), upper)


def _cpt_array(bn: DiscreteBN, v: str):
    """The CPT of v as a float array indexed by (parent state indices..., state index); each entry rounded once."""
    import numpy as np

    shape = tuple(len(bn.states[p]) for p in bn.parents[v]) + (len(bn.states[v]),)
    arr = np.empty(shape)
    for u in product(*(range(len(bn.states[p])) for p in bn.parents[v])):
        key = tuple(bn.states[p][i] for p, i in zip(bn.parents[v], u))
        arr[u] = [float(q) for q in bn.cpts[v][key]]
    return arr


def _without_barren(bn: DiscreteBN, ints: Mapping[str, Mapping], needed: set) -> DiscreteBN:
    """The network without its barren variables: repeatedly, a variable with no child that carries no weight and is
    neither kept nor evidence sums out to 1 — dropping it changes no probability (exact)."""
    drop: set = set()
    while True:
        more = [v for v in bn.order if v not in drop and v not in needed and not any(ints.get(v, {}).values())
                and all(c in drop for c in bn.children(v))]
        if not more:
            break
        drop.update(more)
    if not drop:
        return bn
    keep = [v for v in bn.order if v not in drop]
    return DiscreteBN({v: bn.states[v] for v in keep}, {v: bn.parents[v] for v in keep},
                      {v: bn.cpts[v] for v in keep}, order=keep)


def _score_masses(bn: DiscreteBN, ints: Mapping[str, Mapping], keep: Sequence[str] = (),
                  evidence: Mapping[str, Any] | None = None, should_stop=None) -> _Masses:
    """Float DP over the network: the joint of (keep variables, K) with the evidence's states only."""
    import numpy as np
    from scipy import sparse

    allowed = {}
    for v, s in dict(evidence or {}).items():
        ss = set(s) if isinstance(s, (set, frozenset)) else {s}
        if v not in bn.states or not ss or not ss <= set(bn.states[v]):
            raise ValueError(f"evidence {v}={s!r} is not a state (set of states) of the network")
        allowed[v] = ss
    keep = tuple(keep)
    bn = _without_barren(bn, ints, set(keep) | set(allowed))
    ok = {v: [j for j, s in enumerate(bn.states[v]) if v not in allowed or s in allowed[v]] for v in bn.order}
    wint = {v: [int(ints[v][s]) if v in ints else 0 for s in bn.states[v]] for v in bn.order}
    spread = {v: max(wint[v][j] for j in ok[v]) - min(wint[v][j] for j in ok[v]) for v in bn.order}
    steps = _elimination_order(bn, keep, spread)
    step_of = {v: i for i, g in enumerate(steps) for v in g}
    last_use = {v: (len(steps) if v in keep else max([step_of[c] for c in bn.children(v)], default=-1))
                for v in bn.order}
    frontier: list[str] = []
    configs = np.zeros((1, 0), dtype=np.int64)  # state indices of the frontier variables
    table = np.ones((1, 1))
    start = 0
    depth = 0
    mults = 0
    tail = None
    for i, group in enumerate(steps):
        if should_stop is not None and should_stop():
            raise Stopped()
        if i == len(steps) - 1 and len(steps) > 1 and len(group) == 1 and not bn.parents[group[0]] \
                and not bn.children(group[0]) and group[0] not in keep:
            v = group[0]  # the last, isolated variable: read off by look-ups (``_Masses``), not added
            dist = bn.cpts[v][()]
            tail = ([wint[v][j] for j in ok[v]], [dist[j] for j in ok[v]])
            break
        n = len(configs)
        # joint states of the step's variables (allowed states only), their weights and probabilities
        combos = np.array(list(product(*(ok[v] for v in group))), dtype=np.int64).reshape(-1, len(group))
        K = len(combos)
        wk = sum(np.asarray(wint[v])[combos[:, m]] for m, v in enumerate(group))
        lo_w, hi_w = int(wk.min()), int(wk.max())
        start += lo_w
        q = np.ones((n, K))
        for m, v in enumerate(group):
            idx = []
            for p in bn.parents[v]:
                if p in group:
                    idx.append(np.broadcast_to(combos[:, group.index(p)][None, :], (n, K)))
                else:
                    idx.append(np.broadcast_to(configs[:, frontier.index(p)][:, None], (n, K)))
            idx.append(np.broadcast_to(combos[:, m][None, :], (n, K)))
            q = q * _cpt_array(bn, v)[tuple(idx)]
            mults += n * K
        # the new frontier and the configuration each (row, joint state) lands in
        keep_cols = [j for j, x in enumerate(frontier) if last_use[x] > i]
        keep_members = [m for m, v in enumerate(group) if last_use[v] > i]
        new_frontier = [frontier[j] for j in keep_cols] + [group[m] for m in keep_members]
        L = table.shape[1]
        width = L + hi_w - lo_w
        base = configs[:, keep_cols]
        allcfg = np.concatenate([np.concatenate([base, np.broadcast_to(combos[jj, keep_members], (n, len(keep_members)))],
                                                axis=1) for jj in range(K)], axis=0)
        if allcfg.shape[1]:
            uniq, inverse = np.unique(allcfg, axis=0, return_inverse=True)
        else:
            uniq, inverse = np.zeros((1, 0), dtype=np.int64), np.zeros(len(allcfg), dtype=np.int64)
        inverse = inverse.reshape(-1)
        if len(uniq) * width > MAX_CELLS:
            raise TooLarge(f"the network needs {len(uniq)} configurations × {width} score cells at once "
                           f"(more than {MAX_CELLS:,}): too dense for this grid")
        new = np.zeros((len(uniq), width))
        merged = 1
        for jj in range(K):
            col = q[:, jj]
            if not col.any():
                continue
            tgt = inverse[jj * n:(jj + 1) * n]
            sh = int(wk[jj]) - lo_w
            ut, inv = np.unique(tgt, return_inverse=True)
            if len(ut) == len(tgt):
                new[tgt, sh:sh + L] += table * col[:, None]
            else:  # rows merged into one configuration: a sparse (q-weighted) sum of rows
                s_mat = sparse.csr_matrix((col, (inv.reshape(-1), np.arange(n))), shape=(len(ut), n))
                new[ut, sh:sh + L] += s_mat @ table
                merged = max(merged, int(np.bincount(tgt).max()))
        mults += n * L * K
        # per step: CPT entries rounded (1 each) and multiplied (len(group) − 1), the product with the mass (1),
        # rows merged (merged − 1 additions), the K joint states added into one cell (K additions)
        depth += 2 * len(group) + merged + K
        # drop configurations and leading/trailing cells of zero mass (exact)
        live = new.any(axis=1)
        if not live.all():
            new, uniq = new[live], uniq[live]
        if new.shape[0] == 0:
            new = np.zeros((1, 1)); uniq = np.zeros((1, len(new_frontier)), dtype=np.int64)
        nz = np.flatnonzero(new.any(axis=0))
        if len(nz):
            new = new[:, nz[0]:nz[-1] + 1]
            start += int(nz[0])
        frontier, configs, table = new_frontier, uniq, new
    # the frontier is now exactly the keep variables (in some order)
    perm = [frontier.index(x) for x in keep]
    cfgs = [tuple(bn.states[x][c] for x, c in zip(keep, row)) for row in configs[:, perm].tolist()]
    return _Masses(keep, cfgs, table, start, depth, mults, tail)


def _thresholds(tau, shift: Fraction, resid: Fraction, step: Fraction, strict: bool) -> tuple[int, int]:
    t = Fraction(tau) - shift
    return _threshold(t / step, strict), _threshold((t - resid) / step, strict)


def _match(cfg, keep, evidence) -> bool:
    for x, s in zip(keep, cfg):
        if x in evidence:
            want = evidence[x]
            if (s not in want) if isinstance(want, (set, frozenset)) else s != want:
                return False
    return True


def rate_bounds(bn: DiscreteBN, weights: Weights, tau, evidence: Mapping[str, Hashable] | None = None, *,
                strict: bool = False, step=Fraction(1, 100), should_stop=None) -> tuple[Any, Any] | None:
    """Sound ``(lower, upper)`` bounds (Fractions) on ``positive_rate`` for real (float) weights, in
    pseudo-polynomial time: weights rounded down to a grid of ``step`` (see the block comment above for the proof
    and the floating-point margin). ``None`` if the evidence has probability 0."""
    step = Fraction(step)
    ints, shift, resid = _grid(weights, bn, step)
    t_lo, t_hi = _thresholds(tau, shift, resid, step, strict)
    m = _score_masses(bn, ints, (), evidence, should_stop)
    return m.rate([0], t_lo, t_hi)


@dataclass(frozen=True)
class GroupBounds:
    """Bounds on one compound group's positive rate, and the group's probability under the network (float)."""
    lo: Fraction
    hi: Fraction
    share: float


def group_rate_bounds(bn: DiscreteBN, weights: Weights, tau, protected: Sequence[str], *, strict: bool = False,
                      step=Fraction(1, 100), evidence: Mapping[str, Any] | None = None, should_stop=None,
                      queries: Mapping[Hashable, Mapping[str, Any]] | None = None):
    """ONE pass for every compound group of ``protected`` (the group is kept as a variable to the end, not fixed
    as evidence): ``{group tuple: GroupBounds}`` (groups of probability 0 left out). ``queries`` (optional, each
    an evidence dict over protected attributes only) are answered from the same pass: the second value returned
    is ``{key: (lo, hi) | None}``."""
    step = Fraction(step)
    ints, shift, resid = _grid(weights, bn, step)
    t_lo, t_hi = _thresholds(tau, shift, resid, step, strict)
    m = _score_masses(bn, ints, tuple(protected), evidence, should_stop)
    total = math.fsum(m.row_mass(i) for i in range(len(m.configs)))
    out = {}
    for i, cfg in enumerate(m.configs):
        b = m.rate([i], t_lo, t_hi)
        if b is not None:
            out[cfg] = GroupBounds(b[0], b[1], m.row_mass(i) / total if total else 0.0)
    answers = {}
    for key, ev in (queries or {}).items():
        if any(x not in protected for x in ev):
            raise ValueError("a query answered from the groups' pass may only condition on protected attributes")
        rows = [i for i, cfg in enumerate(m.configs) if _match(cfg, tuple(protected), ev)]
        answers[key] = m.rate(rows, t_lo, t_hi) if rows else None
    return (out, answers) if queries is not None else out


def network_marginal(bn: DiscreteBN, v: str) -> tuple:
    """The marginal of ``v`` under the network, computed by the float DP (renormalised floats)."""
    m = _score_masses(bn, {}, (v,))
    mass = {cfg[0]: m.row_mass(i) for i, cfg in enumerate(m.configs)}
    total = math.fsum(mass.values())
    return tuple(mass.get(s, 0.0) / total for s in bn.states[v])


def _sp_interval(groups) -> tuple[float, float]:
    from fairaudit.core.findings import GroupRate, disparities
    rates = [GroupRate((), float(g.lo), float(g.hi)) for g in groups.values()]
    if len(rates) < 2:
        return 0.0, 0.0
    m = {x.name: x for x in disparities(rates)}["statistical parity"]
    return m.lo, m.hi


def path_effect_bounds(bn: DiscreteBN, weights: Weights, tau, protected: Sequence[str], attribute: str,
                       mediator: str, reference, *, strict: bool = False, step=Fraction(1, 100), before=None,
                       should_stop=None) -> tuple:
    """Path-specific effect of ``attribute`` through the edge ``attribute → mediator`` (notes A12.6): SP(network)
    − SP(network where the mediator reads ``attribute`` as ``reference`` for everyone), SP over every compound group
    of ``protected``, as an interval (both SPs bounded on the grid). Positive: the edge widens the gap."""
    if attribute not in bn.parents.get(mediator, ()):
        raise ValueError(f"{attribute!r} is not a parent of {mediator!r}")
    if before is None:
        before = group_rate_bounds(bn, weights, tau, protected, strict=strict, step=step, should_stop=should_stop)
    after = group_rate_bounds(bn.with_parent_fixed(mediator, attribute, reference), weights, tau, protected,
                              strict=strict, step=step, should_stop=should_stop)
    b, a = _sp_interval(before), _sp_interval(after)
    return b[0] - a[1], b[1] - a[0]


def influence_bounds(bn: DiscreteBN, weights: Weights, tau, protected: Sequence[str], feature: str, *,
                     strict: bool = False, step=Fraction(1, 100), before=None, should_stop=None) -> tuple:
    """Fairness influence of ``feature`` as an interval: SP(network) − SP(network with the feature's CPT replaced
    by its marginal under the network — its incoming edges cut, its children still reading it), SP = highest
    minus lowest compound-group positive rate, each bounded on the grid of ``step``. ``before``: the groups'
    ``GroupBounds`` of the unchanged network (saves a pass). Returns ``(lo, hi)``."""
    from fairaudit.core.findings import GroupRate, disparities

    if feature in protected:
        raise ValueError("the influence of a protected attribute is not defined here")

    def sp(groups):
        rates = [GroupRate((), float(g.lo), float(g.hi)) for g in groups.values()]
        if len(rates) < 2:
            return 0.0, 0.0
        m = {x.name: x for x in disparities(rates)}["statistical parity"]
        return m.lo, m.hi

    if before is None:
        before = group_rate_bounds(bn, weights, tau, protected, strict=strict, step=step, should_stop=should_stop)
    after = group_rate_bounds(bn.with_cpt(feature, network_marginal(bn, feature)), weights, tau, protected,
                              strict=strict, step=step, should_stop=should_stop)
    b, a = sp(before), sp(after)
    return b[0] - a[1], b[1] - a[0]
