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
about: the comparison holds when the margin is on the passing side of 0), except a *ratio* compared with a constant
(``E[…] / E[…] >= 0.8``) and a ratio term: those are drawn as the ratio itself on a log scale, where 0.8 and 1.25 sit
equally far from 1 (parity, dotted) and the threshold is a dashed line. Every y axis is limited to where the intervals
are (:func:`axis_domain`): a ratio axis never reaches past ``[1/RATIO_LIMIT, RATIO_LIMIT]``, and an interval that
reaches past the axis (an infinite or huge bound) is drawn to its edge and marked "beyond" (▲/▼) at the last look,
its true bounds in the tooltip. A result of one look (an exact or verifier engine) is drawn as points with their
intervals, not as lines.
"""
from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd

from fairaudit.comparison.wording import difference_word, model_verdict_word  # noqa: F401 (re-exported)
from fairaudit.core.explain import interval, number
from fairaudit.viz.palette import DIFFERENCE_UNDECIDED, model_colours

BOOLEAN_KINDS = ("and", "or", "not")
MAX_POINTS = 400          # looks drawn per series (evenly spaced; the first and last always)
FOCUS_SHARE = 0.05        # the y axis fits the intervals from this share of the rows read on (the first rows'
                          # intervals are as wide as the quantity's range; they are drawn, clipped at the axis)
RATIO_LIMIT = 20.0        # a ratio's axis stays inside [1/20, 20] (log scale); bounds past it are marked "beyond"
REACH = 3.0               # the axis reaches at most this many final-interval spans past the final intervals
BEYOND_NOTE = "bounds past the axis are drawn to its edge (▲/▼ beyond)"


# ------------------------------------------------------------------------------------------------ words and tables
# the words are the comparison's own (``fairaudit.comparison.wording``), which are ``fairaudit.core.explain``'s


def _node_words(result) -> dict[str, str]:
    """Every node in words (``fairaudit.comparison.wording.node_words``: its clause name, else from the syntax tree),
    never its id: ids stay internal (widget values, keys)."""
    from fairaudit.comparison.wording import node_words

    return {tn.id: node_words(result.tree, tn.id) for tn in result.tree.nodes}


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
        return model_verdict_word(verdict or "unknown")
    text = with_interval(series.estimate[-1], series.lo[-1], series.hi[-1])
    return f"{text} · {model_verdict_word(verdict)}" if verdict else text


def spec_verdicts(result) -> str:
    """Each model's verdict of the whole specification, in one line: "A: certified true · B: undecided"."""
    root = result.tree.nodes[0].id
    return " · ".join(f"{name}: {model_verdict_word(_verdict(result.model_series[name][root])) or 'no verdict'}"
                      for name in result.names)


def node_table(result) -> pd.DataFrame:
    """One row per node (constants left out), in the tree's order: ``id`` (internal: never shown), ``node`` (its
    words, indented by depth),
    ``kind``, then one column per model (its value, see :func:`value_text`), then per pair ``a − b`` (the difference
    interval) and ``a vs b`` (its verdict, :func:`difference_word`)."""
    by = {(d.node, d.a, d.b): d for d in result.differences}
    depth = _depths(result)
    words = _node_words(result)
    rows = []
    for tn in result.tree.nodes:
        if tn.kind == "const":
            continue
        row = {"id": tn.id, "node": "· " * depth[tn.id] + words[tn.id], "kind": tn.kind}
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
    """A node as a label names it: its clause name or its words (:func:`_node_words`), ended at a word boundary with
    "…" past ``limit`` characters (``fairaudit.viz._format.wrap``); never its id."""
    from fairaudit.viz._format import wrap

    return wrap(_node_words(result)[node_id], limit, lines=1)


# ------------------------------------------------------------------------------------------------ ratios
def _plain_nodes(result) -> list[dict]:
    """The tree as the node dicts ``fairaudit.core.explain`` reads (id, parent, kind, op, value)."""
    out = []
    for tn in result.tree.nodes:
        out.append({"id": tn.id, "parent": tn.parent, "kind": tn.kind, "op": getattr(tn.node, "op", None),
                    "value": getattr(tn.node, "value", None) if tn.kind == "const" else None})
    return out


