"""A specification written over a dataset's columns, read over the population program generated from it.

``fairaudit.engines.fairsquare.generate.population_program`` draws every column the model reads (and the protected
attribute) as a real-valued variable. The analyst's spec is about the dataset (``E[pred | sex == "Female"]``,
``E[pred | age > 40]``); :func:`translate_spec` rewrites every event of every ``E[...]`` over the program's
variables, with the dataset's meaning:

* a **categorical** column is a code: category ``k`` of the column's value list (the order generate.py and
  the model's encoding use) is drawn as ``step`` over ``[k, k + 1)`` and snapped to ``k``, so
  ``col == "v"`` is ``k <= var < k + 1`` (true whether or not the snap is there); ``!=``, ``in {...}``,
  ``not in`` and order comparisons of numeric categories are unions of such ranges;
* an **integer** column drawn with one piece ``[v - 0.5, v + 0.5)`` per value (generate.py's histogram for
  integer columns with few values) is read the same way: the variable stands for the value ``v`` on that
  piece, so ``n == 2`` is ``1.5 <= n < 2.5`` and ``n > 2`` is ``n >= 2.5`` (a comparison on the raw variable
  would give ``n == 2`` probability 0 and put half of the piece of 2 into ``n > 2``);
* any other numeric column is compared as it is (the program says the value is continuous);
* ``pred`` stays ``pred`` (the program's ``fairnessTarget``).

Everything is checked before any work: ``label`` and ``score`` (no such thing in a program), a column the
program does not draw, two columns compared with each other when one is a code. The returned ``Spec`` keeps
the analyst's tree: its node ids and texts are the original's (the result shows the spec as written); only
the ``E[...]`` nodes' events are over the program's variables.

:func:`decode` is the way back: sampled variables as the dataset's column values (codes → categories,
integer pieces → their value), so that a spec can be evaluated on sampled individuals with the dataset's
own semantics (the cross-check of the tests).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairaudit.base.errors import FairauditError
from fairaudit.programs import ir
from fairaudit.spec import ast
from fairaudit.spec.validate import _same_value


@dataclass(frozen=True)
class Column:
    """How a dataset column is drawn by a generated program."""
    name: str          # the dataset column
    var: str           # the program's variable
    kind: str          # "codes" (categorical), "integers" (one piece per integer value) or "numeric"
    values: tuple = ()  # codes: the categories (position = code); integers: the values drawn


def _draws(stmts, var: str):
    for s in stmts:
        if isinstance(s, ir.Draw) and s.name == var:
            yield s.dist
        elif isinstance(s, ir.If):
            yield from _draws(s.body, var)
            yield from _draws(s.orelse, var)


def _integer_values(dists) -> tuple | None:
    """The integer values drawn when every draw is a step with pieces ``[v - 0.5, v + 0.5)``, else None."""
    values: set[float] = set()
    if not dists:
        return None
    for d in dists:
        if not isinstance(d, ir.Step):
            return None
        for lo, hi, _ in d.pieces:
            v = lo + 0.5
            if hi - lo != 1.0 or v != round(v):
                return None
            values.add(v)
    return tuple(sorted(values))


def columns(dataset, program: ir.Program, variables: dict[str, str]) -> dict[str, Column]:
    """``{column: Column}`` for the dataset columns the program draws (``variables``: column -> variable,
    ``fairaudit.engines.fairsquare.generate.population_variables``)."""
    out = {}
    for col, var in variables.items():
        spec = dataset.schema.column(col)
        if spec.kind == "categorical":
            out[col] = Column(col, var, "codes", tuple(spec.values))
            continue
        ints = _integer_values(list(_draws(program.population, var)))
        out[col] = Column(col, var, "integers", ints) if ints is not None else Column(col, var, "numeric")
    return out


# ------------------------------------------------------------------------------------------------ translation
def _num(x: float) -> ast.Value:
    return ast.Value(float(x))


def _false() -> ast.Event:
    return ast.Compare("!=", _num(0), _num(0))


def _or(events: list) -> ast.Event:
    if not events:
        return _false()
    out = events[0]
    for e in events[1:]:
        out = ast.EvOr(out, e)
    return out


def _ranges(var: str, points: list[float], half: float) -> ast.Event:
    """``var`` in the union of ``[p - half_lo, p + half_hi)`` over the (sorted) ``points``, contiguous runs
    merged. ``half``: 0 for codes (``[k, k + 1)``), 0.5 for integer values (``[v - 0.5, v + 0.5)``)."""
    name = ast.Name(var)
    runs: list[list[float]] = []
    for p in sorted(points):
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    parts = []
    for lo, hi in runs:
        parts.append(ast.EvAnd(ast.Compare(">=", name, _num(lo - half)),
                               ast.Compare("<", name, _num(hi + 1 - half))))
    return _or(parts)


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


class _Translator:
    def __init__(self, cols: dict[str, Column], dataset):
        self.cols, self.dataset = cols, dataset

    def column(self, name: ast.Name) -> Column:
        col = self.cols.get(name.name)
        if col is not None:
            return col
        if name.name in self.dataset.schema:
            drawn = ", ".join(self.cols)
            raise FairauditError(f"column '{name.name}' is not part of the generated population program (it "
                                 f"draws the model's inputs and the protected attribute: {drawn})")
        raise FairauditError(f"unknown column '{name.name}'")

    def reserved(self, name: ast.Name) -> None:
        if name.name != "pred":
            raise FairauditError(f"'{name.name}' has no meaning in a generated population program (it draws "
                                 "individuals and the model's decision, pred, not outcomes or scores)")

    def members(self, col: Column, op: str, value) -> list[float]:
        """The points (codes or integer values) whose value satisfies ``value_of_point op value``."""
        if col.kind == "codes":
            pairs = list(enumerate(col.values))
        else:
            pairs = [(v, v) for v in col.values]
        if op == "==":
            return [p for p, v in pairs if _same_value(v, value)]
        if isinstance(value, str) or any(isinstance(v, str) for _, v in pairs):
            raise FairauditError(f"'{col.name}' is categorical, so '{op}' has no meaning; use ==, != or in {{...}}")
        return [p for p, v in pairs if _OPS[op](float(v), float(value))]

    def compare_value(self, name: ast.Name, op: str, value: ast.Value) -> ast.Event:
        if name.reserved:
            self.reserved(name)
            return ast.Compare(op, ast.Name("pred"), value)
        col = self.column(name)
        if col.kind == "numeric":
            if isinstance(value.value, str):
                raise FairauditError(f"'{col.name}' is numeric; compare it with a number, not \"{value.value}\"")
            return ast.Compare(op, ast.Name(col.var), _num(value.value))
        if op == "!=":
            return ast.EvNot(self.compare_value(name, "==", value))
        if col.kind == "codes" and op == "==" and not any(_same_value(v, value.value) for v in col.values):
            shown = ", ".join(f'"{v}"' if isinstance(v, str) else f"{v}" for v in col.values)
            raise FairauditError(f"'{col.name}' never takes the value {value.value!r} (valid values: {shown})")
        return _ranges(col.var, self.members(col, op, value.value), 0.0 if col.kind == "codes" else 0.5)

    def event(self, event) -> ast.Event:
        if isinstance(event, ast.EvNot):
            return ast.EvNot(self.event(event.operand))
        if isinstance(event, ast.EvAnd):
            return ast.EvAnd(self.event(event.left), self.event(event.right))
        if isinstance(event, ast.EvOr):
            return ast.EvOr(self.event(event.left), self.event(event.right))
        if isinstance(event, ast.Name):
            if event.reserved:
                self.reserved(event)
                return ast.Name("pred")
            col = self.column(event)
            if col.kind == "numeric":
                return ast.Compare("!=", ast.Name(col.var), _num(0))
            return self.compare_value(event, "!=", ast.Value(0.0))  # a 0/1 column read as "is 1"
        if isinstance(event, ast.In):
            col = None if event.operand.reserved else self.column(event.operand)
            if col is not None and col.kind != "numeric":  # one union of ranges (contiguous codes merged)
                for v in event.values:
                    self.compare_value(event.operand, "==", v)  # an unknown category is refused
                points = sorted({p for v in event.values for p in self.members(col, "==", v.value)})
                hit = _ranges(col.var, points, 0.0 if col.kind == "codes" else 0.5)
            else:
                hit = _or([self.compare_value(event.operand, "==", v) for v in event.values])
            return ast.EvNot(hit) if event.negated else hit
        if isinstance(event, ast.Compare):
            left, right = event.left, event.right
            if isinstance(left, ast.Value) and isinstance(right, ast.Value):
                return ast.Compare(event.op, _num_or(left), _num_or(right))
            if isinstance(left, ast.Name) and isinstance(right, ast.Name):
                sides = []
                for n in (left, right):
                    if n.reserved:
                        self.reserved(n)
                        sides.append(ast.Name("pred"))
                        continue
                    col = self.column(n)
                    if col.kind != "numeric":
                        raise FairauditError(f"comparing '{left.name}' with '{right.name}' is not supported over a "
                                             f"generated population ('{n.name}' is drawn as codes): compare each "
                                             "with a value")
                    sides.append(ast.Name(col.var))
                return ast.Compare(event.op, sides[0], sides[1])
            if isinstance(left, ast.Value):
                return self.compare_value(right, _FLIP[event.op], left)
            return self.compare_value(left, event.op, right)
        raise TypeError(f"not an event: {event!r}")


def _num_or(v: ast.Value) -> ast.Value:
    return v if isinstance(v.value, str) else _num(v.value)


def _node(node, tr: _Translator):
    if isinstance(node, ast.Expect):
        return dataclasses.replace(node, event=tr.event(node.event),
                                   given=tr.event(node.given) if node.given is not None else None)
    if isinstance(node, ast.Fair):
        raise FairauditError("Fair[...] re-predicts dataset rows: it has no meaning over a generated population")
    changes = {}
    for f in ("left", "right", "operand"):
        child = getattr(node, f, None)
        if child is not None and not isinstance(child, (str, float, int)):
            changes[f] = _node(child, tr)
    return dataclasses.replace(node, **changes) if changes else node


def check_spec(spec: ast.Spec) -> None:
    """What can be refused before a model is trained: ``label``, ``score`` and ``Fair[...]``."""
    tr = _Translator({}, None)
    for node in ast.walk(spec.root):
        if isinstance(node, ast.Fair):
            _node(node, tr)
        if isinstance(node, ast.Expect):
            for event in (node.event, node.given):
                for name in ast.event_names(event) if event is not None else ():
                    if name.reserved:
                        tr.reserved(name)


def translate_spec(spec: ast.Spec, dataset, program: ir.Program, variables: dict[str, str]) -> ast.Spec:
    """``spec`` (over ``dataset``'s columns) with every ``E[...]`` event over ``program``'s variables; node ids
    and texts unchanged (see the module doc). ``FairauditError`` names the first column or value it cannot read."""
    tr = _Translator(columns(dataset, program, variables), dataset)
    root = _node(spec.root, tr)
    nodes = []
    for tn, new in zip(spec.nodes, ast.walk(root)):
        if tn.kind != new.kind:  # the pre-order of ids is ast.walk's: a mismatch is a bug, not a user error
            raise AssertionError(f"spec node {tn.id}: {tn.kind} != {new.kind}")
        nodes.append(dataclasses.replace(tn, node=new))
    return ast.Spec(root, tuple(nodes), spec.source)


# ------------------------------------------------------------------------------------------------ decoding
def decode(values: dict[str, np.ndarray], cols: dict[str, Column]) -> pd.DataFrame:
    """Sampled program variables as the dataset's column values (a frame with the dataset's column names)."""
    out = {}
    for name, col in cols.items():
        x = np.asarray(values[col.var], dtype=float)
        if col.kind == "codes":
            k = np.floor(x).astype(int)
            ok = (k >= 0) & (k < len(col.values))
            cats = np.array(list(col.values), dtype=object)
            out[name] = np.where(ok, cats[np.clip(k, 0, len(col.values) - 1)], None)
        elif col.kind == "integers":
            out[name] = np.floor(x + 0.5)
        else:
            out[name] = x
    return pd.DataFrame(out)


__all__ = ["Column", "columns", "check_spec", "translate_spec", "decode"]
