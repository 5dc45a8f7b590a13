"""Exact group selection rates of a decision tree or a linear classifier over a product distribution (Justicia).

The semantics (Justicia, AAAI 2021, enumeration mode "RE-SSAT with correlation"; notes §B4): inside one compound
group ``a`` (a value of every protected attribute) the features are **independent**, each with its **group-
conditional** categorical distribution ``Pr[X_v = u | A = a]`` (estimated from the rows of group ``a``). Every
quantity below is computed exactly — with ``fractions.Fraction`` when the probabilities (and weights) are rational —
with respect to that modelled distribution; nothing is sampled.

Why not an SSAT solver, BDDs (``dd``) or knowledge compilation (``pysdd``)?  Justicia's SSAT encoding turns every
tree node into an independent Boolean, which is *wrong* when two nodes test the same feature (notes §B4: ``J ≡
income ≥ 0.69`` implies ``I ≡ income ≥ 0.29``), and one-hot bins into independent Booleans (notes §B7.3). Here a
feature is **one categorical variable** (exactly one value), so

* a tree is a partition of the feature space into root-to-leaf paths; a path is a conjunction of "``X_v`` ∈ allowed
  set" conditions (two nodes on the same feature intersect their sets), so with independent features its
  probability is ``Π_v Pr[X_v ∈ S_v]`` — exact, linear in the tree size (no model counting needed: the paths are
  already a disjoint DNF, i.e. the tree *is* a deterministic decomposable circuit);
* a linear classifier ``Σ_v w_v(X_v) + b > 0`` is a stochastic subset-sum: its score distribution is built by a
  dynamic program over the features, with the mass that is already certainly favourable / unfavourable (whatever
  the remaining features) absorbed early. With exact rational weights there is no rounding at all; Justicia's
  integer rounding (multiplier 30) is available separately (:func:`quantise`), done with exact rationals (the
  float trap of notes §B7.2: ``int(-0.6/1.5*30) == -11``).
A weighted model counter over a CNF would need exactly-one constraints per feature and Tseitin/PB auxiliaries to get
the same numbers; the direct computation is exact, dependency-free and far smaller. (``dd`` is not installed in the
project environment either.)

Learning mode (ER-SSAT, notes §B5): the most / least favoured group is found by branch and bound over the protected
attributes (:func:`most_favoured`) rather than by enumerating every compound group. ``shared=True`` gives the paper's
ER semantics — the feature distribution is the same for every group (the random quantifiers precede nothing that
depends on ``A``), so correlation between A and X is **ignored** (notes §B5 caveat, §B10 item 9); ``shared=False``
uses the group-conditional distributions and agrees with enumeration (Lemma 2).
"""
from __future__ import annotations

import itertools
import numbers
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

Number = Fraction  # every probability / weight here; floats are converted exactly with Fraction(float)


