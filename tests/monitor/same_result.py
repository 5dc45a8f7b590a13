"""Two audit results of the same rows compared as every route must give them: the verdict, the stop step, and every
node's final estimate and bounds, exactly."""
from __future__ import annotations

import math


def final_values(result):
    return [(tn.id, result.final_values(tn.id)) for tn in result.tree.nodes]


def assert_same(a, b) -> None:
    assert (a.verdict, a.stop_step) == (b.verdict, b.stop_step)
    for (ida, fa), (idb, fb) in zip(final_values(a), final_values(b)):
        assert ida == idb
        for k in ("estimate", "lo", "hi"):
            x, y = fa[k], fb[k]
            assert (math.isnan(x) and math.isnan(y)) or x == y, (ida, k, x, y)
