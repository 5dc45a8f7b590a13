"""The title and options of the ``fairquant`` engine (``fairaudit.engines.fairquant.engine``), declared apart from it so
that listing them (the command line's flags and help, the spec-file headers ``fairaudit check`` reads) does not
import the engine (``fairaudit.core.registry.declared_options``)."""
from __future__ import annotations

from fairaudit.core.options import ROUNDS, Option, common_option

FIRST_DEPTH = 20  # refining counterexample partitions: the first round's depth limit (FairQuant's), then the rest
TITLE = "FairQuant (individual fairness of a ReLU network over its input domain)"

OPTIONS = (
    Option("max_depth", int, 0, "a partition this many bisections deep is not split further (it stays "
           "undecided); 0: as deep as the grid needs to reach single individuals, each decided exactly (20 "
           "when an input is real-valued); FairQuant's is 20", min=0, max=62, header=True,
           label="Maximum refinement depth"),
    Option("sample_depth", int, 15, "from this depth on, an undecided partition is first searched for a "
           "counterexample (random individuals of it); one found stops its refinement unless counterexample "
           "partitions are refined", min=0, max=62,
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
    Option("bounds", str, "linear", "the bounds a partition is decided by: FairQuant's symbolic intervals "
           "alone, or then, on the partitions they leave undecided, linear bounds back-substituted through the "
           "network (CROWN-style; never decide less) and the exact check that the protected attribute cannot "
           "reach the output", choices=("intervals", "linear"), label="Bounds", advanced=True),
    Option("refine_counterexamples", bool, True, "keep refining a partition where a counterexample was found "
           "(it proves one individual unfair, not the partition) instead of stopping there, as FairQuant does: "
           f"a first round as FairQuant's (depth ≤ {FIRST_DEPTH}), then what it left, the largest first",
           label="Refine counterexample partitions", advanced=True),
    Option("count_inside", bool, True, "also count, inside a partition the bounds leave undecided, the "
           "individuals its linear bounds prove fair one by one (every copy's bound on the same side of 0 at that "
           "individual), so a partition the decision boundary crosses is partly certified instead of not at all "
           "(needs the linear bounds and a grid: no real-valued input)", label="Count fair individuals inside "
           "undecided partitions", advanced=True),
    Option("hidden_bounds", str, "auto", "with the linear bounds, the bounds of the hidden layers they "
           "start from: the symbolic intervals' (fast), tightened layer by layer by back-substitution (each "
           "partition is decided more often, at 2–7× the cost per partition on a CPU), or auto: every 64 batches "
           "one is analysed both ways and whichever proved more individuals per multiply-add of its passes is used "
           "until the next trial (the rates are sound either way; only how fast they move depends on it, never on "
           "the machine or the clock)",
           choices=("auto", "intervals", "linear"), label="Hidden-layer bounds", advanced=True),
    Option("device", str, "auto", "where the tensors are computed: a CUDA GPU when torch sees one (auto), the "
           "CPU, or the GPU (cuda); a batch given analyses the same partitions on both, and the rates are sound "
           "on both (they can differ where a bound lies within float rounding of a margin)",
           choices=("auto", "cpu", "cuda"), label="Device", advanced=True),
    Option("batch_partitions", int, 0, "partitions analysed at once (a tensor batch) between two reports; 0: "
           "by device (1024 on the CPU, 65536 on a GPU)", min=0, max=1_000_000, label="Partitions per batch",
           advanced=True),
    Option("tolerance", float, 1e-5, "stop once less than this fraction of the domain is left to refine "
           "(FairQuant's quasi-complete termination)", min=0, max=1, label="Undecided tolerance",
           advanced=True, step=1e-5),
    common_option("time_budget", default=600.0, help="stop refining after this many seconds; the rates so far are "
            "sound (certified and unfair only grow), the rest is undecided"),
    ROUNDS,
)
