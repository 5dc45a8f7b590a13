"""Leaf intervals → every node's estimate, interval, δ and three-valued verdict (shared by every engine).

An engine supplies, for each distinct leaf (``E[...]`` / ``Fair[...]``, keyed by its canonical text,
so identical leaves share one estimator), a ``LeafValue``: estimate, interval ``[lo, hi]`` that
contains the true value with probability ≥ 1 − δ (δ = 0 for the sound verifier engines), and
optionally the number of observations ``n`` and, for ``Fair`` leaves, the certified / unfair /
undecided rates. Every field may be a numpy array (one entry per step): the evaluation is
vectorised, so a whole stream of checks is evaluated in one call.

For every node of the spec ``evaluate`` returns a ``NodeValue``:

* term nodes (``add sub mul div neg const expect fair``): estimate and interval by the rules of
  ``fairaudit.bounds.rules`` (interval arithmetic, outward rounding); constants are exact (δ = 0);
  ``verdict`` is None;
* ``cmp`` nodes: the interval of ``left − right`` and a verdict — TRUE when the whole interval
  satisfies the comparison, FALSE when the whole interval violates it, else UNKNOWN;
* ``and or not``: Kleene logic on the children's verdicts; estimate/lo/hi are NaN.

``delta`` of a node is the sum of the δ's of the *distinct* leaves below it (union bound; a leaf
that occurs twice is one estimator and is counted once). Verdicts are int8 arrays: 1 true, 0 false,
-1 unknown (``rules.TRUE/FALSE/UNKNOWN``).

Node-level evidence (``NodeEvidence``, ``evaluate(..., nodes=...)``): an engine may decide a comparison by a test of
its own instead of interval arithmetic on its leaves (the monitor's joint e-process per comparison,
``fairaudit.engines.monitor.eprocess``). The evidence then REPLACES the comparison's verdict — it is not OR-ed with the
interval verdict, whose level it would otherwise add to (the engine's proof allots the comparison one level β per
verdict direction, spent by one test) — and the boolean nodes above are re-evaluated by Kleene logic. The
comparison's interval (of ``left − right``) is still the one interval arithmetic gives, so it may straddle the
threshold of a comparison the test has decided; its ``evalue`` and ``evalue_target`` (= 1/β) say why.
"""
from __future__ import annotations

import operator
import threading
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Mapping, Sequence

import numpy as np

from fairaudit.bounds.rules import BOOL_RULES, CMP, FALSE, TERM_RULES, TRUE, Interval
from fairaudit.spec.ast import LEAF_KINDS, Spec, TreeNode


@dataclass
class LeafValue:
    estimate: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    delta: np.ndarray | float = 0.0
    n: np.ndarray | None = None
    certified: np.ndarray | None = None
    unfair: np.ndarray | None = None
    undecided: np.ndarray | None = None
    exact: Sequence[Fraction | None] | None = None  # per step, the value as an exact fraction (None: no value)


@dataclass
class NodeValue:
    estimate: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    delta: np.ndarray
    verdict: np.ndarray | None = None
    n: np.ndarray | None = None
    certified: np.ndarray | None = None
    unfair: np.ndarray | None = None
    undecided: np.ndarray | None = None
    evalue: np.ndarray | None = None  # comparisons decided by node-level evidence: the test's e-value ...
    evalue_target: np.ndarray | None = None  # ... and the value 1/β it must reach to certify
    exact: list | None = None  # per step, the value as an exact fraction where the leaves below are exact (None: not)


@dataclass
class NodeEvidence:
    """An engine's own anytime-valid test of one comparison, at each step of a batch (``LeafBatch.nodes``).

    ``verdict`` (int8 per step): TRUE / FALSE where the test certifies that verdict at the level its engine's
    allocation gives the comparison for that direction, else UNKNOWN; it replaces the interval verdict (module doc).
    ``evalue``: the test's statistic for the direction shown (the certified one, else the one closest to its
    target), ``target``: the value 1/β it certifies at. ``test`` names the test in sentences."""

    verdict: np.ndarray
    evalue: np.ndarray
    target: np.ndarray
    test: str = "joint test"


def leaf_key(node: TreeNode) -> str:
    """The estimator a leaf uses: its canonical text (identical leaves share one)."""
    return node.text


