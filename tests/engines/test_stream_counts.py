"""``RunningCounts`` (chunk by chunk) gives the same checks and statistics as the whole stream at once, row for
row, on a real dataset; ``fairaudit.engines.monitor.outofcore.read_frames`` reads CSV and Parquet in chunks to the same rows, and the
monitor over ``ChunkedObservations`` of those chunks equals the in-memory run."""
import numpy as np
import pandas as pd
import pytest

from fairaudit import data
from fairaudit.engines.monitor.engine import check_points
from fairaudit.core.observations import observe
from fairaudit.engines.monitor.stream import ChunkedObservations, RunningCounts
from fairaudit.engines.monitor.outofcore import read_frames
from fairaudit.core.evaluate import compile_spec
from fairaudit.spec import parse

SPEC = parse('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.2 and '
             'E[pred | sex == "Female"] > 0.1')


@pytest.mark.parametrize("batch,chunk", [(1, 1000), (5, 777), (7, 64), (256, 1500), (10_000, 100)])
def test_chunked_counts_equal_whole_stream(batch, chunk):
    frame = data.load("compas").frame
    pred = (frame["decile_score"] > 4).to_numpy() if "decile_score" in frame else np.arange(len(frame)) % 3 == 0
    whole = observe(SPEC, frame, pred=pred)
    idx = check_points(whole.length, batch)
    expect = whole.stats(idx)
    counts = RunningCounts(compile_spec(SPEC).leaf_keys, batch)
    steps, got = [], {k: ([], []) for k in expect}
    for a in range(0, len(frame), chunk):
        part = observe(SPEC, frame.iloc[a:a + chunk].reset_index(drop=True), pred=pred[a:a + chunk])
        s, st = counts.consume(part, final=a + chunk >= len(frame))
        steps.append(s)
        for k in st:
            got[k][0].append(st[k].successes)
            got[k][1].append(st[k].n)
    assert np.array_equal(np.concatenate(steps), idx + 1)
    for k, s in expect.items():
        assert np.array_equal(np.concatenate(got[k][0]), s.successes)
        assert np.array_equal(np.concatenate(got[k][1]), s.n)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_read_frames_gives_the_files_rows(tmp_path, suffix):
    frame = data.load("compas").frame[["sex", "race", "age", "priors_count"]]
    path = tmp_path / f"d{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path, index=False)
    chunks = list(read_frames(path, list(frame.columns), rows=500))
    assert len(chunks) > 1
    back = pd.concat(chunks, ignore_index=True)
    assert len(back) == len(frame)
    assert (back["race"].astype(str).to_numpy() == frame["race"].astype(str).to_numpy()).all()
    assert np.array_equal(back["age"].to_numpy(), frame["age"].to_numpy())


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_monitor_on_a_file_read_in_chunks_equals_in_memory(tmp_path, suffix):
    """The monitor over ``ChunkedObservations`` of the file read in chunks of 500 rows gives the same checks,
    intervals, verdicts and stop step as over the whole file's observations in memory (as ``fairaudit audit --order
    given`` builds them)."""
    from fairaudit.data import resolve
    from fairaudit.engines.monitor.engine import run_monitor
    from fairaudit.core.observations import observe_inputs
    from fairaudit.core.inputs import Inputs
    from fairaudit.spec import evaluate_event, parse_event

    frame = data.load("compas").frame
    path = tmp_path / f"log{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path, index=False)
    pred = "priors_count > 2"
    spec = parse('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.05')
    inputs = Inputs.build(resolve(str(path)) if suffix == ".csv" else data.load("compas"), pred=pred, rows="all")
    whole = observe_inputs(spec, inputs)
    condition = parse_event(pred)
    chunks = (observe(spec, f, pred=np.asarray(evaluate_event(condition, f), dtype=bool).astype(np.int8))
              for f in read_frames(path, list(frame.columns), rows=500))
    chunked = ChunkedObservations(compile_spec(spec).leaf_keys, chunks, len(frame))
    assert chunked.length == whole.length
    a = run_monitor(spec, whole, batch=5, delta=0.1)
    b = run_monitor(spec, chunked, batch=5, delta=0.1)
    assert a.stop_step == b.stop_step and a.verdict == b.verdict and a.verdict_step == b.verdict_step
    ta, tb = a.trace_table, b.trace_table
    assert np.array_equal(ta.steps, tb.steps)
    for name in ("estimate", "lo", "hi", "delta", "verdict", "n"):
        assert np.array_equal(getattr(ta, name), getattr(tb, name), equal_nan=True), name
