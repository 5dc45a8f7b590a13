"""A threshold repair's chart (``fairaudit.repairs.RepairResult``): the fairness–accuracy curve.

* :func:`curve_frame` — one row per point of the repair's curve (the thresholds tried that no other beats on both
  the specification's margin and the objective), the original point and the one shown named: "repaired" when a
  repair was adopted, else "best candidate tried" (``RepairResult.shown_name``) — a refused repair is never called
  repaired or chosen
* :func:`repair_curve` — the curve: the specification's margin on the search rows (right of 0: it holds there)
  against the objective (accuracy, or the share of favourable decisions); the original point and the one shown
  marked in the colours the comparison gives them (``palette.model_colours(["original", "repaired"])``) and named in
  the legend (never in labels beside the points, which overlap when the points are close), and the candidates
  certified together, each with its verdict (a cross where it was not certified)
"""
from __future__ import annotations

import altair as alt
import pandas as pd

from fairaudit.viz.palette import model_colours

ORIGINAL, REPAIRED = "original", "repaired"  # the names a comparison of the two gives them (their colours)
OBJECTIVE_TITLES = {"accuracy": "accuracy (search rows)", "favourable": "share of favourable decisions (search rows)"}
PAD = alt.AutoSizeParams(type="pad", contains="padding")


def _thresholds_text(point) -> str:
    if point.thresholds:
        return "; ".join(f"{g} ≥ {t:.3g}" for g, t in sorted(point.thresholds.items()))
    return f"every row ≥ {point.default:.3g}"


def _row(result, p, role: str) -> dict:
    value = p.accuracy if result.objective == "accuracy" else p.favourable
    return {"margin": float(p.margin), "objective": None if value is None else float(value), "accuracy": p.accuracy,
            "favourable": float(p.favourable), "kind": p.kind, "role": role, "thresholds": _thresholds_text(p)}


def curve_frame(result) -> pd.DataFrame:
    """``margin``, ``objective`` (the value of ``result.objective``), ``accuracy``, ``favourable``, ``kind``
    (group / global / original), ``role`` ("original", the shown candidate's name ``result.shown_name`` —
    "repaired" or "best candidate tried" — or "tried") and ``thresholds`` (as text), per point."""
    shown = result.shown_name
    has_shown = bool(getattr(result, "tried", None))  # no candidate tried: only the original is marked
    rows = [_row(result, p, "original" if p.kind == "original" else
                 shown if has_shown and p == result.chosen else "tried") for p in result.curve]
    if has_shown and not any(r["role"] == shown for r in rows):  # the candidate shown is always shown
        rows.append(_row(result, result.chosen, shown))
    return pd.DataFrame(rows)


def tried_frame(result) -> pd.DataFrame:
    """The candidates certified together (``result.tried``): ``margin``, ``objective``, ``thresholds`` and
    ``certificate`` ("certified" or "not certified")."""
    rows = []
    for c in getattr(result, "tried", []) or []:
        p = c.point
        value = p.accuracy if result.objective == "accuracy" else p.favourable
        if value is None:
            continue
        rows.append({"margin": float(p.margin), "objective": float(value), "thresholds": _thresholds_text(p),
                     "certificate": "certified" if c.verdict == "certified" else "not certified"})
    return pd.DataFrame(rows, columns=["margin", "objective", "thresholds", "certificate"])


def repair_curve(result, *, width: int = 620, height: int = 300) -> alt.LayerChart:
    """The curve of the specification's margin against the objective on the search rows; the candidate shown (the
    repaired model, or the best candidate tried when none was adopted) and the original one marked (legend); the
    dashed line at margin 0 (right of it the specification holds on the search rows)."""
    frame = curve_frame(result).dropna(subset=["objective"])
    colours = model_colours([ORIGINAL, REPAIRED])
    title_y = OBJECTIVE_TITLES.get(result.objective, result.objective)
    x = alt.X("margin:Q", title="margin of the specification (search rows; > 0: it holds there)",
              scale=alt.Scale(zero=False, nice=True))
    y = alt.Y("objective:Q", title=title_y, scale=alt.Scale(zero=False, nice=True))
    tip = [alt.Tooltip("role:N", title="point"), alt.Tooltip("kind:N", title="thresholds"),
           alt.Tooltip("thresholds:N", title="values"), alt.Tooltip("margin:Q", format=".4f"),
           alt.Tooltip("accuracy:Q", format=".4f"), alt.Tooltip("favourable:Q", format=".4f")]
    kinds = ["group", "global"]
    tried = frame[frame["role"] != "original"].sort_values("margin")
    line = alt.Chart(tried).mark_line(color="#999999", strokeWidth=1).encode(x=x, y=y, detail="kind:N")
    dots = alt.Chart(tried).mark_point(filled=True, size=36, opacity=0.75).encode(
        x=x, y=y, tooltip=tip,
        shape=alt.Shape("kind:N", title="thresholds", scale=alt.Scale(domain=kinds, range=["circle", "diamond"]),
                        legend=alt.Legend(orient="top")),
        color=alt.value("#777777"))
    shown = result.shown_name
    marked = frame[frame["role"].isin([shown, ORIGINAL])].assign(label=lambda f: f["role"])
    # named in the legend only: labels beside the points overlap when the points are close
    ring = alt.Chart(marked).mark_point(filled=False, size=260, strokeWidth=3).encode(
        x=x, y=y, tooltip=tip,
        color=alt.Color("label:N", title="marked", legend=alt.Legend(orient="top"),
                        scale=alt.Scale(domain=[ORIGINAL, shown], range=[colours[ORIGINAL], colours[REPAIRED]])))
    zero = alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(strokeDash=[6, 4], color="#444444").encode(x="zero:Q")
    layers = [zero]
    certified = tried_frame(result)
    if len(certified):  # the candidates certified together, each with its verdict
        layers.append(alt.Chart(certified).mark_point(size=140, strokeWidth=2, color="#444444").encode(
            x=x, y=alt.Y("objective:Q", title=title_y, scale=alt.Scale(zero=False, nice=True)),
            shape=alt.Shape("certificate:N", title="candidates tried",
                            scale=alt.Scale(domain=["certified", "not certified"], range=["square", "cross"]),
                            legend=alt.Legend(orient="top")),
            tooltip=[alt.Tooltip("thresholds:N", title="values"), alt.Tooltip("certificate:N"),
                     alt.Tooltip("margin:Q", format=".4f"), alt.Tooltip("objective:Q", format=".4f")]))
    return alt.layer(*layers, line, dots, ring).resolve_scale(color="independent", shape="independent").properties(
        width=width, height=height, autosize=PAD,
        title=alt.TitleParams("Fairness against " + ("accuracy" if result.objective == "accuracy" else
                                                     "favourable decisions"),
                              subtitle="each point: thresholds tried on the search rows; none is beaten on both axes"))