def _positive(result, node_id: str) -> bool:
    return all(np.isfinite(e := float(result.model_series[n][node_id].estimate[-1])) and e > 0
               for n in result.names)


def ratio_view(result, node_id: str) -> tuple[str, float | None] | None:
    """``(ratio node, threshold)`` when ``node_id`` is drawn as a ratio on a log scale: a comparison of a ratio
    (``a / b``) with a constant (its threshold), or a ratio term (threshold None); None otherwise (a ratio that is
    not positive for every model is drawn as it is, on a linear scale)."""
    from fairaudit.viz.values import comparison_parts

    kind = result.tree_kind(node_id)
    if kind == "div":
        return (node_id, None) if _positive(result, node_id) else None
    if kind != "cmp":
        return None
    parts = comparison_parts(node_id, _plain_nodes(result))
    if parts is None or parts[0]["kind"] != "div" or not _positive(result, str(parts[0]["id"])):
        return None
    return str(parts[0]["id"]), float(parts[2])


def _ratio_cmp(result, node_id: str) -> bool:
    """A comparison of a ratio with a constant (whose difference is still of its margin, on a linear axis)."""
    from fairaudit.viz.values import comparison_parts

    if result.tree_kind(node_id) != "cmp":
        return False
    parts = comparison_parts(node_id, _plain_nodes(result))
    return parts is not None and parts[0]["kind"] == "div"


def axis_domain(frame: pd.DataFrame, extra=(), *, log: bool = False, limit: float | None = None,
                focus: float = FOCUS_SHARE) -> tuple[float, float]:
    """A y range limited to where the intervals are: the final intervals (the last look's ``lo``/``hi``) and
    ``extra`` (0, a threshold, 1) always, the intervals and estimates from ``focus`` of the rows read on as far as
    ``REACH`` final spans past them, and never past ``limit`` (``±limit``; on a ``log`` scale ``[1/limit, limit]``).
    An infinite or huge bound is left outside: the chart draws it to the edge."""
    def t(values):
        v = np.asarray(values, float).ravel()
        v = v[np.isfinite(v)]
        if log:
            v = np.log(v[v > 0])
        return v[np.isfinite(v)]

    if "rows" in frame and len(frame):
        last = float(frame["rows"].max())
        final = frame[frame["rows"] == last]
        focused = frame[frame["rows"] >= focus * last]
    else:
        final = focused = frame
    cap = None if limit is None else (math.log(limit) if log else float(limit))
    core = np.r_[t(final[["lo", "hi", "estimate"]].to_numpy(float)), t(extra)]
    if cap is not None:
        core = core[np.abs(core) <= cap]
    around = t(focused[["lo", "hi", "estimate"]].to_numpy(float))
    if not len(core):
        core = around[np.abs(around) <= cap] if cap is not None else around
    if not len(core):
        lo, hi = (-math.log(2.0), math.log(2.0)) if log else (-1.0, 1.0)
    else:
        lo, hi = float(core.min()), float(core.max())
        span = max(hi - lo, math.log(1.25) if log else 0.02)
        if len(around):
            lo = max(min(lo, float(around.min())), lo - REACH * span)
            hi = min(max(hi, float(around.max())), hi + REACH * span)
        if cap is not None:
            lo, hi = max(lo, -cap), min(hi, cap)
    pad = 0.06 * (hi - lo) if hi > lo else max(abs(lo) * 0.1, 0.05 if log else 0.01)
    lo, hi = lo - pad, hi + pad
    if cap is not None:  # the stated limit holds, padding included
        lo, hi = max(lo, -cap), min(hi, cap)
    return (float(math.exp(lo)), float(math.exp(hi))) if log else (lo, hi)


