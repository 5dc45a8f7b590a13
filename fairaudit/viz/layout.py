"""Tidy top-down layout of the specification tree (pure Python, no drawing).

Leaves are spread evenly left to right in depth-first order; every parent sits centred over its first
and last child; depth is the row. Because a node's x lies within the x-range of its own leaves and the
leaf ranges of two nodes on the same row are disjoint, two nodes on one row are always at least one
unit apart.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping


@dataclass(frozen=True)
class Placed:
    id: str
    parent: str | None
    x: float  # in leaf units: 0 .. n_leaves-1
    depth: int


def _children(nodes: list[Mapping[str, Any]]) -> tuple[dict[str, list[str]], list[str]]:
    ids = [str(n["id"]) for n in nodes]
    if len(set(ids)) != len(ids):
        raise ValueError("node ids are not unique")
    known = set(ids)
    kids: dict[str, list[str]] = {i: [] for i in ids}
    roots: list[str] = []
    for n in nodes:  # list order = child order (the contract lists nodes in pre-order)
        parent = n.get("parent")
        if parent is None:
            roots.append(str(n["id"]))
        elif str(parent) not in known:
            raise ValueError(f"node {n['id']!r} has unknown parent {parent!r}")
        else:
            kids[str(parent)].append(str(n["id"]))
    if not roots:
        raise ValueError("the tree has no root (every node has a parent)")
    return kids, roots


def tree_layout(nodes: Iterable[Mapping[str, Any]]) -> list[Placed]:
    """Positions of every node; several roots (a forest) are laid out side by side."""
    nodes = list(nodes)
    if not nodes:
        return []
    kids, roots = _children(nodes)
    parent_of = {str(n["id"]): (None if n.get("parent") is None else str(n["parent"])) for n in nodes}
    x: dict[str, float] = {}
    depth: dict[str, int] = {}
    next_leaf = 0.0
    seen: set[str] = set()

    # iterative post-order so deep trees do not hit the recursion limit
    for root in roots:
        stack: list[tuple[str, int, bool]] = [(root, 0, False)]
        while stack:
            nid, d, expanded = stack.pop()
            if not expanded:
                if nid in seen:
                    raise ValueError(f"cycle at node {nid!r}")
                seen.add(nid)
                depth[nid] = d
                stack.append((nid, d, True))
                for child in reversed(kids[nid]):
                    stack.append((child, d + 1, False))
            else:
                if kids[nid]:
                    x[nid] = (x[kids[nid][0]] + x[kids[nid][-1]]) / 2.0
                else:
                    x[nid] = next_leaf
                    next_leaf += 1.0
    if len(seen) != len(nodes):
        raise ValueError("some nodes are not reachable from a root (cycle?)")
    return [Placed(str(n["id"]), parent_of[str(n["id"])], x[str(n["id"])], depth[str(n["id"])]) for n in nodes]
