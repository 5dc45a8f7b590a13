"""The engine contract: what an engine declares, what it is given, and what it yields.

An engine turns a specification and its inputs into **intervals on the spec's leaves** (``E[...]``,
``Fair[...]``), step after step. It never evaluates the tree, builds a trace or an ``AuditResult``: the
driver (``fairaudit.core.driver``) does, the same way for every engine, and the CLI, the dashboard and the PDF
read only the result and the engine's declarations — so a new engine is one module plus one line in
``fairaudit.engines.REGISTRY`` (and its oracle tests, with ``fairaudit.testing.check_engine``).

* ``Option`` (``fairaudit.core.options``) — one declaration per option; the keyword argument, the JSON ``options``,
  the CLI flag, the dashboard widget, the report's parameter table and the spec-file header (``# name: value`` when
  ``header=True``) are all derived from it. An engine declares them in its package's ``options.py``.
* ``Engine`` — ``name``, ``title``, ``unit`` (what a step counts), ``leaf_kinds``, ``requires``, ``options``;
  ``check()`` (why it cannot run), ``run()`` (yields ``LeafBatch``es), ``guarantee()``, ``methods()``.
* ``Context`` — the run's deadline and progress; an engine bounds every blocking call by ``remaining()``.
* ``Inputs`` (``fairaudit.core.inputs``) — the dataset, model, decisions, audited rows and their provenance.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

import numpy as np

from fairaudit.base.errors import FairauditError
from fairaudit.core.evaluate import LeafValue, NodeEvidence
from fairaudit.core.guarantee import Guarantee
from fairaudit.core.inputs import Inputs
from fairaudit.core.options import COMMON_OPTIONS, ROUNDS, Option, with_common

__all__ = ["Option", "Engine", "Context", "LeafBatch", "NodeEvidence", "Guarantee", "Inputs", "COMMON_OPTIONS", "ROUNDS",
           "LEAF_NAMES", "INPUT_NAMES"]

LEAF_NAMES = {"expect": "E[...]", "fair": "Fair[...]"}
# what an engine may require, and how a front end asks for it
INPUT_NAMES = {"dataset": "a dataset", "decisions": "decisions (a model or a decision expression)",
               "model": "a model", "population": "a population program", "network": "a Bayesian network",
               "domain": "an input domain"}


@dataclass
class LeafBatch:
    """What an engine yields: every distinct leaf's value at each of ``steps`` (increasing, in ``unit``).

    ``leaves`` maps a leaf's key (``fairaudit.core.evaluate.leaf_key``) to a ``LeafValue`` whose arrays have one
    entry per step. ``done``/``total`` say how far the run is (in the engine's unit; ``total`` None if unknown).
    ``guarantee`` replaces the run's guarantee from this batch on (e.g. a data-chosen δ split weakens it);
    ``warnings`` are new sentences about what may make the verdict wrong; ``assumption_broken`` marks one of
    them as evidence against what the guarantee assumes; ``info`` adds engine facts (solver calls, allocations);
    ``findings`` (``fairaudit.core.findings.Findings``) replaces the run's per-group table, metrics, influences and graph;
    ``counterexamples`` (``fairaudit.core.counterexamples.Counterexamples``) replaces the run's Fair[...] counterexamples.
    ``nodes`` maps a comparison's node id to ``fairaudit.core.evaluate.NodeEvidence`` (arrays with one entry per step):
    the engine's own test of that comparison, whose verdict REPLACES the one interval arithmetic gives on its leaves
    (the engine's methods must prove that its allocation gives that test the level it certifies at)."""

    steps: np.ndarray
    leaves: Mapping[str, LeafValue]
    done: float
    total: float | None = None
    guarantee: Guarantee | None = None
    warnings: tuple[str, ...] = ()
    assumption_broken: bool = False
    info: dict = field(default_factory=dict)
    findings: object = None
    counterexamples: object = None
    nodes: Mapping[str, NodeEvidence] = field(default_factory=dict)


class Context:
    """A run's deadline and progress, handed to ``Engine.run``."""

    def __init__(self, seed: int = 0, time_budget: float | None = None, clock=time.perf_counter, progress=None):
        self.seed = seed
        self.progress = progress  # the run's ``fairaudit.base.progress.Progress`` (None: nobody is told)
        self.time_budget = time_budget
        self._clock = clock
        self.started = clock()
        self.deadline = None if time_budget is None else self.started + float(time_budget)
        self.gave_up = False

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None when there is none; never negative)."""
        return None if self.deadline is None else max(0.0, self.deadline - self._clock())

    def expired(self) -> bool:
        return self.deadline is not None and self._clock() >= self.deadline

    def give_up(self) -> None:
        """The engine ends its refinement for the time budget before the deadline (its next round cannot finish in
        time): the run is reported as cut by the time budget, like one whose deadline passed."""
        self.gave_up = True

    def timed_out(self) -> bool:
        """Has the time budget ended the run (the deadline passed, or the engine gave up for it)?"""
        return self.gave_up or self.expired()

    def note(self, message: str) -> None:
        """Say what the engine is preparing before its first batch (e.g. "re-predicting Fair[sex]"), so a slow
        preparation is not a silent bar."""
        if self.progress is not None:
            self.progress(self.progress.done, message=message)

    def bounded(self, limit: float) -> float:
        """``limit`` seconds for one blocking call, cut to the time left (so Stop and the budget are prompt)."""
        left = self.remaining()
        return limit if left is None else min(limit, left)


class Engine:
    """Base class of every engine: declarations plus ``run``. Subclasses set the class attributes."""

    name: str = ""
    title: str = ""
    summary: str = ""  # one line for the engine picker
    unit: str = "steps"  # what a step counts, plural ("observations", "rows", "refinement rounds")
    leaf_kinds: frozenset = frozenset(LEAF_NAMES)
    # whether it bounds the mean of a quantity (``E[amount | …]``, ``fairaudit.spec.quantities``) besides the
    # probability of an event; an engine that does not refuses such a spec before any work
    averages_quantities: bool = False
    decides_classes: bool = False  # it reads a decision among several classes (``pred == "approve"``)
    requires: tuple[str, ...] = ("dataset",)
    # inputs that may stand in for all of ``requires`` (e.g. the monitor samples a population program instead of
    # reading a dataset's rows)
    accepts: tuple[str, ...] = ()
    options: tuple[Option, ...] = ()
    # said after the driver finds a node decided both ways, or the verdict changing after a decision
    evidence_hint: str | None = None
    # what a leaf's ``n`` counts, as a noun phrase ("the number of boxes its bounds are summed over"); None: the
    # steps (``unit``) that satisfied the leaf's condition, what the report and the glossary then say
    count_meaning: str | None = None

    # ------------------------------------------------------------------ declarations
    def option(self, name: str) -> Option:
        for option in self.all_options():
            if option.name == name:
                return option
        raise KeyError(name)

    def all_options(self) -> tuple[Option, ...]:
        """The engine's options, then the common ones it does not redeclare (``fairaudit.core.options.with_common``)."""
        return with_common(self.options)

    def header_options(self) -> tuple[Option, ...]:
        return tuple(o for o in self.options if o.header)  # as fairaudit.core.registry.header_options(name)

    def resolve_options(self, given: Mapping[str, Any] | None = None) -> dict:
        """Every option's value: ``given`` (validated) over the defaults; an unknown name is refused."""
        given = dict(given or {})
        known = {o.name: o for o in self.all_options()}
        unknown = sorted(set(given) - set(known))
        if unknown:
            names = ", ".join(o.name for o in self.options) or "none"
            raise FairauditError(f"the {self.name} engine has no option {unknown[0]!r}; its options: {names}")
        return {name: o.validate(given[name]) if name in given else o.default for name, o in known.items()}

    # ------------------------------------------------------------------ behaviour
    def used_options(self, options: Mapping[str, Any], inputs: Inputs | None) -> dict:
        """The resolved ``options`` a run on ``inputs`` uses — what its result records (and its report lists): an
        option that applies only to a population program is left out of a run on rows."""
        rows = inputs is None or getattr(inputs, "population", None) is None
        skip = {o.name for o in self.all_options() if o.population_only} if rows else set()
        return {k: v for k, v in options.items() if k not in skip}

    def check(self, spec, inputs: Inputs | None) -> list[str]:
        """Reasons this engine cannot audit ``spec`` on ``inputs`` (empty when it can). ``inputs`` None asks
        only about the spec. The default checks ``leaf_kinds`` and ``requires``."""
        reasons = []
        kinds = {tn.kind for tn in getattr(spec, "leaves", ())} if spec is not None else set()
        for kind in sorted(kinds - set(self.leaf_kinds)):
            reasons.append(f"it cannot bound {LEAF_NAMES.get(kind, kind)} leaves")
        if spec is not None and not self.averages_quantities and "expect" in self.leaf_kinds \
                and hasattr(spec, "nodes"):
            from fairaudit.spec.quantities import quantity_leaves

            averaged = quantity_leaves(spec)
            if averaged:
                reasons.append(f"it bounds probabilities, not averages ({averaged[0].text} averages an amount)")
        if inputs is not None and not self.decides_classes and getattr(inputs.model, "classes", None) is not None:
            reasons.append("it reads yes/no decisions, and these have several classes (audit them with the monitor "
                           "or dataset engine)")
        if inputs is not None and not any(inputs.has(other) for other in self.accepts):
            for need in self.requires:
                if not inputs.has(need):
                    if need == "dataset" and inputs.has("population"):
                        reasons.append("it needs a dataset: it cannot audit a population program")
                    else:
                        reasons.append(f"it needs {INPUT_NAMES.get(need, need)}")
        return reasons

    def derive_inputs(self, dataset, model, options: Mapping[str, Any], *, seed: int = 0, trust_pickle: bool = False,
                      trusted_types=(), warnings=(), include_protected: bool = False) -> Inputs:
        """The inputs this engine derives itself from a dataset and a model when it requires something else (a
        population program generated from them, a model's input domain; ``dataset`` may be None where the model
        alone suffices). ``model``: a ``Model``, a saved-model path or a training kind
        (``fairaudit.core.inputs.resolve_model`` with the given trust). The resolver (``fairaudit.resolve``) calls
        it after everything is validated. The default derives nothing (an engine that reads what it is given)."""
        raise FairauditError(f"the {self.name} engine derives no inputs from a dataset and a model: give it "
                             + " and ".join(INPUT_NAMES.get(need, need) for need in self.requires))

    def guarantee(self, options: Mapping[str, Any], inputs: Inputs) -> Guarantee:
        """The guarantee of a run with ``options`` on ``inputs`` (a batch may weaken it later)."""
        raise NotImplementedError

    def scope(self, options: Mapping[str, Any], inputs: Inputs | None) -> str:
        """What a run's verdict is about (``fairaudit.core.claim.SCOPES``): "rows", "population", "modelled" (a
        distribution fitted to the audited rows: the headline then composes the engine's bound with what the rows
        support), "program" or "domain". Default: from the guarantee's kind (exact: rows; probabilistic: the
        population; sound: the program given)."""
        kind = self.guarantee(options, inputs).kind if inputs is not None else "sound"
        return {"exact": "rows", "probabilistic": "population"}.get(kind, "program")

    def run(self, spec, inputs: Inputs, options: Mapping[str, Any], ctx: Context) -> Iterator[LeafBatch]:
        """Yield ``LeafBatch``es, steps increasing; stop when done. The driver may close the generator at
        any yield (Stop, the time budget, ``stop`` at the decision)."""
        raise NotImplementedError

    def methods(self, options: Mapping[str, Any]) -> list[str]:
        """Paragraphs for the report's methods appendix: what the engine computes and why its guarantee holds."""
        return []

    def leaf_bound(self, options: Mapping[str, Any]):
        """How this engine's leaf intervals shrink with the number of observations, for projections
        (``fairaudit.core.suggest``): a function ``(successes, n, delta) -> (lo, hi)`` (vectorised), or None for an
        engine whose leaves are not counts of observations (the default)."""
        return None

    def __repr__(self) -> str:
        return f"<engine {self.name}>"
