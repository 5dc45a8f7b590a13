"""A node's final numbers as a reader understands them (one place for tooltips, the node panel and the report).

The evaluator stores, on a comparison node, the interval of ``left − right`` (``fairaudit.bounds.rules.CMP.
difference``; so ``ratio >= 0.8`` with a ratio of 0.139 has "estimate" −0.661). Nobody reads that as the
comparison's value: a comparison against a constant is shown as its **compared term's** value and interval beside
the threshold (``0.139`` vs ``≥ 0.8``); the difference appears only labelled as the margin. A comparison of two
terms (``A < B``) has no threshold of its own, so its value is the difference, labelled ``left − right``, against 0.

Operators and constants are read from the nodes' ``op`` and ``value`` (``AuditResult.nodes``), never out of their
text; a node without them (a hand-built list) is shown without its operator or threshold.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from fairaudit.viz import _format

#: how an operator symbol is printed on a chart
PRETTY = {"<=": "≤", ">=": "≥", "==": "=", "!=": "≠", "<": "<", ">": ">", "+": "+", "-": "−", "*": "×", "/": "÷"}


def pretty(op: str | None) -> str:
    """The printed form of a node's ``op`` (``"<="`` -> ``≤``, ``"-"`` -> ``−``); ``""`` when there is none."""
    return "" if op is None else PRETTY.get(str(op), str(op))


@dataclass(frozen=True)
class Shown:
    """What to print for a node: ``value`` in ``[lo, hi]``; for a comparison, also ``op`` and ``threshold``
    (read with the value on the left) and the ``margin`` (value − threshold, the evaluator's own estimate)."""

    value: Any
    lo: Any
    hi: Any
    quantity: str = "value"  # "value" | "left − right"
    op: str | None = None
    threshold: float | None = None
    margin: Any = None
    fair: str | None = None  # a Fair[...] term: its rates in words (``fairaudit.core.explain.fair_text``); value is None

    @property
    def threshold_text(self) -> str:
        """``≥ 0.8`` (empty for a node that is not a comparison)."""
        if self.op is None or self.threshold is None:
            return ""
        return f"{pretty(self.op)} {_format.num(self.threshold)}"


def const_value(node: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]] | None = None) -> float | None:
    """The number of a constant side given as a dict (from ``AuditResult.nodes``): a ``const`` node's ``value``,
    or a negated constant's (``-0.1``; given ``nodes``), or None (``fairaudit.core.explain.const_value``)."""
    from fairaudit.core.explain import const_value as value

    return value(node, nodes)


def op_of(node: Mapping[str, Any]) -> str | None:
    """A node's operator symbol (``AuditResult.nodes``' ``op``), or None."""
    return str(node["op"]) if node.get("op") else None


def children(node_id: str, nodes: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [n for n in nodes if n.get("parent") is not None and str(n["parent"]) == str(node_id)]


def comparison_parts(node_id: str, nodes: Sequence[Mapping[str, Any]]):
    """``(term node, op, threshold)`` of a comparison with a constant side, the op read with the term on the
    left (``0.8 <= x`` gives ``(x, ">=", 0.8)``); None for any other node (or one without ``op``):
    ``fairaudit.core.explain.comparison_parts``, the one reading of a comparison for the text and the charts."""
    from fairaudit.core.explain import comparison_parts as parts

    return parts(node_id, nodes)


def shown(node_id: str, nodes: Sequence[Mapping[str, Any]]) -> Shown:
    """The numbers to print for ``node_id`` (``nodes``: the audit result's node list with ``final`` values)."""
    node = next(n for n in nodes if str(n["id"]) == str(node_id))
    final = node.get("final") or {}
    parts = comparison_parts(node_id, nodes)
    if parts is not None:
        term, op, c = parts
        tf = term.get("final") or {}
        return Shown(None if _fair(term) else tf.get("estimate"), tf.get("lo"), tf.get("hi"), "value", op, c,
                     final.get("estimate"), fair=_fair(term))
    if node.get("kind") == "cmp":
        return Shown(final.get("estimate"), final.get("lo"), final.get("hi"), "left − right", op_of(node), 0.0,
                     final.get("estimate"))
    if _fair(node):
        return Shown(None, final.get("lo"), final.get("hi"), fair=_fair(node))
    return Shown(final.get("estimate"), final.get("lo"), final.get("hi"))


def _fair(node: Mapping[str, Any]) -> str | None:
    """A ``Fair[...]`` node's rates in words, or None for any other node: it has no value between its bounds."""
    if node.get("kind") != "fair":
        return None
    from fairaudit.core.explain import fair_text

    return fair_text(node.get("final") or {})


def _kind(guarantee: Any) -> str | None:
    if guarantee is None:
        return None
    if isinstance(guarantee, Mapping):
        return guarantee.get("kind")
    return getattr(guarantee, "kind", None)


def shows_delta(guarantee: Any, deltas: Iterable[Any] = ()) -> bool:
    """Whether a chart shows δ (the probability that a verdict is wrong): only under a probabilistic guarantee
    (``result.guarantee``, a ``Guarantee`` or its dict); without one, only when some δ is above 0."""
    kind = _kind(guarantee)
    if kind is not None:
        return kind == "probabilistic"
    for d in deltas:
        try:
            x = float(d)
        except (TypeError, ValueError):
            continue
        if math.isfinite(x) and x > 0:
            return True
    return False
