"""The specification's syntax tree as a clickable Altair chart."""
from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

import altair as alt
import pandas as pd

from fairaudit.viz import _format
from fairaudit.viz.layout import tree_layout
from fairaudit.viz.palette import SELECTED_STROKE, VERDICTS, normalise_verdict, verdict_scale

#: name of the point selection on the tree (``event.selection[SELECTION]`` in Streamlit)
SELECTION = "node"

_SYMBOLS = {"and": "and", "or": "or", "not": "not", "add": "+", "sub": "−", "mul": "×", "div": "÷",
            "neg": "−", "expect": "E", "fair": "Fair"}
_CMP = ("<=", ">=", "==", "!=", "<", ">")
_CMP_PRETTY = {"<=": "≤", ">=": "≥", "==": "=", "!=": "≠", "<": "<", ">": ">"}


def comparison_operator(text: str) -> str | None:
    """The comparison operator at bracket depth 0 of a cmp node's text (``E[a < 1] < 0.5`` -> ``<``)."""
    depth = 0
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'`":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            for op in _CMP:
                if text.startswith(op, i):
                    return op
        i += 1
    return None


def node_symbol(node: Mapping[str, Any]) -> str:
    kind = str(node.get("kind", ""))
    if kind == "cmp":
        op = node.get("op") or comparison_operator(str(node.get("text", "")))
        return _CMP_PRETTY.get(op, "cmp") if op else "cmp"
    if kind == "const":
        return _format.num(node.get("value", _const_value(node)), 3).rstrip("0").rstrip(".") or "0"
    return _SYMBOLS.get(kind, kind[:4])


def _const_value(node: Mapping[str, Any]) -> Any:
    final = node.get("final") or {}
    if final.get("estimate") is not None:
        return final["estimate"]
    try:
        return float(str(node.get("text", "")).strip())
    except ValueError:
        return node.get("text")


