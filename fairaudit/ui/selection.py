"""The tree selection of the Audit page: which nodes a chart click selects, which plots they get, and how a
selection follows its nodes into the tree of a new run (by name or text, never by id). Pure functions, no
Streamlit (``tests/app/test_logic.py``)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

MAX_SELECTED = 2


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


def panels_for(selected: Sequence[str], kinds: Mapping[str, str], rates_available: Mapping[str, bool],
               fair_of: Mapping[str, str] | None = None) -> list[Panel]:
    """Selected nodes -> plots: one convergence plot (two nodes stacked with a shared x), plus a rates plot for
    the ``Fair[...]`` node each selected node shows (``fair_of``: selected id -> that node's id, from
    ``fair_nodes``: the node itself or the Fair term of a comparison; default: the selected Fair nodes) when its
    trace carries certified / unfair / undecided rates (``rates_available``, by the Fair node's id)."""
    ids = [s for s in selected if s in kinds][:MAX_SELECTED]
    if not ids:
        return []
    if fair_of is None:
        fair_of = {i: i for i in ids if kinds[i] == "fair"}
    panels = [Panel("convergence", tuple(ids))]
    for i in ids:
        fair = fair_of.get(i)
        if fair is not None and rates_available.get(fair) and Panel("rates", (fair,)) not in panels:
            panels.append(Panel("rates", (fair,)))
    return panels


def fair_nodes(selected: Sequence[str], nodes: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Selected id -> the ``Fair[...]`` node it shows (``fairaudit.core.explain.fair_term``: itself, or the compared
    term of a comparison such as ``Fair[sex] >= 0.95``), for the selected nodes that show one. The Audit page draws
    that node's rates and counterexamples — also under the default selection, which is a comparison."""
    from fairaudit.core.explain import fair_term

    out = {}
    for i in selected:
        term = fair_term(i, nodes)
        if term is not None:
            out[str(i)] = str(term["id"])
    return out


def default_selection(source) -> list[str]:
    """Before any click: the comparison that matters (``fairaudit.core.focus``, the one rule the headline, the CLI's
    ``worst:`` line and the PDF share: a violated comparison of a violated specification, else the one closest to
    failing — a plot of its bounds, not of the root's verdict); the root when there is no comparison, or when the
    chosen one is certified without an interval (nothing to plot). ``source``: an ``AuditResult`` (its headline's view, a
    modelled distribution's population check included) or its ``nodes``."""
    from fairaudit.core.focus import choose, focus

    if hasattr(source, "node_info"):
        found, nodes = focus(source), source.nodes
    else:
        nodes = list(source)
        found = choose(nodes)
    if found is not None and (math.isfinite(found.margin) or found.verdict != "true"):
        return [found.id]
    return [str(nodes[0]["id"])] if nodes else []


def tree_signature(nodes: Sequence[Mapping[str, Any]]) -> tuple:
    """The identity of a tree: every node's id, parent, kind, name and text."""
    return tuple((str(n["id"]), n.get("parent"), n.get("kind"), n.get("name"), str(n.get("text", "")))
                 for n in nodes)


def _node_key(name: Any, text: Any) -> str:
    return f"name:{name}" if name else f"text:{text}"


def rebase_selection(selected: Sequence[str], old_signature: Sequence | None,
                     nodes: Sequence[Mapping[str, Any]]) -> list[str]:
    """The selection after the tree may have changed (a new run of an edited spec): ids of the same tree are
    kept; otherwise each selected node is looked up by its name (or, unnamed, its text) in the new tree and
    kept only where that key is unique in both trees — never by its id, which now names another node."""
    new_sig = tree_signature(nodes)
    ids = {row[0] for row in new_sig}
    if old_signature is not None and tuple(map(tuple, old_signature)) == new_sig:
        return [s for s in selected if s in ids]
    if not old_signature:
        return []
    old_key = {row[0]: _node_key(row[3], row[4]) for row in old_signature}
    old_count: dict[str, int] = {}
    for k in old_key.values():
        old_count[k] = old_count.get(k, 0) + 1
    new_by_key: dict[str, list[str]] = {}
    for row in new_sig:
        new_by_key.setdefault(_node_key(row[3], row[4]), []).append(row[0])
    out = []
    for s in selected:
        key = old_key.get(s)
        if key is not None and old_count[key] == 1 and len(new_by_key.get(key, [])) == 1:
            out.append(new_by_key[key][0])
    return out


def tree_key(signature: Sequence) -> str:
    """A short stable key for the tree chart widget: a new tree gets a new widget (no stale click state)."""
    import hashlib

    return hashlib.sha256(repr(tuple(signature)).encode("utf-8")).hexdigest()[:12]