class CompiledSpec:
    """The static facts about a spec the evaluator and the allocator need, computed once."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self.nodes = {tn.id: tn for tn in spec.nodes}
        self.root = spec.nodes[0].id
        self.postorder = [tn.id for tn in reversed(spec.nodes)]  # children after parents in pre-order
        keys: list[str] = []
        for tn in spec.nodes:
            if tn.kind in LEAF_KINDS and leaf_key(tn) not in keys:
                keys.append(leaf_key(tn))
        self.leaf_keys = tuple(keys)  # distinct leaves in id order
        self.leaf_node = {}  # key -> first TreeNode with that key
        for tn in spec.nodes:
            if tn.kind in LEAF_KINDS:
                self.leaf_node.setdefault(leaf_key(tn), tn)
        below: dict[str, frozenset[str]] = {}
        for nid in self.postorder:
            tn = self.nodes[nid]
            if tn.kind in LEAF_KINDS:
                below[nid] = frozenset([leaf_key(tn)])
            else:
                below[nid] = frozenset().union(*(below[c] for c in tn.children)) if tn.children else frozenset()
        self.leaves_below = below
        # the same leaves in id order (``leaf_keys``): what a float sum over them iterates. A frozenset of strings
        # iterates in an order string hashing decides (PYTHONHASHSEED), and a sum of three or more δ's in another
        # order can differ in the last bit: the same rows must give the same δ in every run
        self.leaves_below_ordered = {nid: tuple(k for k in keys if k in leaves) for nid, leaves in below.items()}
        from fairaudit.spec.quantities import leaf_ranges

        # the quantity leaves' ranges (``fairaudit.spec.quantities``): their statistics are kept on [0, 1]
        # (``unit_value``) and their values shown in the quantity's own units (``leaf_value``)
        self.leaf_range = {k: r for k, r in leaf_ranges(spec).items() if k in keys}

    def leaf_value(self, key: str, estimate, lo, hi, delta=0.0, n=None) -> "LeafValue":
        """A leaf's ``LeafValue`` from its statistics on [0, 1]: an event's as they are; a quantity's (its values
        mapped to [0, 1] by its range and counted in fixed point, ``fairaudit.core.counting.QUANTUM``) widened by
        the fixed point's rounding and mapped back to the quantity's units, outward."""
        if key not in self.leaf_range:
            return LeafValue(estimate, lo, hi, delta, n)
        from fairaudit.core.counting import QUANTUM

        low, high = self.leaf_range[key]
        width = high - low
        lo = np.maximum(np.asarray(lo, float) - QUANTUM / 2, 0.0)
        hi = np.minimum(np.asarray(hi, float) + QUANTUM / 2, 1.0)
        with np.errstate(invalid="ignore"):
            out_lo = np.maximum(np.nextafter(low + width * lo, -np.inf), low)
            out_hi = np.minimum(np.nextafter(low + width * hi, np.inf), high)
            out_est = low + width * np.asarray(estimate, float)
        return LeafValue(out_est, out_lo, out_hi, delta, n)

    def unit_value(self, key: str, value: float) -> float:
        """A value of a leaf in its own units as a value on [0, 1] (the scale its statistics are kept on)."""
        if key not in self.leaf_range:
            return value
        low, high = self.leaf_range[key]
        return (value - low) / (high - low)

    def is_boolean(self, node_id: str) -> bool:
        return self.nodes[node_id].kind in ("and", "or", "not", "cmp")


@lru_cache(maxsize=64)
def _compile_equal(spec: Spec) -> CompiledSpec:
    return CompiledSpec(spec)


_BY_ID: dict[int, tuple[Spec, CompiledSpec]] = {}  # id(spec) → (that spec, kept alive so that the id stays
_BY_ID_SIZE = 64                                    # its own while the entry is there; its compiled form)
_BY_ID_LOCK = threading.Lock()


def compile_spec(spec: Spec) -> CompiledSpec:
    """The ``CompiledSpec`` of ``spec``, computed once per spec.

    Looked up by identity first: a ``Spec`` is a frozen tree whose hash walks every node, and the engines ask for
    the compiled form at every chunk of checks and every node of a certificate (hashing it on every call was half
    of a monitor run, issue 30). An equal spec that is another object gets the same compiled form, through the
    equality-keyed cache behind (hashed once, on its first lookup). The map keeps the latest ``_BY_ID_SIZE``."""
    hit = _BY_ID.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    cs = _compile_equal(spec)
    with _BY_ID_LOCK:
        while len(_BY_ID) >= _BY_ID_SIZE:
            _BY_ID.pop(next(iter(_BY_ID)))
        _BY_ID[id(spec)] = (spec, cs)
    return cs


def _shape(leaves: Mapping[str, LeafValue]):
    shapes = [np.shape(v.lo) for v in leaves.values()]
    return np.broadcast_shapes(*shapes) if shapes else ()


def term_intervals(spec: Spec, leaves: Mapping[str, LeafValue], wanted=None,
                   nodes: Mapping[str, NodeEvidence] | None = None) -> dict[str, Interval]:
    """Only the intervals of term nodes (and the verdicts of boolean nodes, as int8 arrays) — the
    fast path used by the allocator. ``wanted`` is ignored (reserved). ``nodes``: comparison verdicts that replace
    the interval ones (module doc)."""
    cs = compile_spec(spec)
    shape = _shape(leaves)
    out: dict[str, object] = {}
    for nid in cs.postorder:
        tn = cs.nodes[nid]
        kids = [out[c] for c in tn.children]
        if tn.kind in LEAF_KINDS:
            lv = leaves[leaf_key(tn)]
            out[nid] = Interval(np.asarray(lv.estimate, float), np.asarray(lv.lo, float), np.asarray(lv.hi, float))
        elif tn.kind == "const":
            out[nid] = Interval.exact(tn.node.value, shape)
        elif tn.kind in TERM_RULES:
            out[nid] = TERM_RULES[tn.kind].interval(*kids)
        elif tn.kind == "cmp":
            given = (nodes or {}).get(nid)
            out[nid] = (CMP.interval(tn.node.op, *kids) if given is None
                        else np.broadcast_to(np.asarray(given.verdict, dtype=np.int8), shape).copy())
        else:
            out[nid] = BOOL_RULES[tn.kind].interval(*kids)
    return out


def evaluate(spec: Spec, leaves: Mapping[str, LeafValue],
             nodes: Mapping[str, NodeEvidence] | None = None) -> dict[str, NodeValue]:
    """Every node's ``NodeValue`` from the distinct leaves' values (keyed by ``leaf_key``) and, optionally, the
    engine's node-level evidence on comparisons (``nodes``: node id → ``NodeEvidence``; module doc)."""
    cs = compile_spec(spec)
    missing = [k for k in cs.leaf_keys if k not in leaves]
    if missing:
        raise KeyError(f"no value for leaf {missing[0]!r}")
    nodes = dict(nodes or {})
    wrong = [nid for nid in nodes if nid not in cs.nodes or cs.nodes[nid].kind != "cmp"]
    if wrong:
        raise KeyError(f"node-level evidence is for comparisons only, not {wrong[0]!r}")
    shape = _shape(leaves)
    raw = term_intervals(spec, leaves, nodes=nodes)
    deltas = {k: np.broadcast_to(np.asarray(leaves[k].delta, float), shape) for k in cs.leaf_keys}
    nan = np.full(shape, np.nan)
    result: dict[str, NodeValue] = {}
    for tn in spec.nodes:
        delta = np.zeros(shape)
        for k in cs.leaves_below_ordered[tn.id]:  # id order, not the frozenset's hash order (CompiledSpec)
            delta = delta + deltas[k]
        delta = np.minimum(delta, 1.0)  # a union bound above 1 says nothing more than 1
        value = raw[tn.id]
        if tn.kind == "cmp":
            l, r = (raw[c] for c in tn.children)
            d = CMP.difference(l, r)
            result[tn.id] = NodeValue(d.estimate, d.lo, d.hi, delta, verdict=value)
            if tn.id in nodes:
                ev = nodes[tn.id]
                result[tn.id].evalue = np.broadcast_to(np.asarray(ev.evalue, float), shape)
                result[tn.id].evalue_target = np.broadcast_to(np.asarray(ev.target, float), shape)
        elif tn.kind in BOOL_RULES:
            result[tn.id] = NodeValue(nan, nan, nan, delta, verdict=value)
        else:
            nv = NodeValue(np.broadcast_to(value.estimate, shape), np.broadcast_to(value.lo, shape),
                           np.broadcast_to(value.hi, shape), delta)
            if tn.kind in LEAF_KINDS:
                lv = leaves[leaf_key(tn)]
                nv.n = None if lv.n is None else np.broadcast_to(lv.n, shape)
                if tn.kind == "fair":
                    nv.certified = lv.certified if lv.certified is not None else nv.lo
                    nv.unfair = lv.unfair if lv.unfair is not None else 1.0 - nv.hi
                    nv.undecided = lv.undecided if lv.undecided is not None else nv.hi - nv.lo
            result[tn.id] = nv
    if any(leaves[k].exact is not None for k in cs.leaf_keys):
        _exact_pass(spec, leaves, result, shape)
    return result