def exact(x: Any) -> Fraction:
    """``x`` as an exact Fraction (a float converts to its exact binary value; a string like "0.41" to 41/100)."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, str):
        return Fraction(x)
    if isinstance(x, numbers.Integral):
        return Fraction(int(x))
    return Fraction(float(x))


# ---------------------------------------------------------------------------------------------------------------
# The feature distribution
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Variable:
    """One feature: a raw column with a finite domain (categories, or the values / bin representatives of a
    discretised numeric column)."""

    name: str
    values: tuple
    protected: bool = False


@dataclass
class ProductDistribution:
    """Per compound group, an independent categorical distribution of every non-protected variable.

    ``groups[a]`` maps a variable name to a tuple of probabilities over ``variable.values`` (summing to 1);
    ``a`` is the tuple of the protected variables' values, in the order of ``protected``. ``weight[a]`` is the
    group's share of the population (used for pooled/marginal distributions and for group sizes); optional.
    """

    variables: tuple[Variable, ...]
    protected: tuple[str, ...]
    groups: dict[tuple, dict[str, tuple[Fraction, ...]]]
    weight: dict[tuple, Fraction] = field(default_factory=dict)
    counts: dict[tuple, int] = field(default_factory=dict)

    def variable(self, name: str) -> Variable:
        for v in self.variables:
            if v.name == name:
                return v
        raise KeyError(name)

    def features(self) -> list[Variable]:
        return [v for v in self.variables if v.name not in self.protected]

    def probs(self, group: tuple, name: str) -> tuple[Fraction, ...]:
        """The distribution of variable ``name`` inside ``group`` (a point mass for a protected variable)."""
        if name in self.protected:
            var = self.variable(name)
            value = group[self.protected.index(name)]
            return tuple(Fraction(1) if u == value else Fraction(0) for u in var.values)
        return self.groups[group][name]

    def pooled(self) -> "ProductDistribution":
        """Every group gets the population marginal ``Σ_a weight[a] · Pr[X_v | a]`` — the distribution the paper's
        plain ``Enum`` and the ER (learning) encoding use, which ignores the A–X correlation."""
        total = sum(self.weight.values()) if self.weight else None
        if not total:
            w = {a: Fraction(1, len(self.groups)) for a in self.groups}
        else:
            w = {a: self.weight.get(a, Fraction(0)) / total for a in self.groups}
        marg = {}
        for var in self.features():
            marg[var.name] = tuple(sum(w[a] * self.groups[a][var.name][i] for a in self.groups)
                                   for i in range(len(var.values)))
        return ProductDistribution(self.variables, self.protected, {a: dict(marg) for a in self.groups},
                                   dict(self.weight), dict(self.counts))


    def split(self, names: Sequence[str]) -> "ProductDistribution":
        """Every group ``a`` divided by the values ``u`` of the (non-protected) variables ``names``: the part
        ``(a, u)`` has probability ``weight[a] · Π_v Pr[X_v = u_v | a]`` and, inside it, ``names`` fixed to ``u``
        and every other variable distributed as in ``a`` — the same joint distribution, with ``names`` now
        group variables, so that conditioning on them is reading some of the parts (zero-probability parts are
        left out). Row counts are the group's (what its distributions were estimated from)."""
        import itertools

        names = [n for n in names if n not in self.protected]
        if not names:
            return self
        domains = [self.variable(n).values for n in names]
        groups, weight, counts = {}, {}, {}
        for a, per in self.groups.items():
            for combo in itertools.product(*(range(len(d)) for d in domains)):
                p = Fraction(1)
                for n, i in zip(names, combo):
                    p *= per[n][i]
                if not p:
                    continue
                key = tuple(a) + tuple(d[i] for d, i in zip(domains, combo))
                groups[key] = {k: v for k, v in per.items() if k not in names}
                weight[key] = self.weight.get(a, Fraction(0)) * p
                counts[key] = self.counts.get(a, 0)
        variables = tuple(Variable(v.name, v.values, v.protected or v.name in names) for v in self.variables)
        return ProductDistribution(variables, self.protected + tuple(names), groups, weight, counts)


_ZERO = Fraction(0)


def estimate(frame, variables: Sequence[Variable], protected: Sequence[str], label: str | None = None,
             label_value: Any = None) -> ProductDistribution:
    """Group-conditional empirical distributions from the rows of ``frame`` (exact fractions ``count / n_a``).

    ``label``/``label_value``: keep only the rows with ``frame[label] == label_value`` first (the conditional
    distributions ``Pr[X_v | A = a, Y = y]`` that equalized odds needs). Groups with no row are absent. A row whose
    value is not in a variable's domain is an error (discretise first)."""
    import pandas as pd  # noqa: F401  (frame is a DataFrame)

    if label is not None:
        frame = frame[frame[label] == label_value]
    protected = tuple(protected)
    groups: dict[tuple, dict[str, tuple[Fraction, ...]]] = {}
    counts: dict[tuple, int] = {}
    keys = list(protected)
    for key, sub in frame.groupby(keys, sort=False, observed=True, dropna=False):
        a = key if isinstance(key, tuple) else (key,)
        n = len(sub)
        per = {}
        for var in variables:
            if var.name in protected:
                continue
            vc = sub[var.name].value_counts(dropna=False)
            unknown = set(vc.index) - set(var.values)
            if unknown:
                raise ValueError(f"column {var.name!r} holds values outside its domain: {sorted(map(str, unknown))[:5]}")
            found = {u: Fraction(int(c), n) for u, c in vc.items()}
            per[var.name] = tuple(found.get(u, _ZERO) for u in var.values)
        groups[tuple(a)] = per
        counts[tuple(a)] = n
    total = sum(counts.values())
    weight = {a: Fraction(c, total) for a, c in counts.items()}
    return ProductDistribution(tuple(variables), protected, groups, weight, counts)


# ---------------------------------------------------------------------------------------------------------------
# Classifiers over the variables
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Paths:
    """A classifier as a partition of the feature space into disjoint paths (a decision tree's root-to-leaf paths).

    ``paths[k] = (conds, favourable)``: ``conds`` maps a variable name to the frozenset of value *indices* the path
    allows (a variable absent from ``conds`` is unconstrained)."""

    paths: tuple[tuple[Mapping[str, frozenset], bool], ...]

    def negated(self) -> "Paths":
        """The same partition with the decisions flipped (the negative-class classifier of ER duality, Lemma 1)."""
        return Paths(tuple((c, not f) for c, f in self.paths))


