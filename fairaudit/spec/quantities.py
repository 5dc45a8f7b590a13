"""Quantities: what ``E[...]`` averages besides an event, and the declared ranges their guarantees rest on.

``E[amount | sex == "F"]`` is the mean of ``amount`` over the rows with ``sex == "F"``. A mean has an anytime-valid
bound only when its values are bounded, so every numeric column a specification averages has a **declared range**
``[low, high]``, given once per audit (``--range amount=0:50000`` on the command line, ``ranges=`` in Python, the
Data page, a ``# range:`` header of a spec file) and attached to the parsed ``Spec`` (``with_ranges``). A value
outside its range is an error naming the row, never clipped (``out_of_range``); a quantity without a range is
refused with a hint (``fairaudit.spec.validate``).

What is a quantity (``is_quantity``): arithmetic on names (``a - b``, ``a + b``, ``abs(q)``, ``clip(q, lo, hi)``,
``(q)^2``), ``score`` (a probability, range [0, 1]), and a bare column name whose range is declared; ``pred`` and
``label`` on their own stay events (their mean is the rate of the yes/no value, the same number). The range of a
derived quantity follows from its parts (``quantity_range``): ``a - b`` lies in ``[lo_a − hi_b, hi_a − lo_b]``,
``abs`` and the square of a range that straddles 0 start at 0, ``clip`` cuts the range.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Mapping

import numpy as np

from fairaudit.base.errors import FairauditError
from fairaudit.spec import ast

UNIT_RANGE = (0.0, 1.0)  # pred, label and score
RANGE_SYNTAX = "NAME=LOW:HIGH (e.g. amount=0:50000)"


def parse_range(text: str) -> tuple[str, float, float]:
    """``"amount=0:50000"`` → ``("amount", 0.0, 50000.0)`` (``FairauditError`` naming the text otherwise). The name
    is everything before the last ``=`` (the bounds hold none), or written in back-quotes (```a,b`=0:1``)."""
    text = str(text).strip()
    name, sep, bounds = text.rpartition("=")
    name = name.strip()
    if len(name) > 2 and name.startswith("`") and name.endswith("`"):
        name = name[1:-1].replace("\\`", "`")
    low, colon, high = bounds.partition(":")
    if not sep or not colon or not name:
        raise FairauditError(f"a range is written {RANGE_SYNTAX}; got {text[:60]!r}")
    try:
        lo, hi = float(low), float(high)
    except ValueError:
        raise FairauditError(f"the range of {name!r} needs two numbers, LOW:HIGH; got {bounds[:40]!r}") from None
    return checked_range(name, lo, hi)


def checked_range(name: str, lo, hi) -> tuple[str, float, float]:
    """``(name, lo, hi)`` as floats when they make a range a mean can be bounded on: finite, ``lo < hi``, a finite
    width; ``FairauditError`` naming the column otherwise."""
    try:
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise FairauditError(f"the range of {name!r} must be two numbers (low, high); got {lo!r}, {hi!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise FairauditError(f"the range of {name!r} must be finite; got {lo!r}:{hi!r}")
    if not lo < hi:
        raise FairauditError(f"the range of {name!r} needs LOW < HIGH; got {lo!r}:{hi!r}")
    if not math.isfinite(hi - lo):
        raise FairauditError(f"the range of {name!r} is too wide for a number ({lo!r}:{hi!r}); declare the range "
                             "the values can take")
    return str(name), lo, hi


def _split_ranges(text: str) -> list[str]:
    """``"a=0:1, `x,y`=2:3"`` → its items: split at commas outside back-quotes."""
    items, current, quoted, i = [], [], False, 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and quoted and i + 1 < len(text):
            current.append(text[i:i + 2])
            i += 2
            continue
        if ch == "`":
            quoted = not quoted
        if ch == "," and not quoted:
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    items.append("".join(current))
    return [item for item in items if item.strip()]


def parse_ranges(ranges) -> dict[str, tuple[float, float]]:
    """Ranges given as a mapping ``{name: (lo, hi)}``, as texts (``"amount=0:50000"``, several joined by commas),
    or a list of either → ``{name: (lo, hi)}``; a name declared twice differently is an error."""
    if ranges is None:
        return {}
    items = []
    if isinstance(ranges, Mapping):
        for name, pair in ranges.items():
            try:
                lo, hi = pair
            except (TypeError, ValueError):
                raise FairauditError(f"the range of {name!r} must be two numbers (low, high); got {pair!r}") \
                    from None
            items.append(checked_range(name, lo, hi))
    elif isinstance(ranges, str):
        items = [parse_range(part) for part in _split_ranges(ranges)]
    elif isinstance(ranges, (list, tuple)):
        for part in ranges:
            items.extend((n, lo, hi) for n, (lo, hi) in parse_ranges(part).items())
    else:
        raise FairauditError(f"ranges are given as {{name: (low, high)}} or as text NAME=LOW:HIGH; got "
                             f"{type(ranges).__name__}")
    out: dict[str, tuple[float, float]] = {}
    for name, lo, hi in items:
        if name in out and out[name] != (lo, hi):
            raise FairauditError(f"the range of {name!r} is declared twice ({range_text(*out[name])} and {range_text(lo, hi)})")
        out[name] = (lo, hi)
    return out


def range_text(lo: float, hi: float) -> str:
    """``[0, 50000]``: a range as the sentences show it."""
    from fairaudit.spec.printer import format_number

    return f"[{format_number(lo)}, {format_number(hi)}]"


def is_quantity(event, ranges: Mapping[str, tuple[float, float]]) -> bool:
    """Whether the first part of an ``E[...]`` is averaged as a quantity (module doc) rather than counted as an
    event."""
    if isinstance(event, ast.COMPOUND_QUANTITIES):
        return True
    if isinstance(event, ast.Name):
        if event.reserved:
            return event.name == "score"
        return event.name in ranges
    return False


def quantity_range(q, ranges: Mapping[str, tuple[float, float]]) -> tuple[float, float]:
    """The range a quantity's values lie in (module doc); ``KeyError`` for a column without a declared range."""
    if isinstance(q, ast.Name):
        if q.reserved:
            return UNIT_RANGE
        return ranges[q.name]
    if isinstance(q, ast.Value):
        return float(q.value), float(q.value)
    if isinstance(q, ast.Arith):
        (a, b), (c, d) = quantity_range(q.left, ranges), quantity_range(q.right, ranges)
        return (a + c, b + d) if q.op == "+" else (a - d, b - c)
    if isinstance(q, ast.Call):
        lo, hi = quantity_range(q.argument, ranges)
        if q.function == "abs":
            return _abs(lo, hi)
        low, high = (float(b.value) for b in q.bounds)
        return min(max(lo, low), high), min(max(hi, low), high)
    if isinstance(q, ast.Power):
        lo, hi = _abs(*quantity_range(q.base, ranges))
        return lo * lo, hi * hi
    raise TypeError(f"not a quantity: {q!r}")


