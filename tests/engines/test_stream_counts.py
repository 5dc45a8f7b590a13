"""``RunningCounts`` (chunk by chunk) gives the same checks and statistics as the whole stream at once, row for
row, on a real dataset; ``read_chunks`` reads CSV and Parquet in chunks to the same rows."""
import numpy as np
import pandas as pd
import pytest

from fairaudit import data
from fairaudit.engines.monitor import check_points
from fairaudit.engines.observations import observe
from fairaudit.engines.stream import RunningCounts, read_chunks
from fairaudit.evaluate import compile_spec
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
def test_read_chunks_gives_the_files_rows(tmp_path, suffix):
    frame = data.load("compas").frame[["sex", "race", "age", "priors_count"]]
    path = tmp_path / f"d{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path, index=False)
    chunks = list(read_chunks(path, rows=500))
    assert len(chunks) > 1
    back = pd.concat(chunks, ignore_index=True)
    assert len(back) == len(frame)
    assert (back["race"].astype(str).to_numpy() == frame["race"].astype(str).to_numpy()).all()
    assert np.array_equal(back["age"].to_numpy(), frame["age"].to_numpy())