@dataclass(frozen=True)
class LinearScore:
    """``score = Σ_v weights[v][index of X_v] + bias``; favourable iff ``score > 0`` (``strict``) or ``≥ 0``.

    fairaudit's linear forms are favourable iff the margin is > 0 (``strict=True``); Justicia's PB constraint is
    ``Σ w'x ≥ −b'`` (``strict=False``)."""

    weights: Mapping[str, tuple[Fraction, ...]]
    bias: Fraction
    strict: bool = True

    def quantised(self, multiplier: int = 30) -> "LinearScore":
        """Justicia's integer weights (:func:`quantise`) applied to every value's weight and the bias: the rate is
        then exact for the *rounded* classifier, with at most ``multiplier · #features`` distinct partial scores
        per feature step."""
        names = list(self.weights)
        flat = [w for n in names for w in self.weights[n]]
        q, b = quantise(flat, self.bias, multiplier)
        out, k = {}, 0
        for n in names:
            size = len(self.weights[n])
            out[n] = tuple(Fraction(x) for x in q[k:k + size])
            k += size
        return LinearScore(out, Fraction(b), self.strict)


def _columns_of(encoding) -> list[tuple[str, str, Any]]:
    """Encoded column j -> (raw column, kind, category value or None)."""
    out = []
    for c in encoding.columns:
        if c.kind == "numeric":
            out.append((c.name, "numeric", None))
        else:
            out.extend((c.name, "categorical", v) for v in c.values)
    return out


def _encoded_value(kind: str, category: Any, u: Any) -> float:
    if kind == "numeric":
        return float(u)
    return 1.0 if u == category else 0.0


def tree_paths(form, variables: Sequence[Variable], deadline=None) -> Paths:
    """The root-to-leaf paths of a fairaudit ``TreeForm`` (``model.as_tree()``) or a fitted scikit-learn
    ``DecisionTreeClassifier`` trained on ``encoding.transform(frame)`` (pass ``(estimator, encoding)``).

    A node sends a row left iff ``x[feature] <= threshold``; on a categorical indicator ``col=v`` that is
    "``col`` ≠ v" for a threshold in [0, 1). A leaf is favourable iff its probability of class 1 is > 0.5 (the
    ``TreeForm`` convention; for a raw sklearn tree: the argmax class is 1). ``deadline`` (a
    ``fairaudit.base.limits.Deadline``) is asked at every node: a deep tree over many-valued features takes seconds."""
    if isinstance(form, tuple):  # (sklearn estimator, encoding)
        estimator, encoding = form
        t = estimator.tree_
        fav = list(estimator.classes_).index(1) if 1 in list(estimator.classes_) else None

        def children(i):
            return (None if t.children_left[i] < 0 else (int(t.feature[i]), float(t.threshold[i]),
                                                         int(t.children_left[i]), int(t.children_right[i])))

        def leaf_fav(i):
            v = t.value[i, 0, :]
            return fav is not None and int(v.argmax()) == fav and v[fav] * 2 > v.sum()
    else:
        encoding = form.encoding
        nodes = form.nodes

        def children(i):
            n = nodes[i]
            return None if n.is_leaf else (n.feature, n.threshold, n.left, n.right)

        def leaf_fav(i):
            return nodes[i].value > 0.5

    cols = _columns_of(encoding)
    by_name = {v.name: v for v in variables}
    out = []

    def walk(i, conds):
        if deadline is not None:
            deadline.check()
        split = children(i)
        if split is None:
            out.append(({k: frozenset(s) for k, s in conds.items()}, bool(leaf_fav(i))))
            return
        j, thr, left, right = split
        name, kind, category = cols[j]
        var = by_name[name]
        go_left = {k for k, u in enumerate(var.values) if _encoded_value(kind, category, u) <= thr}
        current = conds.get(name, set(range(len(var.values))))
        for child, allowed in ((left, current & go_left), (right, current - go_left)):
            if allowed:  # an empty set is an unreachable branch: its probability is 0 anyway
                walk(child, {**conds, name: allowed})

    walk(0, {})
    return Paths(tuple(out))


def linear_score(form, variables: Sequence[Variable]) -> LinearScore:
    """A fairaudit ``LinearForm`` (``model.as_linear()``) as per-variable weights over each variable's domain:
    a categorical column's value ``u`` contributes ``w[col=u]``, a numeric column's ``u`` contributes ``w · u``.
    The float weights are converted exactly (``Fraction(float)``): the rates are exact for the float model."""
    cols = _columns_of(form.encoding)
    by_name = {v.name: v for v in variables}
    weights: dict[str, list[Fraction]] = {}
    for j, (name, kind, category) in enumerate(cols):
        var = by_name[name]
        w = exact(form.weights[j])
        acc = weights.setdefault(name, [Fraction(0)] * len(var.values))
        for k, u in enumerate(var.values):
            acc[k] += w * (exact(u) if kind == "numeric" else (1 if u == category else 0))
    return LinearScore({k: tuple(v) for k, v in weights.items()}, exact(form.bias), strict=True)


