"""Evaluating events (conditions on one row) over a whole DataFrame at once.

Shared by the monitor engine (which rows satisfy ``E[...]``'s event and condition) and by "decisions from
an expression" (``decile_score <= 4`` as the decision column). Vectorised with pandas/numpy; never ``eval``.

``pred`` and ``label`` are 0/1 arrays (1 = favourable) and ``score`` a float array, one entry per row.
A bare name as an event means "is 1 / true": allowed for ``pred``, ``label``, boolean columns and numeric
columns that hold only 0 and 1; ``score``, any other numeric column and a categorical column need a
comparison (``score > 0.5``, ``age >= 40``, ``sex == "Female"``): reading them as "!= 0" would be a
silent wrong answer.
"""
from __future__ import annotations

import operator

import numpy as np
import pandas as pd

from fairaudit.spec import ast
from fairaudit.spec.errors import SpecError
from fairaudit.spec.printer import event_text

_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
        "!=": operator.ne}


def event_columns(event: ast.Event, *, reserved: bool = False) -> list[str]:
    """The data columns an event reads, in order of first mention, without duplicates.

    With ``reserved=True`` the reserved names it uses (``pred``, ``label``, ``score``) are included too.
    """
    seen: dict[str, None] = {}
    for name in ast.event_names(event):
        if reserved or not name.reserved:
            seen.setdefault(name.name, None)
    return list(seen)


def spec_columns(spec_or_node, *, reserved: bool = False) -> list[str]:
    """The columns every ``E[...]`` and ``Fair[...]`` of a spec (or node) reads, in order, without duplicates."""
    root = spec_or_node.root if isinstance(spec_or_node, ast.Spec) else spec_or_node
    seen: dict[str, None] = {}
    for node in ast.walk(root):
        if isinstance(node, ast.Fair):
            seen.setdefault(node.column, None)
        elif isinstance(node, ast.Expect):
            for event in (node.event, node.given):
                if event is not None:
                    for name in event_columns(event, reserved=reserved):
                        seen.setdefault(name, None)
    return list(seen)


def literals(*nodes) -> set:
    """Every constant written in the given specs, nodes and events (the values conditions compare columns with)."""
    import dataclasses

    out, stack = set(), list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Value):
            out.add(node.value)
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            stack.extend(getattr(node, f.name) for f in dataclasses.fields(node))
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    return out


def _error(item, message: str) -> SpecError:
    span = getattr(item, "span", None)
    if span is None:
        return SpecError(None, None, message)
    return SpecError(span.line, span.column, message, length=span.end - span.start)


class _Row:
    """The arrays an event is evaluated against."""

    def __init__(self, frame: pd.DataFrame, pred, label, score):
        self.frame = frame
        self.n = len(frame)
        self.reserved = {"pred": self._array(pred, "pred"), "label": self._array(label, "label"),
                         "score": self._array(score, "score")}

    def _array(self, values, what: str) -> np.ndarray | None:
        if values is None:
            return None
        array = np.asarray(values)
        if array.ndim != 1 or len(array) != self.n:
            raise SpecError(None, None, f"'{what}' has {array.size} values but the data has {self.n} rows")
        return array

    def values(self, name: ast.Name) -> np.ndarray:
        if name.reserved:
            array = self.reserved[name.name]
            if array is None:
                what = {"pred": "no decisions (pred) were given", "label": "no labels were given",
                        "score": "no scores were given"}[name.name]
                raise _error(name, f"'{name.name}' cannot be evaluated here: {what}")
            return array
        if name.name not in self.frame.columns:
            raise _error(name, f"unknown column '{name.name}'")
        return self.frame[name.name].to_numpy()

    def is_categorical(self, name: ast.Name) -> bool:
        if name.reserved:
            return False
        series = self.frame[name.name]
        return not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series))


def _truthy(values: np.ndarray) -> np.ndarray:
    if values.dtype == bool:
        return values
    numeric = values.astype(float)
    return np.nan_to_num(numeric, nan=0.0) != 0


def _operand(row: _Row, operand: ast.Operand):
    if isinstance(operand, ast.Name):
        return row.values(operand)
    return operand.value


def _compare(row: _Row, event: ast.Compare) -> np.ndarray:
    """Element-wise comparison; a missing value satisfies only ``!=``."""
    left, right = _operand(row, event.left), _operand(row, event.right)
    if event.op == "!=":
        return ~_compare(row, ast.Compare("==", event.left, event.right, span=event.span))
    if np.ndim(left) == 0 and np.ndim(right) == 0:
        try:
            return np.full(row.n, bool(_OPS[event.op](left, right)))
        except TypeError:
            return np.zeros(row.n, dtype=bool)
    try:
        result = _OPS[event.op](pd.Series(left) if np.ndim(left) else left,
                                pd.Series(right) if np.ndim(right) else right)
    except TypeError:
        raise _error(event, f"cannot compare in '{event_text(event)}': "
                            "'<', '<=', '>' and '>=' need numbers on both sides") from None
    return pd.Series(result).to_numpy(dtype=bool, na_value=False)


def _evaluate(row: _Row, event: ast.Event) -> np.ndarray:
    if isinstance(event, ast.Name):
        if row.is_categorical(event):
            raise _error(event, f"'{event.name}' is categorical: write a condition such as {event.name} == \"...\"")
        if event.reserved and event.name == "score":
            raise _error(event, "'score' is a probability, not a condition: write one such as score > 0.5")
        values = row.values(event)
        if not event.reserved and values.dtype != bool:
            from fairaudit.spec.validate import non_binary_message

            message = non_binary_message(event.name, values)
            if message:
                raise _error(event, message)
        return _truthy(values)
    if isinstance(event, ast.Compare):
        return _compare(row, event)
    if isinstance(event, ast.In):
        values = row.values(event.operand)
        mask = pd.Series(values).isin([v.value for v in event.values]).to_numpy(dtype=bool)
        return ~mask if event.negated else mask
    if isinstance(event, ast.EvAnd):
        return _evaluate(row, event.left) & _evaluate(row, event.right)
    if isinstance(event, ast.EvOr):
        return _evaluate(row, event.left) | _evaluate(row, event.right)
    if isinstance(event, ast.EvNot):
        return ~_evaluate(row, event.operand)
    raise TypeError(f"not an event: {event!r}")


def evaluate_event(event: ast.Event, frame: pd.DataFrame, *, pred=None, label=None, score=None) -> np.ndarray:
    """A boolean array: which rows of ``frame`` satisfy ``event``.

    Raises ``SpecError`` for an unknown column, for ``pred``/``label``/``score`` when not supplied, for a
    bare categorical column, and for order comparisons between strings and numbers.
    """
    row = _Row(frame, pred, label, score)
    return np.asarray(_evaluate(row, event), dtype=bool)
