"""Small text helpers for chart labels and tooltips.

Numbers follow the library's one rule: ``fairaudit.base.numbers.clean`` (a subnormal or ``-0.0`` is ``0``) and
``fairaudit.core.guarantee.format_interval`` (``digits`` significant digits, a point interval as its value) — the same
way the verdict sentences of the CLI, the dashboard and the PDF print them. Only a missing value is the charts' own:
``–``.
"""
from __future__ import annotations

import math
from typing import Any

from fairaudit.core.guarantee import format_interval
from fairaudit.base.numbers import clean  # noqa: F401  (the one rule; re-exported for the formatters)

DIGITS = 4  # significant digits, as in the library's sentences


def _number(value: Any) -> float | None:
    """``value`` as a float, or None when it is missing (None, NaN) or not a number."""
    if value is None or isinstance(value, bool):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def num(value: Any, digits: int = DIGITS) -> str:
    """A number for a label or a tooltip: ``–`` when missing, else the library's rule (``0.3034``, ``0``, ``inf``)."""
    x = _number(value)
    if x is None:
        return "–" if value is None or isinstance(value, float) else str(value)
    return format_interval(x, x, digits)


def interval(lo: Any, hi: Any, digits: int = DIGITS) -> str:
    """``[lo, hi]`` by ``fairaudit.core.guarantee.format_interval``; ``–`` when both ends are missing."""
    a, b = _number(lo), _number(hi)
    if a is None and b is None:
        return "–"
    return format_interval(math.nan if a is None else a, math.nan if b is None else b, digits)


def wrap(text: str, width: int, lines: int = 2) -> str:
    """Wrap ``text`` into at most ``lines`` lines of ``width`` characters (``\\n``-separated); cut with ``…``."""
    width = max(width, 4)
    text = " ".join(str(text).split())
    out: list[str] = []
    rest = text
    while rest and len(out) < lines:
        if len(rest) <= width:
            out.append(rest)
            rest = ""
            break
        cut = rest.rfind(" ", 0, width + 1)
        if cut <= 0:  # no space: break after an underscore (snake_case) or a hyphen (African-American), else cut
            under = max(rest.rfind("_", 0, width), rest.rfind("-", 0, width))
            cut = under + 1 if under > 0 else width
        out.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        last = out[-1]
        out[-1] = (last[: width - 1].rstrip() if len(last) >= width else last) + "…"
    return "\n".join(out)
