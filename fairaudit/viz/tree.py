"""The specification's syntax tree as a clickable Altair chart."""
from __future__ import annotations

import functools
import math
from typing import Any, Iterable, Mapping, Sequence

import altair as alt
import pandas as pd

from fairaudit.viz import _format
from fairaudit.viz.layout import tree_layout
from fairaudit.viz.palette import EXPLORATORY, SELECTED_STROKE, VERDICTS, normalise_verdict, verdict_scale
from fairaudit.viz.values import const_value, op_of, pretty, shown, shows_delta

#: name of the point selection on the tree (``event.selection[SELECTION]`` in Streamlit)
SELECTION = "node"

#: a node's symbol when it carries no ``op`` (a hand-built node list); a result's nodes always carry one
_KIND_SYMBOLS = {"and": "and", "or": "or", "not": "not", "add": "+", "sub": "−", "mul": "×", "div": "÷",
                 "neg": "−", "expect": "E", "fair": "Fair"}
_ARITH_WORD = {"add": "sum", "sub": "difference", "mul": "product", "div": "ratio"}


def spec_nodes(spec) -> list[dict[str, Any]]:
    """The node list of a parsed ``Spec`` before any run (``AuditResult.nodes`` without ``final``): ``id``,
    ``parent``, ``kind``, ``text``, ``op``, ``value``, ``name``."""
    from fairaudit.core.trace import node_infos

    return [{"id": i.id, "parent": i.parent, "kind": i.kind, "text": i.text,
             **({"op": i.op} if i.op is not None else {}), **({"value": i.value} if i.value is not None else {}),
             **({"name": i.name} if i.name else {})} for i in node_infos(spec)]


def as_nodes(nodes) -> list[Mapping[str, Any]]:
    """The node dicts of ``nodes``: a list of node dicts (``AuditResult.nodes``), an ``AuditResult`` or a ``Spec``."""
    if hasattr(nodes, "node_info") and hasattr(nodes, "nodes"):  # an AuditResult
        return list(nodes.nodes)
    if hasattr(nodes, "root") and hasattr(nodes, "nodes") and not isinstance(nodes, Mapping):  # a Spec
        return spec_nodes(nodes)
    return list(nodes)


def node_symbol(node: Mapping[str, Any]) -> str:
    """The symbol drawn in a node's circle: its ``op`` (``≤``, ``−``, ``and``), a constant's ``value``, ``E``/``Fair``
    for a leaf."""
    kind = str(node.get("kind", ""))
    if kind == "const":
        return _format.num(node["value"]) if node.get("value") is not None else str(node.get("text", ""))
    op = op_of(node)
    if op is not None:
        return pretty(op)
    return "cmp" if kind == "cmp" else _KIND_SYMBOLS.get(kind, kind[:4])


_BOOL_WORD = {"and": "all must hold", "or": "one must hold", "not": "must not hold"}
_EVENT_WORD = {"==": "=", "!=": "≠", "<=": "≤", ">=": "≥", "<": "<", ">": ">"}


def _word(operand) -> str:
    """A name or a literal of an event as a reader says it (no quotes)."""
    from fairaudit.spec import ast
    from fairaudit.spec.printer import format_number

    if isinstance(operand, ast.Name):
        return operand.name
    return operand.value if isinstance(operand.value, str) else format_number(operand.value)


def _conjuncts(event) -> list:
    from fairaudit.spec import ast

    if isinstance(event, ast.EvAnd):
        return _conjuncts(event.left) + _conjuncts(event.right)
    return [event]


def _plain_event(event, values_only: bool = True) -> str:
    """An event (``fairaudit.spec.ast``) as a reader says it: ``sex == "Male"`` -> ``sex = Male``; with
    ``values_only``, a conjunction of ``column == value`` -> the values only (``Male · Private``)."""
    from fairaudit.spec import ast

    parts = _conjuncts(event)
    if values_only and all(isinstance(p, ast.Compare) and p.op == "==" and isinstance(p.left, ast.Name)
                           and isinstance(p.right, ast.Value) for p in parts):
        return " · ".join(_word(p.right) for p in parts)

    def say(e, outer: bool = True) -> str:
        if isinstance(e, ast.Name):
            return e.name
        if isinstance(e, ast.Compare):
            return f"{_word(e.left)} {_EVENT_WORD.get(e.op, e.op)} {_word(e.right)}"
        if isinstance(e, ast.In):
            return f"{e.operand.name} {'not in' if e.negated else 'in'} {{{', '.join(_word(v) for v in e.values)}}}"
        if isinstance(e, ast.EvNot):
            return f"not {say(e.operand, False)}"
        word = "and" if isinstance(e, ast.EvAnd) else "or"
        text = f"{say(e.left, False)} {word} {say(e.right, False)}"
        return text if outer else f"({text})"

    return say(event)


