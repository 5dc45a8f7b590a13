"""The title and options of the ``fairsquare`` engine (``fairaudit.engines.fairsquare.engine``), declared apart from it so
that listing them (the command line's flags and help, the spec-file headers ``fairaudit check`` reads) does not
import the engine (``fairaudit.core.registry.declared_options``)."""
from __future__ import annotations

from fairaudit.core.options import ROUNDS, Option, common_option

TITLE = "FairSquare (sound bounds over a population program)"

OPTIONS = (
    Option("precision", float, 1e-6, "stop refining once every probability's bounds are this close (the run "
           "also stops at the decision, at the time budget, or when nothing is left to refine)", min=0,
           label="Precision", step=1e-4, advanced=True),
    Option("population_model", str, "independent", "with a dataset and a model instead of a population "
           "program: how the population is generated from the dataset (independent: every column drawn on its "
           "own; bn: the protected attribute first, every other column drawn within its group)",
           choices=("independent", "bn"), header=True, label="Generated population", advanced=True),
    common_option("stop", default=True, help="stop at the first round at which the whole specification is decided "
            "(the bounds are sound, so refining further cannot change the verdict); false: refine until the "
            "precision or the time budget"),
    common_option("time_budget", default=120.0, help="stop refining after this many seconds; an undecided "
            "specification is then 'unknown' with the (sound) bounds of its last complete round"),
    ROUNDS,
)
