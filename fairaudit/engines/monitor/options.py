"""The title and options of the ``monitor`` engine (``fairaudit.engines.monitor.engine``), declared apart from it so
that listing them (the command line's flags and help, the spec-file headers ``fairaudit check`` reads) does not
import the engine (``fairaudit.core.registry.declared_options``)."""
from __future__ import annotations

from fairaudit.bounds.concentration import BOUND_ALIASES, BOUNDS, DEFAULT_BOUND
from fairaudit.core.options import Option

ORDERS = ("shuffle", "given")
# how Δ is shared (the split option): directed, ``fairaudit.engines.monitor.directed`` with the joint tests of
# ``fairaudit.engines.monitor.eprocess`` (the default); directed-intervals, the same on leaf intervals only; equal and
# optimized, ``fairaudit.core.allocation``
SPLITS = ("directed", "directed-intervals", "equal", "optimized")
DEFAULT_SPLIT = "directed"

TITLE = "Online monitor (AVOIR)"

OPTIONS = (
    Option("delta", float, 0.05, "total failure probability Δ: the verdict is wrong with probability at most "
           "Δ (smaller: wider intervals, later decisions)", min=0, max=1, exclusive=True, header=True,
           label="Δ (failure probability)", step=0.01),
    Option("batch", int, 5, "check the bounds and the verdict every this many observations", min=1,
           label="Check every … observations"),
    Option("thin_after", int, 1_000_000, "after this many observations the checks thin out geometrically (the "
           "next one at least 1/10,000 of the stream after the last; anytime validity holds at any looks fixed in "
           "advance), so a long stream is read near its reading speed; 0: never thin", min=0,
           label="Thin the checks after … observations", advanced=True),
    Option("split", str, DEFAULT_SPLIT, "how Δ is shared among the estimated probabilities: directed (one "
           "certificate per verdict direction, each conjunct of a TRUE 'and' at the full Δ, and with the "
           "mixture bound a joint e-process test for every comparison of two disjoint groups; the verdict holds "
           "with probability ≥ 1 − Δ), directed-intervals (the same on the intervals only), equal (Δ/k each, "
           "VeriFair/AVOIR-VF; 1 − Δ) or optimized (AVOIR-OB, exploratory: chosen from the data, only "
           "guarantees 1 − k·Δ for k probabilities)", choices=SPLITS,
           label="Δ split", advanced=True),
    Option("bound", str, DEFAULT_BOUND, "the confidence sequence behind every E[...] interval: mixture (the "
           "Krichevsky–Trofimov beta-binomial mixture; adapts to the rate) or hoeffding (as in AVOIR and "
           "VeriFair, to reproduce them); betting is the deprecated name of mixture",
           choices=tuple(BOUNDS) + tuple(BOUND_ALIASES), label="Bound", advanced=True),
    Option("order", str, "shuffle", "row order: shuffle (seeded; the random order the guarantee assumes) "
           "or given (file order, for a log whose arrival order is the point; the guarantee then assumes "
           "that order is random)", choices=ORDERS, header=True, label="Row order"),
    Option("samples", int, 1_000_000, "with a population program: the most individuals drawn from it (the "
           "stream's length)", min=1, label="Individuals sampled (population)", advanced=True,
           population_only=True),
)

# the Dask route's options (``fairaudit.engines.monitor.distributed``, ``--dask`` / ``--scheduler``)
DASK_OPTIONS = (
    Option("dask_workers", int, 2, "with --dask: worker processes of the local Dask cluster", min=1,
           label="Dask workers", metavar="N"),
    Option("dask_threads", int, 1, "with --dask: threads per worker of the local Dask cluster", min=1,
           label="Threads per worker", metavar="N"),
    Option("dask_timeout", float, 10.0, "seconds to wait for the Dask scheduler (--scheduler) or the local cluster "
           "to answer", min=0, exclusive=True, label="Dask timeout (s)", metavar="SECONDS"),
)
