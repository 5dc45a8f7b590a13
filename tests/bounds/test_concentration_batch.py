"""``Bound.intervals`` (several leaves' intervals at once, what the monitor asks): exactly the per-question
``Bound.interval`` values, for every bound and through ``ReusedBound``'s memory."""
import numpy as np
import pytest

from fairaudit.bounds.concentration import BOUNDS, ReusedBound


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_intervals_are_the_per_question_intervals(name):
    rng = np.random.default_rng(3)
    questions = []
    for i, size in enumerate((1, 7, 200, 0, 50, 30)):
        n = np.cumsum(rng.integers(0, 3, size)).astype(float)
        s = np.floor(n * rng.uniform(0, 1)).astype(float)
        questions.append((s, n, [0.05, 0.001, np.full(size, 0.01)][i % 3]))
    questions.append((np.array([[3.0, 0.0], [5.0, 9.0]]), np.array([[4.0, 0.0], [9.0, 9.0]]), 0.02))
    for bound in (BOUNDS[name], ReusedBound(BOUNDS[name])):
        for _ in range(2):  # the second time from ReusedBound's memory
            got = bound.intervals(questions)
            for (s, n, d), (lo, hi) in zip(questions, got, strict=True):
                want_lo, want_hi = BOUNDS[name].interval(s, n, d)
                assert np.array_equal(lo, want_lo) and np.array_equal(hi, want_hi)
    assert BOUNDS[name].intervals([]) == []
