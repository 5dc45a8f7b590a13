"""Where a ``Fair[...]`` node's undecided individuals are (``fairaudit.core.undecided_view``): for the features
where they are spread most unevenly, one panel each of horizontal bars — per range of the feature, the share of
the undecided individuals in it (dark) beside the share of all individuals of the domain in it (light). A dark bar
longer than its light one is a range holding more than its size of what is left to decide."""
from __future__ import annotations

import altair as alt

from fairaudit.core import undecided_view as uv

TITLE = "Where the undecided individuals are"
COLOURS = {uv.UNDECIDED: "#6E6E6E", uv.DOMAIN: "#D9D9D9"}  # darker than the rates chart's undecided grey: its subset
BAR = 9  # pixels per bar (two per range: its label fits, 10 px)


def undecided_where_chart(record: dict, *, top: int = uv.TOP_FEATURES, panel_width: int = 220, columns: int = 3,
                          title: str | None = TITLE) -> alt.VConcatChart:
    """Panels of ``panel_width`` for the ``top`` most uneven features of ``record``, ``columns`` to a row; no
    overall title with ``title=None`` (a page that heads it itself)."""
    frame = uv.frame(record, top)
    if frame.empty:
        raise ValueError("the run recorded no features to show")
    colour = alt.Color("who:N", scale=alt.Scale(domain=list(COLOURS), range=list(COLOURS.values())),
                       legend=alt.Legend(title=None, orient="top"))
    panels = []
    for _, sub in frame.groupby("rank", sort=True):
        order = list(dict.fromkeys(sub.sort_values("order")["range"]))
        name = str(sub["feature"].iloc[0])
        panels.append(alt.Chart(sub).mark_bar().encode(
            y=alt.Y("range:N", sort=order, title=None, axis=alt.Axis(labelLimit=120, labelFontSize=10)),
            yOffset=alt.YOffset("who:N", sort=list(COLOURS)),
            x=alt.X("share:Q", title="share in this range", axis=alt.Axis(format="%", tickCount=4),
                    scale=alt.Scale(domain=[0, max(0.05, float(sub["share"].max()))], nice=True)),
            color=colour,
            tooltip=[alt.Tooltip("feature:N"), alt.Tooltip("range:N"), alt.Tooltip("who:N", title="share of"),
                     alt.Tooltip("share_s:N", title="share")],
        ).properties(width=panel_width, height=len(order) * 2 * BAR, title=name))
    rows = [alt.hconcat(*panels[i:i + columns], spacing=24) for i in range(0, len(panels), columns)]
    chart = alt.vconcat(*rows, spacing=16).resolve_scale(color="shared")
    return chart.properties(title=title) if title else chart
