"""Flattening a spec tree into ``TreeNode`` records with stable ids (``n0`` = root, depth-first pre-order)."""
from __future__ import annotations

from typing import Sequence

from fairaudit.spec import ast
from fairaudit.spec.printer import to_text


def conjunction(parts: Sequence[ast.Node]) -> ast.Node:
    """``a and b and c`` as the left-nested tree ``And(And(a, b), c)``."""
    if not parts:
        raise ValueError("a conjunction needs at least one part")
    root = parts[0]
    for part in parts[1:]:
        root = ast.And(root, part, span=_cover(root.span, part.span))
    return root


def _cover(first: ast.Span | None, last: ast.Span | None) -> ast.Span | None:
    if first is None or last is None:
        return first or last
    return ast.Span(first.line, first.column, first.start, last.end)


def build_spec(root: ast.Node, source: str = "", names: dict[int, str] | None = None) -> ast.Spec:
    """The ``Spec`` of a tree. ``names`` maps ``id(node)`` of named parts to their names."""
    names = names or {}
    records: list[ast.TreeNode] = []

    def visit(node: ast.Node, parent: str | None, depth: int) -> str:
        node_id = f"n{len(records)}"
        index = len(records)
        records.append(None)  # reserve the slot: pre-order ids
        child_ids = tuple(visit(child, node_id, depth + 1) for child in ast.children(node))
        records[index] = ast.TreeNode(id=node_id, parent=parent, kind=node.kind, text=to_text(node), node=node,
                                      children=child_ids, depth=depth, name=names.get(id(node)))
        return node_id

    visit(root, None, 0)
    return ast.Spec(root=root, nodes=tuple(records), source=source)


def named_spec(parts: Sequence[tuple[str, ast.Node]], source: str = "") -> ast.Spec:
    """A ``Spec`` of several named parts: the root is their left-nested conjunction."""
    root = conjunction([node for _, node in parts])
    return build_spec(root, source, {id(node): name for name, node in parts})
