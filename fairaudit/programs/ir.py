"""The typed IR of a ``.fr`` program: expressions, distributions, statements and the property's events.

All variables are real-valued. Arithmetic expressions (``Num``, ``Var``, ``Neg``, ``BinOp``) and conditions
(``Compare``, ``BoolOp``, ``Not``) are distinct types; the parser never mixes them. Every node carries its
1-based ``line``/``column`` in the source so later stages can report positioned errors; positions take no part
in ``==`` (two nodes are equal when they mean the same thing, wherever they were written).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Num:
    value: float
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Var:
    name: str
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Neg:
    operand: "Arith"
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class BinOp:
    op: str  # one of + - * /
    left: "Arith"
    right: "Arith"
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


Arith = Union[Num, Var, Neg, BinOp]


@dataclass(frozen=True)
class Compare:
    op: str  # one of < <= > >= == !=
    left: Arith
    right: Arith
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class BoolOp:
    op: str  # "and" | "or"
    values: tuple["Cond", ...]
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Not:
    operand: "Cond"
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


Cond = Union[Compare, BoolOp, Not]


@dataclass(frozen=True)
class Gaussian:
    """Normal distribution; ``variance`` is the second argument of ``gaussian(mean, variance)`` (not the sd)."""
    mean: float
    variance: float


@dataclass(frozen=True)
class Step:
    """Piecewise uniform: with probability ``p`` uniform on ``[lo, hi)``; pieces sorted and disjoint, Σp = 1."""
    pieces: tuple[tuple[float, float, float], ...]


Dist = Union[Gaussian, Step]


@dataclass(frozen=True)
class Assign:
    name: str
    value: Arith
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Draw:
    """``name ~ dist``: an independent draw (a fresh probabilistic dimension every time it runs)."""
    name: str
    dist: Dist
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class If:
    """``if``/``elif``/``else``: ``elif`` chains are nested ``If`` nodes in ``orelse``."""
    cond: Cond
    body: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...] = ()
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Event:
    """An annotation (``sensitiveAttribute``, ``qualified``, ``fairnessTarget``): ``cond`` is evaluated at the
    annotation's place in the program, on the values the variables have there."""
    kind: str  # "sensitive" | "qualified" | "target"
    cond: Cond
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


Stmt = Union[Assign, Draw, If, Event]


@dataclass(frozen=True)
class Program:
    """A population program (``popModel``) followed by a decision program (``F``), sharing one namespace.

    ``population`` and ``decision`` keep the annotations in place (as ``Event`` statements); ``sensitive``,
    ``qualified`` (``None`` when absent) and ``target`` are the same conditions for quick access.
    """
    population: tuple[Stmt, ...]
    decision: tuple[Stmt, ...]
    sensitive: Cond
    target: Cond
    qualified: Cond | None = None
    variables: tuple[str, ...] = field(default=())  # every assigned name, in order of first assignment
