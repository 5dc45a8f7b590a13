"""A comparison's charts and table (``fairaudit.comparison.CompareResult``): one colour per model, the same in every
chart (``fairaudit.viz.palette.model_colours``), on the dashboard and in the PDF.

* :func:`node_table` — one row per node of the specification: each model's value with its interval (and its verdict
  on a comparison or a boolean node), and for every pair of models the difference interval and its verdict
* :func:`models_convergence` — a node's interval for every model over the rows read (overlaid in one panel, or side by
  side with one panel per model and a shared y axis)
* :func:`difference_convergence` — a pair's difference interval (a − b) over the rows read, against the 0 line; the
  band wears the colour of the model that is certified lower, grey while undecided
* :func:`final_values_chart` — every node's last interval for every model, one row per node (the tree at a glance)

A comparison node ``l op r`` is shown as its margin ``l − r`` (what the comparison's verdict and difference are
about: the comparison holds when the margin is on the passing side of 0). A result of one look (an exact or verifier
engine) is drawn as points with their intervals, not as lines.
"""
from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from fairaudit.core.explain import interval, number
from fairaudit.viz.palette import DIFFERENCE_UNDECIDED, model_colours

BOOLEAN_KINDS = ("and", "or", "not")
MAX_POINTS = 400          # looks drawn per series (evenly spaced; the first and last always)
FOCUS_SHARE = 0.05        # the y axis fits the intervals from this share of the rows read on (the first rows'
                          # intervals are as wide as the quantity's range; they are drawn, clipped at the axis)
VERDICT_NAMES = {"true": "certified true", "false": "violated", "unknown": "undecided", None: ""}


# ------------------------------------------------------------------------------------------------ words and tables
def difference_word(verdict: str, a: str, b: str) -> str:
    """``a_lower`` → "A lower", ``b_lower`` → "B lower", ``undecided``, ``equal`` (the same for both)."""
    return {"a_lower": f"{a} lower", "b_lower": f"{b} lower", "equal": "equal"}.get(verdict, "undecided")


def _node_words(result) -> dict[str, str]:
    return {tn.id: ("margin of " if tn.kind == "cmp" else "") + tn.text for tn in result.tree.nodes}


def _verdict(series) -> str | None:
    if series.verdict is None or not len(series.verdict):
        return None
    return {1: "true", 0: "false"}.get(int(series.verdict[-1]), "unknown")


def _depths(result) -> dict[str, int]:
    depth: dict[str, int] = {}
    for tn in result.tree.nodes:
        depth[tn.id] = 0 if tn.parent is None else depth.get(tn.parent, 0) + 1
    return depth


def with_interval(estimate, lo, hi) -> str:
    """``0.0802 [0.0602, 0.105]``; the number alone when the interval is that point (an exact value)."""
    span = interval(lo, hi)
    shown = number(estimate)
    return span if span == shown else f"{shown} {span}"


def value_text(series, kind: str) -> str:
    """A model's last value of a node as the table shows it: ``0.0802 [0.0602, 0.105]``, with its verdict on a
    comparison ("… · certified true") and only the verdict on a boolean node."""
    verdict = _verdict(series)
    if kind in BOOLEAN_KINDS:
        return VERDICT_NAMES.get(verdict, "undecided")
    text = with_interval(series.estimate[-1], series.lo[-1], series.hi[-1])
    return f"{text} · {VERDICT_NAMES[verdict]}" if verdict else text


def spec_verdicts(result) -> str:
    """Each model's verdict of the whole specification, in one line: "A: certified true · B: undecided"."""
    root = result.tree.nodes[0].id
    return " · ".join(f"{name}: {VERDICT_NAMES.get(_verdict(result.model_series[name][root])) or 'no verdict'}"
                      for name in result.names)


def node_table(result) -> pd.DataFrame:
    """One row per node (constants left out), in the tree's order: ``id``, ``node`` (its text, indented by depth),
    ``kind``, then one column per model (its value, see :func:`value_text`), then per pair ``a − b`` (the difference
    interval) and ``a vs b`` (its verdict, :func:`difference_word`)."""
    by = {(d.node, d.a, d.b): d for d in result.differences}
    depth = _depths(result)
    rows = []
    for tn in result.tree.nodes:
        if tn.kind == "const":
            continue
        row = {"id": tn.id, "node": "· " * depth[tn.id] + tn.text, "kind": tn.kind}
        for name in result.names:
            row[name] = value_text(result.model_series[name][tn.id], tn.kind)
        for a, b in result.diff_series:
            d = by.get((tn.id, a, b))
            row[f"{a} − {b}"] = "" if d is None else (
                with_interval(d.estimate, d.lo, d.hi) if d.verdict != "equal" else "0")
            row[f"{a} vs {b}"] = "" if d is None else difference_word(d.verdict, a, b)
        rows.append(row)
    return pd.DataFrame(rows)


