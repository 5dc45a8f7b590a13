"""The driver (``fairaudit.core.driver``) with a tiny scripted engine defined here and registered for the test only —
which also shows that a new engine is one module plus one registry line: ``fairaudit.audit``, the CLI and its
``--help`` take it with no other edit."""
from dataclasses import replace

import numpy as np
import pytest

import fairaudit
from fairaudit import engines
from fairaudit.cli import main
from fairaudit.core.engine import Engine, LeafBatch, Option
from fairaudit.core.evaluate import LeafValue
from fairaudit.core.guarantee import Guarantee
from fairaudit.testing import toy_dataset

SPEC = 'E[sex == "F"] > 0.4'
KEY = 'E[sex == "F"]'
EVENTS: list = []  # what the scripted engine's generator went through: "started", "closed", "finished"


class Scripted(Engine):
    """Yields the batches in ``script`` (set by each test), recording whether its generator was closed."""

    name = "scripted"
    title = "Scripted engine (test)"
    summary = "yields the leaf intervals a test gives it"
    unit = "rounds"
    evidence_hint = "the scripted engine contradicted itself: see the test"
    options = (Option("width", float, 0.1, "unused: an option of the scripted engine", min=0, max=1),)
    script: list = []

    def guarantee(self, options, inputs):
        return Guarantee("sound")

    def run(self, spec, inputs, options, ctx):
        EVENTS.append("started")
        key = spec.leaves[0].text  # the script's one leaf stands for the spec's first (the CLI tests use Adult)
        try:
            for batch in self.script:
                yield replace(batch, leaves={key if k == KEY else k: v for k, v in batch.leaves.items()})
            EVENTS.append("finished")
        except GeneratorExit:
            EVENTS.append("closed")
            raise


def batch(steps, lo, hi, total=None, **extra):
    """One leaf's intervals at ``steps``: ``lo``/``hi`` numbers or lists (the estimate is the midpoint)."""
    steps = np.asarray(steps)
    lo, hi = np.broadcast_to(np.asarray(lo, float), steps.shape), np.broadcast_to(np.asarray(hi, float), steps.shape)
    return LeafBatch(steps, {KEY: LeafValue((lo + hi) / 2, lo, hi, 0.0)}, done=int(steps[-1]), total=total, **extra)


UNDECIDED, TRUE, FALSE = (0.3, 0.6), (0.45, 0.55), (0.2, 0.35)


@pytest.fixture
def scripted(monkeypatch):
    monkeypatch.setitem(engines.REGISTRY, "scripted", f"{__name__}:Scripted")
    engines.get.cache_clear()
    EVENTS.clear()
    yield engines.get("scripted")
    engines.get.cache_clear()


@pytest.fixture(scope="module")
def toy():
    return toy_dataset(2000)


def audit(toy, script, **kwargs):
    Scripted.script = script
    return fairaudit.audit(toy, SPEC, engine="scripted", **kwargs)


def test_a_registered_engine_runs_everywhere(scripted, toy, capsys):
    r = audit(toy, [batch([1, 2], *UNDECIDED), batch([3, 4], *TRUE, total=4)])
    assert (r.engine, r.unit, r.verdict, r.stop_step, r.steps, r.complete) == ("scripted", "rounds", "true", 3, 4, True)
    assert r.sentence == "certified true with certainty (sound bounds) after 3 rounds"
    assert r.options["width"] == 0.1 and EVENTS == ["started", "finished"]
    assert "scripted" in [a.name for a in engines.available()]
    with pytest.raises(SystemExit):
        main(["audit", "--engine", "scripted", "--help"])
    help_text = capsys.readouterr().out
    assert "options of the scripted engine (Scripted engine (test))" in help_text and "--width" in help_text
    assert "--delta" not in help_text
    Scripted.script = [batch([1, 2], *UNDECIDED), batch([3, 4], *TRUE, total=4)]
    code = main(["audit", "--engine", "scripted", "--data", "adult", "--spec", 'E[sex == "Female"] > 0.4'])
    out = capsys.readouterr().out
    assert "guarantee: certified true with certainty (sound bounds) after 3 rounds" in out
    assert code == 0


def test_a_leaf_is_keyed_by_its_text(scripted, toy):
    with pytest.raises(RuntimeError, match=r"engine scripted gave no value for leaf 'E\[sex == \"F\"\]'"):
        audit(toy, [LeafBatch(np.array([1]), {}, done=1)])
    assert EVENTS == ["started", "closed"]


@pytest.mark.parametrize("script", [
    [batch([1, 2], *UNDECIDED), batch([2, 3], *UNDECIDED)],  # across batches
    [batch([1, 3, 2], *UNDECIDED)],  # inside one batch
    [batch([1, 1], *UNDECIDED)],  # a step repeated
])
def test_steps_out_of_order_are_an_engine_bug(scripted, toy, script, capsys):
    with pytest.raises(RuntimeError, match="engine scripted yielded steps out of order"):
        audit(toy, script)
    Scripted.script = script
    # through the CLI: an internal error (exit 4, one line), never a verdict
    assert main(["audit", "--engine", "scripted", "--data", "adult", "--spec", 'E[sex == "Female"] > 0.4']) == 4
    assert "steps out of order" in capsys.readouterr().err


