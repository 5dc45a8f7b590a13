"""The monitor's DEFAULT path (directed split, mixture bound, the joint e-process on every comparison of two disjoint
groups) at the boundary: rows are simulated one by one (each falls in group a, group b or neither — disjoint, as
the joint test needs — with an outcome drawn at its group's rate), the true rates put the specification exactly at
its threshold, 1,000 seeded streams per case, and the fraction of streams EVER given a wrong verdict must be ≤ Δ.
The verdicts come from ``fairaudit.engines.monitor.engine.decisions`` — the engine's own rule, vectorised over streams;
``test_joint_engine_agreement.py`` runs streams through the engine itself and checks it decides at the same check. A negative control shows the
harness can fail: the joint tests of a TRUE 'or' each at the full Δ (no split) are wrong far more often than Δ."""
import numpy as np
import pytest

from fairaudit.core.allocation import LeafStats
from fairaudit.engines.monitor.eprocess import JointTests
from fairaudit.engines.monitor.engine import check_points, decisions, joint_tests
from fairaudit.core.evaluate import compile_spec
from fairaudit.spec import parse

from boundary_harness import wrong_rate

STREAMS, ROWS, BATCH, DELTA = 1000, 1500, 10, 0.1
A, B = 'E[y | g == "a"]', 'E[y | g == "b"]'

# (spec, (rate in a, rate in b), true value); groups a and b take 40 % of the rows each
CASES = {
    "difference at threshold": (f"{A} - {B} < 0.1", (0.35, 0.25), False),
    "difference at threshold (<=)": (f"{A} - {B} <= 0.1", (0.35, 0.25), True),
    "ratio at threshold": (f"{A} / {B} > 0.8", (0.32, 0.4), False),
    "and, one conjunct at threshold": (f"({A} - {B} < 0.1) and ({B} - {A} < 0.5)", (0.35, 0.25), False),
    "two-sided, at threshold": (f"({A} - {B} < 0.1) and ({B} - {A} < 0.1)", (0.35, 0.25), False),
    "or, both at threshold": (f"({A} - {B} > 0.1) or ({B} - {A} > -0.1)", (0.35, 0.25), False),
    "not": (f"not ({A} - {B} >= 0.1)", (0.35, 0.25), False),
    "joint and interval comparisons": (f"({A} - {B} < 0.1) and (E[y] < 0.9)", (0.35, 0.25), False),
}


def simulate(spec, rates, streams, rows, seed, shares=(0.4, 0.4)):
    """Rows one by one: the group (a, b, neither) and the outcome; each leaf's 0/1 values and masks."""
    rng = np.random.default_rng(seed)
    u = rng.random((streams, rows))
    in_a, in_b = u < shares[0], (u >= shares[0]) & (u < shares[0] + shares[1])
    rate = np.where(in_a, rates[0], np.where(in_b, rates[1], 0.5))
    y = rng.random((streams, rows)) < rate
    masks = {A: in_a, B: in_b, "E[y]": np.ones_like(in_a)}
    return {k: (y, masks[k]) for k in compile_spec(spec).leaf_keys}


def stats_of(sim, rows, batch):
    idx = check_points(rows, batch)
    return {k: LeafStats(np.cumsum(y & m, axis=-1)[..., idx].astype(float), np.cumsum(m, axis=-1)[..., idx].astype(float))
            for k, (y, m) in sim.items()}


@pytest.mark.parametrize("case", list(CASES))
def test_default_path_is_within_delta_at_the_boundary(case):
    text, rates, truth = CASES[case]
    spec = parse(text)
    assert joint_tests(spec, DELTA, "directed", "mixture") is not None  # the joint test is in use
    stats = stats_of(simulate(spec, rates, STREAMS, ROWS, seed=11), ROWS, BATCH)
    rate = wrong_rate(decisions(spec, stats, DELTA), truth)
    print(case, rate)
    assert rate <= DELTA, (case, rate)


def test_the_harness_catches_an_unsound_rule():
    """30 disjoint pairs of groups, each comparison exactly at its threshold: certifying the TRUE 'or' with any one
    joint test at the full Δ (no split) is wrong in far more than Δ of the streams; the engine's rule is not."""
    k, delta, streams = 30, 0.2, 300
    groups = [(f'E[y | g == "a{i}"]', f'E[y | g == "b{i}"]') for i in range(k)]
    spec = parse(" or ".join(f"{a} - {b} > 0.1" for a, b in groups))
    rng = np.random.default_rng(7)
    g = rng.integers(0, 2 * k, (streams, 3000))
    y = rng.random((streams, 3000)) < np.where(g % 2 == 0, 0.35, 0.25)
    sim = {}
    for i, (a, b) in enumerate(groups):
        sim[a], sim[b] = (y, g == 2 * i), (y, g == 2 * i + 1)
    stats = stats_of(sim, 3000, 50)
    tests = JointTests(spec, delta)
    assert len(tests.forms) == k
    tests.levels = {key: delta for key in tests.levels}  # unsound: every disjunct at the full Δ
    certs = tests.certified(tests.chunk(stats))
    unsplit = np.logical_or.reduce([certs[(cid, True)] for cid in tests.forms])
    print("unsplit", unsplit.any(axis=1).mean())
    assert unsplit.any(axis=1).mean() > delta
    assert wrong_rate(decisions(spec, stats, delta), False) <= delta
