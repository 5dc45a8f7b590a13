"""A node's final numbers as a reader understands them (one place for tooltips, the node panel and the report).

The evaluator stores, on a comparison node, the interval of ``left − right`` (so ``ratio >= 0.8`` with a ratio
of 0.139 has "estimate" −0.661). Nobody reads that as the comparison's value: a comparison against a constant is
shown as its **compared term's** value and interval beside the threshold (``0.139`` vs ``≥ 0.8``); the
difference appears only labelled as the margin. A comparison of two terms (``A < B``) has no threshold of its
own, so its value is the difference, labelled ``left − right``, against 0.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from fairaudit.viz import _format

FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
PRETTY = {"<=": "≤", ">=": "≥", "==": "=", "!=": "≠", "<": "<", ">": ">"}


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

    @property
    def threshold_text(self) -> str:
        """``≥ 0.8`` (empty for a node that is not a comparison)."""
        if self.op is None or self.threshold is None:
            return ""
        return f"{PRETTY.get(self.op, self.op)} {_format.num(self.threshold, 3).rstrip('0').rstrip('.') or '0'}"


def const_value(node: Mapping[str, Any]) -> float | None:
    """The number of a ``const`` node given as a dict (from ``AuditResult.nodes``), or None."""
    if node.get("kind") != "const":
        return None
    for value in (node.get("value"), (node.get("final") or {}).get("estimate"), node.get("text")):
        try:
            return float(value)
        except (TypeError, ValueError):
            continue
    return None


def _op(node: Mapping[str, Any]) -> str | None:
    if node.get("op"):
        return str(node["op"])
    from fairaudit.viz.tree import comparison_operator

    return comparison_operator(str(node.get("text", "")))


def comparison_parts(node_id: str, nodes: Sequence[Mapping[str, Any]]):
    """``(term node, op, threshold)`` of a comparison with a constant side, the op read with the term on the
    left (``0.8 <= x`` gives ``(x, ">=", 0.8)``); None for any other node."""
    by_id = {str(n["id"]): n for n in nodes}
    node = by_id.get(str(node_id))
    if node is None or node.get("kind") != "cmp":
        return None
    kids = [n for n in nodes if str(n.get("parent")) == str(node_id)]
    if len(kids) != 2:
        return None
    op = _op(node) or "<"
    if const_value(kids[1]) is not None:
        return kids[0], op, const_value(kids[1])
    if const_value(kids[0]) is not None:
        return kids[1], FLIP.get(op, op), const_value(kids[0])
    return None


def shown(node_id: str, nodes: Sequence[Mapping[str, Any]]) -> Shown:
    """The numbers to print for ``node_id`` (``nodes``: the audit result's node list with ``final`` values)."""
    node = next(n for n in nodes if str(n["id"]) == str(node_id))
    final = node.get("final") or {}
    parts = comparison_parts(node_id, nodes)
    if parts is not None:
        term, op, c = parts
        tf = term.get("final") or {}
        return Shown(tf.get("estimate"), tf.get("lo"), tf.get("hi"), "value", op, c, final.get("estimate"))
    if node.get("kind") == "cmp":
        return Shown(final.get("estimate"), final.get("lo"), final.get("hi"), "left − right", _op(node) or "<", 0.0,
                     final.get("estimate"))
    return Shown(final.get("estimate"), final.get("lo"), final.get("hi"))
