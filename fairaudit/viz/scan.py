"""A subgroup scan's charts (``fairaudit.subgroups.ScanResult``): the heatmap of impact ratios by intersection and a
cell's convergence over the rows.

* :func:`scan_frame` — one row per cell: where it sits in the heatmap, its numbers as text, its flag
* :func:`scan_heatmap` — one panel per table (an attribute, or an intersection: the first attribute's categories
  down, the others' across), each cell coloured by its flag (certified below / undecided / certified above /
  excluded), its impact ratio written in it, every number and interval on hover; clickable (point selection
  :data:`CELL` on ``id``)
* :func:`cell_convergence` — a cell's impact ratio (or, without one, its rate) and its interval at each look over
  the rows, against the threshold (``result.history``)
"""
from __future__ import annotations

import math

import altair as alt
import pandas as pd

from fairaudit.subgroups.wording import cell_words
from fairaudit.viz.palette import SCAN_FLAGS, ink_on

CELL = "cell"  # the heatmap's point selection (a click on a cell): its ``id``
ALL = "(all)"  # the row of a one-attribute table


def interval_text(e, digits: int = 3) -> str:
    if e is None:
        return "—"
    if e.lo == e.hi:
        return f"{e.estimate:.{digits}f}"
    hi = "∞" if math.isinf(e.hi) else f"{e.hi:.{digits}f}"
    return f"{e.estimate:.{digits}f} [{e.lo:.{digits}f}, {hi}]"


def flag_label(cell) -> str:
    """The flag as a reader sees it (with the rows an undecided cell needs; 'highest' for the reference)."""
    if cell.is_reference:
        return "highest in its table (impact ratio 1 by definition)"
    text = SCAN_FLAGS[cell.flag][0] if cell.flag in SCAN_FLAGS else cell.flag
    if cell.flag == "undecided" and cell.more_rows:
        text += f" (~{cell.more_rows:,} more rows)" if cell.more_rows > 0 else " (beyond the projection)"
    return text


def scan_frame(result) -> pd.DataFrame:
    """One row per cell of ``result``, in table order: ``id``, ``table``, ``down`` / ``across`` (its place in the
    heatmap), ``name`` (compact, "Female × Black": for table cells), ``words`` (as a sentence names it, "sex =
    Female and race = Black": the tooltip), ``rows``, ``share``, ``rate`` / ``ratio`` (estimates), their intervals
    as text, ``flag`` (a ``SCAN_FLAGS`` key), ``flag_label``, ``label`` (the ratio written in the cell), ``rank``."""
    records = []
    for table in result.tables:
        for cell in table.cells:
            values = [str(cell.groups[a]) for a in table.attributes]
            down, across = (ALL, values[0]) if len(values) == 1 else (values[0], " × ".join(values[1:]))
            ratio = cell.impact_ratio
            records.append({
                "id": cell.id, "table": table.name, "down": down, "across": across, "name": cell.name,
                "words": cell_words(cell),
                "rows": int(cell.rows), "share": float(cell.share), "selected": int(cell.selected),
                "rate": float(cell.rate.estimate), "rate_text": interval_text(cell.rate),
                "ratio": None if ratio is None or math.isnan(ratio.estimate) else float(ratio.estimate),
                "ratio_text": "excluded: rate only" if ratio is None else interval_text(ratio),
                "flag": cell.flag, "flag_label": flag_label(cell),
                "label": "—" if ratio is None or math.isnan(ratio.estimate) else f"{ratio.estimate:.2f}",
                "rank": int(cell.rank)})
    return pd.DataFrame.from_records(records)


