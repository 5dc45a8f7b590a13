"""Altair charts built from tidy data (the audit's nodes and trace); no page draws anything itself.

* :func:`tree_chart` — the specification's syntax tree, clickable (point selection ``node`` on ``id``); it takes
  ``result.nodes`` (or the result, or a parsed ``Spec`` before a run: :func:`spec_nodes`)
* :func:`convergence_chart` — a node's estimate and bounds over steps (two nodes: stacked, shared x)
* :func:`rates_chart` — certified / unfair / undecided fractions of a ``Fair[...]`` node over steps
* :func:`undecided_where_chart` — where a ``Fair[...]`` node's undecided individuals are, per range of the features
  where they are spread most unevenly, beside where all individuals are
* :func:`group_bars` / :func:`group_metrics_chart` — per-group data and model metrics with confidence intervals
* :func:`group_rates_chart` / :func:`influence_chart` — an engine's findings: every compound group's favourable
  rate (most / least favoured marked) and each feature's influence on a fairness metric

Engine-neutral: operators and constants come from the nodes' ``op`` and ``value``; the x axis counts
``unit=result.unit``; δ appears only for ``guarantee=result.guarantee`` of the probabilistic kind; a run of a single
step is drawn as points with their intervals. The verdict palette (Okabe–Ito) is
:data:`fairaudit.viz.palette.VERDICTS`.
"""
from fairaudit.viz.convergence import convergence_chart, convergence_series, has_rates, natural_range, rates_chart
from fairaudit.viz.findings import edge_rows, group_rates_chart, influence_chart
from fairaudit.viz.groups import group_bars, group_metrics_chart
from fairaudit.viz.layout import tree_layout
from fairaudit.viz.palette import RATES, VERDICTS, normalise_verdict, verdict_label
from fairaudit.viz.tree import SELECTION, spec_nodes, tree_chart, tree_frame
from fairaudit.viz.undecided import undecided_where_chart

__all__ = ["tree_chart", "tree_frame", "spec_nodes", "tree_layout", "SELECTION", "convergence_chart",
           "convergence_series", "natural_range", "rates_chart", "has_rates", "group_bars", "group_metrics_chart",
           "group_rates_chart", "influence_chart", "edge_rows", "undecided_where_chart",
           "VERDICTS", "RATES", "normalise_verdict", "verdict_label", "to_png"]


def to_png(chart, scale: float = 1.0) -> bytes:
    """Render a chart to PNG offline (vl-convert, no browser, no network)."""
    import vl_convert as vlc

    return vlc.vegalite_to_png(chart.to_json(), scale=scale)
