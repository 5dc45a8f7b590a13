"""Small text helpers for chart labels and tooltips."""
from __future__ import annotations

import math
from typing import Any

from fairaudit.numbers import clean  # noqa: F401  (the one rule; re-exported for the formatters)


def num(value: Any, digits: int = 3) -> str:
    """A number for a tooltip: ``–`` when missing, ``∞`` when infinite, ``0`` for a subnormal (see ``clean``)."""
    if value is None:
        return "–"
    try:
        x = float(clean(value))
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(x):
        return "–"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x != 0 and (abs(x) < 10 ** -digits or abs(x) >= 10 ** 6):
        return f"{x:.{digits}g}"
    return f"{x:.{digits}f}"


def interval(lo: Any, hi: Any, digits: int = 3) -> str:
    if lo is None and hi is None:
        return "–"
    return f"[{num(lo, digits)}, {num(hi, digits)}]"


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
        if cut <= 0:  # no space: break after an underscore of a snake_case name, else a hard cut
            under = rest.rfind("_", 0, width)
            cut = under + 1 if under > 0 else width
        out.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        last = out[-1]
        out[-1] = (last[: width - 1].rstrip() if len(last) >= width else last) + "…"
    return "\n".join(out)