def scan_heatmap(result, *, cell_size: int = 62, selected: str | None = None) -> alt.FacetChart:
    """The heatmap of impact ratios: one panel per table, a click selects a cell (``CELL``: its ``id``)."""
    df = scan_frame(result)
    flags = list(SCAN_FLAGS)
    colour = alt.Color("flag:N", title="flag", scale=alt.Scale(domain=flags, range=[SCAN_FLAGS[f][1] for f in flags]),
                       legend=alt.Legend(orient="top", labelExpr=_label_expr()))
    pick = alt.selection_point(name=CELL, fields=["id"], on="click", clear=False,
                               value=[{"id": selected}] if selected else alt.Undefined)
    tip = [alt.Tooltip("words:N", title="cell"), alt.Tooltip("rows:Q", title="rows", format=","),
           alt.Tooltip("share:Q", title="share", format=".1%"), alt.Tooltip("rate_text:N", title="rate [interval]"),
           alt.Tooltip("ratio_text:N", title="impact ratio [interval]"), alt.Tooltip("flag_label:N", title="flag")]
    x = alt.X("across:N", title=None, sort=None,
              axis=alt.Axis(labelAngle=-40, labelLimit=150, labelOverlap=False, orient="top"))
    y = alt.Y("down:N", title=None, sort=None, axis=alt.Axis(labelLimit=160))
    base = alt.Chart().encode(x=x, y=y)
    # the chosen cell: full colour and a black outline (on the cell's own mark, so nothing covers its neighbours)
    rect = base.mark_rect().encode(
        color=colour, tooltip=tip,
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.55)) if selected else alt.value(0.95),
        stroke=alt.condition(pick, alt.value("#000000"), alt.value("#FFFFFF")) if selected else alt.value("#FFFFFF"),
        strokeWidth=alt.condition(pick, alt.value(3), alt.value(2)) if selected else alt.value(2)).add_params(pick)
    # the ratio's colour reads on its cell's colour as drawn (WCAG contrast, ``palette.ink_on``): dark on the orange
    # and the grey, white on the blue; the chosen cell is drawn at full opacity, the others lighter
    opacity = {True: 1.0, False: 0.55} if selected else {True: 0.95, False: 0.95}
    df["ink"] = [ink_on(SCAN_FLAGS.get(f, ("", "#0072B2"))[1], (opacity[i == selected],))
                 for f, i in zip(df["flag"], df["id"])]
    text = base.mark_text(fontSize=12, fontWeight="bold").encode(
        text="label:N", tooltip=tip, color=alt.Color("ink:N", scale=None, legend=None))
    return (alt.layer(rect, text, data=df)
            .properties(width=alt.Step(cell_size), height=alt.Step(cell_size * 0.6))
            .facet(row=alt.Row("table:N", title=None, sort=list(dict.fromkeys(df["table"])),
                               header=alt.Header(labelAngle=0, labelAlign="left", labelAnchor="start",
                                                 labelFontWeight="bold", labelOrient="top", labelFontSize=13)), spacing=18)
            .resolve_scale(x="independent", y="independent"))


def _label_expr() -> str:
    cases = " : ".join(f"datum.value == '{k}' ? '{v[0]}'" for k, v in SCAN_FLAGS.items())
    return f"{cases} : datum.value"


def cell_convergence(result, cell_id: str, *, width: int = 520, height: int = 220) -> alt.LayerChart | None:
    """The cell's impact ratio (its rate when it has none) and its interval at each look over the rows, with the
    threshold as a dashed rule; None when the scan kept no history (one-look mode) or not this cell's."""
    history = result.history
    if not history or cell_id not in history.get("cells", {}):
        return None
    series = history["cells"][cell_id]
    cell = result.cell(cell_id)
    use_ratio = cell.impact_ratio is not None and "ratio" in series
    key = "ratio" if use_ratio else "rate"
    df = pd.DataFrame({"rows": history["rows"], "estimate": series[key], "lo": series[f"{key}_lo"],
                       "hi": series[f"{key}_hi"]})
    df = df.dropna(subset=["estimate"]) if df["estimate"].notna().any() else df
    what = "impact ratio" if use_ratio else ("scoring rate" if result.rate_kind == "scoring" else "selection rate")
    x = alt.X("rows:Q", title="rows seen", scale=alt.Scale(type="log", nice=False,
                                                           domain=[float(df["rows"].min()), float(df["rows"].max())]))
    tip = [alt.Tooltip("rows:Q", format=","), alt.Tooltip("estimate:Q", format=".3f"),
           alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f")]
    band = alt.Chart(df).mark_area(opacity=0.25, color=SCAN_FLAGS.get(cell.flag, ("", "#0072B2"))[1]).encode(
        x=x, y=alt.Y("lo:Q", title=what, scale=alt.Scale(domain=[0, max(1.0, float(df["hi"].max() or 1))])),
        y2="hi:Q", tooltip=tip)
    line = alt.Chart(df).mark_line(point=True, color="#222222").encode(x=x, y="estimate:Q", tooltip=tip)
    layers = [band, line]
    if use_ratio:
        layers.append(alt.Chart(pd.DataFrame({"t": [result.threshold]})).mark_rule(strokeDash=[6, 4],
                                                                                  color="#444444").encode(y="t:Q"))
    return alt.layer(*layers).properties(width=width, height=height,
                                         title=alt.TitleParams(
                                             [f"{cell_words(cell)}:", f"{what} and its interval at each look"],
                                             anchor="start"))
