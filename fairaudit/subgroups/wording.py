"""The scan's sentences: its guarantee in one sentence a signer can read, and what it assumes. Every front end (the
CLI, the dashboard's "Groups" page, the PDF section, the CSV templates) shows these, never its own wording."""
from __future__ import annotations

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
