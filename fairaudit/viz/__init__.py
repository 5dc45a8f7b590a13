"""Altair charts built from tidy data (the audit's nodes and trace); no page draws anything itself.

* :func:`tree_chart` — the specification's syntax tree, clickable (point selection ``node`` on ``id``)
* :func:`convergence_chart` — a node's estimate and bounds over steps (two nodes: stacked, shared x)
* :func:`rates_chart` — certified / unfair / undecided fractions of a ``Fair[...]`` node over steps
* :func:`group_bars` / :func:`group_metrics_chart` — per-group data and model metrics with confidence intervals

The verdict palette (Okabe–Ito) is :data:`fairaudit.viz.palette.VERDICTS`.
"""
from fairaudit.viz.convergence import convergence_chart, convergence_series, has_rates, natural_range, rates_chart
from fairaudit.viz.groups import group_bars, group_metrics_chart
from fairaudit.viz.layout import tree_layout
from fairaudit.viz.palette import RATES, VERDICTS, normalise_verdict, verdict_label
from fairaudit.viz.tree import SELECTION, tree_chart, tree_frame

__all__ = ["tree_chart", "tree_frame", "tree_layout", "SELECTION", "convergence_chart", "convergence_series",
           "natural_range", "rates_chart", "has_rates", "group_bars", "group_metrics_chart", "VERDICTS", "RATES",
           "normalise_verdict", "verdict_label", "to_png"]


def to_png(chart, scale: float = 1.0) -> bytes:
    """Render a chart to PNG offline (vl-convert, no browser, no network)."""
    import vl_convert as vlc

    return vlc.vegalite_to_png(chart.to_json(), scale=scale)