def _abs(lo: float, hi: float) -> tuple[float, float]:
    if lo >= 0:
        return lo, hi
    if hi <= 0:
        return -hi, -lo
    return 0.0, max(-lo, hi)


def ranges_of(spec: ast.Spec) -> dict[str, tuple[float, float]]:
    """The declared ranges attached to ``spec`` (``with_ranges``)."""
    return {name: (lo, hi) for name, lo, hi in getattr(spec, "ranges", ())}


def with_ranges(spec: ast.Spec, ranges) -> ast.Spec:
    """``spec`` with the declared ``ranges`` attached (``parse_ranges`` takes any of their forms): every range
    declared is kept (a range for a column the spec does not average is harmless and keeps the declaration one)."""
    declared, given = ranges_of(spec), parse_ranges(ranges)
    for name in set(declared) & set(given):
        if declared[name] != given[name]:
            raise FairauditError(f"the range of {name!r} is declared twice, differently: {range_text(*declared[name])} "
                                 f"(the specification's '# range:' header) and {range_text(*given[name])}")
    declared.update(given)
    return replace(spec, ranges=tuple((name, lo, hi) for name, (lo, hi) in sorted(declared.items())))


def leaf_ranges(spec: ast.Spec) -> dict[str, tuple[float, float]]:
    """``{leaf key: (lo, hi)}`` of the spec's quantity leaves (an event leaf is not in it). A quantity that names a
    column without a range is left out here; validation refuses it before any engine runs."""
    ranges = ranges_of(spec)
    out = {}
    for tn in spec.leaves:
        if tn.kind == "expect" and is_quantity(tn.node.event, ranges):
            try:
                out[tn.text] = quantity_range(tn.node.event, ranges)
            except KeyError:
                continue
    return out


def quantity_leaves(spec: ast.Spec) -> list:
    """The ``TreeNode``s of the spec's quantity leaves, in id order."""
    ranges = ranges_of(spec)
    return [tn for tn in spec.leaves if tn.kind == "expect" and is_quantity(tn.node.event, ranges)]


def out_of_range(name: str, values: np.ndarray, known: np.ndarray, lo: float, hi: float,
                 rows: np.ndarray | None = None, complete: bool = True, where: str = "") -> str | None:
    """The one sentence for values of ``name`` outside its declared range ``[lo, hi]`` (how many rows, the first
    by its row number — ``rows``: the data's row positions of ``values``, else their own; ``where``: the part of
    the data they are in, e.g. " of part-3.parquet" — its value, what to do), or None when every known value lies
    inside. ``complete=False``: ``values`` are one piece of a stream (the first piece with such a value), so no
    count of the whole data is claimed."""
    from fairaudit.spec.printer import format_number

    values = np.asarray(values, dtype=float)
    outside = np.asarray(known, dtype=bool) & ~((values >= lo) & (values <= hi))
    count = int(outside.sum())
    if not count:
        return None
    first = int(np.flatnonzero(outside)[0])
    row = first if rows is None else int(np.asarray(rows)[first])
    value = format_number(float(values[first]))
    if not complete:
        return (f"'{name}' has a value outside its declared range {range_text(lo, hi)}: row {row + 1:,}{where} holds "
                f"{value} (the first found); widen the declared range or fix the rows — values are never clipped")
    many = f"{count:,} rows hold values" if count > 1 else "1 row holds a value"
    return (f"'{name}' has a value outside its declared range {range_text(lo, hi)}: {many} outside it (first: row "
            f"{row + 1:,}{where}, {value}); widen the declared range or fix the rows — values are never clipped")


def refuse_amounts(spec, what: str) -> None:
    """``FairauditError`` (one line) when ``spec`` averages an amount and ``what`` (a command that counts yes/no
    outcomes only) cannot: it would read the amount as yes/no and give a wrong answer."""
    averaged = quantity_leaves(spec)
    if averaged:
        raise FairauditError(f"{what} works with rates of yes/no outcomes, and {averaged[0].text} averages an amount "
                             "(not supported there yet): audit it with `fairaudit audit` (fairaudit.audit)")
