"""The title and options of the ``fvgm`` engine (``fairaudit.engines.fvgm.engine``), declared apart from it so
that listing them (the command line's flags and help, the spec-file headers ``fairaudit check`` reads) does not
import the engine (``fairaudit.core.registry.declared_options``)."""
from __future__ import annotations

from fairaudit.core.options import ROUNDS, Option

TITLE = "FVGM (a linear model over a Bayesian network of the data)"

OPTIONS = (
    Option("bins", int, 5, "equal-width bins per numeric column (a column with fewer values keeps them)",
           min=1, max=50, label="Bins per numeric column", header=True),
    Option("structure_score", str, "bic", "the score of the hill-climbing structure search",
           choices=("bic", "k2"), label="Structure score", advanced=True),
    Option("max_parents", int, 3, "the most parents a variable of the network may have", min=0, max=10,
           label="Most parents", advanced=True),
    Option("precision", float, 1e-3, "stop refining once every probability's bounds are this close", min=0,
           exclusive=True, label="Precision", advanced=True),
    ROUNDS,
)