def chart_nodes(result) -> list[str]:
    """The nodes with a value to plot (terms and comparisons), the spec's comparisons first."""
    cmps = [tn.id for tn in result.tree.nodes if tn.kind == "cmp"]
    terms = [tn.id for tn in result.tree.nodes if tn.kind not in BOOLEAN_KINDS + ("cmp", "const")]
    return cmps + terms


def node_label(result, node_id: str, limit: int = 90) -> str:
    text = _node_words(result)[node_id]
    return f"{node_id}: " + (text if len(text) <= limit else text[:limit - 1] + "…")


# ------------------------------------------------------------------------------------------------ tidy series
def _kept(n: int, max_points: int = MAX_POINTS) -> np.ndarray:
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.r_[np.linspace(0, n - 1, max_points).round().astype(int), n - 1])


def series_frame(result, node_id: str, max_points: int = MAX_POINTS) -> pd.DataFrame:
    """Tidy: ``rows`` (read at the look), ``model``, ``estimate``, ``lo``, ``hi`` for every model at every kept
    look of ``node_id``."""
    keep = _kept(len(result.looks), max_points)
    parts = []
    for name in result.names:
        s = result.model_series[name][node_id]
        parts.append(pd.DataFrame({"rows": np.asarray(result.looks)[keep].astype(float), "model": name,
                                   "estimate": s.estimate[keep], "lo": s.lo[keep], "hi": s.hi[keep]}))
    return pd.concat(parts, ignore_index=True)


def difference_frame(result, node_id: str, a: str, b: str, max_points: int = MAX_POINTS) -> pd.DataFrame:
    """Tidy: ``rows``, ``estimate``, ``lo``, ``hi`` of ``a − b`` at every kept look of ``node_id``."""
    iv = result.diff_series[(a, b)][node_id]
    n = len(result.looks)
    keep = _kept(n, max_points)
    return pd.DataFrame({"rows": np.asarray(result.looks)[keep].astype(float),
                         "estimate": np.asarray(iv.estimate, float)[:n][keep],
                         "lo": np.asarray(iv.lo, float)[:n][keep], "hi": np.asarray(iv.hi, float)[:n][keep]})


def _domain(frame: pd.DataFrame, extra=()) -> tuple[float, float]:
    """A y range that fits the intervals from ``FOCUS_SHARE`` of the rows on (and ``extra`` values such as 0)."""
    last = float(frame["rows"].max())
    focus = frame[frame["rows"] >= FOCUS_SHARE * last]
    values = np.r_[focus[["lo", "hi", "estimate"]].to_numpy(float).ravel(), np.asarray(extra, float)]
    values = values[np.isfinite(values)]
    if not len(values):
        return (-1.0, 1.0)
    lo, hi = float(values.min()), float(values.max())
    pad = 0.06 * (hi - lo) if hi > lo else max(abs(lo) * 0.1, 0.01)
    return lo - pad, hi + pad


def _clip(frame: pd.DataFrame, domain) -> pd.DataFrame:
    out = frame.copy()
    for col in ("lo", "hi", "estimate"):
        out[col + "_plot"] = out[col].clip(*domain)
    out["interval"] = [interval(lo, hi) for lo, hi in zip(out["lo"], out["hi"])]
    return out


def _x(frame: pd.DataFrame, single: bool):
    if single:
        return None
    first, last = float(frame["rows"].min()), float(frame["rows"].max())
    return alt.X("rows:Q", title="rows read (log scale)",
                 scale=alt.Scale(type="log", domain=[max(first, 1.0), last], nice=False),
                 axis=alt.Axis(format="~s"))


def _y_title(result, node_id: str) -> str:
    kind = result.tree_kind(node_id)
    return "margin (left − right)" if kind == "cmp" else "value"


# ------------------------------------------------------------------------------------------------ charts
#: the declared width and height are the plot's own: Streamlit's default "fit" autosize would squeeze the title, the
#: legend on top and the axes into the height and leave the plotted area almost none (as ``rates_chart``)
PAD = alt.AutoSizeParams(type="pad", contains="padding")


