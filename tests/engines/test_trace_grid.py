"""The display trace's uniform grid survives the stride doubling (it used to vanish: ``_GRID & True`` is 0), and the
rows kept do not depend on how the checks were cut into parts (the monitor's batches grow)."""
import numpy as np
import pytest

from fairaudit.core.trace import Trace, TraceBuilder


def trace(steps, verdict):
    z = np.zeros((len(steps), 1))
    return Trace(steps, ["r"], z, z, z, z, verdict, z, z, z, z)


@pytest.mark.parametrize("parts", [[6172], [256] * 24 + [28], [256, 512, 1024, 2048, 2332], [7] * 881 + [5]])
def test_grid_kept_and_independent_of_parts(parts):
    k = sum(parts)
    steps = np.arange(1, k + 1)
    verdict = np.zeros((k, 1), dtype=np.int8)
    verdict[3000:] = 1  # one verdict change
    builder = TraceBuilder(["r"], 666)
    a = 0
    for p in parts:
        builder.append(trace(steps[a:a + p], verdict[a:a + p]))
        a += p
    kept = builder.view().steps
    stride = 16  # the smallest power of two with ⌈6172 / stride⌉ ≤ 666
    assert builder.stride == stride
    grid = steps[(steps - 1) % stride == 0]
    assert np.isin(grid, kept).all()  # every grid check is displayed
    assert {3000, 3001} <= set(kept.tolist()) and kept[-1] == k
    reference = TraceBuilder(["r"], 666)
    reference.append(trace(steps, verdict))
    assert np.array_equal(kept, reference.view().steps)
