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