def quantise(weights: Sequence, bias: Any, multiplier: int = 30) -> tuple[list[int], int]:
    """Justicia's integer PB weights: ``w' = round(multiplier · w / s)``, ``b'`` likewise, ``s = max |w_i|, |b|``,
    computed with exact rationals and round-half-even (the authors' ``int(float(w/s)*30)`` truncates a float and
    turns −0.6/1.5·30 into −11; notes §B7.2)."""
    ws = [exact(w) for w in weights]
    b = exact(bias)
    s = max([abs(w) for w in ws] + [abs(b)])
    if s == 0:
        return [0] * len(ws), 0
    return [round(multiplier * w / s) for w in ws], round(multiplier * b / s)


# ---------------------------------------------------------------------------------------------------------------
# Exact rates
# ---------------------------------------------------------------------------------------------------------------

def _mass(probs: Sequence[Fraction], allowed: frozenset) -> Fraction:
    total = Fraction(0)
    for i in allowed:
        p = probs[i]
        if p:  # most values of a many-valued feature have probability 0 in a cell
            total += p
    return total


def paths_sum(paths: Paths, factor, deadline=None) -> Fraction:
    """Σ over the favourable paths of Π over their conditions of ``factor(name, allowed)`` (a path whose product
    reaches 0 stops early); ``deadline`` is asked at every path."""
    total = Fraction(0)
    for conds, fav in paths.paths:
        if not fav:
            continue
        if deadline is not None:
            deadline.check()
        p = Fraction(1)
        for name, allowed in conds.items():
            p *= factor(name, allowed)
            if not p:
                break
        total += p
    return total


def paths_rate(paths: Paths, probs_of, deadline=None) -> Fraction:
    """``Pr[favourable]`` = Σ over favourable paths of Π_v Pr[X_v ∈ S_v]; ``probs_of(name)`` gives a variable's
    distribution (independent variables); ``deadline``: see ``paths_sum``."""
    return paths_sum(paths, lambda name, allowed: _mass(probs_of(name), allowed), deadline)


class TooManyStates(ValueError):
    """The exact score distribution has more distinct partial scores than the cap allows."""


MAX_STATES = 200_000


def linear_rate(score: LinearScore, probs_of, names: Iterable[str], max_states: int = MAX_STATES,
                max_work: int | None = None) -> Fraction:
    """``Pr[Σ_v w_v(X_v) + b > 0]`` (or ≥ 0) for independent ``X_v``: a stochastic subset-sum dynamic program.

    The state is the partial score → its probability. Values of one feature with the same weight are merged first
    (their probabilities add up), and the features are taken by increasing number of distinct weights (the order
    does not change the result). After feature k, a state whose score plus the largest possible rest is still
    unfavourable is absorbed into "no", one whose score plus the smallest rest is already favourable into "yes"
    (both exact: they are decided whatever the remaining features take). ``max_work``: give up (``TooManyStates``)
    before the (state, value) pairs combined so far would exceed it."""
    items = {}
    for n in names:
        if n in score.weights and n not in items:
            acc: dict = {}
            for wi, pi in zip(score.weights[n], probs_of(n)):
                if pi:
                    acc[wi] = acc.get(wi, Fraction(0)) + pi
            items[n] = list(acc.items())
    order = sorted(items, key=lambda n: len(items[n]))
    lo_rest = [Fraction(0)] * (len(order) + 1)
    hi_rest = [Fraction(0)] * (len(order) + 1)
    for k in range(len(order) - 1, -1, -1):
        ws = [w for w, _ in items[order[k]]] or [Fraction(0)]
        lo_rest[k] = lo_rest[k + 1] + min(ws)
        hi_rest[k] = hi_rest[k + 1] + max(ws)

    def favourable(s):
        return s > 0 if score.strict else s >= 0

    yes = Fraction(0)
    states = {score.bias: Fraction(1)}
    work = 0
    for k, name in enumerate(order):
        pairs = items[name]
        work += len(states) * len(pairs)
        if max_work is not None and work > max_work:
            raise TooManyStates(f"the exact score distribution needs more than {max_work:,} combinations by feature "
                                f"{k + 1} of {len(order)}")
        nxt: dict[Fraction, Fraction] = {}
        for s, q in states.items():
            for wi, pi in pairs:
                t = s + wi
                nxt[t] = nxt.get(t, 0) + q * pi
        states = {}
        for s, q in nxt.items():
            if favourable(s + lo_rest[k + 1]):
                yes += q
            elif favourable(s + hi_rest[k + 1]):
                states[s] = q
            # else: certainly unfavourable; dropped
        if len(states) > max_states:
            raise TooManyStates(f"the exact score distribution has more than {max_states:,} distinct partial scores "
                                f"after {k + 1} of {len(order)} features; discretise the numeric features or round "
                                "the weights")
    return yes + sum((q for s, q in states.items() if favourable(s)), Fraction(0))


