"""The scan's sentences: its guarantee in one sentence a signer can read, what it assumes, why its intervals are
wider than one audit's, and a cell's name in a sentence. Every front end (the CLI, the dashboard's "Groups" page, the
PDF section, the CSV templates) shows these, never its own wording.

A cell is named in a sentence as the Audit, Report and Overview pages name a group — "sex = Female and race = Black"
(``cell_words``: its condition as a syntax tree, in ``fairaudit.spec.words``' words); the compact "Female × Black" is
for table cells under a "sex × race" header only.
"""
from __future__ import annotations

import functools

from fairaudit.base.numbers import count


def _level(delta: float) -> str:
    return f"{100 * (1 - delta):g}%"


def guarantee(mode: str, delta: float, cells: int, tables: int, rows: int, rate_kind: str = "selection",
              quantile_bins: bool = False) -> str:
    """The one sentence: what holds, for how many intervals at once, with what probability."""
    what = f"{'scoring' if rate_kind == 'scoring' else 'selection'}-rate and impact-ratio intervals"
    family = f"all {count(cells, 'cells')} of the {count(tables, 'tables')}"
    fixed = [what for what, used in (("the quantile bin edges", quantile_bins),
                                     ("the median score", rate_kind == "scoring")) if used]
    tail = (f" (treating {' and '.join(fixed)}, computed from these rows, as fixed)" if fixed else "")
    if mode == "exact":
        return (f"Exact for these {rows:,} rows: every rate and impact ratio in the {count(tables, 'tables')} is that "
                "of the rows themselves (no interval, and no claim about any other rows or a population).")
    if mode == "one-look":
        return (f"With probability at least {_level(delta)} (Δ = {delta:g}), the {what} of {family} hold at the "
                f"same time at this one look at {rows:,} rows (fixed-sample Clopper–Pearson intervals, Δ split "
                f"among them; re-checking as rows arrive voids this){tail}.")
    return (f"With probability at least {_level(delta)} (Δ = {delta:g}), the {what} of {family} hold at the same "
            f"time, and keep holding at every look as rows arrive (anytime-valid confidence sequences, Δ split "
            f"among them){tail}.")


def assumption(mode: str, order_sentence: str | None) -> str:
    """What the guarantee assumes (the rows' model; for the anytime mode, their order too)."""
    if mode == "exact":
        return "nothing: the numbers are those of the given rows"
    base = "the rows are independent draws from one population (the one the intervals are about)"
    return f"{base}; {order_sentence}" if order_sentence else base


@functools.lru_cache(maxsize=4096)
def _parsed(condition: str):
    from fairaudit.spec.parser import parse_event

    return parse_event(condition)


def cell_event(cell):
    """The cell's condition as a syntax tree: each attribute's part as the scan wrote it (a binned attribute:
    ``age >= 17 and age < 28``), parsed; without it (an old JSON), the attribute = value pair."""
    from fairaudit.spec import ast
    from fairaudit.spec.words import pairs_event

    event = None
    for attribute in cell.table:
        text = (cell.conditions or {}).get(attribute)
        part = None
        if text:
            try:
                part = _parsed(text)
            except Exception:  # noqa: BLE001 - a condition that does not parse: its pair says the same
                part = None
        if part is None:
            part = pairs_event([(attribute, cell.groups[attribute])])
        event = part if event is None else ast.EvAnd(event, part)
    return event


def cell_words(cell) -> str:
    """The cell as a sentence names it: "sex = Female and race = Black" (``fairaudit.spec.words.condition_words``,
    the words the Audit page's headline uses for the same condition)."""
    from fairaudit.spec.words import condition_words

    event = cell_event(cell)
    return "everyone" if event is None else condition_words(event)


def simultaneous_note(cells: int, mode: str) -> str | None:
    """Why a scan may leave undecided what an audit of one comparison decides (None in exact mode: no interval)."""
    if mode == "exact":
        return None
    return (f"The scan's intervals hold for all {count(cells, 'cells')} at once, so each is wider than that of an "
            "audit of one comparison: an audit of a chosen comparison (its specification, audited on its own) may "
            "decide what the scan leaves undecided.")
