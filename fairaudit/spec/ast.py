"""Syntax tree of the specification language (the contract every engine, the evaluator and the UI read).

Two layers:

* **Events** (the inside of ``E[...]``): boolean conditions over one row — ``pred``, ``sex == "Female"``,
  ``age >= 30 and race in {"Black", "White"}``. They are *not* nodes of the displayed tree; an ``E[...]``
  leaf shows its whole event as text.
* **Spec nodes**: the tree the analyst sees — ``and or not cmp add sub mul div neg const expect fair``.

Nodes are frozen dataclasses compared structurally; source positions are kept in ``span`` but do
not take part in equality, so ``parse(print(t)) == t``.

``Spec`` flattens the tree into ``TreeNode`` records with stable ids: ``n0`` is the root, then ids
are given in depth-first pre-order (left child before right child); ``fairaudit.spec.build_spec(root)`` (``tree``)
builds it for a tree made in code.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Union

RESERVED = ("pred", "label", "score")
CMP_OPS = ("<", "<=", ">", ">=", "==", "!=")


@dataclass(frozen=True)
class Span:
    """Source position: 1-based line and column of the first character, and character offsets."""

    line: int
    column: int
    start: int
    end: int


# --------------------------------------------------------------------------------------------
# Events (conditions over one row)


@dataclass(frozen=True)
class Name:
    """A column name, or one of the reserved names ``pred`` (decision), ``label`` (true outcome),
    ``score`` (probability of the favourable decision). As an event on its own it means "is 1 / true".

    ``column`` is True for a reserved word written back-quoted (`` `pred` ``): then it names the data
    column called ``pred``, not the decision."""

    name: str
    span: Span | None = field(default=None, compare=False, repr=False)
    column: bool = False

    @property
    def reserved(self) -> bool:
        return self.name in RESERVED and not self.column


@dataclass(frozen=True)
class Value:
    """A literal inside an event: a number or a string. An integer literal (``42``, no '.' and no exponent) is an
    exact ``int``, any other number a ``float`` (``Value(3) == Value(3.0)``: both print as ``3``)."""

    value: int | float | str
    span: Span | None = field(default=None, compare=False, repr=False)


Operand = Union[Name, Value]


@dataclass(frozen=True)
class Compare:
    op: str  # one of CMP_OPS
    left: Operand
    right: Operand
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class In:
    operand: Name
    values: tuple[Value, ...]
    negated: bool = False  # ``not in``
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class EvAnd:
    left: "Event"
    right: "Event"
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class EvOr:
    left: "Event"
    right: "Event"
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class EvNot:
    operand: "Event"
    span: Span | None = field(default=None, compare=False, repr=False)


Event = Union[Name, Compare, In, EvAnd, EvOr, EvNot]


# --------------------------------------------------------------------------------------------
# Quantities (what ``E[...]`` averages besides an event: an amount, a score, an error)


QUANTITY_FUNCTIONS = ("abs", "clip")


@dataclass(frozen=True)
class Arith:
    """``left - right`` or ``left + right`` between two quantities (``right`` may be a number: ``amount - 1000``)."""

    op: str  # "+" or "-"
    left: "Quantity"
    right: "Quantity | Value"
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Call:
    """``abs(q)`` or ``clip(q, lo, hi)``: a function of one quantity (``bounds``: clip's two numbers)."""

    function: str  # one of QUANTITY_FUNCTIONS
    argument: "Quantity"
    bounds: tuple[Value, ...] = ()
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Power:
    """``(q)^2``: the square of a quantity (the only power the language has)."""

    base: "Quantity"
    exponent: int = 2
    span: Span | None = field(default=None, compare=False, repr=False)


Quantity = Union[Name, Arith, Call, Power]
COMPOUND_QUANTITIES = (Arith, Call, Power)


def event_names(event: Event) -> Iterator[Name]:
    """Every ``Name`` mentioned in an event or a quantity (columns and reserved names), left to right."""
    if isinstance(event, Name):
        yield event
    elif isinstance(event, Arith):
        yield from event_names(event.left)
        if not isinstance(event.right, Value):
            yield from event_names(event.right)
    elif isinstance(event, Call):
        yield from event_names(event.argument)
    elif isinstance(event, Power):
        yield from event_names(event.base)
    elif isinstance(event, Compare):
        for side in (event.left, event.right):
            if isinstance(side, Name):
                yield side
    elif isinstance(event, In):
        yield event.operand
    elif isinstance(event, (EvAnd, EvOr)):
        yield from event_names(event.left)
        yield from event_names(event.right)
    elif isinstance(event, EvNot):
        yield from event_names(event.operand)


# --------------------------------------------------------------------------------------------
# Spec nodes (the displayed tree)


@dataclass(frozen=True)
class And:
    left: "Node"
    right: "Node"
    span: Span | None = field(default=None, compare=False, repr=False)
    kind = "and"


@dataclass(frozen=True)
class Or:
    left: "Node"
    right: "Node"
    span: Span | None = field(default=None, compare=False, repr=False)
    kind = "or"


@dataclass(frozen=True)
class Not:
    operand: "Node"
    span: Span | None = field(default=None, compare=False, repr=False)
    kind = "not"


@dataclass(frozen=True)
class Cmp:
    """``left op right`` between two terms; the verdict of the comparison is three-valued."""

    op: str
    left: "Node"
    right: "Node"
    span: Span | None = field(default=None, compare=False, repr=False)
    kind = "cmp"


@dataclass(frozen=True)
class Add:
    left: "Node"
    right: "Node"
    span: Span | None = field(default=None, compare=False, repr=False)
    kind = "add"


@dataclass(frozen=True)
class Sub:
    left: "Node"
    right: "Node"
    span: Span | None = field(default=None, compare=False, repr=False)
    kind = "sub"


@dataclass(frozen=True)
class Mul:
    left: "Node"
    right: "Node"
    span: Span | None = field(default=None, compare=False, repr=False)
    kind = "mul"


@dataclass(frozen=True)
class Div:
    left: "Node"
    right: "Node"
    span: Span | None = field(default=None, compare=False, repr=False)
    kind = "div"


@dataclass(frozen=True)
class Neg:
    operand: "Node"
    span: Span | None = field(default=None, compare=False, repr=False)
    kind = "neg"


@dataclass(frozen=True)
class Const:
    value: float
    span: Span | None = field(default=None, compare=False, repr=False)
    kind = "const"


@dataclass(frozen=True)
class Expect:
    """``E[event]`` or ``E[event | given]``: the (conditional) probability of an event, or the (conditional) mean
    of a quantity (``E[amount | sex == "F"]``: ``event`` is then a ``Quantity``; a bare name is a quantity when the
    audit declares its range, ``fairaudit.spec.quantities``); a leaf."""

    event: Event | Quantity
    given: Event | None = None
    span: Span | None = field(default=None, compare=False, repr=False)
    kind = "expect"


@dataclass(frozen=True)
class Fair:
    """``Fair[column]``: fraction of individuals whose decision does not change when only ``column`` changes; a leaf."""

    column: str
    span: Span | None = field(default=None, compare=False, repr=False)
    kind = "fair"


Node = Union[And, Or, Not, Cmp, Add, Sub, Mul, Div, Neg, Const, Expect, Fair]
BOOLEAN_KINDS = ("and", "or", "not", "cmp")
LEAF_KINDS = ("expect", "fair")


def children(node: Node) -> tuple[Node, ...]:
    """The sub-nodes of a spec node in source order (events are not sub-nodes)."""
    if isinstance(node, (Not, Neg)):
        return (node.operand,)
    if isinstance(node, (And, Or, Cmp, Add, Sub, Mul, Div)):
        return (node.left, node.right)
    return ()


def walk(node: Node) -> Iterator[Node]:
    """``node`` and every node below it, depth-first in source order (the order of node ids)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


# --------------------------------------------------------------------------------------------
# The flattened tree


@dataclass(frozen=True)
class TreeNode:
    """One node of a parsed spec with its stable id, as the evaluator, the trace and the UI see it."""

    id: str
    parent: str | None
    kind: str
    text: str  # canonical text of this sub-expression
    node: Node
    children: tuple[str, ...]
    depth: int
    name: str | None = None  # the name of a named top-level spec (``sex_parity: ...``), else None


@dataclass(frozen=True)
class Spec:
    """A parsed specification: the root node and its flattened tree.

    When the source holds several named specs, ``root`` is their conjunction (left-nested ``and``)
    and each named part's ``TreeNode.name`` is set.
    """

    root: Node
    nodes: tuple[TreeNode, ...]
    source: str = field(default="", compare=False)
    # the declared range of each numeric column the spec averages: ((name, lo, hi), ...) sorted by name
    # (``fairaudit.spec.quantities.with_ranges``); () when it averages none
    ranges: tuple[tuple[str, float, float], ...] = ()

    def node(self, node_id: str) -> TreeNode:
        for tn in self.nodes:
            if tn.id == node_id:
                return tn
        raise KeyError(node_id)

    @property
    def leaves(self) -> list[TreeNode]:
        """``E[...]`` and ``Fair[...]`` nodes, in id order (identical texts may repeat)."""
        return [tn for tn in self.nodes if tn.kind in LEAF_KINDS]

    @property
    def text(self) -> str:
        return self.nodes[0].text

    def __iter__(self) -> Iterator[TreeNode]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)