def gridded(score: LinearScore, step: Fraction, up: bool) -> LinearScore:
    """Every weight rounded DOWN (``up`` False) or UP to a multiple of ``step``, in units of ``step`` (integers), the
    bias divided by ``step`` exactly. Soundness: ``Σ⌊w/h⌋·h ≤ Σw ≤ Σ⌈w/h⌉·h`` so ``{Σ⌊w/h⌋h + b > 0} ⊆ {Σw + b > 0}
    ⊆ {Σ⌈w/h⌉h + b > 0}`` (likewise with ``≥``): the rate of the rounded-down score is a lower bound, of the
    rounded-up one an upper bound — the grid idea of ``fairaudit.engines.fvgm.subset_sum.rate_bounds`` (one DP per
    direction), applied to this module's independent-feature DP. With ``step`` halved, ``⌊w/h⌋h`` can only grow
    and ``⌈w/h⌉h`` only shrink, so successive bounds nest."""
    import math

    step = Fraction(step)
    rnd = math.ceil if up else math.floor
    return LinearScore({n: tuple(Fraction(rnd(w / step)) for w in ws) for n, ws in score.weights.items()},
                       score.bias / step, score.strict)


def first_step(score: LinearScore, points: int = 64) -> Fraction:
    """A power of two near ``span / points`` (span = Σ_v max w_v − min w_v): the first grid of :func:`linear_bounds`;
    halving it keeps every later grid a refinement of the earlier ones."""
    span = sum((max(ws) - min(ws) for ws in score.weights.values() if ws), Fraction(0))
    if span <= 0:
        return Fraction(1)
    step = Fraction(1)
    while step > span / points:
        step /= 2
    while step * 2 <= span / points:
        step *= 2
    return step


def score_arrays(score: LinearScore, probs_of, names: Iterable[str]) -> list:
    """Per feature of the score, ``(weights, probs, inexact)`` as arrays over the values of positive probability
    (each a correctly rounded float of the exact fraction; ``inexact`` marks the weights a float does not hold
    exactly): the input of :func:`grid_rate`, computed once per cell."""
    import numpy as np

    out = []
    for n in dict.fromkeys(names):
        if n not in score.weights:
            continue
        pairs = [(w, p) for w, p in zip(score.weights[n], probs_of(n)) if p]
        wf = [float(w) for w, _ in pairs]
        inexact = np.array([Fraction(x) != w for x, (w, _) in zip(wf, pairs)], dtype=bool)
        out.append((np.array(wf), np.array([float(p) for _, p in pairs]), inexact))
    return out


def linear_bounds(score: LinearScore, probs_of, names: Iterable[str], step: Fraction,
                  arrays: list | None = None) -> tuple[float, float]:
    """Sound ``(lower, upper)`` bounds on :func:`linear_rate`: every weight rounded down / up to a multiple of
    ``step`` (the inequality of :func:`gridded`), each rounded score distribution computed in floating point by
    :func:`grid_rate`, whose rounding error is bounded and subtracted / added. ``arrays``: :func:`score_arrays`
    (computed here when not given)."""
    if arrays is None:
        arrays = score_arrays(score, probs_of, names)
    lo, err_lo = grid_rate(arrays, score.bias, score.strict, step, up=False)
    hi, err_hi = grid_rate(arrays, score.bias, score.strict, step, up=True)
    return max(0.0, lo - err_lo), min(1.0, hi + err_hi)


