"""The check schedule (``fairaudit.engines.monitor.stream.schedule_steps``): every ``batch`` observations up to
``thin_after``, then geometrically; the same on every route (whole-stream array, ``CheckPoints``,
``RunningCounts`` over any chunking, the Dask partitions' points)."""
import numpy as np
import pytest

from fairaudit.core.observations import Observations
from fairaudit.core.counting import encode
from fairaudit.engines.monitor.engine import check_points
from fairaudit.engines.monitor.stream import (GROWTH_DENOMINATOR, CheckPoints, RunningCounts, checks_in, schedule_resolution,
                                              schedule_steps)


def reference_steps(length, batch, thin_after):
    """Brute force: walk the steps one by one."""
    steps, t = [], 0
    t0 = None if not thin_after else (thin_after // batch) * batch
    while True:
        if t0 is None or t < t0:
            nxt = t + batch
        else:
            nxt = t + 1
            while not (nxt % batch == 0 and nxt * GROWTH_DENOMINATOR >= t * (GROWTH_DENOMINATOR + 1)):
                nxt += 1
        if nxt > length:
            break
        steps.append(nxt)
        t = nxt
    if length and (not steps or steps[-1] != length):
        steps.append(length)
    return np.asarray(steps, dtype=np.int64)


CASES = [(n, b, ta) for n in (0, 1, 7, 1000, 23_456, 61_001) for b in (1, 3, 5, 16) for ta in (0, 1, 2, 999, 2000)]


@pytest.mark.parametrize("length,batch,thin_after", CASES)
def test_whole_stream_schedule_matches_brute_force(length, batch, thin_after):
    want = reference_steps(length, batch, thin_after)
    assert np.array_equal(check_points(length, batch, thin_after) + 1, want)
    cp = CheckPoints(length, batch, thin_after=thin_after)
    assert len(cp) == len(want)
    assert np.array_equal(cp[:] + 1, want)
    if len(want):
        assert cp[-1] == want[-1] - 1 and cp[0] == want[0] - 1
        rng = np.random.default_rng(length + batch + thin_after)
        pick = rng.integers(-len(want), len(want), 50)
        assert np.array_equal(cp[pick] + 1, want[pick])
        mask = rng.random(len(want)) < 0.3
        assert np.array_equal(cp[mask] + 1, want[mask])
        shifted = cp + 11
        assert np.array_equal(shifted[:], want - 1 + 11)
        for x in list(rng.integers(-3, length + 3, 40)) + [length - 1, length, 0, -1]:
            assert shifted.count_upto(int(x) + 11) == np.searchsorted(want - 1, x, side="right")


def test_thin_after_zero_is_every_batch_and_the_last_row():
    for length, batch in ((12_345, 5), (10, 5), (3, 5), (50_000, 7)):
        idx = np.arange(batch - 1, length, batch)
        if not len(idx) or idx[-1] != length - 1:
            idx = np.append(idx, length - 1)
        assert np.array_equal(check_points(length, batch, 0), idx)
        assert np.array_equal(check_points(length, batch), idx)
        # a stream no longer than thin_after has exactly the same checks
        assert np.array_equal(check_points(length, batch, length), idx)


def test_thinned_gaps_grow_geometrically():
    steps = schedule_steps(0, 5_000_000, 5, 1_000_000)
    tail = steps[steps > 1_000_000]
    gaps = np.diff(np.concatenate([[1_000_000], tail]))
    assert (gaps % 5 == 0).all() and (gaps > 0).all()
    assert (tail[1:] * GROWTH_DENOMINATOR >= tail[:-1] * (GROWTH_DENOMINATOR + 1)).all()
    assert len(tail) < 20_000  # about ln(5) · 10,000 checks instead of 800,000


def _chunk_obs(v, m, a, b):
    return Observations({"x": v[a:b]}, {"x": m[a:b]}, b - a)


@pytest.mark.parametrize("batch,thin_after", [(5, 2000), (3, 0), (7, 1), (1, 500)])
def test_running_counts_over_random_chunkings(batch, thin_after):
    rng = np.random.default_rng(batch * 1000 + thin_after)
    n = 30_011
    v, m = rng.random(n) < 0.4, rng.random(n) < 0.8
    want = reference_steps(n, batch, thin_after)
    s_all = np.cumsum(v & m)[want - 1]
    n_all = np.cumsum(m)[want - 1]
    for trial in range(4):
        cuts = np.sort(rng.choice(np.arange(1, n), size=rng.integers(1, 60), replace=False))
        bounds = [0, *cuts.tolist(), n]
        counts, got, gs, gn = RunningCounts(["x"], batch, thin_after), [], [], []
        for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
            final = trial % 2 == 0 and i == len(bounds) - 2
            steps, stats = counts.consume(_chunk_obs(v, m, a, b), final=final)
            got += steps.tolist(); gs += stats["x"].successes.tolist(); gn += stats["x"].n.tolist()
        if trial % 2:
            steps, stats = counts.finish()
            got += steps.tolist(); gs += stats["x"].successes.tolist(); gn += stats["x"].n.tolist()
        assert counts.finish()[0].size == 0
        assert np.array_equal(got, want) and np.array_equal(gs, s_all) and np.array_equal(gn, n_all)


@pytest.mark.parametrize("batch,thin_after", [(5, 2000), (5, 0), (4, 3)])
def test_dask_partition_points_cover_the_schedule(batch, thin_after):
    rng = np.random.default_rng(7)
    n = 40_003
    cuts = np.sort(rng.choice(np.arange(1, n), size=25, replace=False))
    bounds = [0, *cuts.tolist(), n]
    got = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        got += (checks_in(a, b - a, batch, thin_after, end=n) + a + 1).tolist()
    assert np.array_equal(got, reference_steps(n, batch, thin_after))


def test_resolution_sentence_only_past_thin_after():
    assert schedule_resolution(5, 0, 10 ** 9) is None
    assert schedule_resolution(5, 1_000_000, 1_000_000) is None
    text = schedule_resolution(5, 1_000_000, 1_000_001)
    assert "every 5 observations up to 1,000,000" in text and "0.01 %" in text


def test_dask_partition_counts_on_the_thinned_schedule():
    """The monitor's ``ChunkedObservations`` over the workers' ``partition_counts`` (the Dask route) at the thinned
    ``checks_in``: the counts of the whole stream at every check of the schedule."""
    from fairaudit.engines.monitor import distributed

    rng = np.random.default_rng(5)
    sizes, batch, thin_after = [7000, 0, 13_001, 1, 9_998, 15_000], 1, 2000
    length = sum(sizes)
    v, m = rng.random(length) < 0.4, rng.random(length) < 0.7
    parts, offset = [], 0
    for n in sizes:
        vv, mm = v[offset:offset + n], m[offset:offset + n]
        c = distributed.PartitionCodes(encode(Observations({"a": vv}, {"a": mm}, n), ["a"]))
        parts.append(distributed.partition_counts(c, ["a"], offset, length, batch, thin_after))
        offset += n
    counted = distributed.ChunkedObservations(["a"], iter(parts), length)
    ends = CheckPoints(length, batch, thin_after=thin_after)
    whole = Observations({"a": v}, {"a": m}, length).stats(check_points(length, batch, thin_after))
    lazy = counted.stats(ends)
    for a in range(0, len(ends), 997):
        got = lazy["a"].at(slice(a, a + 997))
        np.testing.assert_array_equal(got.successes, whole["a"].successes[a:a + 997])
        np.testing.assert_array_equal(got.n, whole["a"].n[a:a + 997])