def models_convergence(result, node_id: str, *, width: int = 620, height: int = 240,
                       layout: str = "overlay") -> alt.Chart:
    """``node_id``'s estimate and interval for every model over the rows read, one colour per model; a comparison's
    margin with the 0 line it is judged against. ``layout``: ``overlay`` (one panel) or ``columns`` (one panel per
    model, shared axes)."""
    colours = model_colours(result.names)
    colour = alt.Color("model:N", title="model", sort=list(result.names),
                       scale=alt.Scale(domain=list(result.names), range=[colours[n] for n in result.names]),
                       legend=alt.Legend(orient="top", symbolOpacity=1))
    frame = series_frame(result, node_id)
    single = frame["rows"].nunique() == 1
    is_cmp = result.tree_kind(node_id) == "cmp"
    domain = _domain(frame, [0.0] if is_cmp else [])
    frame = _clip(frame, domain)
    y_scale = alt.Scale(domain=list(domain), nice=False, zero=False)
    tip = [alt.Tooltip("model:N"), alt.Tooltip("rows:Q", format=","), alt.Tooltip("estimate:Q", format=".4g"),
           alt.Tooltip("interval:N")]
    title = node_label(result, node_id)

    def panel(data: pd.DataFrame, w: int) -> alt.LayerChart:
        if single:
            x = alt.X("model:N", title=None, sort=list(result.names), axis=alt.Axis(labelAngle=0))
            layers = [alt.Chart(data).mark_rule(strokeWidth=3).encode(
                          x=x, y=alt.Y("lo_plot:Q", title=_y_title(result, node_id), scale=y_scale), y2="hi_plot:Q",
                          color=colour, tooltip=tip),
                      alt.Chart(data).mark_point(filled=True, size=70).encode(x=x, y="estimate_plot:Q", color=colour,
                                                                              tooltip=tip)]
        else:
            x = _x(data, single)
            layers = [alt.Chart(data).mark_area(opacity=0.18, clip=True).encode(
                          x=x, y=alt.Y("lo_plot:Q", title=_y_title(result, node_id), scale=y_scale), y2="hi_plot:Q",
                          color=colour, tooltip=tip),
                      alt.Chart(data).mark_line(strokeWidth=1.2, strokeDash=[3, 2], clip=True).encode(
                          x=x, y="lo_plot:Q", color=colour, detail="model:N"),
                      alt.Chart(data).mark_line(strokeWidth=1.2, strokeDash=[3, 2], clip=True).encode(
                          x=x, y="hi_plot:Q", color=colour, detail="model:N"),
                      alt.Chart(data).mark_line(strokeWidth=2, clip=True).encode(x=x, y="estimate_plot:Q",
                                                                                 color=colour, tooltip=tip)]
        if is_cmp:
            layers.append(alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(strokeDash=[6, 4], color="#444444")
                          .encode(y="zero:Q"))
        return alt.layer(*layers).properties(width=w, height=height)

    if layout == "columns" and not single and len(result.names) > 1:
        w = max(160, int(width / len(result.names)) - 12)
        panels = [panel(frame[frame["model"] == name], w).properties(title=name) for name in result.names]
        return alt.hconcat(*panels, spacing=10).properties(title=title, autosize=PAD).resolve_scale(y="shared")
    return panel(frame, width).properties(title=title, autosize=PAD)


