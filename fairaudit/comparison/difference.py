"""Intervals on the difference between two models' values of every node, from paired leaf differences.

For two models a and b, every term node ``x`` has an interval for ``x_a``, one for ``x_b`` (each model's own, by
``fairaudit.core.evaluate``) and one for ``Δx = x_a − x_b``. At a leaf ``Δx`` comes from the paired confidence
sequence (``fairaudit.bounds.paired``; the same individuals under both models), or is exactly 0 for a leaf that does
not read the decision (``E[label | sex == "F"]`` is the same for every model), or is ``x_a − x_b`` by interval
subtraction for a leaf whose condition reads the decision (``E[label | pred]``: the two models condition on different
rows, so they cannot be paired). Above the leaves, exact identities carry it up:

* ``Δ(x ± y) = Δx ± Δy``, ``Δ(−x) = −Δx``, ``Δc = 0`` for a constant;
* ``Δ(x·y) = x_a·Δy + y_b·Δx``;
* ``Δ(x / y) = (y_b·Δx − x_b·Δy) / (y_a·y_b)``;
* a comparison ``l op r``: the difference of its margins, ``Δ(l − r) = Δl − Δr``.

Each right-hand side is evaluated by the sound interval rules (``fairaudit.bounds.rules``, outward rounding), and the
result is intersected with ``[x_a] − [x_b]``, which also holds. So, on the event that every leaf interval (each
model's and each paired one) holds, every node's difference interval holds: the union bound over the leaves is the
only probability spent (``fairaudit.comparison.run``). Boolean nodes have no difference (each model's verdict is shown).
"""
from __future__ import annotations

import numpy as np

from fairaudit.bounds.rules import TERM_RULES, Interval
from fairaudit.spec.ast import LEAF_KINDS

ADD, SUB, MUL, DIV, NEG = (TERM_RULES[k] for k in ("add", "sub", "mul", "div", "neg"))


def _intersect(a: Interval, b: Interval) -> Interval:
    lo, hi = np.maximum(a.lo, b.lo), np.minimum(a.hi, b.hi)
    empty = lo > hi  # only off the event (or by rounding at a point): keep the subtraction's, which is sound
    return Interval(a.estimate, np.where(empty, b.lo, lo), np.where(empty, b.hi, hi))


def differences(cs, side_a: dict, side_b: dict, leaf_differences: dict) -> dict[str, Interval]:
    """``node id → Interval`` of ``value_a − value_b`` for every term and comparison node of the compiled spec ``cs``.

    ``side_a``/``side_b``: each model's term intervals (``fairaudit.core.evaluate.term_intervals``: node id →
    ``Interval``, and int8 verdicts for boolean nodes). ``leaf_differences``: leaf key → the paired ``Interval`` of
    the difference, or ``0`` for a leaf that does not read the decision, or None for one that cannot be paired."""
    from fairaudit.core.evaluate import leaf_key

    out: dict[str, Interval] = {}
    for nid in cs.postorder:
        tn = cs.nodes[nid]
        if tn.kind in ("and", "or", "not"):
            continue
        kids = tn.children
        if tn.kind == "cmp":
            l, r = kids
            out[nid] = SUB.interval(out[l], out[r])
            continue
        a, b = side_a[nid], side_b[nid]
        shape = np.shape(a.lo)
        naive = SUB.interval(a, b)
        if tn.kind in LEAF_KINDS:
            given = leaf_differences.get(leaf_key(tn))
            if isinstance(given, Interval):
                d = _intersect(given, naive)
            elif given is None:
                d = naive
            else:  # the leaf does not read the decision: the same for both models
                d = Interval.exact(0.0, shape)
        elif tn.kind == "const":
            d = Interval.exact(0.0, shape)
        elif tn.kind in ("add", "sub"):
            d = _intersect(TERM_RULES[tn.kind].interval(out[kids[0]], out[kids[1]]), naive)
        elif tn.kind == "neg":
            d = NEG.interval(out[kids[0]])
        elif tn.kind == "mul":
            x, y = kids
            d = _intersect(ADD.interval(MUL.interval(side_a[x], out[y]), MUL.interval(side_b[y], out[x])), naive)
        elif tn.kind == "div":
            x, y = kids
            top = SUB.interval(MUL.interval(side_b[y], out[x]), MUL.interval(side_b[x], out[y]))
            d = _intersect(DIV.interval(top, MUL.interval(side_a[y], side_b[y])), naive)
        else:  # pragma: no cover - every term kind is listed above
            raise ValueError(f"no difference rule for {tn.kind!r}")
        with np.errstate(invalid="ignore"):
            estimate = np.asarray(a.estimate, float) - np.asarray(b.estimate, float)
        out[nid] = Interval(estimate, d.lo, d.hi)
    for nid, iv in out.items():  # a comparison's estimate: the difference of the two margins' estimates
        if cs.nodes[nid].kind == "cmp":
            l, r = cs.nodes[nid].children
            out[nid] = Interval(out[l].estimate - out[r].estimate, iv.lo, iv.hi)
    return out


def verdicts(interval: Interval) -> np.ndarray:
    """Per look: +1 when ``a − b`` is certainly below 0 (a lower), −1 when above (b lower), 0 undecided."""
    return np.where(interval.hi < 0, 1, np.where(interval.lo > 0, -1, 0)).astype(np.int8)
