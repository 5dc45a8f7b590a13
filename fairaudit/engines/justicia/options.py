"""The title and options of the ``justicia`` engine (``fairaudit.engines.justicia.engine``), declared apart from it so
that listing them (the command line's flags and help, the spec-file headers ``fairaudit check`` reads) does not
import the engine (``fairaudit.core.registry.declared_options``)."""
from __future__ import annotations

from fairaudit.core.options import ROUNDS, Option

TITLE = "Justicia (group rates over a modelled feature distribution)"

OPTIONS = (
    Option("correlation", bool, True, "draw each feature from its distribution within the group (true: the "
           "dependence between the groups and the features is kept) or from its distribution over all audited "
           "rows (false: Justicia's plain and learning encodings, under which a model that does not read the "
           "group columns is always fair)", header=True, label="Group-conditional features"),
    Option("precision", float, 5e-3, "linear models whose exact score distribution is too large: refine the "
           "sound bounds (weights rounded down and up to a grid that halves every round) until every group's "
           "bounds are this close", min=0.0, max=1.0, header=True, label="Precision (linear)"),
    Option("search", str, "enumerate", "enumerate: the rate of every compound group; learn: only the most and "
           "least favoured compound group, found by branch and bound (Justicia's learning mode)",
           choices=("enumerate", "learn"), header=True, label="Group search"),
    Option("bins", int, 0, "linear models only: each numeric feature is discretised into at most this many "
           "equal-frequency bins, each value replaced by its bin's mean (Justicia's discretisation: a different "
           "modelled distribution); 0: keep every observed value",
           min=0, label="Bins per numeric feature (linear)", advanced=True),
    Option("multiplier", int, 0, "linear models only: round the weights to integers, the largest |weight| or "
           "|bias| becoming this multiplier (Justicia uses 30); the rates are then about the rounded model. "
           "0: exact weights", min=0, label="Weight rounding (linear)", advanced=True),
    ROUNDS,
)