def test_stop_truncates_at_the_decision(scripted, toy):
    script = [batch([1, 2, 3, 4], [0.3, 0.3, 0.45, 0.46], [0.6, 0.6, 0.55, 0.54]), batch([5, 6], *TRUE, total=6)]
    full = audit(toy, script)
    assert (full.stop_step, full.steps) == (3, 6)
    EVENTS.clear()
    r = audit(toy, script, stop=True)
    assert (r.stop_step, r.steps, len(r.trace_table), r.complete, r.timed_out) == (3, 3, 3, True, False)
    assert list(r.trace_table.steps) == [1, 2, 3]
    np.testing.assert_array_equal(r.trace_table.lo, full.trace_table.lo[:3])
    assert EVENTS == ["started", "closed"]  # the rest was never asked for


def test_time_budget_ends_the_run_at_the_next_batch(scripted, toy):
    script = [batch([1, 2], *UNDECIDED, total=6), batch([3, 4], *UNDECIDED, total=6), batch([5, 6], *TRUE, total=6)]
    r = audit(toy, script, time_budget=1e-9)
    assert (r.steps, r.complete, r.timed_out, r.verdict) == (2, False, True, "unknown")
    assert r.stopped_reason == ("the time budget of 1e-09 s ran out after 2 rounds; the verdict so far keeps its "
                                "guarantee")
    assert EVENTS == ["started", "closed"]
    # a batch that reaches the total is the whole run: complete, not "timed out", whatever the clock says
    r = audit(toy, [batch([1, 2, 3, 4], *TRUE, total=4)], time_budget=1e-9)
    assert (r.steps, r.complete, r.timed_out, r.stopped_reason) == (4, True, False, None)


def test_on_progress_returning_false_cancels(scripted, toy):
    seen = []

    def on_progress(p):
        seen.append((p.done, p.total, p.unit, p.fraction))
        return len(seen) < 2

    script = [batch([1, 2], *UNDECIDED, total=6), batch([3, 4], *UNDECIDED, total=6), batch([5, 6], *TRUE, total=6)]
    r = audit(toy, script, on_progress=on_progress)
    assert seen == [(2, 6, "rounds", pytest.approx(1 / 3)), (4, 6, "rounds", pytest.approx(2 / 3))]
    assert (r.steps, r.complete, r.timed_out) == (4, False, False)
    assert r.stopped_reason == "stopped on request after 4 rounds; the verdict so far keeps its guarantee"
    assert EVENTS == ["started", "closed"]


def test_iterate_yields_partial_results_and_closing_closes_the_engine(scripted, toy):
    script = [batch([1, 2], *UNDECIDED, total=6), batch([3, 4], *TRUE, total=6), batch([5, 6], *TRUE, total=6)]
    Scripted.script = script
    results = fairaudit.audit(toy, SPEC, engine="scripted", iterate=True)
    first = next(results)
    assert (first.steps, first.verdict, first.complete, len(first.trace_table)) == (2, "unknown", False, 2)
    second = next(results)
    assert (second.steps, second.verdict, second.stop_step, len(second.trace_table)) == (4, "true", 3, 4)
    assert EVENTS == ["started"]
    results.close()
    assert EVENTS == ["started", "closed"]
    # read to the end, the last partial result is the final one
    EVENTS.clear()
    every = list(audit(toy, script, iterate=True))
    assert [r.steps for r in every] == [2, 4, 6, 6] and every[-1].complete and not every[-2].complete
    assert EVENTS == ["started", "finished"]


def test_a_verdict_that_flips_after_the_decision_is_reported(scripted, toy, capsys):
    script = [batch([1, 2], *TRUE), batch([3, 4], *FALSE, total=4)]
    r = audit(toy, script)
    assert (r.verdict, r.stop_step, r.verdict_step) == ("false", 1, 3)
    assert r.assumption_broken
    assert f"{SPEC} was decided true at step 1 and false at step 3" in r.warnings
    assert "the verdict was true at step 1 but is false from step 3: it changed after a decision" in r.warnings
    assert r.warnings[-1] == Scripted.evidence_hint
    # the CLI does not let it pass a gate either way: exit 3, "not a pass"
    Scripted.script = script
    assert main(["audit", "--engine", "scripted", "--data", "adult", "--spec", 'E[sex == "Female"] > 0.4']) == 3
    assert Scripted.evidence_hint in capsys.readouterr().out


def test_an_engines_own_warnings_and_guarantee_reach_the_result(scripted, toy):
    weaker = Guarantee("sound", note="a test engine's note")
    script = [batch([1, 2], *UNDECIDED, warnings=("first warning",)),
              batch([3, 4], *TRUE, total=4, warnings=("first warning", "evidence found"), assumption_broken=True,
                    guarantee=weaker, info={"solver_calls": 7})]
    r = audit(toy, script)
    assert r.warnings == ["first warning", "evidence found", Scripted.evidence_hint]
    assert r.assumption_broken and r.guarantee == weaker and r.info["solver_calls"] == 7
    assert r.sentence == "certified true with certainty (sound bounds) after 3 rounds (a test engine's note)"
    # without evidence, no hint
    clean = audit(toy, [batch([1, 2], *TRUE, total=2)])
    assert clean.warnings == [] and not clean.assumption_broken