@functools.lru_cache(maxsize=1024)
def expect_label(text: str) -> str:
    """Short label of an ``E[...]`` leaf: the group of its condition (``E[pred | sex == "Male"]`` -> ``Male``),
    from the leaf's parsed event (``fairaudit.spec``); a text that is not one ``E[...]`` stays as it is."""
    from fairaudit.base.errors import FairauditError
    from fairaudit.spec import ast, parse

    try:  # a spec is a condition: the leaf (a term) is parsed as the left side of one
        leaf = parse(f"{text} < 1").root.left
    except (FairauditError, ValueError, RecursionError, AttributeError):
        return text.strip()
    if not isinstance(leaf, ast.Expect):
        return text.strip()
    decision = isinstance(leaf.event, ast.Name) and leaf.event.reserved and leaf.event.name == "pred"
    if leaf.given is None:
        return "all rows" if decision else f"P({_plain_event(leaf.event, False)})"
    given = _plain_event(leaf.given)
    return given if decision else f"{_plain_event(leaf.event, False)} | {given}"


def short_labels(nodes: Sequence[Mapping[str, Any]], max_chars: int = 28) -> dict[str, str]:
    """A short, readable label per node (the full text stays in the tooltip and the node panel).

    ``E[...]`` leaves: the group of the condition; arithmetic: the children's labels around the operator
    (``Male − Female``), or the operation's name when that is too long; a comparison: its name and
    threshold (``sex_parity: < 0.1``); and/or/not: what they require (``all must hold``). Operators and thresholds
    come from the nodes' ``op`` and ``value``."""
    nodes = as_nodes(nodes)
    by_id = {str(n["id"]): n for n in nodes}
    kids: dict[str, list[str]] = {i: [] for i in by_id}
    for n in nodes:
        if n.get("parent") is not None and str(n["parent"]) in kids:
            kids[str(n["parent"])].append(str(n["id"]))
    memo: dict[str, str] = {}

    def text_of(nid: str) -> str:
        return str(by_id[nid].get("text", ""))

    def label(nid: str) -> str:
        if nid in memo:
            return memo[nid]
        n, ch = by_id[nid], kids[nid]
        kind = n.get("kind")
        name = n.get("name")
        if kind == "expect":
            out = expect_label(text_of(nid))
        elif kind == "fair":
            out = text_of(nid) or "Fair"
        elif kind == "const" or const_value(n, nodes) is not None:  # (a negated constant: its sign node)
            parent = by_id.get(str(n.get("parent")))
            out = "threshold" if parent is not None and parent.get("kind") == "cmp" else ""
        elif kind in _ARITH_WORD and len(ch) == 2:
            a, b = label(ch[0]), label(ch[1])
            sym = node_symbol(n)
            out = f"{a} {sym} {b}" if a and b and len(a) + len(b) + 3 <= max_chars else _ARITH_WORD[kind]
        elif kind == "neg" and ch:
            out = f"{node_symbol(n)}{label(ch[0])}"
        elif kind == "cmp" and len(ch) == 2:
            op = pretty(op_of(n))
            left, right = by_id[ch[0]], by_id[ch[1]]
            # "<0.1" without a space: a wrapped label never splits an operator from its threshold
            if not op:  # a node without its operator (a hand-built list): name its sides only
                sides = [node_symbol(by_id[c]) if by_id[c].get("kind") == "const" else label(c) for c in ch]
                out = name or " vs ".join(sides)
            elif const_value(right, nodes) is not None:  # a threshold (``0.1``, ``-0.1``)
                out = f"{op}{_format.num(const_value(right, nodes))}"
                out = f"{name}: {out}" if name else f"{label(ch[0])} {out}"
            elif const_value(left, nodes) is not None:
                out = f"{_format.num(const_value(left, nodes))}{op}"
                out = f"{name}: {out}" if name else f"{out} {label(ch[1])}"
            else:
                out = name or f"{label(ch[0])} {op} {label(ch[1])}"
        elif kind in _BOOL_WORD:
            kid_names = [by_id[c].get("name") for c in ch]
            joined = f" {kind} ".join(kid_names) if ch and all(kid_names) else ""
            # the parts' names when they fit whole; else what the node requires (never a cut name)
            out = joined if joined and len(joined) <= max_chars else _BOOL_WORD[kind]
        else:
            out = text_of(nid)
        memo[nid] = out
        return out

    return {nid: label(nid) for nid in by_id}


