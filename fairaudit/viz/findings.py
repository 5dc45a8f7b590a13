"""Charts of an engine's findings (``fairaudit.core.findings.Findings``): the favourable rate of every compound group with
the most and least favoured marked, and each feature's influence on a fairness metric.

Drawn from the ``Findings`` alone (labels, intervals and the ``*_about`` sentences come from it), so they look the
same whichever engine computed them. Every number is an interval; a point interval is drawn as a point.
"""
from __future__ import annotations

import altair as alt
import pandas as pd

from fairaudit.core.findings import LEAST, MOST
from fairaudit.viz import _format
from fairaudit.viz.palette import FAVOURED, FAVOURED_OTHER, NEUTRAL

LABEL_WIDTH = 230  # the group axis: compound groups are long ("sex = Female, race = Black")
OTHER = "other groups"
# the declared width and height are the plot's own: Streamlit's default "fit" autosize would squeeze the labels,
# the legend and the axes into them and leave the plotted area with almost no room
PAD = alt.AutoSizeParams(type="pad", contains="padding")


def _has(values) -> bool:
    return any(v is not None and v == v for v in values)


def group_frame(findings) -> pd.DataFrame:
    """One row per group, the highest rate first: the chart's data (also handy for a table)."""
    rows = findings.group_rows()
    frame = pd.DataFrame(rows, columns=["group", "lo", "hi", "estimate", "share", "ci_lo", "ci_hi", "mark"])
    frame["mark"] = frame["mark"].fillna("")
    frame["colour"] = [m if m else OTHER for m in frame["mark"]]
    frame["rate_s"] = [_format.interval(a, b) for a, b in zip(frame["lo"], frame["hi"])]
    frame["ci_s"] = [_format.interval(a, b) for a, b in zip(frame["ci_lo"], frame["ci_hi"])]
    frame["share_s"] = [_format.num(v) for v in frame["share"]]
    return frame


def group_rates_chart(findings, *, width: int = 420, row_height: int = 22, max_groups: int = 60) -> alt.LayerChart:
    """The favourable rate of each group as its interval ``[lo, hi]`` (a thick bar; a point at its middle), the
    second interval ``[ci_lo, ci_hi]`` lighter behind it when the findings give one; the most favoured group in
    blue, the least favoured in vermillion, each labelled. At most ``max_groups`` rows (the highest and the lowest
    rates kept when there are more)."""
    frame = group_frame(findings)
    if frame.empty:
        raise ValueError("no groups to draw")
    if len(frame) > max_groups:
        half = max_groups // 2
        frame = pd.concat([frame.head(half), frame.tail(max_groups - half)])
    order = list(frame["group"])
    height = max(60, row_height * len(frame))
    y = alt.Y("group:N", sort=order, title=None,
              axis=alt.Axis(labelLimit=LABEL_WIDTH - 8, minExtent=LABEL_WIDTH, maxExtent=LABEL_WIDTH))
    x_scale = alt.Scale(domain=[0, 1], clamp=True)
    x_axis = alt.Axis(values=[0, 0.25, 0.5, 0.75, 1], format=".2~f", labelFlush=True)
    domain = [MOST, LEAST, OTHER]
    scale = alt.Scale(domain=domain, range=[FAVOURED[MOST], FAVOURED[LEAST], FAVOURED_OTHER])
    colours = alt.Color("colour:N", scale=scale, legend=alt.Legend(title=None, orient="top"))
    has_ci = _has(frame["ci_lo"]) and _has(frame["ci_hi"])
    tip = [alt.Tooltip("group:N"), alt.Tooltip("rate_s:N", title="favourable rate")]
    if has_ci:
        tip.append(alt.Tooltip("ci_s:N", title="confidence interval"))
    if _has(frame["share"]):
        tip.append(alt.Tooltip("share_s:N", title="share"))
    tip.append(alt.Tooltip("mark:N"))
    base = alt.Chart(frame)
    layers = []
    if has_ci:
        layers.append(base.mark_rule(strokeWidth=9, opacity=0.25, strokeCap="round").encode(
            y=y, x=alt.X("ci_lo:Q", scale=x_scale, axis=x_axis, title="favourable rate"), x2="ci_hi:Q",
            color=alt.Color("colour:N", scale=scale, legend=None), tooltip=tip))
    layers.append(base.mark_rule(strokeWidth=4, strokeCap="round").encode(
        y=y, x=alt.X("lo:Q", scale=x_scale, axis=x_axis, title="favourable rate"), x2="hi:Q", color=colours,
        tooltip=tip))
    layers.append(base.mark_point(filled=True, size=60, opacity=1).encode(
        y=y, x=alt.X("estimate:Q", scale=x_scale), color=alt.Color("colour:N", scale=scale, legend=None),
        tooltip=tip))
    marked = frame[frame["mark"] != ""]
    if len(marked):  # the mark beside its own interval [lo, hi]: right of it, or left of it near the right edge
        right = [hi <= 0.7 or lo < 0.3 for lo, hi in zip(marked["lo"], marked["hi"])]
        marked = marked.assign(at=[(hi if r else lo) for lo, hi, r in zip(marked["lo"], marked["hi"], right)],
                               side=right)
        for side, align, dx in ((True, "left", 8), (False, "right", -8)):
            part = marked[marked["side"] == side]
            if len(part):
                layers.append(alt.Chart(part).mark_text(align=align, dx=dx, fontSize=11, fontWeight="bold").encode(
                    y=y, x=alt.X("at:Q", scale=x_scale), text="mark:N",
                    color=alt.Color("colour:N", scale=scale, legend=None)))
    return alt.layer(*layers).properties(width=width, height=height, autosize=PAD)


