"""The hints error messages end with: ``suggestion`` (``; did you mean 'x'?``) and ``listing`` (a short list)."""
from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


def suggestion(name: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest choices (case-insensitive matches first), or ``""``."""
    choices = list(choices)
    same_case = [c for c in choices if c.lower() == name.lower()]
    close = same_case + [c for c in difflib.get_close_matches(name, choices, n=3, cutoff=0.6) if c not in same_case]
    if not close:
        return ""
    return "; did you mean " + " or ".join(f"'{c}'" for c in close[:3]) + "?"


def listing(items: Iterable[Any], limit: int = 12) -> str:
    """``a, b, c`` — at most ``limit`` items, then ``… (N more)``."""
    items = [str(i) for i in items]
    text = ", ".join(items[:limit])
    return text + (f", … ({len(items) - limit} more)" if len(items) > limit else "")