# ------------------------------------------------------------------------------------------------ exact values
# An engine that knows a leaf's value exactly (a count on a finite table: ``LeafValue.exact``) gets exact
# arithmetic above it: a term whose leaves are all exact is computed with fractions and shown as the tightest
# float interval around it, and a comparison between exact terms is decided exactly — a tie (``E[a] / E[a] >= 1``)
# is true, not undecided by the outward rounding that floating-point interval arithmetic needs to stay sound. The
# exact values are kept on the nodes (``NodeValue.exact``: leaves, terms and a comparison's left − right), so the
# result can carry them as fractions (``AuditResult.exact``).

_EXACT_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul}
_EXACT_CMP = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
              "!=": operator.ne}


def enclose(x: Fraction) -> tuple[float, float]:
    """The tightest floats ``lo ≤ x ≤ hi`` (equal when ``x`` is a float)."""
    f = float(x)
    lo = f if Fraction(f) <= x else float(np.nextafter(f, -np.inf))
    hi = f if Fraction(f) >= x else float(np.nextafter(f, np.inf))
    return lo, hi


def _exact_pass(spec: Spec, leaves: Mapping[str, LeafValue], result: dict[str, NodeValue], shape) -> None:
    cs = compile_spec(spec)
    k = shape[0] if shape else 1
    exact: dict[str, list] = {}
    for nid in cs.postorder:
        tn = cs.nodes[nid]
        kids = [exact.get(c) for c in tn.children]
        values = None
        if tn.kind in LEAF_KINDS:
            given = leaves[leaf_key(tn)].exact
            values = None if given is None else [None if v is None else Fraction(v) for v in given]
        elif tn.kind == "const":
            values = [Fraction(repr(float(tn.node.value)))] * k
        elif all(kid is not None for kid in kids) and tn.kind in _EXACT_OPS:
            values = [None if a is None or b is None else _EXACT_OPS[tn.kind](a, b) for a, b in zip(*kids)]
        elif all(kid is not None for kid in kids) and tn.kind == "neg":
            values = [None if a is None else -a for a in kids[0]]
        elif all(kid is not None for kid in kids) and tn.kind == "div":
            values = [None if a is None or b is None or b == 0 else a / b for a, b in zip(*kids)]
        elif tn.kind == "cmp" and all(kid is not None for kid in kids):
            nv = result[nid]
            verdict, lo, hi = np.array(nv.verdict, copy=True), np.array(nv.lo, copy=True), np.array(nv.hi, copy=True)
            estimate = np.array(nv.estimate, copy=True)
            for i, (a, b) in enumerate(zip(*kids)):
                if a is None or b is None:
                    continue
                verdict[i] = TRUE if _EXACT_CMP[tn.node.op](a, b) else FALSE
                lo[i], hi[i] = enclose(a - b)
                estimate[i] = float(a - b)
            result[nid] = NodeValue(estimate, lo, hi, nv.delta, verdict=verdict, evalue=nv.evalue,
                                    evalue_target=nv.evalue_target,
                                    exact=[None if a is None or b is None else a - b for a, b in zip(*kids)])
        elif tn.kind in BOOL_RULES:
            nv = result[nid]
            verdict = BOOL_RULES[tn.kind].interval(*(result[c].verdict for c in tn.children))
            result[nid] = NodeValue(nv.estimate, nv.lo, nv.hi, nv.delta, verdict=verdict)
        if values is not None:
            exact[nid] = values
            if tn.kind in LEAF_KINDS:
                result[nid].exact = values
            elif tn.kind != "const":
                nv = result[nid]
                estimate, lo, hi = (np.array(np.broadcast_to(a, (k,)), dtype=float, copy=True)
                                    for a in (nv.estimate, nv.lo, nv.hi))
                for i, v in enumerate(values):
                    if v is not None:
                        lo[i], hi[i] = enclose(v)
                        estimate[i] = float(v)
                result[nid] = NodeValue(estimate, lo, hi, nv.delta, exact=values)


def root_verdict(spec: Spec, leaves: Mapping[str, LeafValue]) -> np.ndarray:
    """The root's verdict only (int8 array)."""
    return term_intervals(spec, leaves)[spec.nodes[0].id]