def grid_rate(arrays, bias: Fraction, strict: bool, step: Fraction, up: bool) -> tuple[float, float]:
    """``(p, err)``: ``Pr[Σ_v g_v(X_v) + bias > 0]`` (or ≥ 0) where ``g_v`` is the weight rounded down (``up``
    False) or up to a multiple of ``step`` (a power of two), in float64 with dense arrays (the partial-score
    distribution over a range of integers, one ``numpy.convolve`` per feature, the decided mass absorbed after
    each), and a bound ``err`` on |p − the exact value|.

    Rounding to the grid from floats: ``x̂ = fl(w)/step`` has relative error ≤ u (``step`` a power of two; none when
    the float holds ``w`` exactly), so ``⌊x̂ − 4u|x̂|⌋ ≤ w/step`` and ``⌈x̂ + 4u|x̂|⌉ ≥ w/step`` (no margin for an
    exact weight): the integers used are below / above the exact ones'
    quotients, which keeps the bound sound (never tighter than the exact grid, and still nested when the step halves).

    Error bound (standard model, unit roundoff u = 2⁻⁵³, every quantity ≥ 0): a probability is rounded once and a
    kernel entry adds at most D_v of them (relative error γ_{D_v+1}); each convolution output is a dot product of at
    most K_v (the kernel's length) products (γ_{K_v+1}; a sparse kernel is applied by shifted adds, at most K_v of
    them); the absorbed and final sums add at most R + n entries (R the
    longest array, n the features). Relative errors compose to at most γ_M with M = Σ_v (K_v + D_v + 2) + R + n + 4,
    so |p − exact| ≤ γ_M · 1 (the exact value is ≤ 1), γ_M = M·u / (1 − M·u); plus 2⁻¹⁰⁷⁴ per operation for
    underflow."""
    import math

    import numpy as np

    u = 2.0 ** -53
    h = float(step)
    kernels = []
    m_total = 4
    for w, p, inexact in arrays:
        x = w / h
        margin = np.where(inexact, 4 * u * np.abs(x), 0.0)
        ints = np.ceil(x + margin) if up else np.floor(x - margin)
        ints = ints.astype(np.int64)
        lo_w, hi_w = int(ints.min()), int(ints.max())
        ker = np.bincount(ints - lo_w, weights=p, minlength=hi_w - lo_w + 1)
        kernels.append((lo_w, hi_w, ker))
        m_total += len(ker) + len(p) + 2
    kernels.sort(key=lambda t: len(t[2]))
    # favourable iff S·step + bias > 0 (strict) / >= 0, S an integer: S >= T
    b = Fraction(bias) / Fraction(step)
    T = math.floor(-b) + 1 if strict else math.ceil(-b)
    lo_rest = [0] * (len(kernels) + 1)
    hi_rest = [0] * (len(kernels) + 1)
    for k in range(len(kernels) - 1, -1, -1):
        lo_rest[k] = lo_rest[k + 1] + kernels[k][0]
        hi_rest[k] = hi_rest[k + 1] + kernels[k][1]
    arr, base = np.ones(1), 0
    yes = 0.0
    longest = 1
    ops = 0
    for k, (lo_w, hi_w, ker) in enumerate(kernels):
        nz = np.flatnonzero(ker)
        if 4 * len(nz) < len(ker) and len(arr) > 1:  # a sparse kernel (few values, far apart): shift and add
            out = np.zeros(len(arr) + len(ker) - 1)
            for j in nz:
                out[j:j + len(arr)] += ker[j] * arr
            arr = out
        else:
            arr = np.convolve(arr, ker)
        ops += len(arr) * len(ker)
        base += lo_w
        longest = max(longest, len(arr))
        # position i holds S = base + i; decided yes once S + lo_rest >= T, no once S + hi_rest < T
        first_yes = T - lo_rest[k + 1] - base  # i >= first_yes: yes
        last_no = T - hi_rest[k + 1] - base - 1  # i <= last_no: no
        if first_yes < len(arr):
            yes += float(arr[max(0, first_yes):].sum())
        start, stop = max(0, last_no + 1), min(len(arr), max(0, first_yes))
        arr = arr[start:stop]
        base += start
        if not len(arr):
            break
    if len(arr):
        first = T - base
        yes += float(arr[max(0, first):].sum()) if first < len(arr) else 0.0
    m = m_total + longest + len(kernels)
    err = m * u / (1 - m * u) + (ops + m) * 2.0 ** -1074
    return min(1.0, yes), err * 1.0000001 + 1e-300


def rate(model, dist: ProductDistribution, group: tuple) -> Fraction:
    """``Pr[Ŷ = 1 | A = group]`` under ``dist`` (features independent within the group)."""
    def probs_of(name):
        return dist.probs(group, name)

    if isinstance(model, Paths):
        return paths_rate(model, probs_of)
    if isinstance(model, LinearScore):
        return linear_rate(model, probs_of, [v.name for v in dist.variables])
    raise TypeError(f"unsupported model {type(model).__name__}")


def group_rates(model, dist: ProductDistribution) -> dict[tuple, Fraction]:
    """Enumeration mode (RE-SSAT per compound group): the exact selection rate of every group present in ``dist``."""
    return {a: rate(model, dist, a) for a in sorted(dist.groups, key=lambda a: tuple(map(str, a)))}


# ---------------------------------------------------------------------------------------------------------------
# Metrics (notes §B2)
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Metrics:
    rates: dict
    most: tuple
    least: tuple
    di: Fraction | None  # min / max (None when every rate is 0)
    sp: Fraction  # max − min


