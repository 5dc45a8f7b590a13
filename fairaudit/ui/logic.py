"""Pure decision logic of the dashboard: no Streamlit, no I/O, unit-tested in ``tests/app/test_logic.py``.

The pages only translate widget events into calls of these functions and draw what they return.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

MAX_SELECTED = 2

DEMO_DATASET = "adult"
DEMO_MODEL = "logreg"
DEMO_SPEC = """\
# Demographic parity on Adult: the favourable-decision rate of men and women, and of White and Black
# applicants, may differ by less than the given margin.
sex_parity: E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1
race_parity: E[pred | race == "White"] - E[pred | race == "Black"] < 0.2
"""

ENGINES: dict[str, str] = {
    "monitor": "AVOIR monitor: anytime-valid bounds from a stream of decisions",
    "fairsquare": "FairSquare: exact bounds by weighted volume computation (z3)",
    "justicia": "Justicia: exact group probabilities by stochastic SAT",
    "fvgm": "FVGM: group rates over a Bayesian network of the features",
    "fairquant": "FairQuant: certified / unfair / undecided fractions of a ReLU network",
}


# --------------------------------------------------------------------------------------------------
# tree selection


def event_ids(event: Any, param: str = "node") -> list[str]:
    """Node ids in a Streamlit chart event (``VegaLiteState`` or plain dict), in click order, without blanks.

    Accepts ``event.selection.node == [{"id": "n3"}, ...]`` as Streamlit returns it; clicks on an edge (no id)
    are dropped.
    """
    if event is None:
        return []
    selection = event.get("selection") if isinstance(event, Mapping) else getattr(event, "selection", None)
    if selection is None:
        return []
    points = selection.get(param) if isinstance(selection, Mapping) else getattr(selection, param, None)
    out: list[str] = []
    for p in points or []:
        value = p.get("id") if isinstance(p, Mapping) else None
        if value is not None and str(value) not in out:
            out.append(str(value))
    return out


def next_selection(current: Sequence[str], last_event: Sequence[str], event: Sequence[str],
                   valid: Iterable[str]) -> tuple[list[str], list[str]]:
    """The selection after a chart event: ``(selected node ids, event to remember)``.

    The chart reports its whole selection on every rerun; only a *changed* event is a click. A changed event
    replaces the selection (shift-click gives two ids), keeping at most the last ``MAX_SELECTED``. Ids that are
    not nodes of the current spec are dropped (the spec may have changed since the click).
    """
    valid = set(valid)
    event = [e for e in event if e in valid]
    current = [c for c in current if c in valid]
    if list(event) == list(last_event):
        return current[-MAX_SELECTED:], list(last_event)
    return list(event)[-MAX_SELECTED:], list(event)


@dataclass(frozen=True)
class Panel:
    """One plot the Audit page shows for the selected nodes."""

    kind: str  # "convergence" | "rates"
    nodes: tuple[str, ...]


def panels_for(selected: Sequence[str], kinds: Mapping[str, str], rates_available: Mapping[str, bool]) -> list[Panel]:
    """Selected nodes -> plots: one convergence plot (two nodes stacked with a shared x), plus a rates plot for
    every selected ``Fair[...]`` node whose trace carries certified / unfair / undecided rates."""
    ids = [s for s in selected if s in kinds][:MAX_SELECTED]
    if not ids:
        return []
    panels = [Panel("convergence", tuple(ids))]
    for i in ids:
        if kinds[i] == "fair" and rates_available.get(i):
            panels.append(Panel("rates", (i,)))
    return panels


def default_selection(nodes: Sequence[Mapping[str, Any]]) -> list[str]:
    """Before any click: the first comparison that is violated, else undecided, else the root."""
    for wanted in ("false", "unknown"):
        for n in nodes:
            if n.get("kind") == "cmp" and (n.get("final") or {}).get("verdict") == wanted:
                return [str(n["id"])]
    return [str(nodes[0]["id"])] if nodes else []


# --------------------------------------------------------------------------------------------------
# engines


@dataclass(frozen=True)
class EngineChoice:
    name: str
    available: bool
    reason: str  # why not available ("" when available)
    description: str


def engine_choices(implemented: Iterable[str], has_model: bool, has_pred_column: bool = False) -> list[EngineChoice]:
    """Every engine with whether it can run now and why not. ``implemented``: engines the library provides."""
    implemented = set(implemented)
    out = []
    for name, desc in ENGINES.items():
        if name not in implemented:
            out.append(EngineChoice(name, False, "not available yet", desc))
        elif name == "monitor" and not (has_model or has_pred_column):
            out.append(EngineChoice(name, False, "needs a model or a decision column (Model page)", desc))
        elif name != "monitor" and not has_model:
            out.append(EngineChoice(name, False, "needs a model (Model page)", desc))
        else:
            out.append(EngineChoice(name, True, "", desc))
    return out


# --------------------------------------------------------------------------------------------------
# spec history


def record_version(history: list[dict], text: str, verdict: str | None = None, stop_step: int | None = None,
                   when: float | None = None) -> list[dict]:
    """A new history list with ``text`` as its latest version (same text: updated in place, not duplicated).

    A version is ``{"version": k, "text", "verdict", "stop_step", "time"}``; a verdict is recorded when an
    audit of that text finishes.
    """
    text = text.strip()
    out = [dict(h) for h in history]
    for h in out:
        if h["text"] == text:
            if verdict is not None:
                h["verdict"], h["stop_step"] = verdict, stop_step
            h["time"] = when if when is not None else time.time()
            return out
    out.append({"version": (max((h["version"] for h in out), default=0) + 1), "text": text, "verdict": verdict,
                "stop_step": stop_step, "time": when if when is not None else time.time()})
    return out


def diff_lines(old: str, new: str) -> list[str]:
    """A compact unified diff of two spec versions (for the history's "compare" view)."""
    import difflib

    return [line for line in difflib.unified_diff(old.strip().splitlines(), new.strip().splitlines(),
                                                  "before", "after", lineterm="", n=0)
            if not line.startswith(("---", "+++", "@@"))]


# --------------------------------------------------------------------------------------------------
# live updates


class Throttle:
    """True at most once per ``interval`` seconds (and always on ``force``): when to redraw during a run."""

    def __init__(self, interval: float = 0.8, clock=time.monotonic):
        self.interval = interval
        self.clock = clock
        self.last = -math.inf

    def ready(self, force: bool = False) -> bool:
        now = self.clock()
        if force or now - self.last >= self.interval:
            self.last = now
            return True
        return False


def verdict_sentence(verdict: str | None) -> str:
    return {"true": "certified true", "false": "violated", "unknown": "undecided"}.get(verdict or "", "not run")


def small_group_warning(stats_rows: Iterable[Mapping[str, Any]], threshold: int) -> str | None:
    """One sentence naming the groups with fewer than ``threshold`` rows, or None."""
    small = [f"{r['attribute']} = {r['group']} ({r['n']} rows)" for r in stats_rows if r["n"] < threshold]
    if not small:
        return None
    head = ", ".join(small[:8]) + (f" and {len(small) - 8} more" if len(small) > 8 else "")
    return (f"Small groups: {head}. Estimates for groups with fewer than {threshold} rows are uncertain; "
            "their confidence intervals are wide.")
