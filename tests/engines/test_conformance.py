"""Every registered engine passes every conformance check (``fairaudit.testing``), and the checks catch the bugs
they are about: a new engine in ``fairaudit.engines.REGISTRY`` is run through all of them here automatically."""
import math

import numpy as np
import pytest

from fairaudit import engines
from fairaudit.core.engine import Engine, LeafBatch, Option
from fairaudit.core.observations import observe_inputs
from fairaudit.core.evaluate import LeafValue
from fairaudit.core.guarantee import Guarantee
from fairaudit.testing import (CHECKS, ConformanceError, NotApplicable, check_engine, engine_checks,
                               parametrize_with_checks, run_check)

AVAILABLE = {a.name: a for a in engines.available()}


@parametrize_with_checks(engines.names())
def test_registered_engine(engine, check):
    if not AVAILABLE[engine].available:
        pytest.skip(f"{engine}: {AVAILABLE[engine].reason}")
    try:
        run_check(engine, check)
    except NotApplicable as why:
        pytest.skip(str(why))


# ------------------------------------------------------------------ a toy engine, and broken copies of it
class Bisect(Engine):
    """A sound toy engine: at round k every leaf is its exact value ± 2⁻ᵏ (clipped to [0, 1]), so the
    intervals are nested and contain the value; a leaf with no row is [0, 1]."""

    name = "bisect"
    title = "Bisection (test engine)"
    summary = "halves every interval each round"
    unit = "rounds"
    options = (Option("rounds", int, 6, "how many rounds", min=1, max=40),
               Option("shape", str, "halve", "how the radius shrinks", choices=("halve", "third")))

    def check(self, spec, inputs):
        reasons = super().check(spec, inputs)
        if inputs is not None and any(tn.kind == "fair" for tn in spec.leaves) and inputs.reprediction_model is None:
            reasons.append("Fair[...] needs a model")
        return reasons

    def guarantee(self, options, inputs):
        return Guarantee("sound")

    def values(self, spec, inputs):
        obs = observe_inputs(spec, inputs)
        out = {}
        for key, v in obs.values.items():
            m = obs.masks[key]
            out[key] = np.count_nonzero(v & m) / m.sum() if m.sum() else None
        return out

    def radius(self, k, options):
        return (2.0 if options["shape"] == "halve" else 3.0) ** -k

    def leaf(self, value, r, k):
        if value is None:
            return LeafValue(np.array([np.nan]), np.array([0.0]), np.array([1.0]), 0.0)
        return LeafValue(np.array([value]), np.array([max(0.0, value - r)]), np.array([min(1.0, value + r)]), 0.0)

    def run(self, spec, inputs, options, ctx):
        exact = self.values(spec, inputs)
        for k in range(1, options["rounds"] + 1):
            r = self.radius(k, options)
            yield LeafBatch(np.array([k]), {key: self.leaf(v, r, k) for key, v in exact.items()}, done=k,
                            total=options["rounds"])


def test_a_correct_engine_passes_every_check():
    outcome = check_engine(Bisect())
    assert set(outcome) == set(CHECKS)
    assert all(v == "passed" for k, v in outcome.items()), outcome
    names = [name for name, _ in engine_checks(Bisect())]
    assert names == list(CHECKS)


class DeltaOnSound(Bisect):
    def leaf(self, value, r, k):
        out = super().leaf(value, r, k)
        out.delta = 0.01
        return out


class NotNested(Bisect):
    def radius(self, k, options):
        return 0.05 if k % 2 else 0.01


class WrongValue(Bisect):
    def values(self, spec, inputs):
        return {k: (None if v is None else (v + 0.3) % 1) for k, v in super().values(spec, inputs).items()}


class Unseeded(Bisect):
    def leaf(self, value, r, k):
        out = super().leaf(value, r, k)
        if value is not None:  # an estimate that moves with an unseeded generator (inside the interval)
            out.estimate = np.clip(out.estimate + np.random.default_rng().uniform(-r, r) / 2, out.lo, out.hi)
        return out


