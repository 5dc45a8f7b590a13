"""Anytime box decomposition (notes §A5, A11 #2, #7, #8): the bounds contain the closed-form value at every
round and are nested (lo non-decreasing, hi non-increasing)."""
import math

from hypothesis import given, settings, strategies as st

from fairaudit.engines.fairsquare import volume as V

G01 = V.Gaussian(0, 1)


def run(dists, oracle, truth, **kw):
    """All rounds' bounds, asserting containment of ``truth`` (a float or an interval) and nesting."""
    t_lo, t_hi = truth if isinstance(truth, tuple) else (truth, truth)
    out, prev = [], None
    for b in V.decompose(dists, oracle, **kw):
        assert 0.0 <= b.lo <= t_hi and t_lo <= b.hi <= 1.0, b
        if prev is not None:
            assert b.lo >= prev.lo and b.hi <= prev.hi and b.round > prev.round
        prev = b
        out.append(b)
    return out


def test_oracles():
    box = [(0, 1), (2, 3)]
    assert V.halfspace([1, 1], 0, ">", 1.5)(box) == V.INSIDE
    assert V.halfspace([1, 1], 0, ">=", 3.5)(box) == V.MIXED
    assert V.halfspace([1, 1], 0, ">=", 4)(box) == V.OUTSIDE      # open box: sup 4 is not attained
    assert V.halfspace([1, 1], 0, ">", 4)(box) == V.OUTSIDE
    assert V.halfspace([1, -1], 0, "<", -1)(box) == V.INSIDE      # open box: sup −1 is not attained
    assert V.halfspace([1, -1], 0, "<=", -1)(box) == V.INSIDE
    assert V.halfspace([1, -1], 0, "<", -1)([(0, math.inf), (2, 3)]) == V.MIXED
    assert V.halfspace([0, 1], 0, "<=", 3)([(-math.inf, math.inf), (2, 3)]) == V.INSIDE     # 0·inf counts as 0
    x_pos, y_pos = V.halfspace([1, 0], 0, ">", 0), V.halfspace([0, 1], 0, ">", 0)
    assert V.all_of(x_pos, y_pos)([(1, 2), (-1, 1)]) == V.MIXED
    assert V.any_of(x_pos, y_pos)([(1, 2), (-1, 1)]) == V.INSIDE
    assert V.negate(x_pos)([(1, 2), (-1, 1)]) == V.OUTSIDE


def test_axis_aligned_half_plane_is_exact_after_one_split():
    bs = run([G01, G01], V.halfspace([1, 0], 0, ">", 0), 0.5, max_rounds=5)
    assert bs[-1].hi - bs[-1].lo < 1e-15 and bs[-1].mixed == 0


def test_quadrant_and_complement():
    q = V.all_of(V.halfspace([1, 0], 0, ">", 0), V.halfspace([0, 1], 0, ">", 0))
    assert run([G01, G01], q, 0.25)[-1].width < 1e-15
    assert run([G01, G01], V.negate(q), 0.75)[-1].width < 1e-15


def test_example_4_11_uniform_box_in_one_step():
    u = V.Step([(0, 1, 1)])
    bs = run([u], V.all_of(V.halfspace([1], 0, ">=", 0), V.halfspace([1], 0, "<=", 1)), 1.0)
    assert bs[0].lo == bs[0].hi == 1.0 and bs[-1].round == 0


def test_example_3_1_angled_boundary():
    """x1 + x2 ≥ 0 with standard normals: 0.5, approached from both sides, never loosening."""
    bs = run([G01, G01], V.halfspace([1, 1], 0, ">=", 0), 0.5, max_rounds=3000)
    assert bs[-1].width < 0.01
    assert bs[-1].round == 3000


def test_angled_with_general_gaussians_vs_closed_form():
    dists = [V.Gaussian(1, 2), V.Gaussian(0, 3)]
    truth = V.prob_linear([2, -1], dists, 0, ">", 1)
    bs = run(dists, V.halfspace([2, -1], 0, ">", 1), truth, max_rounds=2000)
    assert bs[-1].width < 0.02


def test_fig1_conditional_probabilities():
    """Fig. 1 (notes §A8): colRank C ~ N(25, 10²), yExp Y ~ N(10, 5²).
    ¬min: hire ⇔ C ≤ 5 ∨ Y − C > −5 → 0.18571423;  min (C₁ = C + 5): hire ⇔ C ≤ 0 ∨ Y > C → 0.08990737."""
    dists = [V.Gaussian(25, 100), V.Gaussian(10, 25)]
    not_min = V.any_of(V.halfspace([1, 0], 0, "<=", 5), V.halfspace([-1, 1], 0, ">", -5))
    is_min = V.any_of(V.halfspace([1, 0], 0, "<=", 0), V.halfspace([-1, 1], 0, ">", 0))
    b_not = run(dists, not_min, 0.18571423, target_width=2e-3)[-1]
    b_min = run(dists, is_min, 0.08990737, target_width=2e-3)[-1]
    lo, hi = V.iv_div((b_min.lo, b_min.hi), (b_not.lo, b_not.hi))
    assert lo <= 0.48411678 <= hi and hi < 0.9          # UNFAIR at ε = 0.1


def test_toy_T3_by_boxes():
    u = V.Step([(0, 1, 1)])
    bs = run([u], V.halfspace([0.5], 0, ">", 0.4), 0.2, target_width=1e-6)
    assert bs[-1].width <= 1e-6


def test_mixed_step_and_gaussian_dimensions():
    s = V.Step([(0, 1, "0.3"), (1, 2, "0.7")])
    dists = [s, G01, G01]
    truth = V.prob_linear([1, 1, -1], dists, 0, ">", 1, k=256)
    run(dists, V.halfspace([1, 1, -1], 0, ">", 1), truth, max_rounds=1500)


def test_budgets():
    o = V.halfspace([1, 1], 0, ">", 0)
    assert V.decompose.__doc__
    bs = list(V.decompose([G01, G01], o, max_rounds=50, every=10))
    assert [b.round for b in bs] == [0, 10, 20, 30, 40, 50]
    bs = list(V.decompose([G01, G01], o, timeout=0.2, every=100))
    assert bs[-1].seconds < 1.0
    bs = list(V.decompose([G01, G01], o, target_width=0.05, every=1))
    assert bs[-1].width <= 0.05 < bs[-2].width


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.floats(-3, 3), st.floats(-5, 5), st.floats(0.1, 10)), min_size=1, max_size=3),
       st.floats(-5, 5), st.sampled_from([">", ">=", "<", "<="]))
def test_random_halfspaces_contain_closed_form(terms, c, op):
    a = [t[0] for t in terms]
    dists = [V.Gaussian(t[1], t[2]) for t in terms]
    truth = V.prob_linear(a, dists, 0, op, c)
    run(dists, V.halfspace(a, 0, op, c), truth, max_rounds=150)
