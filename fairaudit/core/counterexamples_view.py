"""Counterexamples (``fairaudit.core.counterexamples``) as tables and lines of text, the same for the dashboard, the PDF
and the CLI. Nothing here knows which engine found them: where they come from and how they were checked are the
leaf's own words (``where``, ``about``).

A table has one row per counterexample: the audited row's number (when it is one), then for each compared value
of the attribute the model's decision and score with the attribute at that value, then the individual's other
features. Rows are numbered for people, the first data row being row 1 (``row_number``), as the warnings number them;
the JSON keeps the 0-based position (``Counterexample.row``).
"""
from __future__ import annotations

import math

from fairaudit.base.numbers import clean, count

ROW = "row"
FAVOURABLE, UNFAVOURABLE = "favourable", "unfavourable"


def _text(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "missing"
    if isinstance(v, float):
        v = clean(v)
        return f"{v:g}" if v == int(v) else f"{v:.4g}"
    return str(v)


def value_column(found, value) -> str:
    """The column of one compared value: ``"sex = F"``."""
    return f"{found.attribute} = {_text(value)}"


OWN = "actual"  # marks the compared value that is the individual's own


def decision_text(decision, score=None, own: bool = False) -> str:
    word = FAVOURABLE if int(decision) == 1 else UNFAVOURABLE
    text = word if score is None else f"{word} ({float(clean(score)):.4f})"
    return f"{text} · {OWN}" if own else text


def is_own(c, value) -> bool:
    """Whether ``value`` is the counterexample's own value of the attribute (an audited row's)."""
    return c.own is not None and _text(c.own) == _text(value)


def row_number(position: int) -> str:
    """A row's 0-based position in the data as people number rows: the first data row is row 1."""
    return f"{int(position) + 1:,}"


def table(found, limit: int | None = None) -> list[dict]:
    """The first ``limit`` (default all kept) counterexamples of one leaf (a ``LeafCounterexamples``) as rows."""
    examples = found.examples if limit is None else found.examples[:limit]
    show_row = any(c.row is not None for c in examples)
    rows = []
    for c in examples:
        row = {ROW: "–" if c.row is None else row_number(c.row)} if show_row else {}
        for i, value in enumerate(found.values):
            score = None if c.scores is None else c.scores[i]
            row[value_column(found, value)] = decision_text(c.decisions[i], score, is_own(c, value))
        row.update({str(k): _text(v) for k, v in c.individual})
        rows.append(row)
    return rows


def found_text(found) -> str:
    """``"12 counterexamples found over the input domain"``, or that none was found (no table beside it)."""
    if not found.total:
        return f"No counterexample found {found.where}"
    return f"{count(found.total, 'counterexamples')} found {found.where}"


def headline(found, shown: int | None = None) -> str:
    """``found_text`` above a table: ``"… (the first 10 shown)"``; ``shown`` how many the table shows (default
    every one kept)."""
    if not found.total:
        return found_text(found)
    shown = len(found.examples) if shown is None else min(int(shown), len(found.examples))
    tail = "" if shown >= found.total else f" (the first {shown:,} shown)"
    return f"{found_text(found)}{tail}"


def caption(found) -> str:
    """What the counterexamples are: the leaf's own words, and what the table's columns hold."""
    about = str(found.about or "").strip()
    about = (about[:1].upper() + about[1:]).rstrip(".") + ". " if about else ""
    numbered = (" The row column is the individual's row in the data, the first data row being row 1." if
                any(c.row is not None for c in found.examples) else "")
    if any(c.own is not None for c in found.examples):
        numbered += f" “{OWN}” marks the individual's own {found.attribute}."
    return (f"{about}Each row is one individual: the model's decision (and score) with {found.attribute} set to "
            f"each value compared, then the individual's other features.{numbered}")


def first_text(found) -> str:
    """The first counterexample on one line: its features, then the decision at each compared value."""
    if not found.examples:
        return ""
    c = found.examples[0]
    features = ", ".join(f"{k} = {_text(v)}" for k, v in c.individual)
    scores = c.scores or (None,) * len(found.values)
    decisions = ", ".join(f"{value_column(found, v)}: {decision_text(c.decisions[i], scores[i], is_own(c, v))}"
                          for i, v in enumerate(found.values))
    where = f"row {row_number(c.row)}: " if c.row is not None else ""
    return f"{where}{features} — {decisions}"


def summary_lines(counterexamples) -> list[str]:
    """A line or two per leaf for a terminal: how many were found, and the first."""
    lines = []
    for found in counterexamples.leaves:
        lines.append(f"counterexamples: {found.leaf}: {headline(found)}")
        if found.examples:
            lines.append(f"  first: {first_text(found)}")
    return lines
