"""The comparison that matters: one rule, for the headline (``fairaudit.core.claim``), the CLI's ``worst:`` line
(``AuditResult.worst_node``), the tree's default selection (``fairaudit.ui.selection``), the PDF and the JSON
(``Claim.focus``).

**The rule.** Among the comparisons whose verdict is the specification's — the ones that decide it; all of them,
violated first, then undecided, then certified, when none has it (under a ``not``) — the one with the smallest
``margin``. So a violated specification names a violated comparison (the most violated when there are several), an
undecided one the undecided comparison closest to failing, a certified one the comparison closest to failing.

**The measure.** ``margin`` is how far the compared term's interval lies on its allowed side of the threshold, read
at the interval's end nearest to failing: ``c − hi`` for ``term ≤ c`` (or ``<``), ``lo − c`` for ``term ≥ c`` (or
``>``); for ``== c`` minus the interval's largest distance from ``c``, for ``!= c`` the distance from ``c`` to the
interval (negative when it contains ``c``). It is negative when that end lies beyond the threshold. A ratio (a
``/`` term) is measured relative to its threshold, ``(lo − c) / c``, so that a ratio's margin reads on the scale of
a difference of rates; a term over averages of amounts is measured in units of the widest declared range below it
(its leaves' ``range``), so that dollars and rates compare. A comparison of two terms (no constant side) is measured
on its own interval of ``left − right`` against 0. A comparison that has no interval yet comes last; ties go to the first in id order.

Everything here reads the nodes of the audit-result contract (``AuditResult.nodes``: ``id``, ``parent``, ``kind``,
``op``, ``value``, ``final``), so a result read back from JSON chooses as the run did.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from fairaudit.core.explain import comparison_parts, finite

#: the rule that chose the comparison, as a sentence names it
RULE_WORDS = {"violated": "the violated comparison", "most violated": "the most violated comparison",
              "closest to failing": "the comparison closest to failing"}
_RANK = {"false": 0, "unknown": 1, None: 1, "true": 2}

Node = Mapping[str, Any]


@dataclass(frozen=True)
class Focus:
    """The comparison that matters (module doc): its node ``id``, the ``rule`` that chose it (a key of
    ``RULE_WORDS``), its ``margin``, how many comparisons the specification has (``among``) and its own
    ``verdict`` as the headline reads it (under a ``not`` it is not the specification's)."""

    id: str
    rule: str
    margin: float
    among: int
    verdict: str | None = None

    @property
    def words(self) -> str:
        """"the comparison closest to failing", "the most violated comparison", …"""
        return RULE_WORDS[self.rule]

    def to_dict(self) -> dict:
        return {"id": self.id, "rule": self.words, "margin": self.margin if math.isfinite(self.margin) else None,
                "among": self.among, "verdict": self.verdict}


def margin(node_id: str, nodes: Sequence[Node], intervals: Mapping[str, Mapping] | None = None) -> float:
    """How far comparison ``node_id``'s interval lies on its allowed side of its threshold (module doc); NaN when it
    has no interval yet. ``intervals``: node id → ``{lo, hi}`` to read instead of the nodes' ``final``."""
    by_id = {str(n["id"]): n for n in nodes}

    def span(nid: str) -> tuple[float, float]:
        got = (intervals or {}).get(str(nid))
        f = got if got is not None else (by_id[str(nid)].get("final") or {})
        lo, hi = f.get("lo"), f.get("hi")
        if not finite(lo, hi):  # a hand-made node with an estimate only
            lo = hi = f.get("estimate")
        return (float(lo), float(hi)) if finite(lo, hi) else (math.nan, math.nan)

    parts = comparison_parts(node_id, nodes)
    if parts is not None:
        term, op, c = parts
        lo, hi = span(term["id"])
        scale = abs(c) if term.get("kind") == "div" and c != 0 else _unit_of(term["id"], nodes)
    else:  # two terms compared: the comparison's own interval of left − right, against 0
        op, c, scale = str(by_id[str(node_id)].get("op") or "!="), 0.0, 1.0
        lo, hi = span(node_id)
    if math.isnan(lo) or math.isnan(hi):
        return math.nan
    if op in ("<", "<="):
        m = c - hi
    elif op in (">", ">="):
        m = lo - c
    elif op == "==":
        m = -max(abs(lo - c), abs(hi - c))
    else:  # "!=" (or an operator not known)
        m = max(lo - c, c - hi)
    return m / scale


def _unit_of(node_id: str, nodes: Sequence[Node]) -> float:
    """What one unit of a term is, so that margins in dollars and in rates compare: the widest range of the amounts
    it averages (``range`` of its ``E[...]`` leaves), 1 for rates."""
    kids: dict[str, list[str]] = {}
    for n in nodes:
        kids.setdefault(str(n.get("parent")), []).append(str(n["id"]))
    by_id = {str(n["id"]): n for n in nodes}
    widths, stack = [], [str(node_id)]
    while stack:
        nid = stack.pop()
        rng = by_id[nid].get("range") if nid in by_id else None
        if rng:
            widths.append(float(rng[1]) - float(rng[0]))
        stack.extend(kids.get(nid, []))
    return max(widths) if widths else 1.0


def choose(nodes: Sequence[Node], verdict: str | None = None,
           intervals: Mapping[str, Mapping] | None = None) -> Focus | None:
    """The comparison that matters among ``nodes`` (module doc); None when there is no comparison. ``verdict``: the
    specification's verdict as the headline states it (default: the root's); ``intervals``: node id → ``{lo, hi,
    verdict}`` to read instead of the nodes' ``final`` (a modelled distribution's population check)."""
    cmps = [n for n in nodes if n.get("kind") == "cmp"]
    if not cmps:
        return None

    def verdict_of(node: Node) -> str | None:
        got = (intervals or {}).get(str(node["id"])) if intervals is not None else None
        return (got if got is not None else (node.get("final") or {})).get("verdict")

    if verdict is None and nodes:
        verdict = verdict_of(nodes[0])
    deciding = [n for n in cmps if verdict_of(n) == verdict] or cmps
    ranked = []
    for index, node in enumerate(deciding):
        m = margin(str(node["id"]), nodes, intervals)
        ranked.append(((_RANK.get(verdict_of(node), 1), math.inf if math.isnan(m) else m, index), node, m))
    _, node, m = min(ranked, key=lambda r: r[0])
    if verdict_of(node) == "false":
        violated = sum(1 for n in cmps if verdict_of(n) == "false")
        rule = "violated" if violated == 1 else "most violated"
    else:
        rule = "closest to failing"
    return Focus(str(node["id"]), rule, m, len(cmps), verdict_of(node))


def headline_view(result) -> tuple[str, Mapping[str, Mapping] | None]:
    """``(verdict, intervals)`` the headline of ``result`` reads (``fairaudit.core.claim``): for a modelled
    distribution, its population check (its verdict and its nodes' intervals; with no rows to check against, every
    claim undecided for the population, on the engine's intervals); otherwise the engine's verdict and the nodes'
    own intervals (None)."""
    if getattr(result, "scope", None) == "modelled":
        check = getattr(result, "population", None)
        if check:
            return check.get("verdict", "unknown"), check.get("nodes") or {}
        return "unknown", {str(n["id"]): {**(n.get("final") or {}), "verdict": "unknown"} for n in result.nodes
                           if n.get("kind") in ("cmp", "and", "or", "not")}
    return result.verdict, None


def focus(result) -> Focus | None:
    """The comparison that matters for ``result``'s headline (``choose`` on ``headline_view``)."""
    verdict, intervals = headline_view(result)
    return choose(result.nodes, verdict, intervals)
