"""Build ``Spec`` objects by hand (independent of the parser), for the monitor tests."""
from __future__ import annotations

from fairaudit.spec import ast as A

_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "add": 5, "sub": 5, "mul": 6, "div": 6, "neg": 7}
_SYM = {"add": "+", "sub": "-", "mul": "*", "div": "/"}


def X(name: str, given: str | None = None) -> A.Expect:
    """``E[name]`` or ``E[name | given]`` with bare-name events."""
    return A.Expect(A.Name(name), None if given is None else A.Name(given))


def C(v: float) -> A.Const:
    return A.Const(float(v))


def _text(node) -> str:
    k = node.kind
    if k == "expect":
        t = node.event.name
        return f"E[{t}]" if node.given is None else f"E[{t} | {node.given.name}]"
    if k == "fair":
        return f"Fair[{node.column}]"
    if k == "const":
        return f"{node.value:g}"
    if k == "neg":
        return f"-{_wrap(node.operand, 7)}"
    if k == "not":
        return f"not {_wrap(node.operand, 3)}"
    if k == "cmp":
        return f"{_wrap(node.left, 5)} {node.op} {_wrap(node.right, 5)}"
    if k in ("and", "or"):
        p = _PREC[k]
        return f"{_wrap(node.left, p)} {k} {_wrap(node.right, p + 1)}"
    p = _PREC[k]
    return f"{_wrap(node.left, p)} {_SYM[k]} {_wrap(node.right, p + 1)}"


def _wrap(node, prec):
    t = _text(node)
    return f"({t})" if _PREC.get(node.kind, 99) < prec else t


def make_spec(root) -> A.Spec:
    nodes = []
    counter = [0]

    def visit(node, parent, depth):
        nid = f"n{counter[0]}"
        counter[0] += 1
        index = len(nodes)
        nodes.append(None)
        kids = [visit(c, nid, depth + 1) for c in A.children(node)]
        nodes[index] = A.TreeNode(nid, parent, node.kind, _text(node), node, tuple(kids), depth)
        return nid

    visit(root, None, 0)
    return A.Spec(root, tuple(nodes), _text(root))
