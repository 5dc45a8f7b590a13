"""The joint e-process per comparison (``fairaudit.bounds.eprocess``): its infimum against a brute-force grid, which
comparisons qualify, and its validity at the boundary (1,000 seeded streams per case, wrong verdicts ≤ Δ)."""
import numpy as np
import pytest

from fairaudit.bounds import directed
from fairaudit.bounds.eprocess import disjoint, joint_form, log_evalue, log_mixture
from fairaudit.evaluate import compile_spec
from fairaudit.spec import parse

from boundary_harness import leaf_stats, wrong_rate

A, B = 'E[y | g == "a"]', 'E[y | g == "b"]'


@pytest.mark.parametrize("sa,na,sb,nb,ca,cb,k,sigma", [
    (30, 50, 10, 60, 1.0, -1.0, -0.1, 1), (30, 50, 10, 60, 1.0, -1.0, -0.1, -1), (5, 40, 30, 40, 1.0, -0.8, 0.0, -1),
    (0, 10, 10, 10, 1.0, -1.0, 0.0, 1), (12, 100, 40, 100, 1.0, -1.0, 0.5, 1)])
def test_infimum_is_a_lower_bound_of_the_grid_minimum(sa, na, sb, nb, ca, cb, k, sigma):
    grid = np.linspace(1e-6, 1 - 1e-6, 2001)
    ma, mb = np.meshgrid(grid, grid, indexing="ij")
    ok = sigma * (ca * ma + cb * mb + k) >= 0
    vals = log_mixture(sa, na, ma) + log_mixture(sb, nb, mb)
    brute = vals[ok].min() if ok.any() else np.inf
    got = float(log_evalue(sa, na, sb, nb, ca, cb, k, sigma))
    assert got <= brute + 1e-9
    assert got >= brute - 1e-3 or not np.isfinite(brute)


def test_which_comparisons_have_a_joint_test():
    assert disjoint(parse(f"{A} < 1").leaves[0].node.given, parse(f"{B} < 1").leaves[0].node.given)
    cs = compile_spec(parse(f"{A} - {B} < 0.1"))
    assert joint_form(cs, cs.root)[2:] == (1.0, -1.0, -0.1)
    cs = compile_spec(parse(f"{A} / {B} > 0.8"))
    assert joint_form(cs, cs.root)[2:] == (1.0, -0.8, 0.0)
    cs = compile_spec(parse(f'E[y | g == "a"] - E[y | h == "b"] < 0.1'))  # the groups may overlap
    assert joint_form(cs, cs.root) is None
    cs = compile_spec(parse('E[y | g == "a"] - E[y] < 0.1'))
    assert joint_form(cs, cs.root) is None


CASES = {
    "difference at threshold": (f"{A} - {B} < 0.1", (0.35, 0.25), False),
    "difference at threshold (<=)": (f"{A} - {B} <= 0.1", (0.35, 0.25), True),
    "ratio at threshold": (f"{A} / {B} > 0.8", (0.32, 0.4), False),
    "and, one conjunct at threshold": (f"({A} - {B} < 0.1) and ({B} - {A} < 0.5)", (0.35, 0.25), False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_joint_test_is_within_delta_at_the_boundary(case):
    text, (ra, rb), truth = CASES[case]
    spec = parse(text)
    keys = compile_spec(spec).leaf_keys
    stats = leaf_stats(dict(zip(keys, (ra, rb))), {k: 0.5 for k in keys}, 1000, 1000, 10, seed=5)
    rate = wrong_rate(directed.directed_verdict(spec, stats, 0.1, "mixture", joint=True), truth)
    print(case, rate)
    assert rate <= 0.1
