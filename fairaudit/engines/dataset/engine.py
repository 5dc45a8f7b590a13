"""The ``dataset`` engine: the exact value of every leaf on the audited rows — no sampling, no population claim.

``E[event]`` is the fraction of audited rows satisfying ``event``; ``E[event | given]`` the fraction among the
rows satisfying ``given``; ``Fair[col]`` the fraction of rows whose decision does not change when ``col`` takes
any other value of the column. These are the numbers Fairlearn's ``MetricFrame`` reports. Each leaf's interval is
the single point ``[value, value]`` (δ = 0; the tightest floats around the exact fraction), and the arithmetic and
comparisons above exact leaves are done with exact fractions (``fairaudit.core.evaluate``), so every comparison is
decided — a tie included: the verdict is exact — **for these rows**. It says nothing with a probability about the population the rows were drawn from; the monitor does that.
A row whose event or condition a missing value leaves unknown is left out of that leaf
(``fairaudit.core.observations``), and a warning says how many. A conditional leaf whose condition no row satisfies has no value: its interval is [0, 1], a warning says so, and the
comparisons that need it may stay undecided. One step, counting the audited rows.

``interval="one-look"`` instead gives a statement about the population, for an analyst who looks once at n rows
fixed in advance (no monitoring): each distinct leaf gets the exact binomial (Clopper–Pearson) interval of its
count at its share of Δ (``allocate``: the equal split, a union bound over the distinct leaves), so every
interval — and the verdict — holds with probability ≥ 1 − Δ, assuming the audited rows are an i.i.d. sample of
the population. It is labelled "one look, not for monitoring": re-checking it as rows arrive is not covered.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Iterator

import numpy as np

from fairaudit.base.numbers import exact_sum
from fairaudit.core.allocation import equal_split
from fairaudit.bounds.concentration import fixed_n_radius
from fairaudit.bounds.fixed_sample import clopper_pearson
from fairaudit.core.engine import Context, Engine, LeafBatch
from fairaudit.engines.dataset.options import OPTIONS, TITLE
from fairaudit.core.observations import decision_reasons, observe_inputs
from fairaudit.core.evaluate import LeafValue, enclose
from fairaudit.core.guarantee import Guarantee


ONE_LOOK = "one look, not for monitoring"
ONE_LOOK_ASSUMES = ("the audited rows are an i.i.d. sample of the population, and they are looked at once, at a "
                    "number of rows fixed in advance")


def allocate(keys, total: float) -> dict[str, float]:
    """Δ over the distinct leaves (one call, so another sound rule can replace it): the equal split."""
    return equal_split(keys, total)


def _no_rows(key: str) -> str:
    return (f"{key}: no audited row satisfies its condition, so it has no value on these rows (shown as [0, 1]; "
            "comparisons that need it stay undecided)")


DECIMAL_PLACES = 9  # a column whose values are all decimals with at most this many places is read as those decimals


def exact_mean(values: np.ndarray, mask: np.ndarray | None = None) -> Fraction:
    """The exact mean of an amount's values over the rows of ``mask`` (default all). When the values of every row
    (``values``: the amount on all the audited rows, so that every group of one amount is read alike) are decimals
    of at most ``DECIMAL_PLACES`` places — what a CSV or a database's numeric column holds: ``0.1``, ``19.99`` —
    they are read as those decimals, so that a mean of prices 0.1 and 0.2 is exactly 0.15 as written, not the sum of
    their binary approximations; any other values (a float computed in binary, ``0.1 + 0.2``) exactly as stored
    (``fairaudit.base.numbers.exact_sum``)."""
    values = np.asarray(values, dtype=np.float64)
    chosen = values if mask is None else values[np.asarray(mask, dtype=bool)]
    n = len(chosen)
    if not n:
        return Fraction(0)
    biggest = float(np.max(np.abs(values)))
    for places in range(DECIMAL_PLACES + 1):
        scale = 10 ** places
        if biggest * scale >= 2 ** 53:  # beyond, the scaled values are no longer exact integers
            break
        scaled = np.round(values * scale)
        if np.array_equal(scaled / scale, values):  # each value is the float nearest its decimal of ``places``
            ints = np.round(chosen * scale).astype(np.int64)
            whole = sum(int(part.sum()) for part in np.array_split(ints, max(1, n // 1024)))
            return Fraction(whole, scale * n)
    return exact_sum(chosen) / n


def _one_look_mean(values: np.ndarray, bounds: tuple[float, float], delta: float) -> LeafValue:
    """The one-look interval of a mean of ``values`` declared in ``bounds``: Hoeffding's two-sided fixed-sample
    radius ``sqrt(ln(2/δ) / (2n))`` on the values mapped to [0, 1] (``fixed_n_radius``), mapped back outward and cut
    to the range; the whole range without values."""
    low, high = bounds
    n = len(values)
    if not n:
        return LeafValue(np.array([np.nan]), np.array([low]), np.array([high]), delta, np.array([0.0]))
    mean = float(exact_mean(values))
    radius = fixed_n_radius(delta, n) * (high - low)
    lo = max(low, float(np.nextafter(mean - radius, -np.inf)))
    hi = min(high, float(np.nextafter(mean + radius, np.inf)))
    return LeafValue(np.array([mean]), np.array([lo]), np.array([hi]), delta, np.array([float(n)]))


def scope(rows: int | None) -> str:
    """What an exact verdict is a statement about."""
    these = f"these {rows:,} rows" if rows is not None else "these rows"
    return f"on {these} (not the population they were drawn from)"


class DatasetEngine(Engine):
    name = "dataset"
    title = TITLE
    summary = ("the exact value of every E[...] and Fair[...] on the audited rows (what Fairlearn's MetricFrame "
               "reports): no error probability, but a statement about these rows only, not the population")
    unit = "rows"
    leaf_kinds = frozenset({"expect", "fair"})
    averages_quantities = True
    decides_classes = True
    requires = ("dataset",)
    options = OPTIONS
    evidence_hint = "one step cannot contradict itself: this is a bug in fairaudit, please report it"

    def check(self, spec, inputs) -> list[str]:
        reasons = super().check(spec, inputs)
        if inputs is not None and spec is not None and inputs.has("dataset"):
            reasons += decision_reasons(spec, inputs)
        return reasons

    def scope(self, options, inputs) -> str:
        return "population" if options.get("interval") == "one-look" else "rows"

    def guarantee(self, options, inputs) -> Guarantee:
        if options.get("interval") == "one-look":
            return Guarantee("probabilistic", options["delta"], scope=ONE_LOOK, assumes=ONE_LOOK_ASSUMES)
        record = (inputs.rows or {}) if inputs is not None else {}
        return Guarantee("exact", scope=scope(record.get("audited")))

    def leaf_bound(self, options):
        return clopper_pearson if options.get("interval") == "one-look" else None

    def run(self, spec, inputs, options, ctx: Context) -> Iterator[LeafBatch]:
        # observed here, not in the generator: a problem with the inputs raises when the run starts
        # (``audit(..., iterate=True)`` raises at the call, like the monitor)
        obs = observe_inputs(spec, inputs, note=ctx.note)
        if options.get("interval") == "one-look":
            return self._one_look(obs, options["delta"])
        return self._batches(obs)

    @staticmethod
    def _one_look(obs, delta: float) -> Iterator[LeafBatch]:
        deltas = allocate(list(obs.values), delta)
        leaves, warnings = {}, obs.missing_warnings()
        for key, values in obs.values.items():
            mask = obs.masks[key]
            n = int(mask.sum())
            if not n:
                warnings.append(_no_rows(key))
            if key in obs.ranges:  # a mean of an amount: Hoeffding's fixed-sample interval on its range
                leaves[key] = _one_look_mean(np.asarray(values)[mask], obs.ranges[key], deltas[key])
                continue
            s = int(np.count_nonzero(values & mask))
            lo, hi = clopper_pearson(s, n, deltas[key])
            leaves[key] = LeafValue(np.array([s / n if n else np.nan]), np.array([float(lo)]), np.array([float(hi)]),
                                    deltas[key], np.array([float(n)]))
        yield LeafBatch(np.array([obs.length]), leaves, done=obs.length, total=obs.length, warnings=tuple(warnings),
                        counterexamples=obs.counterexamples())

    @staticmethod
    def _batches(obs) -> Iterator[LeafBatch]:
        leaves, warnings = {}, obs.missing_warnings()
        for key, values in obs.values.items():
            mask = obs.masks[key]
            n = int(mask.sum())
            if n:
                # a proportion, or the mean of a quantity: both exact fractions of the audited rows
                value = (exact_mean(values, mask) if key in obs.ranges
                         else Fraction(int(np.count_nonzero(values & mask)), n))
                low, high = enclose(value)
                leaves[key] = LeafValue(np.array([float(value)]), np.array([low]), np.array([high]), 0.0,
                                        np.array([float(n)]), exact=[value])
            else:  # no value: the whole range it can take (a rate's [0, 1], an amount's declared range)
                warnings.append(_no_rows(key))
                low, high = obs.ranges.get(key, (0.0, 1.0))
                leaves[key] = LeafValue(np.array([np.nan]), np.array([low]), np.array([high]), 0.0,
                                        np.array([0.0]), exact=[None])
        yield LeafBatch(np.array([obs.length]), leaves, done=obs.length, total=obs.length, warnings=tuple(warnings),
                        counterexamples=obs.counterexamples())

    def methods(self, options) -> list[tuple[str, list[str]]]:
        if options.get("interval") == "one-look":
            return [("The guarantee: one look at a fixed sample (Clopper–Pearson)", [
                "Each probability of the specification is a binomial proportion on the audited rows: E[A] counts "
                "the rows satisfying A, E[A | B] the rows satisfying A among those satisfying B, Fair[c] the rows "
                "whose decision stays the same when c takes each other value of the column.",
                f"Its interval is the exact binomial (Clopper–Pearson, 1934) interval at level δ = Δ / k for the k "
                f"distinct probabilities (Δ = {options['delta']:g}): [Beta quantile δ/2 with (s, n − s + 1), Beta "
                "quantile 1 − δ/2 with (s + 1, n − s)] for s of n rows. Each misses its true value with probability "
                "at most δ, so by the union bound every interval, and the verdict computed from them by interval "
                "arithmetic, is right with probability at least 1 − Δ.",
                "The average of an amount (E[amount | B], its range [lo, hi] declared) gets Hoeffding's two-sided "
                "fixed-sample interval instead: mean ± (hi − lo)·sqrt(ln(2/δ) / (2n)), cut to the range.",
                "This assumes the audited rows are an i.i.d. sample of the population and that they are looked at "
                "once, at a number of rows fixed in advance: one look, not for monitoring. Re-checking these "
                "intervals as rows arrive, or stopping when they look decided, is not covered (the monitor's "
                "anytime-valid bounds are for that).",
            ])]
        return [("The guarantee: exact on these rows", [
            "The dataset engine computes every probability of the specification exactly on the audited rows: "
            "E[A] is the fraction of those rows satisfying A, E[A | B] the fraction among the rows satisfying B, "
            "and Fair[c] the fraction of rows whose decision stays the same when c takes each other value of the "
            "column. These are the numbers a metric table (such as Fairlearn's MetricFrame) reports. The average of "
            "an amount is its exact mean: values that are all decimals of at most 9 places (as a CSV holds them) "
            "are read as those decimals, any other values exactly as stored (binary floating point).",
            "Each interval is a single point (δ = 0) and every comparison is decided exactly — but only for these "
            "rows. The verdict is not a statement about the population the rows were drawn from: a different "
            "sample would give different values. For a verdict about the population with a stated error "
            "probability, use the monitor.",
        ])]