class BadOption(Bisect):
    options = (Option("rounds", int, 0, "how many rounds", min=1, max=40),
               Option("shape", str, "halve", "how the radius shrinks", choices=("halve", "third")))


class AcceptsAnyFloat(Bisect):
    options = Bisect.options + (Option("tolerance", float, 0.1, "a tolerance", min=0, max=1),)

    def resolve_options(self, given=None):  # skips validation: an unknown or bad value goes through
        return {**{o.name: o.default for o in self.all_options()}, **dict(given or {})}


class FairRatesWrong(Bisect):
    def leaf(self, value, r, k):
        out = super().leaf(value, r, k)
        out.certified, out.unfair, out.undecided = out.lo, 1 - out.hi, np.array([0.0])
        return out


class StepsBackwards(Bisect):
    def run(self, spec, inputs, options, ctx):
        for batch in super().run(spec, inputs, options, ctx):
            batch.steps = np.array([options["rounds"] + 1 - int(batch.steps[0])])
            yield batch


class StepsBackwardsInBatch(Bisect):
    def run(self, spec, inputs, options, ctx):
        batches = list(super().run(spec, inputs, options, ctx))
        leaves = {k: LeafValue(*(np.concatenate([getattr(b.leaves[k], f) for b in batches])
                                 for f in ("estimate", "lo", "hi")), 0.0) for k in batches[0].leaves}
        yield LeafBatch(np.array([b.steps[0] for b in batches])[::-1], leaves, done=1, total=1)


@pytest.mark.parametrize("broken, check, words", [
    (DeltaOnSound, "delta", "the guarantee is sound but node"),
    (NotNested, "nested", "not nested"),
    (WrongValue, "oracle", "does not contain the oracle value"),
    (Unseeded, "same_seed", "two runs with seed 7 differ"),
    (BadOption, "options_validated", "option rounds"),
    (AcceptsAnyFloat, "options_validated", "accepts the unknown option"),
    (FairRatesWrong, "fair_rates", "certified + unfair + undecided ≠ 1"),
    (StepsBackwards, "steps_increasing", "out of order"),
    (StepsBackwardsInBatch, "steps_increasing", "out of order"),
])
def test_each_check_catches_its_bug(broken, check, words):
    with pytest.raises(ConformanceError) as err:
        check_engine(broken(), checks=[check])
    text = str(err.value)
    assert text.startswith("engine 'bisect' fails 1 conformance check(s):"), text
    assert f"- {check}: " in text and words in text, text
    assert err.value.failures[0][0] == check


def test_check_engine_lists_every_failure_at_once():
    with pytest.raises(ConformanceError) as err:
        check_engine(DeltaOnSound())
    assert [name for name, _ in err.value.failures] == ["delta", "option_values_run"]
    assert "option_values_run: case 'gap_true with shape=third': the guarantee is sound" in str(err.value)


def test_an_engine_that_can_run_no_case_is_told_to_bring_its_own():
    class NeedsNetwork(Bisect):
        requires = ("network",)

    with pytest.raises(ConformanceError, match=r"can run none of the toy cases .* give it cases of its own"):
        run_check(NeedsNetwork(), "steps_increasing")
    outcome = check_engine(NeedsNetwork(), checks=["declarations", "options_validated"])
    assert outcome == {"declarations": "passed", "options_validated": "passed"}


def test_own_cases_are_used():
    from fairaudit.testing import Case, toy_cases

    gap = toy_cases()[0]
    mine = Case("mine", gap.spec, gap.make_inputs, gap.oracle, {"seed": 3})
    assert check_engine("dataset", cases=[mine], checks=["oracle", "stop_step"]) == {"oracle": "passed",
                                                                                   "stop_step": "passed"}
    wrong = Case("mine", gap.spec, gap.make_inputs, {k: v + 0.01 for k, v in gap.oracle.items()})
    with pytest.raises(ConformanceError, match="case 'mine'"):
        check_engine("dataset", cases=[wrong], checks=["oracle"])


def test_unknown_check_is_refused():
    with pytest.raises(KeyError, match="no conformance check 'nope'"):
        run_check("dataset", "nope")
    assert math.isfinite(len(CHECKS))
