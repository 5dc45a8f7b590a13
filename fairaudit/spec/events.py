"""Evaluating events (conditions on one row) over a whole DataFrame at once.

Shared by every route that reads rows (in memory, out of core, a live log, Dask: which rows satisfy ``E[...]``'s
event and condition, the row filter ``where``) and by "decisions from an expression" (``decile_score <= 4`` as
the decision column). Vectorised with pandas/numpy; never ``eval``.

Exact values
    A number is compared exactly with a column, whatever their types: ``id == 1152921504606846977`` (an integer
    literal is an ``int``: ``fairaudit.spec.parser``) is not rounded to the float 2**60 for an int64 column, and a
    float column is compared with an integer that no float holds without rounding either (``_exact``: numpy where
    that is exact, Python's exact int/float comparison on the few rows where rounding could matter).

Missing values: three-valued (Kleene) logic
    A comparison, an ``in {...}`` or a bare name that reads a missing value (NaN, None or ``pd.NA`` in a numeric or
    boolean column, or in ``pred``/``label``/``score``) is **unknown** on that row — neither true nor false; ``not``
    keeps it unknown; ``and`` is false as soon as one side is false, ``or`` true as soon as one side is true, and
    unknown otherwise. (In a text column a missing value is the category ``"?"``: a value like any other, compared
    as one.) ``evaluate_event3`` gives both arrays (true, known); ``evaluate_event`` the rows where the event is
    known to be true. How the engines use it (one rule): a row whose event or condition is unknown is left out of
    that leaf (``fairaudit.core.observations.observe``), a row filter that is unknown on a row leaves the row
    out, and a decision expression that is unknown on some row is an error (``evaluate_decision``).

``pred`` and ``label`` are 0/1 arrays (1 = favourable) and ``score`` a float array, one entry per row; a decision
among several classes (``fairaudit.models.base.Model.decisions_for``) makes ``pred`` an object array of its classes,
compared like a text column (``pred == "approve"``, ``pred in {"approve", "refer"}``) and refused bare.
A bare name as an event means "is 1 / true": allowed for ``pred``, ``label``, boolean columns and numeric
columns that hold only 0 and 1; ``score``, any other numeric column and a categorical column need a
comparison (``score > 0.5``, ``age >= 40``, ``sex == "Female"``): reading them as "!= 0" would be a
silent wrong answer.
"""
from __future__ import annotations

import math
import operator

import numpy as np
import pandas as pd

from fairaudit.spec import ast
from fairaudit.spec.errors import SpecError
from fairaudit.spec.printer import event_text, format_number

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


_INT_KINDS = "iu"
_EXACT_FLOAT = 2 ** 53  # every integer up to this magnitude is a float64 exactly


class _Operand:
    """One side of a comparison: ``values`` (a numpy array, or a Python scalar for a literal), ``known`` (bool
    array, or None when every value is known) and ``numeric`` (numbers, compared by ``_exact``; bools as 0/1)."""

    __slots__ = ("values", "known", "numeric")

    def __init__(self, values, known: np.ndarray | None, numeric: bool):
        self.values, self.known, self.numeric = values, known, numeric


def _column_operand(data) -> _Operand:
    """A column (a Series, or an array of ``pred``/``label``/``score``) as an ``_Operand``: numeric and boolean
    columns, nullable ones (``Int64``, ``Float64``, ``boolean``) included, as plain numpy arrays with their missing
    values marked unknown; any other column (text) as its values, all known."""
    series = data if isinstance(data, pd.Series) else pd.Series(np.asarray(data))
    dtype = series.dtype
    if not (pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype)) \
            or pd.api.types.is_complex_dtype(dtype):
        return _TextOperand(series)
    if isinstance(dtype, np.dtype):  # numpy's own: only a float can be missing (NaN)
        values = series.to_numpy()
        if dtype.kind == "b":
            return _Operand(values.astype(np.int8), None, True)
        if dtype.kind in _INT_KINDS:
            return _Operand(values, None, True)
        values = values.astype(np.float64, copy=False)
        missing = np.isnan(values)
    else:  # a pandas extension type (Int64, Float64, boolean, ...): missing where it holds NA
        missing = series.isna().to_numpy(dtype=bool)
        numpy_dtype = getattr(dtype, "numpy_dtype", np.dtype(np.float64))
        if pd.api.types.is_bool_dtype(dtype):
            values = series.to_numpy(dtype=bool, na_value=False).astype(np.int8)
        elif numpy_dtype.kind in _INT_KINDS:  # exactly: to_numpy() alone would give floats
            values = series.to_numpy(dtype=numpy_dtype, na_value=0)
        else:
            values = series.to_numpy(dtype=np.float64, na_value=np.nan)
            missing = missing | np.isnan(values)
    return _Operand(values, ~missing if missing.any() else None, True)