def metrics(rates: Mapping[tuple, Fraction]) -> Metrics:
    """Disparate impact ``min_a / max_a`` (∈ [0, 1], 1 = fair; undefined when max = 0) and statistical parity
    ``max_a − min_a`` over the compound groups; ties for most/least favoured go to the first group in order."""
    most = max(rates, key=lambda a: rates[a])
    least = min(rates, key=lambda a: rates[a])
    hi, lo = rates[most], rates[least]
    return Metrics(dict(rates), most, least, (lo / hi) if hi else None, hi - lo)


def equalized_odds(model, dist_pos: ProductDistribution, dist_neg: ProductDistribution) -> dict:
    """Equalized odds (notes §B2) with the label in the distribution: ``dist_pos`` holds ``Pr[X | A = a, Y = 1]``,
    ``dist_neg`` ``Pr[X | A = a, Y = 0]`` (features independent within each (group, label) cell — the paper's
    label-conditioned enumeration). TPR(a) = Pr[Ŷ=1 | A=a, Y=1], FPR(a) = Pr[Ŷ=1 | A=a, Y=0]; the gaps are
    max − min over the groups present in each; ``eo`` = max(TPR gap, FPR gap)."""
    tpr = group_rates(model, dist_pos)
    fpr = group_rates(model, dist_neg)
    tgap = max(tpr.values()) - min(tpr.values())
    fgap = max(fpr.values()) - min(fpr.values())
    return {"tpr": tpr, "fpr": fpr, "tpr_gap": tgap, "fpr_gap": fgap, "eo": max(tgap, fgap)}


# ---------------------------------------------------------------------------------------------------------------
# Learning mode (ER-SSAT): branch and bound over the protected attributes
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Extreme:
    value: Fraction
    group: tuple
    explored: int  # partial assignments expanded (≤ 1 + Σ_k Π_{i<k} |dom A_i|); the enumeration does len(groups)


def most_favoured(model, dist: ProductDistribution, *, least: bool = False, shared: bool = False) -> Extreme:
    """``max_a Pr[Ŷ=1 | A=a]`` (or ``min`` with ``least=True``) and its group, by branch and bound.

    ``shared=True``: the ER-SSAT semantics — every group uses the pooled feature distribution (:meth:`pooled`), so
    only the protected attributes the classifier reads matter. ``least`` uses the duality ``min_a f = 1 − max_a
    (1 − f)`` (Lemma 1) on the negated classifier. Exact: a partial assignment is pruned only when an upper bound on
    every completion is ≤ the best value found (ties keep the first group in order).

    Bounds. Paths: Σ over favourable paths consistent with the partial assignment of Π_v max_{a ⊇ partial}
    Pr_a[X_v ∈ S_v] (a product of maxima bounds every completion's product; summing over paths that a single
    completion cannot all take only loosens it). Linear (shared only): the rate is non-decreasing in the
    protected part of the score, so the best group maximises it; with group-conditional distributions the
    linear case falls back to evaluating the candidate groups (documented limitation)."""
    if shared:
        dist = dist.pooled()
    groups = sorted(dist.groups, key=lambda a: tuple(map(str, a)))
    sign = -1 if least else 1
    if isinstance(model, LinearScore):
        if shared:
            def part(a):
                return sum((model.weights[n][dist.variable(n).values.index(a[i])]
                            for i, n in enumerate(dist.protected) if n in model.weights), Fraction(0))
            best = max(groups, key=lambda a: sign * part(a))
            return Extreme(rate(model, dist, best), best, len(groups))
        vals = {a: rate(model, dist, a) for a in groups}
        best = max(groups, key=lambda a: sign * vals[a])
        return Extreme(vals[best], best, len(groups))

    target = model.negated() if least else model
    prot = dist.protected
    explored = 0
    best_val: Fraction | None = None
    best_group = None

    def bound(partial: tuple) -> Fraction:
        """An upper bound of the rate of every group extending ``partial``: a protected condition counts 1 when
        some candidate value satisfies it (else 0), any other the largest mass among the candidate groups."""
        cands = [a for a in groups if a[:len(partial)] == partial]

        def factor(name: str, allowed) -> Fraction:
            if name in prot:
                i = prot.index(name)
                var = dist.variable(name)
                vals = {a[i] for a in cands} if i >= len(partial) else {partial[i]}
                return Fraction(int(any(var.values.index(v) in allowed for v in vals)))
            return max(_mass(dist.groups[a][name], allowed) for a in cands)

        return paths_sum(target, factor)

    def search(partial: tuple):
        nonlocal explored, best_val, best_group
        explored += 1
        if len(partial) == len(prot):
            v = paths_rate(target, lambda n: dist.probs(partial, n))
            if best_val is None or v > best_val:
                best_val, best_group = v, partial
            return
        children = sorted({a[len(partial)] for a in groups if a[:len(partial)] == partial}, key=str)
        scored = [(bound(partial + (c,)), c) for c in children]
        scored.sort(key=lambda t: -t[0])  # most promising first (stable: ties in value order)
        for ub, c in scored:
            if best_val is not None and ub <= best_val:
                continue
            search(partial + (c,))

    search(())
    value = (1 - best_val) if least else best_val
    return Extreme(value, best_group, explored)


