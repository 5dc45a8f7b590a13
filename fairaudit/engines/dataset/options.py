"""The title and options of the ``dataset`` engine (``fairaudit.engines.dataset.engine``), declared apart from it so
that listing them (the command line's flags and help, the spec-file headers ``fairaudit check`` reads) does not
import the engine (``fairaudit.core.registry.declared_options``)."""
from __future__ import annotations

from fairaudit.core.options import Option

INTERVALS = ("none", "one-look")

TITLE = "Exact on the dataset"

OPTIONS = (
    Option("interval", str, "none", "none: the exact values on these rows (no population claim); one-look: "
           "exact binomial (Clopper–Pearson) intervals for the population at Δ, valid for one look at these "
           "rows, not for monitoring", choices=INTERVALS, header=True, label="Intervals"),
    Option("delta", float, 0.05, "with interval=one-look: the total failure probability Δ, split equally over "
           "the distinct probabilities (ignored otherwise)", min=0, max=1, exclusive=True, header=True,
           label="Δ (failure probability, one look)", step=0.01),
)
