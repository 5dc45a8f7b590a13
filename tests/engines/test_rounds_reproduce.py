"""Issue 28 (6, "Reproducible and precise"): a refinement engine's run cut by the time budget records the rounds it
reached (``info["rounds"]``, the bounds of its last complete round) and says "reached N rounds; rerun with --rounds N
to reproduce these bounds"; ``rounds=N`` without a budget then gives the same bounds on every node, bit for bit.

Before, two runs of the same fairsquare audit cut by the same budget reported different bounds: a round cut part way
by the deadline was reported with whatever it had done by then, and there was no option to stop after N rounds.

The deadline is either the wall clock (fairsquare, as a user meets it) or a clock that advances one second per reading
(``_Ticks``): the budget then runs out after a fixed number of readings, at a different point inside a round for
each budget, whatever the machine's speed.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pandas as pd
import pytest

import fairaudit
import fairaudit.core.driver as run_module
from fairaudit.engines.fairquant import engine as fq
from fairaudit.engines.fairsquare import engine as fs
from fairaudit.engines import get
from fairaudit.core.engine import Context
from fairaudit.core.driver import last, start
from fairaudit.spec import parse


class _Ticks:
    """A clock that advances one second per reading."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now


@contextlib.contextmanager
def _ticking():
    """Runs started inside get a ``_Ticks`` clock (their time budget counts readings of the clock)."""

    class TickContext(Context):
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("clock", _Ticks())
            super().__init__(*args, **kwargs)

    mp = pytest.MonkeyPatch()
    mp.setattr(run_module, "Context", TickContext)
    try:
        yield
    finally:
        mp.undo()


def _bounds(result) -> dict:
    return {n.id: tuple(result.final_values(n.id)[k] for k in ("estimate", "lo", "hi", "verdict"))
            for n in result.node_info}


def _same(a: dict, b: dict) -> bool:
    """Equal bit for bit (NaN equal to NaN)."""
    return all(len(a[k]) == len(b[k]) and all(x == y or (x != x and y != y) for x, y in zip(a[k], b[k])) for k in a) \
        and a.keys() == b.keys()


def _check_reproduced(cut, rerun) -> int:
    """``cut`` was stopped by its time budget: its rounds, its sentence and ``rerun(rounds)``'s bounds."""
    assert cut.timed_out and not cut.complete
    rounds = cut.info["rounds"]
    assert isinstance(rounds, int)
    reached = f"{rounds:,} round{'s' if rounds != 1 else ''}"
    assert f"reached {reached}; rerun with --rounds {rounds} to reproduce these bounds" in cut.stopped_reason
    again = rerun(rounds)
    assert again.complete and not again.timed_out and again.stopped_reason is None
    assert again.info["rounds"] == rounds
    assert _same(_bounds(again), _bounds(cut)), (rounds, _bounds(cut), _bounds(again))
    return rounds


# ------------------------------------------------------------------------------------------ fairsquare
FIG1 = "E[pred | sensitive] / E[pred | not sensitive] > 0.4841"


def _fig1():
    from fairaudit.programs.population import from_text

    return from_text(fs._FIG1, "fig1.fr")


def test_fairsquare_cut_by_a_wall_clock_budget_is_reproduced_by_its_rounds():
    population = _fig1()
    options = {"stop": False, "precision": 1e-12}
    cut = fairaudit.audit(None, FIG1, population=population, engine="fairsquare", time_budget=0.5, **options)
    from fairaudit.report.content import partial_line

    assert "rerun with --rounds" in partial_line(cut)  # the PDF says it
    _check_reproduced(cut, lambda n: fairaudit.audit(None, FIG1, population=population, engine="fairsquare",
                                                     rounds=n, **options))


def test_fairsquare_two_runs_cut_at_different_points_of_a_round_agree_with_their_rounds():
    inputs = fs._population_inputs(fs._FIG1, "fig1.fr")
    engine, spec = get("fairsquare"), parse(FIG1)
    options = {"stop": False, "precision": 1e-12}
    reached = set()
    for budget in (40, 41, 43, 60, 97, 150):
        with _ticking():
            cut = last(start(engine, spec, inputs, engine.resolve_options({**options, "time_budget": budget})))
        reached.add(_check_reproduced(cut, lambda n: last(start(engine, spec, inputs, engine.resolve_options(
            {**options, "rounds": n})))))
    assert len(reached) > 1  # the budgets ended different rounds


