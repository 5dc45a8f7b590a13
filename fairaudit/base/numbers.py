"""The one rule for showing a computed number to a reader (used by the trace's sentences, the charts' tooltips,
the pages and the PDF)."""
from __future__ import annotations

import math
import sys
from typing import Any

_TINY = sys.float_info.min  # the smallest normal double; below it (but not 0) a value is subnormal


def clean(value: Any) -> Any:
    """A number as a reader should see it: a subnormal (the outward rounding of a bound that is 0, e.g.
    ``-4.9e-324``) and ``-0.0`` become ``0.0``; anything else is returned unchanged.

    Every number formatter of the tooltips, tables, pages and the PDF goes through this (one place for the rule).
    """
    try:
        x = float(value)
    except (TypeError, ValueError):
        return value
    if x == 0.0 or (math.isfinite(x) and abs(x) < _TINY):
        return 0.0
    return value


def count(n: int, unit: str) -> str:
    """``n`` with its unit, singular for one: "1 refinement round", "960 observations", "0 rows"."""
    word = unit[:-1] if int(n) == 1 and unit.endswith("s") else unit
    return f"{int(n):,} {word}"


def json_number(x):
    """A float for JSON at full precision (``json`` writes the shortest text that reads back as the same float64):
    None for NaN, ``"inf"`` / ``"-inf"`` for ±∞ (the audit result's and the scan's JSON)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def json_unnumber(x) -> float:
    """The inverse of ``json_number``: None → NaN, ``"inf"`` / ``"-inf"`` → ±∞."""
    if x is None:
        return math.nan
    if isinstance(x, str):
        return math.inf if x == "inf" else -math.inf if x == "-inf" else float(x)
    return float(x)


def option_value(value: Any) -> str:
    """An option's value as every front end shows it (the CLI summary, the Report page's and the PDF's parameter tables: ``Option.show``): a whole
    number with thousands separators (``1,000,000``; a whole float too, from 1,000 on), another number as the user
    gave it (``0.05``, ``1e-07``), ``yes`` / ``no`` for a switch, ``–`` when missing; anything else as its text."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        x = clean(value)
        if not math.isfinite(x):
            return "–" if math.isnan(x) else ("∞" if x > 0 else "−∞")
        if x.is_integer() and 1000 <= abs(x) < 1e16:
            return f"{int(x):,}"
        return f"{x:g}"
    return str(value)


def exact_sum(values):
    """The exact sum of finite float64 ``values`` as a ``Fraction`` (no rounding at all), in a few numpy passes:
    each value is ``m · 2**(e − 53)`` with an integer ``m`` below 2**53 (``numpy.frexp``); the ``m`` of each exponent
    are added as integers (split in 26-bit halves so that int64 never overflows) and the groups joined exactly."""
    from fractions import Fraction

    import numpy as np

    values = np.asarray(values, dtype=np.float64).ravel()
    if not len(values):
        return Fraction(0)
    fraction, exponent = np.frexp(values)
    mantissa = (fraction * (1 << 53)).astype(np.int64)  # exact: |fraction| < 1 has 53 significant bits
    total = Fraction(0)
    for e in np.unique(exponent):
        m = mantissa[exponent == e]
        high, low = np.right_shift(m, 26), np.bitwise_and(m, (1 << 26) - 1)  # m = high · 2**26 + low, low ≥ 0
        step = 1 << 30  # 2**30 rows of 2**27-sized halves stay far below 2**63
        whole = sum(int(high[i:i + step].sum()) * (1 << 26) + int(low[i:i + step].sum())
                    for i in range(0, len(m), step))
        total += Fraction(whole) * Fraction(2) ** (int(e) - 53)
    return total
