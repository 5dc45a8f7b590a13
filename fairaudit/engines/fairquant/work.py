"""The multiply-adds of a batch's passes, counted from the layers' shapes.

``tighten="auto"`` (``analysis.FairQuant._analyse``) weighs what each way of bounding the hidden layers proves
against what it costs. The cost is counted here rather than timed: a clock would make the choice, and with it the
rates reached after any number of batches, depend on the machine and its load, so that a run cut by its budget
could not be reproduced by its rounds. The counts follow the passes' matrix products and leave out element-wise
work and the work both ways share (counting inside partitions, splitting). Against timings on one CPU
(``bench/fairquant_results.md``) they make tightening a little dearer than timed on narrow deep networks and up
to about half as dear on wide ones; the choices agreed on 186 of 190 trials.

``shapes``: ``[(out, in), ...]``, each layer's weight matrix, first layer first, the output (one row) last.
"""
from __future__ import annotations


def forward_work(shapes, rows: int) -> int:
    """The symbolic intervals (``analysis.forward_bounds``) on ``rows`` boxes: the first layer's exact forms, then
    per later layer the lower and upper forms (``n + 1`` columns) through its weights, and every layer's bounds
    concretized over the box."""
    n = shapes[0][1]
    per_row = n * shapes[0][0]
    per_row += sum(2 * (n + 1) * fan_in * out for out, fan_in in shapes[1:])
    per_row += sum(2 * n * out for out, _ in shapes)
    return rows * per_row


def linear_work(shapes, rows: int) -> int:
    """The output's lower and upper linear bounds back-substituted to the inputs (``linear.back_substitute``) and
    concretized, on ``rows`` boxes."""
    n = shapes[0][1]
    return rows * 2 * (sum(out * fan_in for out, fan_in in shapes) + n)


def tighten_work(shapes, rows: int) -> int:
    """Every hidden layer's pre-activation bounds after the first, back-substituted through the layers below it
    (``linear.layer_bounds``) and concretized, on ``rows`` boxes: for each of the lower and upper bounds, layer
    ``i``'s ``m_i`` forms through layer ``i − 1`` (two products, one per sign of ``W_i``), then one product per
    layer further down, then the concretization."""
    n = shapes[0][1]
    per_row = 0
    for i in range(1, len(shapes) - 1):
        m = shapes[i][0]
        below = 2 * shapes[i - 1][0] * shapes[i - 1][1] + sum(out * fan_in for out, fan_in in shapes[:i - 1])
        per_row += 2 * m * (below + 2 * n)
    return rows * per_row
