"""Per-group bars for the Data page and per-group model metrics for the Model page (from ``fairaudit.core.group_metrics``)."""
from __future__ import annotations

import altair as alt
import pandas as pd

from fairaudit.viz import _format

SMALL_COLOUR = "#CC79A7"  # reddish purple: a small group
BAR_COLOUR = "#0072B2"
LABEL_WIDTH = 130  # every group axis reserves the same label width, so the panels of all attributes line up


def _prep(stats: pd.DataFrame) -> pd.DataFrame:
    df = stats.copy()
    df["size"] = df["small"].map({True: "small group", False: "enough rows"})
    df["rate_s"] = [_format.num(v) for v in df.get("rate", pd.Series([None] * len(df)))]
    df["ci_s"] = [_format.interval(a, b) for a, b in zip(df.get("lo", [None] * len(df)), df.get("hi", [None] * len(df)))]
    return df


def group_bars(stats: pd.DataFrame, *, width: int = 380, row_height: int = 26, level: float = 0.95) -> alt.VConcatChart:
    """One row of charts per protected attribute: group counts (small groups marked) and, when a label exists,
    the favourable base rate with its confidence interval and the overall rate as a dashed rule.

    ``stats`` is ``fairaudit.core.group_metrics.group_base_rates(...)``.
    """
    if stats.empty:
        raise ValueError("no groups to draw")
    df = _prep(stats)
    has_rate = df["rate"].notna().any()
    size_scale = alt.Scale(domain=["enough rows", "small group"], range=[BAR_COLOUR, SMALL_COLOUR])
    rows = []
    for attr, part in df.groupby("attribute", sort=False):
        h = max(40, row_height * len(part))
        y = alt.Y("group:N", sort=list(part["group"]), title=str(attr),
                  axis=alt.Axis(labelLimit=LABEL_WIDTH - 8, minExtent=LABEL_WIDTH, maxExtent=LABEL_WIDTH))
        tip = [alt.Tooltip("group:N"), alt.Tooltip("n:Q", title="rows"), alt.Tooltip("share:Q", format=".1%"),
               alt.Tooltip("rate_s:N", title="base rate"), alt.Tooltip("ci_s:N", title=f"{level:.0%} CI"),
               alt.Tooltip("size:N")]
        counts = alt.Chart(part).mark_bar().encode(
            y=y, x=alt.X("n:Q", title="rows"),
            color=alt.Color("size:N", scale=size_scale, legend=alt.Legend(title=None, orient="top")),
            tooltip=tip)
        count_text = alt.Chart(part).mark_text(align="left", dx=3, fontSize=11).encode(
            y=y, x="n:Q", text=alt.Text("n:Q", format=","))
        left = alt.layer(counts, count_text).properties(width=width, height=h)
        if not has_rate:
            rows.append(left)
            continue
        overall = (part["positives"].sum() / part["n"].sum()) if part["n"].sum() else None
        xr = alt.X("rate:Q", title="favourable rate", scale=alt.Scale(domain=[0, 1]))
        bars = alt.Chart(part).mark_bar(opacity=0.75).encode(
            y=y, x=xr, color=alt.Color("size:N", scale=size_scale, legend=None), tooltip=tip)
        err = alt.Chart(part).mark_errorbar(ticks=True, color="#222222").encode(
            y=y, x=alt.X("lo:Q", scale=alt.Scale(domain=[0, 1]), title="favourable rate"), x2="hi:Q", tooltip=tip)
        layers = [bars, err]
        if overall is not None:
            layers.append(alt.Chart(pd.DataFrame({"rate": [overall]})).mark_rule(strokeDash=[5, 3], color="#444444")
                          .encode(x="rate:Q"))
        right = alt.layer(*layers).properties(width=width, height=h)
        rows.append(alt.hconcat(left, right, spacing=30))
    return alt.vconcat(*rows, spacing=20).resolve_scale(color="shared")


def group_metrics_chart(metrics: pd.DataFrame, *, width: int = 210, row_height: int = 26,
                        level: float = 0.95) -> alt.VConcatChart:
    """Accuracy / selection rate / TPR / FPR per group, points with CI error bars; one column per metric, one row
    per attribute. ``metrics`` is ``fairaudit.core.group_metrics.group_model_metrics(...)``."""
    if metrics.empty:
        raise ValueError("no metrics to draw")
    df = metrics.copy()
    df["value_s"] = [_format.num(v) for v in df["value"]]
    df["ci_s"] = [_format.interval(a, b) for a, b in zip(df["lo"], df["hi"])]
    df["size"] = df["small"].map({True: "small group", False: "enough rows"})
    size_scale = alt.Scale(domain=["enough rows", "small group"], range=[BAR_COLOUR, SMALL_COLOUR])
    metric_order = [m for m in ("accuracy", "selection rate", "TPR", "FPR") if m in set(df["metric"])]
    rows = []
    for attr, part in df.groupby("attribute", sort=False):
        groups = list(dict.fromkeys(part["group"]))
        h = max(40, row_height * len(groups))
        cols = []
        for i, metric in enumerate(metric_order):
            m = part[part["metric"] == metric]
            y = alt.Y("group:N", sort=groups, title=str(attr) if i == 0 else None,
                      axis=alt.Axis(labels=i == 0, ticks=i == 0, labelLimit=LABEL_WIDTH - 8,
                                    minExtent=LABEL_WIDTH if i == 0 else 0, maxExtent=LABEL_WIDTH if i == 0 else 0))
            axis = alt.Axis(values=[0, 0.25, 0.5, 0.75, 1], format=".2~f", labelFlush=True)
            x = alt.X("value:Q", scale=alt.Scale(domain=[0, 1]), title=metric, axis=axis)
            tip = [alt.Tooltip("group:N"), alt.Tooltip("metric:N"), alt.Tooltip("value_s:N", title="value"),
                   alt.Tooltip("ci_s:N", title=f"{level:.0%} CI"), alt.Tooltip("k:Q", title="k"),
                   alt.Tooltip("n:Q", title="n"), alt.Tooltip("size:N")]
            err = alt.Chart(m).mark_rule(strokeWidth=2, color="#555555").encode(
                y=y, x=alt.X("lo:Q", scale=alt.Scale(domain=[0, 1]), title=metric, axis=axis), x2="hi:Q", tooltip=tip)
            pts = alt.Chart(m).mark_point(filled=True, size=70, opacity=1).encode(
                y=y, x=x, color=alt.Color("size:N", scale=size_scale, legend=alt.Legend(title=None, orient="top")),
                tooltip=tip)
            cols.append(alt.layer(err, pts).properties(width=width, height=h))
        rows.append(alt.hconcat(*cols, spacing=36))
    return alt.vconcat(*rows, spacing=16).resolve_scale(color="shared")