def difference_convergence(result, node_id: str, a: str | None = None, b: str | None = None, *, width: int = 620,
                           height: int = 200) -> alt.LayerChart | None:
    """``a − b`` of ``node_id`` (default: the first two models) and its interval over the rows read, with the 0 line
    and, once decided, the row at which it was decided (a boolean node: the difference of its slack,
    ``fairaudit.comparison.difference``); None for a node without a difference (a slack over ``==``/``!=``)."""
    a, b = a or result.names[0], b or result.names[1]
    if node_id not in result.diff_series.get((a, b), {}):
        return None
    d = result.difference(node_id, a, b)
    colours = model_colours(result.names)
    colour = {"a_lower": colours[a], "b_lower": colours[b]}.get(d.verdict, DIFFERENCE_UNDECIDED)
    frame = difference_frame(result, node_id, a, b)
    single = frame["rows"].nunique() == 1
    domain = _domain(frame, [0.0])
    frame = _clip(frame, domain)
    what = "slack: " if d.kind in ("and", "or", "not") else ""
    y = alt.Y("lo_plot:Q", title=f"{what}{a} − {b}", scale=alt.Scale(domain=list(domain), nice=False, zero=False))
    tip = [alt.Tooltip("rows:Q", format=","), alt.Tooltip("estimate:Q", format=".4g"), alt.Tooltip("interval:N")]
    if single:
        x = alt.X("pair:N", title=None, axis=alt.Axis(labelAngle=0))
        frame["pair"] = f"{a} − {b}"
        layers = [alt.Chart(frame).mark_rule(strokeWidth=3, color=colour).encode(x=x, y=y, y2="hi_plot:Q", tooltip=tip),
                  alt.Chart(frame).mark_point(filled=True, size=70, color="#222222").encode(x=x, y="estimate_plot:Q",
                                                                                           tooltip=tip)]
    else:
        x = _x(frame, single)
        layers = [alt.Chart(frame).mark_area(opacity=0.3, color=colour, clip=True).encode(x=x, y=y, y2="hi_plot:Q",
                                                                                          tooltip=tip),
                  alt.Chart(frame).mark_line(strokeWidth=2, color="#222222", clip=True).encode(
                      x=x, y="estimate_plot:Q", tooltip=tip)]
        if d.decided_at:
            layers.append(alt.Chart(pd.DataFrame({"rows": [float(d.decided_at)], "what": [
                f"decided after {d.decided_at:,} rows"]})).mark_rule(color=colour, strokeWidth=1.5).encode(
                x="rows:Q", tooltip=[alt.Tooltip("what:N", title="")]))
    layers.append(alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(strokeDash=[6, 4], color="#444444")
                  .encode(y="zero:Q"))
    verdict = difference_word(d.verdict, a, b)
    what = "margin" if d.kind == "cmp" else "value"
    return alt.layer(*layers).properties(
        width=width, height=height, autosize=PAD,
        title=alt.TitleParams(f"{a} − {b} of the {what} of {node_label(result, node_id, 70)}",
                              subtitle=f"final: {interval(d.lo, d.hi)} — {verdict}"
                                       + (f" (decided after {d.decided_at:,} rows)" if d.decided_at else "")))


def final_values_chart(result, *, width: int = 560, row_height: int = 26) -> alt.LayerChart:
    """Every plotted node's last interval and estimate for every model: one row per node (its id and text), the
    models side by side within the row, one colour per model; comparisons as margins with the 0 line."""
    colours = model_colours(result.names)
    colour = alt.Color("model:N", title="model", sort=list(result.names),
                       scale=alt.Scale(domain=list(result.names), range=[colours[n] for n in result.names]),
                       legend=alt.Legend(orient="top"))
    records = []
    for nid in chart_nodes(result):
        for name in result.names:
            s = result.model_series[name][nid]
            lo, hi, est = float(s.lo[-1]), float(s.hi[-1]), float(s.estimate[-1])
            records.append({"node": node_label(result, nid, 60), "model": name, "estimate": est, "lo": lo, "hi": hi,
                            "interval": interval(lo, hi)})
    frame = pd.DataFrame(records)
    values = frame[["lo", "hi", "estimate"]].to_numpy(float).ravel()
    values = np.r_[values[np.isfinite(values)], 0.0]
    span = float(values.max() - values.min()) or 1.0
    domain = [float(values.min()) - 0.05 * span, float(values.max()) + 0.05 * span]
    for col in ("lo", "hi"):
        frame[col + "_plot"] = frame[col].clip(*domain)
    order = list(dict.fromkeys(frame["node"]))
    y = alt.Y("node:N", title=None, sort=order, axis=alt.Axis(labelLimit=420))
    offset = alt.YOffset("model:N", sort=list(result.names))
    x = alt.X("lo_plot:Q", title="value (comparisons: margin left − right)",
              scale=alt.Scale(domain=domain, nice=False, zero=False))
    tip = [alt.Tooltip("node:N"), alt.Tooltip("model:N"), alt.Tooltip("estimate:Q", format=".4g"),
           alt.Tooltip("interval:N")]
    rules = alt.Chart(frame).mark_rule(strokeWidth=3).encode(y=y, yOffset=offset, x=x, x2="hi_plot:Q", color=colour,
                                                              tooltip=tip)
    points = alt.Chart(frame).mark_point(filled=True, size=40, color="#222222").encode(
        y=y, yOffset=offset, x="estimate:Q", tooltip=tip)
    zero = alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(strokeDash=[6, 4], color="#444444").encode(x="zero:Q")
    return alt.layer(rules, points, zero).properties(width=width, height=row_height * len(order), autosize=PAD,
                                                     title="Every node's final interval, per model")