class _TextOperand:
    """A column of text (any column that is neither numbers nor booleans) as an operand, all known: its values (a
    numpy array of Python objects) are read only when a comparison needs them row by row; ``==`` with a text is
    decided from the column's distinct values, each compared once (``equal``)."""

    __slots__ = ("_series", "_values", "_codes", "_uniques")
    known = None
    numeric = False

    def __init__(self, series: pd.Series):
        self._series, self._values, self._codes, self._uniques = series, None, None, None

    @property
    def values(self) -> np.ndarray:
        if self._values is None:
            self._values = self._series.to_numpy()
        return self._values

    def equal(self, text: str) -> np.ndarray | None:
        """``column == text`` on every row (a missing value never equals a text), or None when a distinct value of
        the column is not a ``str`` (the caller then compares row by row)."""
        if self._codes is None:
            self._codes, uniques = pd.factorize(self._series)  # a missing value: code -1
            self._uniques = list(uniques)
        if not all(type(u) is str for u in self._uniques):
            return None
        hits = [code for code, u in enumerate(self._uniques) if u == text]
        if len(hits) == 1:  # distinct texts: at most one equals ``text``
            return self._codes == hits[0]
        return np.isin(self._codes, hits) if hits else np.zeros(len(self._codes), dtype=bool)


def _literal_operand(value) -> _Operand:
    return _Operand(value, None, not isinstance(value, str))


class _Row:
    """The arrays an event is evaluated against."""

    def __init__(self, frame: pd.DataFrame, pred, label, score):
        self.frame = frame
        self.n = len(frame)
        self.reserved = {"pred": self._array(pred, "pred"), "label": self._array(label, "label"),
                         "score": self._array(score, "score")}
        self._operands: dict = {}

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
        return self.frame[name.name]

    def operand(self, operand: ast.Operand) -> _Operand:
        if not isinstance(operand, ast.Name):
            return _literal_operand(operand.value)
        key = (operand.name, operand.reserved)
        if key not in self._operands:
            self._operands[key] = _column_operand(self.values(operand))
        return self._operands[key]

    def is_categorical(self, name: ast.Name) -> bool:
        if name.reserved:
            return False
        series = self.frame[name.name]
        return not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series))


# --------------------------------------------------------------------------------------------
# exact comparisons of numbers


def _python(x):
    """A numpy scalar as the Python number it holds (exactly)."""
    return x.item() if isinstance(x, np.generic) else x


def _is_int(x) -> bool:
    if isinstance(x, np.ndarray):
        return x.dtype.kind in _INT_KINDS
    return isinstance(x, int) and not isinstance(x, bool)


def _numpy_is_exact(a, b) -> bool:
    """Whether numpy compares ``a`` with ``b`` exactly: floats with floats, and integers with integers of a type
    that holds both (an int64 array with a Python int that fits int64; not int64 with uint64, which numpy compares
    as floats)."""
    if not _is_int(a) and not _is_int(b):
        return True
    if not (_is_int(a) and _is_int(b)):
        return False
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.result_type(a.dtype, b.dtype).kind in _INT_KINDS
    array, scalar = (a, b) if isinstance(a, np.ndarray) else (b, a)
    if not isinstance(array, np.ndarray):
        return True  # two Python ints
    info = np.iinfo(array.dtype)
    return info.min <= scalar <= info.max


