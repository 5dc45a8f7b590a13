"""The title and options of the ``fairquant`` engine (``fairaudit.engines.fairquant.engine``), declared apart from it so
that listing them (the command line's flags and help, the spec-file headers ``fairaudit check`` reads) does not
import the engine (``fairaudit.core.registry.declared_options``)."""
from __future__ import annotations

from fairaudit.core.options import ROUNDS, Option, common_option

TITLE = "FairQuant (individual fairness of a ReLU network over its input domain)"

OPTIONS = (
    Option("max_depth", int, 20, "a partition this many bisections deep is not split further (it stays "
           "undecided); deeper resolves more of the domain but takes longer", min=0, max=62, header=True,
           label="Maximum refinement depth"),
    Option("sample_depth", int, 15, "from this depth on, an undecided partition is first searched for a "
           "counterexample (random individuals of it); one found stops its refinement", min=0, max=62,
           header=True, label="Counterexample search depth", advanced=True),
    Option("cex_samples", int, 10, "random individuals tried per partition in the counterexample search", min=0,
           max=10_000, label="Samples per partition", advanced=True),
    Option("refine_order", str, "depth-first", "which partitions are refined first: depth-first (the last "
           "split first, as FairQuant) or breadth-first (the largest first: the certified rate grows sooner)",
           choices=("depth-first", "breadth-first"), label="Refinement order", advanced=True),
    Option("cex_corners", bool, False, "in the counterexample search also try the corners of the partition "
           "where an output bound is extreme: counterexamples are found sooner and the run is shorter, but a "
           "partition with one stops being refined, so fewer individuals are certified",
           label="Try the corners for counterexamples", advanced=True),
    Option("cex_probes", str, "random", "where the counterexample search looks: random individuals of the "
           "partition, or the FairQuant artifact's probes ⌊s·(lb+ub)/10⌋ (s = 0..9), which may lie outside it "
           "and stop its refinement sooner (a witness outside it is not counted as unfair)",
           choices=("random", "artifact"), label="Counterexample probes", advanced=True),
    Option("protected_values", str, "all", "which values of the protected attribute are compared: all of "
           "them, or only its lowest and highest (the FairQuant artifact's choice)", choices=("all", "extremes"),
           header=True, label="Protected values compared", advanced=True),
    Option("batch_partitions", int, 1024, "partitions analysed at once (a tensor batch) between two reports", min=1,
           max=1_000_000, label="Partitions per batch", advanced=True),
    Option("tolerance", float, 1e-5, "stop once less than this fraction of the domain is left to refine "
           "(FairQuant's quasi-complete termination)", min=0, max=1, label="Undecided tolerance",
           advanced=True, step=1e-5),
    common_option("time_budget", default=600.0, help="stop refining after this many seconds; the rates so far are "
            "sound (certified and unfair only grow), the rest is undecided"),
    ROUNDS,
)
