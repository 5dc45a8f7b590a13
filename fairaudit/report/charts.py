"""The report's figures: the dashboard's Altair charts (``fairaudit.viz``) rendered to PNG offline (vl-convert).

A figure that cannot be drawn does not stop the report: ``Figure.error`` holds the one-line reason and the PDF
prints it where the figure would be.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import pandas as pd

SCALE = 2.0  # PNG pixels per chart pixel (sharp print at the report's width)


@dataclass
class Figure:
    png: bytes | None
    caption: str = ""
    error: str | None = None

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels, from the PNG header."""
        if not self.png:
            return (0, 0)
        w, h = struct.unpack(">II", self.png[16:24])
        return int(w), int(h)


def render(chart, scale: float = SCALE) -> bytes:
    from fairaudit.viz import to_png

    return to_png(chart, scale=scale)


def _safe(make, caption: str) -> Figure:
    try:
        return Figure(render(make()), caption)
    except Exception as err:  # noqa: BLE001 - reported in the PDF instead of aborting the report
        return Figure(None, caption, f"{type(err).__name__}: {err}".splitlines()[0][:300])


def tree_figure(result) -> Figure:
    from fairaudit.viz import tree_chart

    nodes = result.nodes
    depth = _depth(nodes)
    height = int(min(620, max(240, 110 * (depth + 1) + 60)))
    return _safe(lambda: tree_chart(result.shown_nodes, width=640, height=height, guarantee=result.guarantee),
                 "The specification as a tree; every node is coloured by its final verdict "
                 "(grey: a number, which has no verdict).")


def _depth(nodes) -> int:
    depth: dict[str, int] = {}
    for n in nodes:
        depth[n["id"]] = 0 if n["parent"] is None else depth.get(n["parent"], 0) + 1
    return max(depth.values(), default=0)


def convergence_figure(result, frame: pd.DataFrame, node_id: str) -> Figure:
    from fairaudit.viz import convergence_chart

    nodes = result.nodes
    return _safe(lambda: convergence_chart(frame, node_id, nodes, stop_step=result.stop_step, width=720,
                                           height=190, unit=result.unit, guarantee=result.guarantee), "")


def rates_figure(result, frame: pd.DataFrame, node_id: str) -> Figure:
    from fairaudit.viz import has_rates, rates_chart

    text = result.node(node_id).text
    if not has_rates(frame, node_id):
        return Figure(None, text, "the trace records no certified / unfair / undecided rates for this node")
    return _safe(lambda: rates_chart(frame, node_id, width=720, height=200, title=text,
                                     stop_step=result.stop_step, unit=result.unit), "")


def undecided_where_figure(result, node_id: str) -> Figure | None:
    """Where the node's undecided individuals are (``fairaudit.core.undecided_view``), or None when the run did not
    record it or none is undecided; the caption is the dashboard's sentence."""
    from fairaudit.core import undecided_view as uv
    from fairaudit.viz import undecided_where_chart

    record = uv.for_node(result, node_id)
    if record is None or not float(record.get("undecided") or 0) > 0:
        return None
    text = result.node(node_id).text
    return _safe(lambda: undecided_where_chart(record, panel_width=190, title=f"{text}: where the undecided "
                                               "individuals are"), uv.caption(record))


def group_figure(stats: pd.DataFrame) -> Figure:
    from fairaudit.viz import group_bars

    return _safe(lambda: group_bars(stats, width=250),
                 "Left: rows per group (small groups marked). Right: the favourable base rate per group with its 95% "
                 "interval; the dashed line is the rate over all rows.")


def findings_group_figure(findings) -> Figure:
    """Every group's favourable rate (``Findings.groups``), the most / least favoured marked."""
    from fairaudit.viz import group_rates_chart

    return _safe(lambda: group_rates_chart(findings, width=330),
                 "Each group's favourable rate as its interval (a point when exact), the highest rate first; the "
                 "most favoured group in blue, the least favoured in orange"
                 + ("; the lighter band is the confidence interval." if any(
                     g.ci_lo is not None or g.ci_hi is not None for g in findings.groups) else "."))


def findings_influence_figure(findings) -> Figure:
    """Each feature's influence (``Findings.influence``), sorted by its absolute value."""
    from fairaudit.viz import influence_chart

    return _safe(lambda: influence_chart(findings, width=400),
                 "Bars: each feature's influence, largest (in absolute value) first; whiskers: its interval when it "
                 "is not a single value.")