def _beyond(frame: pd.DataFrame, domain, by: str | None = None) -> pd.DataFrame:
    """The last look's bounds that reach past the axis (per ``by`` group): one row per bound with ``y`` at the
    edge, ``shape`` (▲ past the top, ▼ past the bottom) and the true bound in ``what``."""
    rows = []
    last = frame[frame["rows"] == frame["rows"].max()] if "rows" in frame else frame
    for _, r in last.iterrows():
        for col, edge, shape, word in (("hi", domain[1], "triangle-up", "upper"),
                                       ("lo", domain[0], "triangle-down", "lower")):
            v = float(r[col])
            past = v > edge if col == "hi" else v < edge
            if past or not np.isfinite(v):
                rows.append({**({by: r[by]} if by else {}), **({"rows": r["rows"]} if "rows" in r else {}),
                             "y": edge, "shape": shape, "label": "beyond",
                             "what": f"{word} bound {number(v)}: beyond the axis"})
    cols = ([by] if by else []) + (["rows"] if "rows" in frame else []) + ["y", "shape", "label", "what"]
    return pd.DataFrame(rows, columns=cols)


def _beyond_layers(marks: pd.DataFrame, x, colour=None) -> list:
    if marks.empty:
        return []
    enc = dict(x=x, y=alt.Y("y:Q"), shape=alt.Shape("shape:N", scale=None, legend=None),
               tooltip=[alt.Tooltip("what:N", title="")])
    if colour is not None:
        enc["color"] = colour
    points = alt.Chart(marks).mark_point(filled=True, size=90, opacity=1, clip=False).encode(**enc)
    text = alt.Chart(marks).mark_text(dx=10, align="left", fontSize=10, color="#333333", clip=False).encode(
        x=x, y="y:Q", text="label:N", tooltip=[alt.Tooltip("what:N", title="")])
    return [points, text]


def _ratio_axis(domain) -> alt.Axis:
    """Ticks at the round ratios inside the domain, 0.8 and 1.25 among them."""
    wide = domain[1] / domain[0] > 8
    ticks = [v for v in ((0.05, 0.1, 0.2, 0.5, 0.8, 1.0, 1.25, 2.0, 5.0, 10.0, 20.0) if wide else
                         (0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.25, 1.6, 2.0, 3.0, 5.0))
             if domain[0] <= v <= domain[1]]
    return alt.Axis(values=ticks, format="~g") if len(ticks) >= 2 else alt.Axis(format="~g")