def tree_frame(nodes: Sequence[Mapping[str, Any]], label_width: int = 18, label_lines: int = 2) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tidy tables behind the tree chart: one row per node, one row per edge."""
    nodes = as_nodes(nodes)
    placed = {p.id: p for p in tree_layout(nodes)}
    shorts = short_labels(nodes, max_chars=label_width * label_lines)
    rows = []
    for n in nodes:
        nid = str(n["id"])
        p = placed[nid]
        final = n.get("final") or {}
        verdict = normalise_verdict(final.get("verdict"))
        text = str(n.get("text", ""))
        name = n.get("name")
        shown_text = f"{name}: {text}" if name else text
        rows.append({
            "id": nid,
            "parent": p.parent,
            "kind": n.get("kind", ""),
            "x": p.x,
            "depth": p.depth,
            "symbol": node_symbol(n),
            "label": _node_label(shorts[nid], name if n.get("kind") == "cmp" else None, label_width, label_lines),
            "text": shown_text,
            "verdict": verdict,
            "verdict_label": VERDICTS[verdict][0],
            **_value_columns(nid, nodes),
            "delta": _format.num(final.get("delta")),
            "delta_value": final.get("delta"),
        })
    frame = pd.DataFrame(rows)
    edges = [
        {"x": placed[r["parent"]].x, "y": placed[r["parent"]].depth, "x2": r["x"], "y2": r["depth"], "child": r["id"]}
        for r in rows if r["parent"] is not None
    ]
    edge_frame = pd.DataFrame(edges, columns=["x", "y", "x2", "y2", "child"])
    return frame, edge_frame


def _node_label(short: str, name: str | None, width: int, lines: int) -> str:
    """A node's label wrapped on word boundaries (``fairaudit.viz._format.wrap``: never inside a word, shortened
    with ``…`` at a word boundary; the full text is the tooltip's). A named comparison keeps its threshold whole on
    the last line and shortens only its name (``demographic_parity_…`` / ``≥0.8``)."""
    head = f"{name}: " if name else ""
    if head and short.startswith(head) and lines >= 2 and len(short) > width:
        rest = short[len(head):]
        return _format.wrap(f"{name}:", width, lines - 1) + "\n" + rest
    return _format.wrap_groups(short, width, lines)  # an intersection's group stays whole: "Female·Black ÷"


def _value_columns(node_id: str, nodes: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The tooltip's ``estimate`` and ``interval``: for a comparison, its compared term's value beside the
    threshold (never the evaluator's internal left − threshold), see ``fairaudit.viz.values``."""
    s = shown(node_id, nodes)
    estimate = s.fair or _format.num(s.value)
    if s.op is not None and (s.value is not None or s.fair):
        what = "left − right, " if s.quantity != "value" else ""
        estimate += f" ({what}threshold {s.threshold_text})"
    return {"estimate": estimate, "interval": _format.interval(s.lo, s.hi)}


def default_height(nodes: Sequence[Mapping[str, Any]]) -> int:
    depth = max((p.depth for p in tree_layout(as_nodes(nodes))), default=0)
    return int(min(900, max(260, 120 * (depth + 1) + 70)))


def tree_chart(
    nodes: Sequence[Mapping[str, Any]],
    selected: Iterable[str] | None = None,
    *,
    width: int = 900,
    height: int | None = None,
    title: str | None = None,
    guarantee: Any = None,
) -> alt.LayerChart:
    """The spec's syntax tree: nodes coloured by verdict, edges as rules, a point selection ``node`` on ``id``.

    ``nodes`` is the ``nodes`` list of the audit-result JSON contract (``id``, ``parent``, ``kind``, ``text``,
    ``op``, ``value``, ``final``; or the ``AuditResult`` itself), or a parsed ``Spec`` before a run (then every node
    is drawn as undecided / term). ``selected`` pre-selects node ids (at most two are shown highlighted;
    shift-click toggles a second node). ``guarantee`` (``result.guarantee``) decides whether the tooltip shows δ,
    the probability that a verdict is wrong: only for a probabilistic guarantee (without it: when some node has
    δ > 0).
    """
    nodes = as_nodes(nodes)
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
    with_delta = shows_delta(guarantee, frame["delta_value"])
    frame = frame.drop(columns=["delta_value"] + ([] if with_delta else ["delta"]))
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
        *([alt.Tooltip("delta:N", title="δ (failure probability)")] if with_delta else []),
        alt.Tooltip("verdict_label:N", title="verdict"),
    ]
    edge_layer = alt.Chart(edges).mark_rule(color="#9a9a9a", strokeWidth=1.6).encode(
        x=alt.X("x:Q", scale=x_scale, axis=None), y=alt.Y("y:Q", scale=y_scale, axis=None),
        x2="x2:Q", y2="y2:Q")
    base = alt.Chart(frame)
    node_layer = base.mark_point(filled=True, shape="circle", size=size, opacity=1, cursor="pointer").encode(
        x=X, y=Y,
        color=alt.Color("verdict_label:N", scale=verdict_scale(_keys(frame)),
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


def _keys(frame) -> tuple[str, ...]:
    """The verdict keys of the tree's legend: the four of every tree, and exploratory when a node is."""
    keys = ("true", "false", "unknown", "term")
    return keys + ((EXPLORATORY,) if (frame["verdict"] == EXPLORATORY).any() else ())
