"""A stream longer than ``thin_after``: in memory, out of core (Parquet and CSV), live and on Dask partitions the
thinned checks give the same verdict, stop step and intervals; the stop step is a thinned check at or after the
unthinned one; ``thin_after=0`` is today's every-``batch`` schedule."""
import numpy as np
import pandas as pd
import pytest

from fairaudit import api, data, engines
from fairaudit.core.driver import last
from fairaudit.engines.monitor.livelog import live_audit
from fairaudit.engines.monitor.outofcore import audit_file
from fairaudit.engines.monitor.stream import schedule_steps
from fairaudit.models import from_expression
from fairaudit.spec import parse

SPEC = 'E[pred | race == "A"] - E[pred | race == "C"] > -0.14'  # true (the gap is -0.1), decided after ~17,000 rows
PRED = "decile > 4"
FIELDS = ("steps", "estimate", "lo", "hi", "delta", "verdict", "n")
# the gaps exceed ``batch`` from batch · 10,000 observations on (GROWTH_DENOMINATOR): batch 1 thins a short log
ROWS, THIN, BATCH = 30_000, 2000, 1


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    rng = np.random.default_rng(11)
    race = rng.choice(["A", "C"], ROWS)
    decile = np.where(race == "A", rng.integers(0, 10, ROWS), rng.integers(1, 11, ROWS))  # rates 0.5 and 0.6
    frame = pd.DataFrame({"race": race, "decile": decile})
    folder = tmp_path_factory.mktemp("thin")
    frame.to_csv(folder / "log.csv", index=False)
    frame.to_parquet(folder / "log.parquet", index=False)
    return folder, frame


def same(a, b):
    assert (a.verdict, a.stop_step, a.steps) == (b.verdict, b.stop_step, b.steps)
    for f in FIELDS:
        x, y = getattr(a.trace_table, f), getattr(b.trace_table, f)
        assert x.shape == y.shape, f
        assert np.array_equal(x, y, equal_nan=True), f


def in_memory(folder, **options):
    return api.audit(str(folder / "log.csv"), SPEC, pred=PRED, rows="all", order="given", trace_points=None,
                     batch=BATCH, **options)


def test_every_route_checks_the_thinned_schedule_alike(log):
    folder, frame = log
    memory = in_memory(folder, thin_after=THIN)
    steps = np.unique(memory.trace_table.steps)
    want = schedule_steps(0, ROWS, BATCH, THIN)
    assert np.array_equal(steps, want if want[-1] == ROWS else np.append(want, ROWS))
    assert len(steps) < 0.8 * ROWS // BATCH  # it did thin
    assert memory.stop_step is not None and memory.stop_step > THIN  # decided after the thinning began
    assert "0.01 %" in (memory.info or {}).get("check_resolution", "")
    for path in (folder / "log.parquet", folder / "log.csv"):
        same(audit_file(str(path), parse(SPEC), pred=PRED, order="given", thin_after=THIN, batch=BATCH, trace_points=None,
                        read_rows=3001), memory)
    opts = engines.get("monitor").resolve_options({"order": "given", "thin_after": THIN, "batch": BATCH})
    decide = from_expression(PRED, data.from_csv(str(folder / "log.csv"))).predict
    rng = np.random.default_rng(3)
    cuts = np.sort(rng.choice(np.arange(1, ROWS), 40, replace=False))
    frames = [frame.iloc[a:b] for a, b in zip(np.r_[0, cuts], np.r_[cuts, ROWS])]
    live = last(live_audit(parse(SPEC), iter(frames), decide=decide, options=opts, trace_points=None))
    same(live, memory)


def test_thin_after_zero_and_a_short_stream_are_todays_schedule(log):
    folder, _ = log
    dense = in_memory(folder, thin_after=0)
    assert np.array_equal(np.unique(dense.trace_table.steps), np.arange(BATCH, ROWS + 1, BATCH))
    assert "check_resolution" not in (dense.info or {})
    same(in_memory(folder, thin_after=ROWS), dense)  # a stream no longer than thin_after: unchanged


@pytest.mark.parametrize("split", ["directed", "equal"])
def test_the_thinned_stop_is_a_thinned_check_at_or_after_the_dense_one(log, split):
    """The thinned run looks at fewer checks, so it stops at the first of its own checks at which the verdict is
    decided: never before the dense run's stop, always on the schedule; at the checks both runs have before the
    dense decision they show the same intervals (the looks change, not the statistics)."""
    folder, _ = log
    dense = in_memory(folder, thin_after=0, stop=True, split=split)
    thinned = in_memory(folder, thin_after=THIN, stop=True, split=split)
    assert dense.stop_step is not None and thinned.stop_step is not None
    assert thinned.stop_step >= dense.stop_step
    checks = schedule_steps(0, ROWS, BATCH, THIN)
    assert thinned.stop_step in checks and dense.stop_step > THIN
    a, b = dense.trace_table, thinned.trace_table
    common = np.isin(a.steps, checks) & (a.steps < dense.stop_step)
    mine = b.steps < dense.stop_step
    for f in ("lo", "hi", "estimate", "verdict"):
        assert np.array_equal(getattr(a, f)[common], getattr(b, f)[mine], equal_nan=True), f


def test_live_halves_epochs_are_tested_past_thin_after(log):
    """The live halves test's epochs need not be thinned checks: their counts are taken anyway, so a drifting live
    log warns at the same epoch, with the same message, thinned or not."""
    folder, frame = log
    drifted = frame.copy()
    drifted.loc[ROWS // 2:, "decile"] = np.minimum(drifted.loc[ROWS // 2:, "decile"] + 3, 10)
    decide = from_expression(PRED, data.from_csv(str(folder / "log.csv"))).predict
    rng = np.random.default_rng(4)
    cuts = np.sort(rng.choice(np.arange(1, ROWS), 25, replace=False))
    frames = [drifted.iloc[a:b] for a, b in zip(np.r_[0, cuts], np.r_[cuts, ROWS])]
    got = {}
    for thin_after in (0, THIN):
        opts = engines.get("monitor").resolve_options({"order": "given", "thin_after": thin_after, "batch": BATCH})
        got[thin_after] = last(live_audit(parse(SPEC), iter(frames), decide=decide, options=opts,
                                          trace_points=None))
    halves = {t: [w for w in r.warnings if "halves" in w] for t, r in got.items()}  # (other evidence: at checks)
    assert halves[0] and halves[THIN] == halves[0]
    assert len(np.unique(got[THIN].trace_table.steps)) < len(np.unique(got[0].trace_table.steps))