def _reference_rules(threshold: float | None, y_scale) -> list:
    """Parity (1, dotted) and the threshold (dashed), when inside the axis."""
    lo, hi = y_scale.domain
    rows = [{"y": 1.0, "what": "parity (ratio 1)", "dash": "parity"}]
    if threshold is not None and threshold != 1.0:
        rows.append({"y": float(threshold), "what": f"threshold {number(threshold)}", "dash": "threshold"})
    rows = [r for r in rows if lo <= r["y"] <= hi]
    out = []
    for r in rows:
        dash = [2, 3] if r["dash"] == "parity" else [6, 4]
        out.append(alt.Chart(pd.DataFrame([r])).mark_rule(strokeDash=dash, color="#444444").encode(
            y=alt.Y("y:Q", scale=y_scale), tooltip=[alt.Tooltip("what:N", title="")]))
    return out


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
    margin with the 0 line it is judged against, a ratio (or a ratio compared with a constant) as the ratio on a log
    scale with its threshold and parity (:func:`ratio_view`). ``layout``: ``overlay`` (one panel) or ``columns`` (one
    panel per model, shared axes)."""
    colours = model_colours(result.names)
    colour = alt.Color("model:N", title="model", sort=list(result.names),
                       scale=alt.Scale(domain=list(result.names), range=[colours[n] for n in result.names]),
                       legend=alt.Legend(orient="top", symbolOpacity=1))
    ratio = ratio_view(result, node_id)
    frame = series_frame(result, node_id if ratio is None else ratio[0])
    single = frame["rows"].nunique() == 1
    is_cmp = result.tree_kind(node_id) == "cmp" and ratio is None
    if ratio is not None:
        threshold = ratio[1]
        extra = [1.0] + ([threshold, 1.0 / threshold] if threshold else [])
        domain = axis_domain(frame, extra, log=True, limit=RATIO_LIMIT)
        y_scale = alt.Scale(type="log", domain=list(domain), nice=False, zero=False)
        y_title = "ratio (log scale)"
        y_axis = _ratio_axis(domain)
    else:
        domain = axis_domain(frame, [0.0] if is_cmp else [])
        y_scale = alt.Scale(domain=list(domain), nice=False, zero=False)
        y_title = _y_title(result, node_id)
        y_axis = alt.Axis()
    frame = _clip(frame, domain)
    tip = [alt.Tooltip("model:N"), alt.Tooltip("rows:Q", format=","), alt.Tooltip("estimate:Q", format=".4g"),
           alt.Tooltip("interval:N")]
    title = node_label(result, node_id)
    marks = _beyond(frame, domain, by="model")
    notes = [] if not is_cmp else ["its margin: left side minus right side, against 0"]
    if ratio is not None:
        notes.append("log scale: 0.8 and 1.25 sit equally far from parity (1, dotted)"
                     + (f"; dashed: the threshold {number(ratio[1])}" if ratio[1] is not None else ""))
    if not marks.empty or ratio is not None:
        notes.append(BEYOND_NOTE)

    def panel(data: pd.DataFrame, w: int) -> alt.LayerChart:
        y = alt.Y("lo_plot:Q", title=y_title, scale=y_scale, axis=y_axis)
        if single:
            x = alt.X("model:N", title=None, sort=list(result.names), axis=alt.Axis(labelAngle=0))
            layers = [alt.Chart(data).mark_rule(strokeWidth=3).encode(
                          x=x, y=y, y2="hi_plot:Q", color=colour, tooltip=tip),
                      alt.Chart(data).mark_point(filled=True, size=70).encode(
                          x=x, y=alt.Y("estimate_plot:Q", scale=y_scale), color=colour, tooltip=tip)]
        else:
            x = _x(data, single)
            layers = [alt.Chart(data).mark_area(opacity=0.18, clip=True).encode(
                          x=x, y=y, y2="hi_plot:Q", color=colour, tooltip=tip),
                      alt.Chart(data).mark_line(strokeWidth=1.2, strokeDash=[3, 2], clip=True).encode(
                          x=x, y=alt.Y("lo_plot:Q", scale=y_scale), color=colour, detail="model:N"),
                      alt.Chart(data).mark_line(strokeWidth=1.2, strokeDash=[3, 2], clip=True).encode(
                          x=x, y=alt.Y("hi_plot:Q", scale=y_scale), color=colour, detail="model:N"),
                      alt.Chart(data).mark_line(strokeWidth=2, clip=True).encode(
                          x=x, y=alt.Y("estimate_plot:Q", scale=y_scale), color=colour, tooltip=tip)]
        if is_cmp:
            layers.append(alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(strokeDash=[6, 4], color="#444444")
                          .encode(y=alt.Y("zero:Q", scale=y_scale)))
        if ratio is not None:
            layers += _reference_rules(ratio[1], y_scale)
        names = set(data["model"])
        shown = marks[marks["model"].isin(names)]
        layers += _beyond_layers(shown, alt.X("model:N", sort=list(result.names)) if single else
                                 _x(data, single), colour)
        return alt.layer(*layers).properties(width=w, height=height)

    head = alt.TitleParams(title, subtitle=notes or "", anchor="middle")
    if layout == "columns" and not single and len(result.names) > 1:
        w = max(160, int(width / len(result.names)) - 12)
        panels = [panel(frame[frame["model"] == name], w).properties(title=name) for name in result.names]
        return alt.hconcat(*panels, spacing=10).properties(title=head, autosize=PAD).resolve_scale(y="shared")
    return panel(frame, width).properties(title=head, autosize=PAD)


def difference_convergence(result, node_id: str, a: str | None = None, b: str | None = None, *, width: int = 620,
                           height: int = 200) -> alt.LayerChart | None:
    """``a − b`` of ``node_id`` (default: the first two models) and its interval over the rows read, with the 0 line
    and, once decided, the row at which it was decided (a boolean node: the difference of its slack,
    ``fairaudit.comparison.difference``); None for a node without a difference (a slack over ``==``/``!=``). The
    difference of two ratios (a ratio, or a ratio's margin) stays on a linear axis, as the certified difference is,
    limited to ``±RATIO_LIMIT`` and to where its intervals are (:func:`axis_domain`)."""
    a, b = a or result.names[0], b or result.names[1]
    if node_id not in result.diff_series.get((a, b), {}):
        return None
    d = result.difference(node_id, a, b)
    colours = model_colours(result.names)
    colour = {"a_lower": colours[a], "b_lower": colours[b]}.get(d.verdict, DIFFERENCE_UNDECIDED)
    frame = difference_frame(result, node_id, a, b)
    single = frame["rows"].nunique() == 1
    of_ratios = result.tree_kind(node_id) == "div" or _ratio_cmp(result, node_id)
    domain = axis_domain(frame, [0.0], limit=RATIO_LIMIT if of_ratios else None)
    frame = _clip(frame, domain)
    what = "slack: " if d.kind in ("and", "or", "not") else ""
    y = alt.Y("lo_plot:Q", title=f"{what}{a} − {b}", scale=alt.Scale(domain=list(domain), nice=False, zero=False))
    tip = [alt.Tooltip("rows:Q", format=","), alt.Tooltip("estimate:Q", format=".4g"), alt.Tooltip("interval:N")]
    marks = _beyond(frame, domain)
    if single:
        x = alt.X("pair:N", title=None, axis=alt.Axis(labelAngle=0))
        frame["pair"] = f"{a} − {b}"
        marks["pair"] = f"{a} − {b}"
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
    layers += _beyond_layers(marks, x)
    verdict = difference_word(d.verdict, a, b)
    what = "margin" if d.kind == "cmp" else "value"
    subtitle = [f"final: {interval(d.lo, d.hi)} — {verdict}"
                + (f" (decided after {d.decided_at:,} rows)" if d.decided_at else "")]
    if of_ratios:
        subtitle.append("a difference of ratios, on a linear axis; " + BEYOND_NOTE)
    elif not marks.empty:
        subtitle.append(BEYOND_NOTE)
    return alt.layer(*layers).properties(
        width=width, height=height, autosize=PAD,
        title=alt.TitleParams(f"{a} − {b}, {what} of: {node_label(result, node_id, 70)}", subtitle=subtitle))


def final_values_chart(result, *, width: int = 560, row_height: int = 26) -> alt.Chart:
    """Every plotted node's last interval and estimate for every model: one row per node (its id and text), the
    models side by side within the row, one colour per model; comparisons as margins with the 0 line. Ratios (a ratio
    compared with a constant: the ratio, with its threshold as a tick) get their own panel on a log scale
    (:func:`ratio_view`), above the other values; each axis is limited to where the intervals are, and a bound past
    it is drawn to the edge and marked "beyond"."""
    colours = model_colours(result.names)
    colour = alt.Color("model:N", title="model", sort=list(result.names),
                       scale=alt.Scale(domain=list(result.names), range=[colours[n] for n in result.names]),
                       legend=alt.Legend(orient="top"))
    ratio_rows, other_rows = [], []
    covered = set()  # the ratio of a comparison shown as its ratio is not shown again
    for nid in chart_nodes(result):
        view = ratio_view(result, nid)
        if view is not None and view[0] != nid:
            covered.add(view[0])
    for nid in chart_nodes(result):
        view = ratio_view(result, nid)
        if nid in covered:
            continue
        plotted, threshold = (nid, None) if view is None else view
        for name in result.names:
            s = result.model_series[name][plotted]
            lo, hi, est = float(s.lo[-1]), float(s.hi[-1]), float(s.estimate[-1])
            label = node_label(result, nid, 60)
            record = {"node": label, "model": name, "estimate": est, "lo": lo, "hi": hi,
                      "interval": interval(lo, hi), "threshold": threshold}
            (ratio_rows if view is not None else other_rows).append(record)
    tip = [alt.Tooltip("node:N"), alt.Tooltip("model:N"), alt.Tooltip("estimate:Q", format=".4g"),
           alt.Tooltip("interval:N")]

    def panel(records, log: bool, title: str) -> alt.LayerChart:
        frame = pd.DataFrame(records)
        if log:
            extra = [1.0] + [v for t in frame["threshold"].dropna() for v in (t, 1.0 / t) if t > 0]
            domain = list(axis_domain(frame, extra, log=True, limit=RATIO_LIMIT))
            scale = alt.Scale(type="log", domain=domain, nice=False, zero=False)
            axis = _ratio_axis(domain)
            x_title = "ratio (log scale: 0.8 and 1.25 equally far from 1)"
        else:
            domain = list(axis_domain(frame, [0.0]))
            scale = alt.Scale(domain=domain, nice=False, zero=False)
            axis = alt.Axis()
            x_title = "value (comparisons: margin left − right)"
        for col in ("lo", "hi", "estimate"):
            frame[col + "_plot"] = frame[col].clip(*domain)
        order = list(dict.fromkeys(frame["node"]))
        y = alt.Y("node:N", title=None, sort=order, axis=alt.Axis(labelLimit=420))
        offset = alt.YOffset("model:N", sort=list(result.names))
        x = alt.X("lo_plot:Q", title=x_title, scale=scale, axis=axis)
        layers = [alt.Chart(frame).mark_rule(strokeWidth=3).encode(y=y, yOffset=offset, x=x, x2="hi_plot:Q",
                                                                   color=colour, tooltip=tip),
                  alt.Chart(frame).mark_point(filled=True, size=40, color="#222222").encode(
                      y=y, yOffset=offset, x=alt.X("estimate_plot:Q", scale=scale), tooltip=tip)]
        marks = _beyond(frame.assign(key=frame["node"] + "\x00" + frame["model"]), domain, by="key")
        if not marks.empty:
            marks["node"], marks["model"] = zip(*(k.split("\x00") for k in marks["key"]))
            marks["shape"] = marks["shape"].map({"triangle-up": "triangle-right", "triangle-down": "triangle-left"})
            marks["dx"] = [-14 if s == "triangle-right" else 14 for s in marks["shape"]]
            enc = dict(y=y, yOffset=offset, x=alt.X("y:Q", scale=scale),
                       tooltip=[alt.Tooltip("node:N"), alt.Tooltip("model:N"), alt.Tooltip("what:N", title="")])
            layers.append(alt.Chart(marks).mark_point(filled=True, size=60, opacity=1).encode(
                shape=alt.Shape("shape:N", scale=None, legend=None), color=colour, **enc))
        if log:
            thr = frame.dropna(subset=["threshold"]).drop_duplicates("node")
            if len(thr):
                layers.append(alt.Chart(thr).mark_tick(color="#222222", thickness=2, size=row_height - 4).encode(
                    y=y, x=alt.X("threshold:Q", scale=scale), tooltip=[alt.Tooltip("node:N"),
                                                                        alt.Tooltip("threshold:Q", title="threshold")]))
            layers += [alt.Chart(pd.DataFrame({"one": [1.0]})).mark_rule(strokeDash=[2, 3], color="#444444")
                       .encode(x=alt.X("one:Q", scale=scale))]
        else:
            layers.append(alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(strokeDash=[6, 4], color="#444444")
                          .encode(x=alt.X("zero:Q", scale=scale)))
        return alt.layer(*layers).properties(width=width, height=row_height * len(order), title=title)

    title = "Every node's final interval, per model"
    if not ratio_rows:
        return panel(other_rows, False, "").properties(title=title, autosize=PAD)
    parts = [panel(ratio_rows, True, "Ratios (log scale): the tick is the threshold, the dotted line parity (1), "
                                     "an arrowhead a bound beyond the axis")]
    if other_rows:
        parts.append(panel(other_rows, False, "Other values"))
    return alt.vconcat(*parts, spacing=16).properties(title=title, autosize=PAD).resolve_scale(x="independent")