def influence_frame(findings) -> pd.DataFrame:
    """One row per feature, the largest influence (in absolute value) first."""
    rows = [{"feature": i.feature, "lo": float(i.lo), "hi": float(i.hi), "estimate": float(i.estimate)}
            for i in findings.influence]
    frame = pd.DataFrame(rows, columns=["feature", "lo", "hi", "estimate"])
    frame = frame.reindex(frame["estimate"].abs().sort_values(ascending=False, kind="stable").index)
    frame["sign"] = ["raises the metric" if v > 0 else "lowers the metric" if v < 0 else "none"
                     for v in frame["estimate"]]
    frame["value_s"] = [_format.interval(a, b) for a, b in zip(frame["lo"], frame["hi"])]
    return frame.reset_index(drop=True)


def influence_chart(findings, *, width: int = 420, row_height: int = 22, max_features: int = 40) -> alt.LayerChart:
    """Each feature's influence as a signed bar (sorted by its absolute value), its interval as an error bar when
    it is not a point; a rule at zero. ``findings.influence_about`` says what the values mean."""
    frame = influence_frame(findings)
    if frame.empty:
        raise ValueError("no influences to draw")
    frame = frame.head(max_features)
    order = list(frame["feature"])
    y = alt.Y("feature:N", sort=order, title=None,
              axis=alt.Axis(labelLimit=LABEL_WIDTH - 8, minExtent=LABEL_WIDTH, maxExtent=LABEL_WIDTH))
    palette = {"raises the metric": FAVOURED[MOST], "lowers the metric": FAVOURED[LEAST], "none": NEUTRAL}
    signs = [s for s in palette if s in set(frame["sign"])]
    colour = alt.Color("sign:N", scale=alt.Scale(domain=signs, range=[palette[s] for s in signs]),
                       legend=alt.Legend(title=None, orient="top"))
    tip = [alt.Tooltip("feature:N"), alt.Tooltip("value_s:N", title="influence")]
    base = alt.Chart(frame)
    layers = [base.mark_bar(opacity=0.8).encode(y=y, x=alt.X("estimate:Q", title="influence"), color=colour,
                                                 tooltip=tip)]
    wide = frame[frame["hi"] > frame["lo"]]
    if len(wide):
        layers.append(alt.Chart(wide).mark_errorbar(ticks=True, color="#222222").encode(
            y=y, x=alt.X("lo:Q", title="influence"), x2="hi:Q", tooltip=tip))
    layers.append(alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(color="#444444").encode(x="zero:Q"))
    height = max(60, row_height * len(frame))
    return alt.layer(*layers).properties(width=width, height=height, autosize=PAD)


def edge_rows(findings) -> list[dict]:
    """The modelled graph as rows ``{"edge": "parent → child"}`` (for a table where a drawing does not fit)."""
    return [{"parent": str(a), "child": str(b), "edge": f"{a} → {b}"} for a, b in findings.edges]