def tree_frame(nodes: Sequence[Mapping[str, Any]], label_width: int = 18, label_lines: int = 2) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tidy tables behind the tree chart: one row per node, one row per edge."""
    placed = {p.id: p for p in tree_layout(nodes)}
    names = {str(n["id"]): n.get("name") for n in nodes}
    kids: dict[str, list[str]] = {}
    for n in nodes:
        if n.get("parent") is not None:
            kids.setdefault(str(n["parent"]), []).append(str(n["id"]))
    rows = []
    for n in nodes:
        nid = str(n["id"])
        p = placed[nid]
        final = n.get("final") or {}
        verdict = normalise_verdict(final.get("verdict"))
        text = str(n.get("text", ""))
        name = n.get("name")
        shown = f"{name}: {text}" if name else text
        kid_names = [names.get(c) for c in kids.get(nid, [])]
        short = shown
        if n.get("kind") in ("and", "or") and kid_names and all(kid_names):
            # a conjunction of named parts reads better as "sex_parity and race_parity"
            short = f" {n['kind']} ".join(kid_names)
        rows.append({
            "id": nid,
            "parent": p.parent,
            "kind": n.get("kind", ""),
            "x": p.x,
            "depth": p.depth,
            "symbol": node_symbol(n),
            "label": _format.wrap(short, label_width, label_lines),
            "text": shown,
            "verdict": verdict,
            "verdict_label": VERDICTS[verdict][0],
            "estimate": _format.num(final.get("estimate")),
            "interval": _format.interval(final.get("lo"), final.get("hi")),
            "delta": _format.num(final.get("delta"), 4),
        })
    frame = pd.DataFrame(rows)
    edges = [
        {"x": placed[r["parent"]].x, "y": placed[r["parent"]].depth, "x2": r["x"], "y2": r["depth"], "child": r["id"]}
        for r in rows if r["parent"] is not None
    ]
    edge_frame = pd.DataFrame(edges, columns=["x", "y", "x2", "y2", "child"])
    return frame, edge_frame


def default_height(nodes: Sequence[Mapping[str, Any]]) -> int:
    depth = max((p.depth for p in tree_layout(nodes)), default=0)
    return int(min(900, max(260, 120 * (depth + 1) + 70)))


def tree_chart(
    nodes: Sequence[Mapping[str, Any]],
    selected: Iterable[str] | None = None,
    *,
    width: int = 900,
    height: int | None = None,
    title: str | None = None,
) -> alt.LayerChart:
    """The spec's syntax tree: nodes coloured by verdict, edges as rules, a point selection ``node`` on ``id``.

    ``nodes`` is the ``nodes`` list of the audit-result JSON contract (``id``, ``parent``, ``kind``, ``text``,
    ``final``); before a run, ``final`` may be missing and every node is drawn as undecided / term.
    ``selected`` pre-selects node ids (at most two are shown highlighted; shift-click toggles a second node).
    """
    nodes = list(nodes)
    if not nodes:
        raise ValueError("tree_chart needs at least one node")
    height = height or default_height(nodes)
    placed = tree_layout(nodes)
    n_cols = max(p.x for p in placed) + 1
    max_depth = max(p.depth for p in placed)
    unit_px = width / n_cols
    # label box: one column unit wide; ~6.3 px per character at font size 11
    label_width = max(8, int(unit_px * 0.92 / 6.3))
    row_px = height / (max_depth + 1.2)
    radius = max(9.0, min(22.0, unit_px * 0.22, row_px * 0.2))
    lines = int(max(1, min(3, (row_px - 2 * radius - 14) // 13)))
    frame, edges = tree_frame(nodes, label_width=label_width, label_lines=lines)
    size = math.pi * radius**2

    x_scale = alt.Scale(domain=[-0.5, n_cols - 0.5], nice=False, zero=False)
    y_scale = alt.Scale(domain=[-0.45, max_depth + 0.75], reverse=True, nice=False, zero=False)
    X = alt.X("x:Q", scale=x_scale, axis=None)
    Y = alt.Y("depth:Q", scale=y_scale, axis=None)

    picked = [{"id": str(i)} for i in (selected or [])][:2]
    kwargs: dict[str, Any] = {}
    if picked:
        kwargs["value"] = picked
    sel = alt.selection_point(name=SELECTION, fields=["id"], empty=False, on="click",
                              toggle="event.shiftKey", clear="dblclick", **kwargs)

    tooltip = [
        alt.Tooltip("id:N", title="id"),
        alt.Tooltip("text:N", title="expression"),
        alt.Tooltip("kind:N", title="kind"),
        alt.Tooltip("estimate:N", title="estimate"),
        alt.Tooltip("interval:N", title="interval"),
        alt.Tooltip("delta:N", title="δ"),
        alt.Tooltip("verdict_label:N", title="verdict"),
    ]
    edge_layer = alt.Chart(edges).mark_rule(color="#9a9a9a", strokeWidth=1.6).encode(
        x=alt.X("x:Q", scale=x_scale, axis=None), y=alt.Y("y:Q", scale=y_scale, axis=None),
        x2="x2:Q", y2="y2:Q")
    base = alt.Chart(frame)
    node_layer = base.mark_point(filled=True, shape="circle", size=size, opacity=1, cursor="pointer").encode(
        x=X, y=Y,
        color=alt.Color("verdict_label:N", scale=verdict_scale(),
                        legend=alt.Legend(title="verdict", orient="top", direction="horizontal",
                                          symbolSize=160, labelFontSize=12, titleFontSize=12)),
        stroke=alt.condition(sel, alt.value(SELECTED_STROKE), alt.value("#ffffff")),
        strokeWidth=alt.condition(sel, alt.value(4), alt.value(1.5)),
        tooltip=tooltip,
    ).add_params(sel)
    halo = base.mark_point(shape="circle", filled=False, size=size * 2.1, strokeWidth=2.5,
                           color=SELECTED_STROKE, strokeDash=[4, 3]).encode(
        x=X, y=Y, opacity=alt.condition(sel, alt.value(1), alt.value(0)), tooltip=tooltip)
    symbol_layer = base.mark_text(fontSize=max(9, int(radius * 0.62)), fontWeight="bold", color="white",
                                  baseline="middle", cursor="pointer").encode(x=X, y=Y, text="symbol:N", tooltip=tooltip)
    label_kw = dict(fontSize=11, baseline="top", dy=radius + 5, lineBreak="\n", cursor="pointer")
    # a white outline under the label keeps it readable where an edge passes behind it
    label_halo = base.mark_text(color="white", stroke="white", strokeWidth=4, strokeJoin="round", **label_kw).encode(
        x=X, y=Y, text="label:N", tooltip=tooltip)
    label_layer = base.mark_text(color="#222222", **label_kw).encode(x=X, y=Y, text="label:N", tooltip=tooltip)
    chart = alt.layer(edge_layer, halo, node_layer, symbol_layer, label_halo, label_layer).properties(
        width=width, height=height)
    if title:
        chart = chart.properties(title=title)
    return chart.configure_view(strokeWidth=0)