def test_the_rounds_option_stops_after_exactly_n_rounds():
    population = _fig1()
    for n in (0, 3):
        r = fairaudit.audit(None, FIG1, population=population, engine="fairsquare", stop=False, precision=1e-12,
                            rounds=n)
        assert r.complete and r.info["rounds"] == n and r.steps == n
    assert get("fairsquare").option("rounds").flag == "--rounds"


# ------------------------------------------------------------------------------------------ fvgm
@pytest.fixture(scope="module")
def fvgm_inputs():
    """Five numeric columns and a logistic regression: fvgm needs three rounds for precision 1e-9."""
    from fairaudit import data
    from fairaudit.core.inputs import Inputs
    from fairaudit.models.training import train

    rng = np.random.default_rng(3)
    rows = 1500
    sex = rng.choice(["F", "M"], rows)
    cols = {f"x{i}": rng.normal(size=rows) + (sex == "M") * 0.3 * i for i in range(5)}
    score = sum(cols.values()) * 0.4 + rng.normal(size=rows)
    frame = pd.DataFrame({"sex": sex, **cols, "outcome": np.where(score > 0.5, "yes", "no")})
    ds = data.from_csv(frame.to_csv(index=False).encode(), label="outcome", protected=["sex"], favourable="yes",
                       name="numeric.csv")
    return Inputs.build(ds, model=train(ds, "logreg", seed=0))


def test_fvgm_cut_by_the_budget_is_reproduced_by_its_rounds(fvgm_inputs):
    engine = get("fvgm")
    spec = parse('E[pred | sex == "F"] - E[pred | sex == "M"] < -0.1')
    options = {"precision": 1e-9}
    full = last(start(engine, spec, fvgm_inputs, engine.resolve_options(options)))
    assert full.complete and full.info["rounds"] >= 3
    reached = set()
    for budget in (3, 9, 11, 15):
        with _ticking():
            cut = last(start(engine, spec, fvgm_inputs, engine.resolve_options({**options, "time_budget": budget})))
        if not cut.timed_out:
            continue
        reached.add(_check_reproduced(cut, lambda n: last(start(engine, spec, fvgm_inputs, engine.resolve_options(
            {**options, "rounds": n})))))
    assert len(reached) > 1 and max(reached) < full.info["rounds"]


# ------------------------------------------------------------------------------------------ fairquant
def test_fairquant_cut_by_the_budget_is_reproduced_by_its_rounds():
    inputs = fq._toy_nnet(fq._long_net(), "random.nnet")
    engine, spec = get("fairquant"), parse("Fair[x1] >= 0.5")
    options = {"batch_partitions": 2, "stop": False}
    reached = set()
    for budget in (7, 20, 41, 80):
        with _ticking():
            cut = last(start(engine, spec, inputs, engine.resolve_options({**options, "time_budget": budget})))
        reached.add(_check_reproduced(cut, lambda n: last(start(engine, spec, inputs, engine.resolve_options(
            {**options, "rounds": n})))))
        assert cut.final_values("n1")["undecided"] > 0  # cut before the end
    assert len(reached) > 1


# ------------------------------------------------------------------------------------------ justicia
def test_justicia_cut_in_its_first_round_is_reproduced_by_rounds_zero():
    """A tree's exact rates are one round: cut part way, none of it is shown (it would depend on the clock), and
    rounds=0 gives the same bounds; rounds=1 gives the exact rates."""
    from fairaudit.core.inputs import Inputs
    from fairaudit.data import load

    dataset = load("compas")
    inputs = Inputs.build(dataset, model="tree", seed=0)
    engine = get("justicia")
    spec = parse('E[pred | sex == "Female"] - E[pred | sex == "Male"] < 0.2')
    with _ticking():
        cut = last(start(engine, spec, inputs, engine.resolve_options({"time_budget": 3})))
    assert _check_reproduced(cut, lambda n: last(start(engine, spec, inputs, engine.resolve_options(
        {"rounds": n})))) == 0
    exact = last(start(engine, spec, inputs, engine.resolve_options({"rounds": 1})))
    assert exact.complete and exact.guarantee.kind == "exact" and exact.info["rounds"] == 1
