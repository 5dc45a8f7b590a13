"""The verdict-directed δ allocation (``split="directed"``): a sound rule that needs no solver.

The question a monitor answers is "is the verdict ever wrong?", not "do all intervals hold?". A verdict
is wrong only in one direction at a time: if the specification is true, only a FALSE verdict can be
wrong, and vice versa. So each direction gets its own certificate, each at the full level Δ, and each
certificate spends its budget only where a wrong certificate of that direction could come from.

Certificates. ``cert(node, want, β)`` is a statistic of the stream at each check (True or False) with
the property

    (P)  if the true value of ``node`` is not ``want``, then Pr[∃t: cert_t(node, want, β)] ≤ β.

It is defined by the node kind (``and``/``or`` chains are flattened: ``A and B and C`` has 3 children):

* comparison ``L op R``: every distinct leaf ℓ below it gets a confidence sequence at level
  β / m (m distinct leaves); ``cert`` holds when interval arithmetic on those intervals
  (``fairaudit.bounds.rules``) gives the verdict ``want``. Proof of (P): interval arithmetic is sound,
  so a wrong verdict needs some leaf's interval to miss its true value at some t; by the union bound
  over the m leaves that happens with probability ≤ m · β / m = β.
  With a joint test (``joint``; ``fairaudit.engines.monitor.eprocess``: a comparison of two disjoint groups), ``cert``
  is instead "the joint e-process against the null 'c is not ``want``' has reached 1/β at some check so far":
  (P) by Ville's inequality. It REPLACES the interval certificate at the same β (OR-ing the two, each at β,
  would be wrong with probability up to 2β), and the comparison's β is the share of Δ its one path from the root
  gives it for ``want`` (``comparison_levels``), so nothing else in the proof changes.
* ``and`` of n children, ``want = TRUE``: ``cert`` = every ``cert(child, TRUE, β)`` (full β each).
  Proof: if the ``and`` is false, some child c is false — which one is fixed by the truth, not by the
  data — and a wrong certificate needs ``cert(c, TRUE, β)``, probability ≤ β by (P) for c.
  This is Berger's intersection–union principle (Berger 1982, Technometrics 24(4); Berger & Hsu 1996,
  Stat. Sci. 11(4)).
* ``and``, ``want = FALSE``: ``cert`` = some ``cert(child, FALSE, β / n)``. Proof: if the ``and`` is
  true every child is true, and a wrong certificate needs one of the n child certificates to be wrong:
  union bound, n · β / n.
  When every child is a comparison, the split is pooled instead: every distinct leaf below the node
  gets β / D (D distinct leaves in all) and some comparison must be decided FALSE on those intervals.
  Proof: a wrong certificate needs some leaf interval to miss, union over D leaves: ≤ β. (Leaves
  shared by comparisons, as in a two-sided ``a − b < c and b − a < c``, are then paid for once.)
* ``or`` is the dual: TRUE = some ``cert(child, TRUE, β / n)``; FALSE = every ``cert(child, FALSE, β)``.
* ``not A``: ``cert(not A, want, β) = cert(A, not want, β)`` (A is false exactly when ``not A`` is true).
* arithmetic (``+ − × ÷``, negation, constants) are not verdicts: they live inside a comparison and are
  covered by its interval arithmetic (the comparison's leaves share its β).

The verdict at each check is TRUE when ``cert(root, TRUE, Δ)`` holds and ``cert(root, FALSE, Δ)`` does
not, FALSE in the mirror case, else UNKNOWN. Theorem: Pr[the verdict is ever wrong] ≤ Δ. Proof: let v be
the true value of the root. A wrong verdict at some check means the verdict ¬v was given there, which
needs ``cert(root, ¬v, Δ)`` at that check; by (P) that happens at any check with probability ≤ Δ. The
direction that can be wrong is fixed by the truth, so the two certificates, each at Δ, never add up.
(Both firing at once is a certain sign that one of them is wrong: the verdict is then UNKNOWN.) The
statement is uniform over time because every leaf bound is a confidence sequence, so it survives
continuous monitoring and a data-dependent stop.

What is displayed (``display_deltas``, ``witness_deltas``): before the decision each leaf shows a fixed
level no larger than Δ/k and no larger than any level a certificate gives it, so the displayed intervals
hold jointly at Δ and can only decide the tree where the certificates already do; from the decision on,
each leaf shows the (largest) level the deciding certificate gave it — each interval is a confidence
sequence at the level in its δ column; the verdict holds at Δ by the theorem above, not by a union over
the displayed intervals.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from fairaudit.bounds.concentration import Bound, get_bound
from fairaudit.bounds.rules import FALSE, TRUE, UNKNOWN
from fairaudit.core.evaluate import LeafValue, compile_spec, term_intervals
from fairaudit.engines.monitor.split import _pooled, _splits, comparison_levels, flat_children  # noqa: F401 — the split
from fairaudit.spec.ast import Spec


def uses(spec: Spec, node_id: str | None, want: bool, budget: float, joint=()) -> list[tuple[str, str, float]]:
    """Static plan: every ``(comparison id, leaf key, δ)`` the certificate ``cert(node, want, budget)`` may use
    (a comparison in ``joint`` uses no leaf interval: its joint test spends its level)."""
    cs = compile_spec(spec)
    node_id = cs.root if node_id is None else node_id
    tn = cs.nodes[node_id]
    if tn.kind == "cmp":
        leaves = cs.leaves_below[node_id]
        if node_id in joint:
            return []
        return [(node_id, k, budget / len(leaves)) for k in sorted(leaves)] if leaves else []
    if tn.kind == "not":
        return uses(spec, tn.children[0], not want, budget, joint)
    if tn.kind in ("and", "or"):
        kids = flat_children(cs, node_id)
        pooled = _pooled(cs, kids, joint) if _splits(tn.kind, want) else 0
        if pooled:
            return [(c, k, budget / pooled) for c in kids for k in sorted(cs.leaves_below[c])]
        share = budget / len(kids) if _splits(tn.kind, want) else budget
        return [u for c in kids for u in uses(spec, c, want, share, joint)]
    raise ValueError(f"{tn.kind!r} is not a verdict node")


class _Intervals:
    """Term intervals of the whole tree with every leaf at one δ, computed once per δ (vectorised)."""

    def __init__(self, spec: Spec, stats: Mapping[str, object], bound: Bound):
        self.spec, self.stats, self.bound, self.cache = spec, stats, bound, {}

    def at(self, delta: float) -> dict:
        if delta not in self.cache:
            values, cs = {}, compile_spec(self.spec)
            answers = self.bound.intervals([(st.successes, st.n, delta) for st in self.stats.values()])
            for (key, st), (lo, hi) in zip(self.stats.items(), answers):  # every leaf at once
                values[key] = cs.leaf_value(key, st.estimate, lo, hi, delta, st.n)
            self.cache[delta] = term_intervals(self.spec, values)
        return self.cache[delta]


def certificate(spec: Spec, stats, want: bool, budget: float, bound="mixture", node_id: str | None = None,
                _iv: _Intervals | None = None, joint=None) -> np.ndarray:
    """``cert(node, want, budget)`` at every check (bool array): see the module doc for the rule and (P).

    ``stats`` maps each leaf key to its ``LeafStats`` (successes, n; arrays over the checks). ``joint``: the joint
    tests' certificates, ``{(comparison id, want): bool array}`` (``JointTests.certified``), which replace the
    interval certificate of those comparisons (their level is the one ``comparison_levels`` gives; module doc);
    ``True``: compute them from ``stats`` (the checks from the stream's start)."""
    if joint is True:
        if node_id is not None:
            raise ValueError("joint=True computes the root's joint tests: pass their certificates for a node")
        from fairaudit.engines.monitor.eprocess import JointTests

        tests = JointTests(spec, budget)
        joint = tests.certified(tests.chunk(stats))
    joint = joint or {}
    cs = compile_spec(spec)
    iv = _iv or _Intervals(spec, stats, get_bound(bound))
    node_id = cs.root if node_id is None else node_id
    tn = cs.nodes[node_id]
    if tn.kind == "cmp":
        if (node_id, want) in joint:  # the joint e-process (``fairaudit.engines.monitor.eprocess``) at this level
            return np.asarray(joint[(node_id, want)])
        leaves = cs.leaves_below[node_id]
        verdict = iv.at(budget / max(1, len(leaves)))[node_id]
        return np.asarray(verdict == (TRUE if want else FALSE))
    if tn.kind == "not":
        return certificate(spec, stats, not want, budget, bound, tn.children[0], iv, joint)
    kids = flat_children(cs, node_id)
    pooled = _pooled(cs, kids, {c for c, _ in joint}) if _splits(tn.kind, want) else 0
    if pooled:
        level = iv.at(budget / pooled)
        return np.logical_or.reduce([np.asarray(level[c] == (TRUE if want else FALSE)) for c in kids])
    if _splits(tn.kind, want):
        parts = [certificate(spec, stats, want, budget / len(kids), bound, c, iv, joint) for c in kids]
        return np.logical_or.reduce(parts)
    parts = [certificate(spec, stats, want, budget, bound, c, iv, joint) for c in kids]
    return np.logical_and.reduce(parts)


def directed_verdict(spec: Spec, stats, delta: float, bound="mixture", joint=False) -> np.ndarray:
    """The root's verdict at every check (int8: 1 true, 0 false, -1 unknown), wrong with probability ≤ Δ
    over the whole stream (module doc). ``joint``: True to use the joint e-process on every comparison that has
    one (computed from ``stats``, the checks from the stream's start), or the certificates of ``JointTests``."""
    if joint is True:
        from fairaudit.engines.monitor.eprocess import JointTests

        tests = JointTests(spec, delta)
        joint = tests.certified(tests.chunk(stats))
    joint = joint or None
    iv = _Intervals(spec, stats, get_bound(bound))
    yes = certificate(spec, stats, True, delta, bound, _iv=iv, joint=joint)
    no = certificate(spec, stats, False, delta, bound, _iv=iv, joint=joint)
    return np.where(yes & ~no, TRUE, np.where(no & ~yes, FALSE, UNKNOWN)).astype(np.int8)


def witness_deltas(spec: Spec, stats_at, want: bool, delta: float, bound="mixture", joint=None) -> dict[str, float]:
    """At one check where ``cert(root, want, Δ)`` holds: the level each leaf of the certifying comparisons was
    used at (the largest, for a leaf used twice). Leaf intervals at these levels decide the tree by interval
    arithmetic (every certifying comparison is decided on them), so they are what the monitor displays.
    ``joint``: the joint tests' certificates at this check (``{(comparison id, want): bool}``); a comparison they
    certify is decided by its test (``fairaudit.core.evaluate.NodeEvidence``) and gives its leaves no level."""
    cs = compile_spec(spec)
    iv = _Intervals(spec, stats_at, get_bound(bound))
    out: dict[str, float] = {}
    joint = joint or {}
    tested = {c for c, _ in joint}

    def walk(node_id, want, budget):
        tn = cs.nodes[node_id]
        if not bool(certificate(spec, stats_at, want, budget, bound, node_id, iv, joint)):
            return False
        if tn.kind == "cmp" or (tn.kind in ("and", "or") and _splits(tn.kind, want)
                                 and _pooled(cs, flat_children(cs, node_id), tested)):
            for _, key, d in uses(spec, node_id, want, budget, tested):
                out[key] = max(out.get(key, 0.0), d)
        elif tn.kind == "not":
            walk(tn.children[0], not want, budget)
        else:
            kids = flat_children(cs, node_id)
            share = budget / len(kids) if _splits(tn.kind, want) else budget
            for c in kids:
                walk(c, want, share)
        return True

    if not walk(cs.root, want, delta):
        raise ValueError("the root is not certified in that direction at this check")
    return out


def display_deltas(spec: Spec, delta: float, joint=()) -> dict[str, float]:
    """The fixed level each leaf is displayed at before a decision: Δ/k, lowered to the smallest level any
    certificate (either direction, at Δ) uses it at. They sum to ≤ Δ, and intervals at them decide the tree
    only where the certificates do (a wider interval decides less; module doc). ``joint``: the comparisons decided
    by their joint test (their verdict does not come from these intervals)."""
    cs = compile_spec(spec)
    k = len(cs.leaf_keys)
    out = {key: delta / k for key in cs.leaf_keys}
    for want in (True, False):
        for _, key, d in uses(spec, None, want, delta, joint):
            out[key] = min(out[key], d)
    return out