def all_groups(dist: ProductDistribution) -> list[tuple]:
    """Every combination of the protected variables' domains (not only the groups observed)."""
    return list(itertools.product(*(dist.variable(n).values for n in dist.protected)))


# ---------------------------------------------------------------------------------------------------------------
# Finite-sample error bound (notes §B6; the formula there is the authors' shape, this is our derivation)
# ---------------------------------------------------------------------------------------------------------------

def estimation_radius(sizes: Sequence[int], k: int, delta: float) -> float:
    """ε such that, with probability ≥ 1 − δ, a group's rate computed from distributions estimated on ``k`` rows of
    the group is within ε of the rate under the true group-conditional distributions (same model, same
    independence assumption: this covers the *estimation* error only, not the modelling error).

    ``sizes``: for every feature the classifier reads, the number K of classes of values it tells apart.

    Derivation. The rate f(p_1, …, p_m) = E[1{Ŷ=1}] over independent X_v ~ p_v. Swap the distributions one at a
    time (a hybrid argument): with the others fixed, f is the expectation of a [0, 1]-valued function of X_v, so
    replacing p_v by p̂_v changes f by at most TV(p̂_v, p_v); hence |f(p̂) − f(p)| ≤ Σ_v TV(p̂_v, p_v). Each feature
    gets δ/m (union bound over the m features) and the smaller of two bounds on its TV, chosen from K, m, k and δ
    alone (never from the data, so choosing is free):

    * Hoeffding on the K class frequencies (one event when K = 2), union bound over them:
      TV = ½ Σ_u |p̂(u) − p(u)| ≤ c·t with t = sqrt(ln(2·e·m/δ) / (2k)), c = 1, e = 1 (K = 2) or c = K/2, e = K.
    * Weissman et al. (2003): Pr[‖p̂ − p‖₁ ≥ λ] ≤ (2^K − 2)·exp(−kλ²/2); with λ = 2t, TV ≤ t for
      t = sqrt(ln((2^K − 2)·m/δ) / (2k)) — much smaller than K/2·… when K is large.

    ε = Σ_v min(the two). For m Boolean features ε = m·sqrt(ln(2m/δ)/(2k)), i.e. k ≥ m²/(2ε²)·ln(2m/δ) (notes §B6)."""
    import math

    sizes = [s for s in sizes if s > 1]
    if not sizes:
        return 0.0
    if k <= 0:
        return 1.0
    m = len(sizes)
    total = 0.0
    for K in sizes:
        c, events = (1.0, 1) if K == 2 else (K / 2, K)
        hoeffding = c * math.sqrt(math.log(2 * events * m / delta) / (2 * k))
        log_terms = K * math.log(2) + math.log1p(-2.0 ** (1 - K)) if K < 1024 else K * math.log(2)
        weissman = math.sqrt((log_terms + math.log(m / delta)) / (2 * k))
        total += min(hoeffding, weissman)
    return min(1.0, total)


def sample_size(m: int, epsilon: float, delta: float) -> int:
    """Rows per group for ε-accuracy with m Boolean features: ⌈m²/(2ε²)·ln(2m/δ)⌉ (notes §B10 item 10)."""
    import math

    return math.ceil(m * m / (2 * epsilon * epsilon) * math.log(2 * m / delta))


def metric_intervals(rates: Mapping[tuple, float], radius: Mapping[tuple, float]) -> dict:
    """DI and SP intervals when every group's rate is within its radius (simultaneously): each group's rate lies in
    [r − ε, r + ε] ∩ [0, 1], and DI = min/max, SP = max − min are monotone in every rate, so their ranges are
    reached at the interval ends (a bound, not always attained: both extremes may not come from one group)."""
    lo = {a: max(0.0, float(r) - radius[a]) for a, r in rates.items()}
    hi = {a: min(1.0, float(r) + radius[a]) for a, r in rates.items()}
    min_lo, min_hi = min(lo.values()), min(hi.values())
    max_lo, max_hi = max(lo.values()), max(hi.values())
    sp = (max(0.0, max_lo - min_hi), max_hi - min_lo)
    di = (min_lo / max_hi if max_hi else 0.0, min(1.0, min_hi / max_lo) if max_lo else 1.0)
    return {"sp": sp, "di": di}
