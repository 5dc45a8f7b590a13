"""The canonical printer: ``to_text(node_or_event)`` such that ``parse(to_text(t)) == t``.

Canonical form: words for the logic (``and``, ``or``, ``not``), one space around binary operators,
the fewest parentheses that keep the tree, numbers as the shortest round-trippable ``repr`` without a
trailing ``.0`` (``0.5``, ``3``, ``1e-06``; an integer as its exact digits), strings in double quotes with ``\\`` escapes, and names
bare when they are identifiers that are not keywords, else back-quoted.
"""
from __future__ import annotations

import math
import numbers
import re

from fairaudit.spec import ast

KEYWORDS = frozenset({"E", "Fair", "and", "or", "not", "in"})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}

# binding strength of each spec node kind (higher binds tighter)
_SPEC_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "add": 5, "sub": 5, "mul": 6, "div": 6, "neg": 7,
              "const": 8, "expect": 8, "fair": 8}
_SPEC_OP = {"or": "or", "and": "and", "add": "+", "sub": "-", "mul": "*", "div": "/"}
_ATOM = 8

# binding strength of each event class
_EV_OR, _EV_AND, _EV_NOT, _EV_ATOM = 1, 2, 3, 4


def format_number(value: float | int) -> str:
    """``0.5`` -> ``"0.5"``, ``3.0`` -> ``"3"``, ``1e-06`` -> ``"1e-06"`` (``repr`` minus a trailing ``.0``); an
    integer (an integer literal of an event is kept exact: ``fairaudit.spec.parser``) as its digits, ``2**60`` ->
    ``"1152921504606846976"``."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"a specification cannot hold the number {value!r}")
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def quote_string(value: str) -> str:
    """A string literal in double quotes: ``\\``, ``"``, newline, return and tab are escaped."""
    body = "".join(_ESCAPES.get(ch, ch) for ch in value).replace('"', '\\"')
    return f'"{body}"'


def quote_name(name: str, column: bool = False) -> str:
    """A name as written in a spec: bare when possible, else `back-quoted`. With ``column`` a reserved word
    (``pred``, ``label``, ``score``) is back-quoted too: it names the data column of that name."""
    if _IDENTIFIER.match(name) and name not in KEYWORDS and not (column and name in ast.RESERVED):
        return name
    if not name:
        raise ValueError("a name cannot be empty")
    body = "".join(_ESCAPES.get(ch, ch) for ch in name).replace("`", "\\`")
    return f"`{body}`"


# --------------------------------------------------------------------------------------------
# events


def _event_prec(event: ast.Event) -> int:
    if isinstance(event, ast.EvOr):
        return _EV_OR
    if isinstance(event, ast.EvAnd):
        return _EV_AND
    if isinstance(event, ast.EvNot):
        return _EV_NOT
    return _EV_ATOM


def _operand(op: ast.Operand) -> str:
    if isinstance(op, ast.Name):
        return quote_name(op.name, op.column)
    if isinstance(op.value, str):
        return quote_string(op.value)
    return format_number(op.value)


def _event(event: ast.Event, context: int) -> str:
    """``event`` printed inside a context of binding strength ``context`` (parenthesised if looser)."""
    prec = _event_prec(event)
    if isinstance(event, ast.Name):
        text = quote_name(event.name, event.column)
    elif isinstance(event, ast.Compare):
        text = f"{_operand(event.left)} {event.op} {_operand(event.right)}"
    elif isinstance(event, ast.In):
        values = ", ".join(_operand(v) for v in event.values)
        text = f"{quote_name(event.operand.name, event.operand.column)} {'not in' if event.negated else 'in'} {{{values}}}"
    elif isinstance(event, ast.EvOr):
        text = f"{_event(event.left, _EV_OR)} or {_event(event.right, _EV_OR + 1)}"
    elif isinstance(event, ast.EvAnd):
        text = f"{_event(event.left, _EV_AND)} and {_event(event.right, _EV_AND + 1)}"
    elif isinstance(event, ast.EvNot):
        text = f"not {_event(event.operand, _EV_NOT)}"
    elif isinstance(event, ast.COMPOUND_QUANTITIES):
        text = quantity_text(event)
    else:
        raise TypeError(f"not an event: {event!r}")
    return f"({text})" if prec < context else text


def quantity_text(q, right: bool = False) -> str:
    """Canonical text of a quantity (``a - b``, ``abs(a - b)``, ``clip(x, 0, 1)``, ``(a - b)^2``); ``right``: the
    right operand of ``+``/``-`` (the language has no plain brackets there, so such a sum is refused)."""
    if isinstance(q, ast.Name):
        return quote_name(q.name, q.column)
    if isinstance(q, ast.Value):
        return _operand(q)
    if isinstance(q, ast.Arith):
        if right:
            raise ValueError("a sum on the right of + or - cannot be written; reorder it (a - b - c)")
        return f"{quantity_text(q.left)} {q.op} {quantity_text(q.right, right=True)}"
    if isinstance(q, ast.Call):
        bounds = "".join(f", {_operand(b)}" for b in q.bounds)
        return f"{q.function}({quantity_text(q.argument)}{bounds})"
    if isinstance(q, ast.Power):
        return f"({quantity_text(q.base)})^{q.exponent}"
    raise TypeError(f"not a quantity: {q!r}")


def event_text(event: ast.Event) -> str:
    """Canonical text of an event (as inside ``E[...]``)."""
    return _event(event, 0)


# --------------------------------------------------------------------------------------------
# spec nodes


def _node(node: ast.Node, context: int) -> str:
    kind = node.kind
    prec = _SPEC_PREC[kind]
    if kind == "const":
        text = format_number(node.value)
        if node.value < 0 or (node.value == 0 and math.copysign(1, node.value) < 0):
            prec = _SPEC_PREC["neg"]  # printed with a leading minus: reads back as neg(const)
    elif kind == "expect":
        given = "" if node.given is None else f" | {event_text(node.given)}"
        text = f"E[{event_text(node.event)}{given}]"
    elif kind == "fair":
        text = f"Fair[{quote_name(node.column, column=True)}]"
    elif kind == "not":
        text = f"not {_node(node.operand, prec)}"
    elif kind == "neg":
        text = f"-{_node(node.operand, prec)}"
    elif kind == "cmp":
        # comparisons do not chain: both sides must bind tighter
        text = f"{_node(node.left, prec + 1)} {node.op} {_node(node.right, prec + 1)}"
    else:  # left-associative binary operators
        text = f"{_node(node.left, prec)} {_SPEC_OP[kind]} {_node(node.right, prec + 1)}"
    return f"({text})" if prec < context else text


def to_text(item) -> str:
    """Canonical text of a spec node, an event, or a whole ``Spec`` (named parts as ``name: spec`` lines)."""
    if isinstance(item, ast.Spec):
        named = [tn for tn in item.nodes if tn.name is not None]
        if not named:
            return _node(item.root, 0)
        return "\n".join(f"{quote_name(tn.name)}: {_node(tn.node, 0)}" for tn in named)
    if isinstance(item, (ast.Name, ast.Compare, ast.In, ast.EvAnd, ast.EvOr, ast.EvNot, *ast.COMPOUND_QUANTITIES)):
        return event_text(item)
    if isinstance(item, ast.Value):
        return _operand(item)
    return _node(item, 0)
