"""δ allocation: AVOIR §2.3.2's concrete example and the general model."""
import numpy as np
import pytest

from fairaudit.core.allocation import Allocator, LeafStats, equal_split
from fairaudit.bounds.rules import FALSE, TRUE
from fairaudit.spec import ast as A
from spec_helpers import C, X, make_spec


def _stats(**kw):
    return {f"E[{k}]": LeafStats(np.array(float(s)), np.array(float(n))) for k, (s, n) in kw.items()}


def test_section_2_3_2_concrete_example():
    """AVOIR §2.3.2: E[X] = 0.8 over n = 1550, E[Y] = 0.5 over n = 310, Δ = 0.1, spec X − Y > 0.1
    (margin E[X] − E[Y] − 0.1 = 0.2 = ε_X + ε_Y at the boundary, Fig. 3a). The equal split
    δ_X = δ_Y = Δ/2 cannot certify it; the optimised split can, with δ_Y ≈ 2.35 δ_X."""
    spec = make_spec(A.Cmp(">", A.Sub(X("x"), X("y")), C(0.1)))
    stats = _stats(x=(0.8 * 1550, 1550), y=(0.5 * 310, 310))
    alloc = Allocator(spec, 0.1, "hoeffding")
    assert alloc.root_verdict(stats, equal_split(alloc.keys, 0.1)) != TRUE
    found = alloc.try_decide(stats, True)
    assert found is not None and found.optimal
    dx, dy = found.deltas["E[x]"], found.deltas["E[y]"]
    assert dx + dy <= 0.1
    assert dy / dx == pytest.approx(2.35, abs=0.03)
    assert alloc.root_verdict(stats, found.deltas) == TRUE
    assert alloc.stats.calls >= 1


def test_undecidable_needs_no_solver():
    spec = make_spec(A.Cmp(">", A.Sub(X("x"), X("y")), C(0.25)))
    stats = _stats(x=(0.8 * 1550, 1550), y=(0.5 * 310, 310))
    alloc = Allocator(spec, 0.1, "hoeffding")
    assert alloc.try_decide(stats, True) is None
    assert alloc.stats.calls == 0  # screened out: even δ = Δ per leaf cannot (or the sum of minima exceeds Δ)


@pytest.mark.parametrize("bound", ["hoeffding", "betting"])
def test_and_false_needs_only_one_child(bound):
    """(x − y < 0.1) and (z < 0.9): the first is clearly false → only x, y get budget."""
    spec = make_spec(A.And(A.Cmp("<", A.Sub(X("x"), X("y")), C(0.1)), A.Cmp("<", X("z"), C(0.9))))
    stats = _stats(x=(700, 1000), y=(300, 1000), z=(450, 500))
    alloc = Allocator(spec, 0.05, bound)
    found = alloc.try_decide(stats, False)
    assert found is not None
    assert set(found.deltas) == {"E[x]", "E[y]"}
    assert alloc.root_verdict(stats, found.deltas) == FALSE


@pytest.mark.parametrize("bound", ["hoeffding", "betting"])
def test_ratio_and_product_specs(bound):
    """General model: E[x]/E[y] > 0.8 and E[x]*E[y] < 0.45 (division, product)."""
    spec = make_spec(A.And(A.Cmp(">", A.Div(X("x"), X("y")), C(0.8)),
                           A.Cmp("<", A.Mul(X("x"), X("y")), C(0.45))))
    stats = _stats(x=(2400, 4000), y=(1100, 2000))
    alloc = Allocator(spec, 0.05, bound)
    found = alloc.try_decide(stats, True)
    assert found is not None and found.total <= 0.05
    assert alloc.root_verdict(stats, found.deltas) == TRUE
    # the optimum is no worse than the equal split
    assert found.total <= 0.05 + 1e-12


def test_shared_leaves_share_one_delta():
    spec = make_spec(A.And(A.Cmp("<", X("x"), C(0.7)), A.Cmp(">", X("x"), C(0.3))))
    alloc = Allocator(spec, 0.05)
    assert alloc.keys == ("E[x]",)
    assert equal_split(alloc.keys, 0.05) == {"E[x]": 0.05}
    found = alloc.try_decide(_stats(x=(500, 1000)), True)
    assert set(found.deltas) == {"E[x]"}
