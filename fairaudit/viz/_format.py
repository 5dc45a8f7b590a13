"""Small text helpers for chart labels and tooltips.

Numbers follow the library's one rule: ``fairaudit.base.numbers.clean`` (a subnormal or ``-0.0`` is ``0``) and
``fairaudit.core.guarantee.format_interval`` (``digits`` significant digits, a point interval as its value) — the same
way the verdict sentences of the CLI, the dashboard and the PDF print them. Only a missing value is the charts' own:
``–``.
"""
from __future__ import annotations

import math
import re
from typing import Any

from fairaudit.core.guarantee import format_interval
from fairaudit.base.numbers import clean  # noqa: F401  (the one rule; re-exported for the formatters)
from fairaudit.base.numbers import option_value  # noqa: F401  (an option's value: one format, re-exported)

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


def _pieces(word: str, width: int) -> list[str]:
    """A word longer than ``width`` split after its underscores (snake_case) and hyphens (African-American), the
    only places a word may break; a word without them stays whole."""
    if len(word) <= width:
        return [word]
    out, cur = [], ""
    for ch in word:
        cur += ch
        if ch in "_-" and len(cur) > 1:
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    merged: list[str] = []  # the pieces joined again as far as they fit
    for piece in out:
        if merged and len(merged[-1]) + len(piece) <= width:
            merged[-1] += piece
        else:
            merged.append(piece)
    return merged


def _shorten(line: str, width: int) -> str:
    """``line`` ended at its last word boundary (a space, or after an underscore or a hyphen) that leaves room for
    ``…``, then ``…``."""
    while len(line) + 1 > width:
        cuts = [i for i, ch in enumerate(line[:-1]) if ch == " "] + [
            i + 1 for i, ch in enumerate(line[:-1]) if ch in "_-"]
        cuts = [c for c in cuts if c > 0]
        if not cuts:
            break
        line = line[:max(cuts)].rstrip()
    return line.rstrip("_") + "…"


def wrap(text: str, width: int, lines: int = 2) -> str:
    """Wrap ``text`` into at most ``lines`` lines of about ``width`` characters (``\\n``-separated), breaking only
    between words (or after an underscore or a hyphen inside a long name), never inside a word: a word longer than
    ``width`` stands whole on its line. Text that does not fit is shortened at a word boundary and marked ``…`` (the
    caller keeps the full text, e.g. in a tooltip); only a single word longer than all the lines together (at least two;
    a hash, a path) is cut inside, on one line."""
    width = max(width, 4)
    words = str(text).split()
    room = width * max(lines, 2)
    tokens: list[tuple[str, str]] = []  # (piece, what joins it to the previous piece on one line)
    for word in words:
        for i, piece in enumerate(_pieces(word, width)):
            tokens.append((piece if len(piece) <= room else piece[:room - 1] + "…", "" if i else " "))
    out: list[str] = []
    cur = ""
    i = 0
    while i < len(tokens):
        piece, joint = tokens[i]
        if not cur:
            cur = piece
        elif len(cur) + len(joint) + len(piece) <= width:
            cur += joint + piece
        else:
            out.append(cur)
            cur = ""
            if len(out) == lines:
                break
            continue
        i += 1
    if cur:
        out.append(cur)
    if i < len(tokens) and not out[-1].endswith("…"):
        out[-1] = _shorten(out[-1], width)
    return "\n".join(out)


#: signs between the parts of a label; a wrapped line never starts with one (it ends the line before)
SIGNS = ("÷", "−", "-", "+", "×", "≤", "≥", "<", ">", "=", "≠", "vs", "and", "or")


def wrap_groups(text: str, width: int, lines: int = 2) -> str:
    """``wrap`` for a label of groups (``Female · Black ÷ Male · White``: an intersection's values joined by
    `` · ``, signs between the groups): a label that fits on one line stays as it is; otherwise each group is kept
    whole (its values joined by ``·`` without spaces: ``Female·Black``), so a line never starts with a lone ``·``
    and never splits a group, and a sign ends its line rather than starting the next (``Female·Black ÷`` /
    ``Male·White``)."""
    text = " ".join(str(text).split())
    if len(text) <= max(width, 4):
        return text
    glued = re.sub(r"\s+·\s+", "·", text)
    signs = "|".join(re.escape(sign) for sign in SIGNS)
    glued = re.sub(rf" ({signs})(?= )", "\x00\\1", glued)  # a sign stays with the group before it
    out = wrap(glued, width, lines).replace("\x00", " ").split("\n")
    for i in range(1, len(out)):
        head, _, rest = out[i].partition(" ")
        if head in SIGNS and rest:  # a sign at a line's start: it ends the line before
            out[i - 1] += " " + head
            out[i] = rest
    return "\n".join(out)
