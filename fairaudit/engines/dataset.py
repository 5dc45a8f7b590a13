"""The ``dataset`` engine: the exact value of every leaf on the audited rows — no sampling, no population claim.

``E[event]`` is the fraction of audited rows satisfying ``event``; ``E[event | given]`` the fraction among the
rows satisfying ``given``; ``Fair[col]`` the fraction of rows whose decision does not change when ``col`` takes
any other value of the column. These are the numbers Fairlearn's ``MetricFrame`` reports. Each leaf's interval is
the single point ``[value, value]`` (δ = 0; the tightest floats around the exact fraction), and the arithmetic and
comparisons above exact leaves are done with exact fractions (``fairaudit.evaluate``), so every comparison is
decided — a tie included: the verdict is exact — **for these rows**. It says nothing with a probability about the population the rows were drawn from; the monitor does that.
A conditional leaf whose condition no row satisfies has no value: its interval is [0, 1], a warning says so, and the
comparisons that need it may stay undecided. One step, counting the audited rows.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Iterator

import numpy as np

from fairaudit.engines.base import Context, Engine, LeafBatch
from fairaudit.engines.observations import decision_reasons, observe_inputs
from fairaudit.evaluate import LeafValue, enclose
from fairaudit.guarantee import Guarantee


def scope(rows: int | None) -> str:
    """What an exact verdict is a statement about."""
    these = f"these {rows:,} rows" if rows is not None else "these rows"
    return f"on {these} (not the population they were drawn from)"


class DatasetEngine(Engine):
    name = "dataset"
    title = "Exact on the dataset"
    summary = ("the exact value of every E[...] and Fair[...] on the audited rows (what Fairlearn's MetricFrame "
               "reports): no error probability, but a statement about these rows only, not the population")
    unit = "rows"
    leaf_kinds = frozenset({"expect", "fair"})
    requires = ("dataset",)
    options = ()
    evidence_hint = "one step cannot contradict itself: this is a bug in fairaudit, please report it"

    def check(self, spec, inputs) -> list[str]:
        reasons = super().check(spec, inputs)
        if inputs is not None and spec is not None and inputs.has("dataset"):
            reasons += decision_reasons(spec, inputs)
        return reasons

    def guarantee(self, options, inputs) -> Guarantee:
        record = (inputs.rows or {}) if inputs is not None else {}
        return Guarantee("exact", scope=scope(record.get("audited")))

    def run(self, spec, inputs, options, ctx: Context) -> Iterator[LeafBatch]:
        # observed here, not in the generator: a problem with the inputs raises when the run starts
        # (``audit(..., iterate=True)`` raises at the call, like the monitor)
        return self._batches(observe_inputs(spec, inputs, note=ctx.note))

    @staticmethod
    def _batches(obs) -> Iterator[LeafBatch]:
        leaves, warnings = {}, []
        for key, values in obs.values.items():
            mask = obs.masks[key]
            n = int(mask.sum())
            if n:
                value = Fraction(int(np.count_nonzero(values & mask)), n)
                low, high = enclose(value)
                leaves[key] = LeafValue(np.array([float(value)]), np.array([low]), np.array([high]), 0.0,
                                        np.array([float(n)]), exact=[value])
            else:
                warnings.append(f"{key}: no audited row satisfies its condition, so it has no value on these rows "
                                "(shown as [0, 1]; comparisons that need it stay undecided)")
                leaves[key] = LeafValue(np.array([np.nan]), np.array([0.0]), np.array([1.0]), 0.0,
                                        np.array([0.0]), exact=[None])
        yield LeafBatch(np.array([obs.length]), leaves, done=obs.length, total=obs.length, warnings=tuple(warnings),
                        counterexamples=obs.counterexamples())

    def methods(self, options) -> list[tuple[str, list[str]]]:
        return [("The guarantee: exact on these rows", [
            "The dataset engine computes every probability of the specification exactly on the audited rows: "
            "E[A] is the fraction of those rows satisfying A, E[A | B] the fraction among the rows satisfying B, "
            "and Fair[c] the fraction of rows whose decision stays the same when c takes each other value of the "
            "column. These are the numbers a metric table (such as Fairlearn's MetricFrame) reports.",
            "Each interval is a single point (δ = 0) and every comparison is decided exactly — but only for these "
            "rows. The verdict is not a statement about the population the rows were drawn from: a different "
            "sample would give different values. For a verdict about the population with a stated error "
            "probability, use the monitor.",
        ])]
