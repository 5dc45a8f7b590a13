"""The directed split's guarantee at the boundary: the true rates put the specification exactly at its threshold,
1,000 seeded streams per case, and the fraction of streams with EVER a wrong verdict must be ≤ Δ — for every
method offered by default (mixture and Hoeffding bounds, directed and equal splits). A negative control shows the
harness can fail: the rule without the split of a TRUE ``or`` (what AVOIR-OB does on this spec, see
``test_soundness_optimized.py``) is wrong far more often than Δ."""
import numpy as np
import pytest

from fairaudit.engines.monitor import directed
from fairaudit.core.allocation import equal_split
from fairaudit.core.evaluate import compile_spec, root_verdict
from fairaudit.core.allocation import leaf_values
from fairaudit.bounds.concentration import get_bound
from fairaudit.spec import parse

from boundary_harness import leaf_stats, wrong_rate

STREAMS, ROWS, BATCH, DELTA = 1000, 1500, 10, 0.1

# (spec, true rates, row shares, true value of the spec)
CASES = {
    # a difference exactly at its threshold: `<` is false there, so any TRUE is wrong
    "difference at threshold": ("E[a] - E[b] < 0.1", {"E[a]": 0.35, "E[b]": 0.25}, {"E[a]": 0.5, "E[b]": 0.5}, False),
    # `<=` is true there: any FALSE is wrong
    "difference at threshold (<=)": ("E[a] - E[b] <= 0.1", {"E[a]": 0.35, "E[b]": 0.25}, {}, True),
    # the Adult shape: one conjunct at its threshold, the other surely true — the TRUE 'and' gives each the full Δ
    "and, one conjunct at threshold": ("(E[a] - E[b] < 0.1) and (E[c] - E[d] < 0.5)",
                                       {"E[a]": 0.35, "E[b]": 0.25, "E[c]": 0.3, "E[d]": 0.3}, {}, False),
    # a ratio at its threshold (COMPAS shape)
    "ratio at threshold": ("E[a] / E[b] > 0.8", {"E[a]": 0.32, "E[b]": 0.4}, {}, False),
    # a TRUE 'or' splits Δ: both disjuncts at the boundary
    "or, both at threshold": ("(E[a] > 0.5) or (E[b] > 0.5)", {"E[a]": 0.5, "E[b]": 0.5}, {}, False),
    # a FALSE 'or' gives each disjunct the full Δ: one at the boundary (true), the other surely false
    "or false, one at threshold": ("(E[a] <= 0.5) or (E[b] > 0.9)", {"E[a]": 0.5, "E[b]": 0.3}, {}, True),
    # a two-sided difference (demographic parity shape): the FALSE 'and' pools the two shared leaves
    "two-sided, at threshold": ("(E[a] - E[b] < 0.1) and (E[b] - E[a] < 0.1)", {"E[a]": 0.35, "E[b]": 0.25}, {},
                                False),
    # not flips the direction
    "not": ("not (E[a] - E[b] >= 0.1)", {"E[a]": 0.35, "E[b]": 0.25}, {}, False),
}


def _stats(case, seed=0):
    spec, rates, shares, truth = CASES[case]
    return parse(spec), leaf_stats(rates, shares, STREAMS, ROWS, BATCH, seed), truth


def _equal(spec, stats, bound):
    deltas = equal_split(compile_spec(spec).leaf_keys, DELTA)
    return root_verdict(spec, leaf_values(stats, deltas, get_bound(bound)))


@pytest.mark.parametrize("case", list(CASES))
def test_directed_and_equal_are_within_delta_at_the_boundary(case):
    spec, stats, truth = _stats(case)
    for bound in ("mixture", "hoeffding"):
        rates = {"directed": wrong_rate(directed.directed_verdict(spec, stats, DELTA, bound), truth),
                 "equal": wrong_rate(_equal(spec, stats, bound), truth)}
        print(case, bound, rates)
        for split, rate in rates.items():
            assert rate <= DELTA, (case, bound, split, rate)


def test_the_harness_catches_an_unsound_rule():
    """12 disjuncts all at the boundary: certifying the TRUE 'or' with any one disjunct at the full Δ (no split —
    AVOIR-OB's choice here) is wrong in far more than Δ of the streams; the directed split is not."""
    k = 12
    spec = parse(" or ".join(f"E[x{i}] > 0.5" for i in range(k)))
    stats = leaf_stats({f"E[x{i}]": 0.5 for i in range(k)}, {}, STREAMS, 1000, BATCH, seed=3)
    unsplit = np.logical_or.reduce([directed.certificate(spec, stats, True, 0.2, "mixture", node_id=c)
                                    for c in directed.flat_children(compile_spec(spec), compile_spec(spec).root)])
    assert unsplit.any(axis=1).mean() > 0.2
    assert wrong_rate(directed.directed_verdict(spec, stats, 0.2, "mixture"), False) <= 0.2


def test_rules_of_the_certificates():
    """The static plan: a TRUE 'and' keeps the full Δ per conjunct and splits it between a comparison's leaves; a
    FALSE 'and' splits it among the conjuncts (chains flattened); 'not' flips the direction."""
    spec = parse("(E[a] - E[b] < 0.1) and (E[c] < 0.5) and not (E[d] > 0.2)")
    true = {(k, round(d, 6)) for _, k, d in directed.uses(spec, None, True, 0.3)}
    assert true == {("E[a]", 0.15), ("E[b]", 0.15), ("E[c]", 0.3), ("E[d]", 0.3)}
    false = {(k, round(d, 6)) for _, k, d in directed.uses(spec, None, False, 0.3)}
    assert false == {("E[a]", 0.05), ("E[b]", 0.05), ("E[c]", 0.1), ("E[d]", 0.1)}  # a child is a "not": per child
    shown = directed.display_deltas(spec, 0.3)
    assert shown == pytest.approx({"E[a]": 0.05, "E[b]": 0.05, "E[c]": 0.075, "E[d]": 0.075})
    two = parse("(E[a] - E[b] < 0.1) and (E[b] - E[a] < 0.1)")  # all comparisons: pooled over 2 leaves
    assert {(k, round(d, 6)) for _, k, d in directed.uses(two, None, False, 0.2)} == {("E[a]", 0.1), ("E[b]", 0.1)}
    nested = parse("(E[a] < 0.5) or ((E[b] < 0.5) and (E[c] < 0.5))")  # not all comparisons: split per child
    assert {(k, round(d, 6)) for _, k, d in directed.uses(nested, None, True, 0.2)} == {("E[a]", 0.1), ("E[b]", 0.1), ("E[c]", 0.1)}