def _as_float(x):
    """``(x as float64, where that is exact)``; an integer beyond the floats becomes ±inf (never exact)."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in _INT_KINDS:
            return x.astype(np.float64, copy=False), True
        exact = x <= _EXACT_FLOAT if x.dtype.kind == "u" else (x >= -_EXACT_FLOAT) & (x <= _EXACT_FLOAT)
        return x.astype(np.float64), exact
    if isinstance(x, int):
        try:
            f = float(x)
        except OverflowError:
            return (math.inf if x > 0 else -math.inf), False
        return f, f == x  # Python compares an int with a float exactly
    return float(x), True


def _exact(op: str, a, b) -> np.ndarray:
    """``a op b`` element-wise, exactly, for numbers: each side a numpy array (integers or floats) or a Python
    number. Where numpy would round (an integer beyond 2**53 against a float, int64 against uint64, an integer
    that does not fit the array's type) both sides are compared as floats — rounding to float64 never reverses a
    strict order, so only the rows where the two floats are equal can be wrong — and those rows again with
    Python's exact comparison of ints and floats."""
    compare = _OPS[op]
    a, b = _python(a), _python(b)
    if _numpy_is_exact(a, b):
        return np.asarray(compare(a, b))
    fa, exact_a = _as_float(a)
    fb, exact_b = _as_float(b)
    with np.errstate(invalid="ignore"):
        out = np.array(compare(fa, fb), dtype=bool)
        tie = np.asarray((fa == fb) & ~(exact_a & exact_b))
    if tie.any():
        rows = np.flatnonzero(tie)
        left = a[rows].tolist() if isinstance(a, np.ndarray) else [a] * len(rows)
        right = b[rows].tolist() if isinstance(b, np.ndarray) else [b] * len(rows)
        out[rows] = [compare(x, y) for x, y in zip(left, right)]
    return out


# --------------------------------------------------------------------------------------------
# three-valued evaluation: (true, known) per row, with true ⊆ known


def _known_and(*knowns) -> np.ndarray | None:
    out = None
    for known in knowns:
        if known is not None:
            out = known if out is None else out & known
    return out


def _truthy(operand: _Operand) -> np.ndarray:
    values = operand.values
    if isinstance(values, np.ndarray) and values.dtype == bool:
        return values
    if operand.numeric:
        return np.asarray(values != 0)
    numeric = np.asarray(values).astype(float)
    return np.nan_to_num(numeric, nan=0.0) != 0


def _compare(row: _Row, event: ast.Compare) -> tuple[np.ndarray, np.ndarray | None]:
    left, right = row.operand(event.left), row.operand(event.right)
    known = _known_and(left.known, right.known)
    if event.op in ("==", "!="):  # a text column against a text: from the column's distinct values
        column, text = (left, right) if isinstance(left, _TextOperand) else (right, left)
        equal = column.equal(text.values) if isinstance(column, _TextOperand) and isinstance(text.values, str) \
            else None
        if equal is not None:
            return (equal if event.op == "==" else ~equal), None
    if not isinstance(left.values, np.ndarray) and not isinstance(right.values, np.ndarray):
        try:  # two literals
            return np.full(row.n, bool(_OPS[event.op](left.values, right.values))), None
        except TypeError:
            return np.zeros(row.n, dtype=bool), None
    if left.numeric and right.numeric:
        return np.broadcast_to(_exact(event.op, left.values, right.values), (row.n,)), known
    return _compare_values(row, event, left.values, right.values), known


def _compare_values(row: _Row, event: ast.Compare, left, right) -> np.ndarray:
    """Text (or text against numbers), compared by pandas: ``!=`` is "not ==" (a value that is not a number, a
    text category included, is a value like any other here)."""
    if event.op == "!=":
        return ~_compare_values(row, ast.Compare("==", event.left, event.right, span=event.span), left, right)
    if event.op == "==":
        equal = _equal_text(left, right)
        if equal is not None:
            return equal
    try:
        result = _OPS[event.op](pd.Series(left) if np.ndim(left) else left,
                                pd.Series(right) if np.ndim(right) else right)
    except TypeError:
        raise _error(event, f"cannot compare in '{event_text(event)}': "
                            "'<', '<=', '>' and '>=' need numbers on both sides") from None
    return pd.Series(result).to_numpy(dtype=bool, na_value=False)


def _equal_text(left, right) -> np.ndarray | None:
    """``==`` of a column of Python objects (a text column) with a text literal, element by element in numpy — what
    pandas computes for it (an element equals the text only when it is that text; a missing value never does)
    without building a Series per comparison — or None where this shortcut does not apply (other types, or an
    element such as ``pd.NA`` whose comparison is not a plain bool): the caller then asks pandas."""
    if isinstance(right, str) and isinstance(left, np.ndarray) and left.dtype == object:
        array, text = left, right
    elif isinstance(left, str) and isinstance(right, np.ndarray) and right.dtype == object:
        array, text = right, left
    else:
        return None
    try:
        out = array == text
    except (TypeError, ValueError):
        return None
    return out if isinstance(out, np.ndarray) and out.dtype == bool and out.shape == array.shape else None


def _member(row: _Row, event: ast.In) -> tuple[np.ndarray, np.ndarray | None]:
    operand = row.operand(event.operand)
    written = [v.value for v in event.values]
    if operand.numeric:
        mask = np.zeros(row.n, dtype=bool)
        for value in written:
            if not isinstance(value, str):  # a number column never holds a string
                mask |= _exact("==", operand.values, value)
    else:
        mask = pd.Series(operand.values).isin(written).to_numpy(dtype=bool)
    return (~mask if event.negated else mask), operand.known


def non_binary_message(name: str, values, averaged: str | None = None) -> str | None:
    """Why a numeric column cannot stand alone as an event (a condition or a 0/1 column), or None.

    A bare name means "is 1": for a column holding other numbers that would silently read as "!= 0"
    (``E[age]`` = 1.0, a decision ``age`` favourable for everyone), so it is refused with a hint."""
    import pandas as pd

    series = pd.to_numeric(pd.Series(values), errors="coerce").dropna()
    if series.isin([0, 1]).all():
        return None
    lo, hi = float(series.min()), float(series.max())
    example = format_number(float(series.median()))
    if averaged:  # the part of E[...] before '|': a mean, once the column's range is declared
        return (f"'{name}' holds numbers ({format_number(lo)} to {format_number(hi)}): to average it, declare its "
                f"range ({averaged}); for the rate of a condition, write one such as {name} >= {example}")
    return (f"'{name}' holds numbers ({format_number(lo)} to {format_number(hi)}), not a yes/no value: "
            f"write a condition such as {name} >= {example} (an event is a condition or a 0/1 column)")


def bare_classes_message(classes) -> str:
    """Why a bare ``pred`` is refused when the decision has several classes (``classes``: they, or the decisions),
    with the condition to write instead: one class favourable, or several."""
    from fairaudit.spec.printer import quote_string

    found = list(dict.fromkeys(c for c in classes if c is not None))[:2]
    shown = [quote_string(c) if isinstance(c, str) else format_number(c) for c in found] or ['"..."']
    example = f"pred == {shown[0]}" + (f" or pred in {{{', '.join(shown)}}}" if len(shown) > 1 else "")
    return f"'pred' is one of several classes, not yes/no: name the favourable class(es), e.g. {example}"


def _evaluate(row: _Row, event: ast.Event) -> tuple[np.ndarray, np.ndarray | None]:
    """``(true, known)``: where the event holds, and where it is known (None: everywhere); ``true`` may be set
    where ``known`` is not — ``_evaluate3`` clears it."""
    if isinstance(event, ast.COMPOUND_QUANTITIES):
        raise _error(event, f"'{event_text(event)}' is an amount, not a condition (true or false)")
    if isinstance(event, ast.Name):
        if event.reserved and event.name == "pred" and row.values(event).dtype == object:
            raise _error(event, bare_classes_message(row.values(event)))
        if row.is_categorical(event):
            raise _error(event, f"'{event.name}' is categorical: write a condition such as {event.name} == \"...\"")
        if event.reserved and event.name == "score":
            raise _error(event, "'score' is a probability, not a condition: write one such as score > 0.5")
        values = row.values(event)
        if not event.reserved and not pd.api.types.is_bool_dtype(values.dtype):
            message = non_binary_message(event.name, values)
            if message:
                raise _error(event, message)
        operand = row.operand(event)
        return _truthy(operand), operand.known
    if isinstance(event, ast.Compare):
        return _compare(row, event)
    if isinstance(event, ast.In):
        return _member(row, event)
    if isinstance(event, (ast.EvAnd, ast.EvOr)):
        lt, lk = _evaluate3(row, event.left)
        rt, rk = _evaluate3(row, event.right)
        if lk is None and rk is None:
            return (lt & rt if isinstance(event, ast.EvAnd) else lt | rt), None
        lk = np.ones(row.n, dtype=bool) if lk is None else lk
        rk = np.ones(row.n, dtype=bool) if rk is None else rk
        if isinstance(event, ast.EvAnd):  # false as soon as one side is (known) false, true when both are
            true = lt & rt
            return true, true | (lk & ~lt) | (rk & ~rt)
        true = lt | rt  # true as soon as one side is true, false when both are (known) false
        return true, true | (lk & rk)
    if isinstance(event, ast.EvNot):
        true, known = _evaluate3(row, event.operand)
        return ~true if known is None else ~true & known, known
    raise TypeError(f"not an event: {event!r}")


def _evaluate3(row: _Row, event: ast.Event) -> tuple[np.ndarray, np.ndarray | None]:
    """``_evaluate`` with ``true`` cleared where the event is unknown (``true ⊆ known``); ``known`` is a full array
    after an ``and``/``or`` with an unknown side, else it may be None (everywhere)."""
    true, known = _evaluate(row, event)
    true = np.asarray(true, dtype=bool)
    if known is None:
        return true, None
    return true & known, np.asarray(known, dtype=bool)


class EventEvaluator:
    """Several events over the same rows (``frame`` and its ``pred``/``label``/``score``): each column is read and
    converted once, for all of them, not once per event (``evaluate_event3`` / ``evaluate_event`` on one event)."""

    def __init__(self, frame: pd.DataFrame, *, pred=None, label=None, score=None):
        self._row = _Row(frame, pred, label, score)

    def event3(self, event: ast.Event) -> tuple[np.ndarray, np.ndarray]:
        """``evaluate_event3`` of ``event`` on these rows (new arrays, the caller's to keep)."""
        row = self._row
        true, known = _evaluate3(row, event)
        true = np.array(true, dtype=bool)  # an owned array (a comparison of two literals broadcasts)
        return true, (np.ones(row.n, dtype=bool) if known is None else np.array(known, dtype=bool))

    def event(self, event: ast.Event) -> np.ndarray:
        """``evaluate_event`` of ``event`` on these rows."""
        return self.event3(event)[0]

    def numbers(self, name: ast.Name) -> tuple[np.ndarray, np.ndarray]:
        """``(values, known)`` of a numeric column (or ``pred``/``label``/``score``) as float64 and bool arrays; a
        column of text is a ``SpecError`` at the name."""
        row = self._row
        if not name.reserved and row.is_categorical(name):
            raise _error(name, f"'{name.name}' is not numeric, so it has no mean: average a number, or the rate "
                               f"of a condition such as {name.name} == \"...\"")
        operand = row.operand(name)
        values = np.asarray(operand.values, dtype=np.float64)
        known = np.ones(row.n, dtype=bool) if operand.known is None else np.asarray(operand.known, dtype=bool)
        return values, known

    def quantity3(self, q) -> tuple[np.ndarray, np.ndarray]:
        """``(values, known)`` of a quantity (``fairaudit.spec.quantities``) on every row: float64 values (0 where
        unknown) and where they are known (every column it reads is present)."""
        if isinstance(q, ast.Name):
            values, known = self.numbers(q)
        elif isinstance(q, ast.Value):
            values, known = np.full(self._row.n, float(q.value)), np.ones(self._row.n, dtype=bool)
        elif isinstance(q, ast.Arith):
            (a, ka), (b, kb) = self.quantity3(q.left), self.quantity3(q.right)
            values, known = (a + b if q.op == "+" else a - b), ka & kb
        elif isinstance(q, ast.Call):
            values, known = self.quantity3(q.argument)
            if q.function == "abs":
                values = np.abs(values)
            else:
                values = np.clip(values, float(q.bounds[0].value), float(q.bounds[1].value))
        elif isinstance(q, ast.Power):
            values, known = self.quantity3(q.base)
            values = values * values
        else:
            raise TypeError(f"not a quantity: {q!r}")
        return np.where(known, values, 0.0), known


def evaluate_event3(event: ast.Event, frame: pd.DataFrame, *, pred=None, label=None,
                    score=None) -> tuple[np.ndarray, np.ndarray]:
    """``(true, known)``, two boolean arrays with one entry per row of ``frame``: ``known`` where the event is
    true or false, ``true`` where it is true (never where it is unknown). A row is unknown when a missing value
    decides it (module doc: Kleene logic); ``false = known & ~true``.

    Raises ``SpecError`` as ``evaluate_event`` does."""
    return EventEvaluator(frame, pred=pred, label=label, score=score).event3(event)


def evaluate_event(event: ast.Event, frame: pd.DataFrame, *, pred=None, label=None, score=None) -> np.ndarray:
    """A boolean array: which rows of ``frame`` are known to satisfy ``event`` — a row on which a missing value
    leaves it unknown is False here, as it is for ``not event`` (use ``evaluate_event3`` to tell false from
    unknown). This is what a row filter keeps.

    Raises ``SpecError`` for an unknown column, for ``pred``/``label``/``score`` when not supplied, for a
    bare categorical column, and for order comparisons between strings and numbers.
    """
    return evaluate_event3(event, frame, pred=pred, label=label, score=score)[0]


def missing_names(events, frame: pd.DataFrame, rows: np.ndarray, *, pred=None, label=None,
                  score=None) -> tuple[str, ...]:
    """The names (columns, and ``pred``/``label``/``score``) that ``events`` (one event, or several; None skipped)
    read and that are missing on at least one of ``rows`` (a boolean array), in order of first mention."""
    if isinstance(events, (ast.Name, ast.Compare, ast.In, ast.EvAnd, ast.EvOr, ast.EvNot)):
        events = [events]
    row = _Row(frame, pred, label, score)
    rows = np.asarray(rows, dtype=bool)
    out: dict[str, None] = {}
    for event in events:
        if event is None:
            continue
        for name in ast.event_names(event):
            if name.name in out:
                continue
            try:
                known = row.operand(name).known
            except SpecError:
                continue
            if known is not None and (rows & ~known).any():
                out[name.name] = None
    return tuple(out)


def names_text(names) -> str:
    """``x``, ``x or y``, ``x, y or z``: names in a sentence."""
    names = list(names)
    if not names:
        return "a column"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def undecided_message(event: ast.Event, frame: pd.DataFrame, known: np.ndarray, *, pred=None, label=None,
                      score=None) -> str | None:
    """What is wrong with a decision expression that is neither true nor false on some rows (``known`` false
    there: a missing value decides it), as the end of a one-line error ("the decision `…` is " + this), or None
    when it is known on every row: how many rows, the first, which column, and what to do."""
    unknown = ~np.asarray(known, dtype=bool)
    count = int(unknown.sum())
    if not count:
        return None
    names = missing_names(event, frame, unknown, pred=pred, label=label, score=score)
    first = int(np.flatnonzero(unknown)[0])
    rows = f"{count:,} row{'' if count == 1 else 's'}"
    return (f"neither true nor false on {rows} (first: row {first + 1:,}), where {names_text(names)} "
            f"{'is' if len(names) <= 1 else 'are'} missing; a decision must be favourable or not on every row: "
            "drop those rows or fill in the missing values before the audit")


def evaluate_decision(event: ast.Event, frame: pd.DataFrame) -> np.ndarray:
    """The decision a decision expression (``--pred``) makes on each row of ``frame`` (True = favourable). A row
    on which it is unknown (a missing value decides it) is an error, never a silent "unfavourable": ``SpecError``
    ("the decision `…` is " + ``undecided_message``)."""
    true, known = evaluate_event3(event, frame)
    message = undecided_message(event, frame, known)
    if message:
        raise SpecError(None, None, f"the decision `{event_text(event)}` is {message}")
    return true
