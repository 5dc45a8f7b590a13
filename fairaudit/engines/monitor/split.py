"""How the verdict-directed rule (``fairaudit.engines.monitor.directed``) splits the budget Δ over a spec's tree:
which ``and``/``or`` nodes split it among their children, which pool their comparisons' leaves, and the level each
comparison gets for each verdict direction (``comparison_levels``, which the joint tests of
``fairaudit.engines.monitor.eprocess`` are run at). Below both, so that neither imports the other's caller.
"""
from __future__ import annotations

from fairaudit.core.evaluate import CompiledSpec, compile_spec
from fairaudit.spec.ast import Spec


def flat_children(cs: CompiledSpec, node_id: str) -> list[str]:
    """The children of an ``and``/``or`` node, with nested nodes of the same kind flattened."""
    tn = cs.nodes[node_id]
    out = []
    for c in tn.children:
        out += flat_children(cs, c) if cs.nodes[c].kind == tn.kind else [c]
    return out


def _pooled(cs: CompiledSpec, kids, joint=()) -> int:
    """Distinct leaves below ``kids`` when every one is a comparison decided by interval arithmetic (a pooled
    split), else 0. A comparison with a joint test (``joint``: its id) spends its level on that test, not on leaf
    intervals, so a node with one is split per child."""
    if not all(cs.nodes[c].kind == "cmp" and c not in joint for c in kids):
        return 0
    return max(1, len(frozenset().union(*(cs.leaves_below[c] for c in kids))))


def _splits(kind: str, want: bool) -> bool:
    """Does this boolean node split its budget among its children for a ``want`` certificate?"""
    return (kind == "and" and not want) or (kind == "or" and want)


def comparison_levels(spec: Spec, delta: float, joint=()) -> dict[tuple[str, bool], float]:
    """``{(comparison id, want): β}``: the level the root's two certificates at Δ give each comparison for the
    verdict ``want`` (a tree: one path per comparison, so one level per direction). Comparisons inside a pooled
    split (no comparison there is in ``joint``) share leaf levels instead and are not listed."""
    cs = compile_spec(spec)
    out: dict[tuple[str, bool], float] = {}

    def walk(node_id, want, budget):
        tn = cs.nodes[node_id]
        if tn.kind == "cmp":
            out[(node_id, want)] = budget
        elif tn.kind == "not":
            walk(tn.children[0], not want, budget)
        elif tn.kind in ("and", "or"):
            kids = flat_children(cs, node_id)
            if _splits(tn.kind, want) and _pooled(cs, kids, joint):
                return
            share = budget / len(kids) if _splits(tn.kind, want) else budget
            for c in kids:
                walk(c, want, share)

    for want in (True, False):
        walk(cs.root, want, delta)
    return out
