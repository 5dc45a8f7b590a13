"""Sound path volumes (``fairaudit.engines.fairsquare.polytope``) against independent oracles: mpmath at 200 bits, closed
forms (Examples 3.1/3.2, orthant probabilities of Gaussian vectors), exact enumeration, and Monte Carlo with its
own confidence interval. Every refinement round is checked: lower never decreases, upper never increases, and the
truth stays inside."""
from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from fairaudit.engines.fairsquare import polytope as P
from fairaudit.programs import ir
from fairaudit.engines.fairsquare.paths import Affine, Constraint, Nonlinear

MP = mpmath.MPContext()
MP.prec = 200
G01 = ir.Gaussian(0.0, 1.0)


def mpQ(z: float):
    """Q(z) = P[N(0,1) > z] at 200 bits (z converted exactly)."""
    if z == math.inf:
        return MP.mpf(0)
    if z == -math.inf:
        return MP.mpf(1)
    if abs(z) > 1e4:    # mpmath's erfc overflows there; 0 < Q(z) < 2^-10^6, far below any float
        tiny = MP.mpf(2) ** -1000000
        return tiny if z > 0 else 1 - tiny
    return MP.erfc(MP.mpf(z) / MP.sqrt(2)) / 2


def Q(z):
    """Q at 200 bits of an mpf (or ±inf)."""
    if z == MP.inf:
        return MP.mpf(0)
    if z == -MP.inf:
        return MP.mpf(1)
    return MP.erfc(z / MP.sqrt(2)) / 2


def mp_of(x) -> "mpmath.mpf":
    x = Fraction(x)
    return MP.mpf(x.numerator) / x.denominator


def _call(method, a, b):
    """A per-dimension method (``mass``, ``greater``, ``less``) at one point: the internals take arrays."""
    lo, hi = method(np.array([float(a)]), np.array([float(b)]))
    return float(np.asarray(lo).ravel()[0]), float(np.asarray(hi).ravel()[0])


def lin(coefs: dict, const=0) -> Affine:
    return Affine(tuple(sorted((d, Fraction(a)) for d, a in coefs.items() if a != 0)), Fraction(const))


def run_rounds(pv, truth, rounds=40, splits=20, tol=0.0):
    """Refine ``pv`` round by round; at every round: nested bounds and lo <= truth <= hi (truth an mpf or a
    (lo, hi) confidence interval that must intersect the bounds)."""
    history = [pv.bounds]
    for _ in range(rounds):
        _check_inside(pv.bounds, truth, tol)
        if pv.settled:
            break
        pv.refine(splits)
        lo0, hi0 = history[-1]
        lo1, hi1 = pv.bounds
        assert lo1 >= lo0 and hi1 <= hi0, (history[-1], pv.bounds)
        assert 0.0 <= lo1 <= hi1 <= 1.0
        history.append(pv.bounds)
    _check_inside(pv.bounds, truth, tol)
    return history


def _check_inside(bounds, truth, tol):
    lo, hi = bounds
    if isinstance(truth, tuple):
        assert truth[0] <= hi + tol and lo - tol <= truth[1], (bounds, truth)
    else:
        assert mp_of(lo) <= truth + tol and truth - tol <= mp_of(hi), (bounds, truth)


# ---------------------------------------------------------------------------------------------------- Q(z)
def _z_values():
    rng = random.Random(20261123)
    zs = [0.0, -0.0, 1e-300, -1e-300, 5e-324, 1.0, -1.0, 8.29, -8.29, 37.5, -37.5, 38.0, -38.0,
          math.nextafter(38.0, 0), math.nextafter(38.0, 99), -math.nextafter(38.0, 0), -math.nextafter(38.0, 99),
          38.5, -38.5, 40.0, -40.0, 1e3, -1e3, 1e300, -1e300, math.inf, -math.inf]
    zs += [rng.uniform(-10, 10) for _ in range(2500)]
    zs += [rng.uniform(-40, 40) for _ in range(1500)]
    zs += [rng.choice((-1, 1)) * 10 ** rng.uniform(-12, 1.7) for _ in range(1000)]
    zs += [rng.gauss(0, 1) for _ in range(500)]
    return zs


def test_q_enclosure_against_mpmath_200_bits():
    bad = []
    for z in _z_values():
        q = mpQ(z)
        lo, hi = P.q_lower(z), P.q_upper(z)
        if not (mp_of(lo) <= q <= mp_of(hi) and 0.0 <= lo <= hi <= 1.0):
            bad.append((z, lo, float(q), hi))
    assert not bad, bad[:5]


def test_q_enclosure_is_tight_where_it_matters():
    # sound is not enough: the declared error is 2^-36·max(1, z²) relative, so the enclosure must be narrow
    for z in (-5.0, -1.0, 0.0, 0.5, 2.0, 6.0, 20.0):
        q = mpQ(z)
        lo, hi = P.q_lower(z), P.q_upper(z)
        assert (mp_of(hi) - mp_of(lo)) <= q * 2 ** -30 * max(1, z * z) + MP.mpf(1e-300)


def test_q_clamp_and_infinities():
    assert P.q_lower(math.inf) == 0.0 == P.q_upper(math.inf)
    assert 1.0 - 2 ** -52 <= P.q_lower(-math.inf) <= 1.0 == P.q_upper(-math.inf)
    assert P.q_lower(39.0) == 0.0 < P.q_upper(39.0)
    assert P.q_upper(-39.0) == 1.0 and P.q_lower(-39.0) < 1.0


# ---------------------------------------------------------------------------------------------------- masses
def test_gaussian_masses_enclose_the_truth():
    rng = random.Random(7)
    cases = [(0, 1, -math.inf, math.inf), (0, 1, -math.inf, 0.0), (0, 1, 0.0, math.inf), (0, 1, -1.0, 1.0),
             (25, 100, 5.0, 5.0000001), (1077.6488, 54542539.1784, 7073.5, math.inf), (0, 1, 30.0, 39.0),
             (0, 1, -50.0, -37.0), (0, 1e-6, -1e-3, 1e-3), (3, 4, 3.0, 3.0)]
    for _ in range(600):
        mean = rng.uniform(-100, 100)
        var = 10 ** rng.uniform(-4, 6)
        sd = math.sqrt(var)
        a = mean + rng.uniform(-12, 12) * sd
        b = a + rng.expovariate(1.0) * sd * rng.choice((0.01, 1, 5))
        a = -math.inf if rng.random() < 0.1 else a
        b = math.inf if rng.random() < 0.1 else b
        cases.append((mean, var, a, b))
    for mean, var, a, b in cases:
        n = P._Normal(Fraction(mean), Fraction(var))
        lo, hi = _call(n.mass, a, b)
        mu, sd = mp_of(mean), MP.sqrt(mp_of(var))
        qa = MP.mpf(1) if a == -math.inf else MP.erfc((mp_of(a) - mu) / sd / MP.sqrt(2)) / 2
        qb = MP.mpf(0) if b == math.inf else MP.erfc((mp_of(b) - mu) / sd / MP.sqrt(2)) / 2
        ca, cb = 1 - qa, 1 - qb       # (tails computed as tails: no cancellation far out)
        za = -MP.inf if a == -math.inf else (mp_of(a) - mu) / sd
        zb = MP.inf if b == math.inf else (mp_of(b) - mu) / sd
        if zb <= za:
            truth = MP.mpf(0)
        elif za >= 0:
            truth = Q(za) - Q(zb)
        elif zb <= 0:
            truth = Q(-zb) - Q(-za)
        else:
            truth = 1 - Q(-za) - Q(zb)
        assert mp_of(lo) <= truth <= mp_of(hi), (mean, var, a, b, lo, float(truth), hi)
        # greater / less over a threshold interval: monotone enclosure
        if a != -math.inf and b != math.inf and a <= b:
            g = _call(n.greater, a, b)
            assert mp_of(g[0]) <= qb and qa <= mp_of(g[1])
            le = _call(n.less, a, b)
            assert mp_of(le[0]) <= ca and cb <= mp_of(le[1])


def test_step_masses_are_exact_enclosures():
    dist = ir.Step(((0.0, 1.0, 0.25), (1.0, 3.0, 0.5), (3.0, 4.0, 0.25)))
    s = P._StepDim(dist)
    for a, b, truth in [(-math.inf, math.inf, Fraction(1)), (0.5, 2.0, Fraction(1, 8) + Fraction(1, 4)),
                        (2.0, 3.5, Fraction(1, 4) + Fraction(1, 8)), (5.0, 6.0, Fraction(0)),
                        (-1.0, 0.0, Fraction(0)), (0.1, 0.1, Fraction(0))]:
        lo, hi = _call(s.mass, a, b)
        assert Fraction(lo) <= truth <= Fraction(hi)
        assert hi - lo <= 1e-14


# ---------------------------------------------------------------------------------------------------- ExactSum
def test_exact_sum_is_exact():
    rng = random.Random(3)
    xs = [rng.choice((1, -1)) * rng.random() * 10 ** rng.randint(-300, 300) for _ in range(2000)]
    xs += [5e-324, 1e308, 1e308, -1e308, 2.0 ** -1074, 0.1, 0.2, 0.3]
    xs = [x for x in xs if x > 0]
    s = P.ExactSum()
    for x in xs:
        s.add(x)
    assert s.fraction() == sum(Fraction(x) for x in xs)
    for x in xs[::2]:
        s.sub(x)
    assert s.fraction() == sum(Fraction(x) for x in xs[1::2])
    t = P.ExactSum()
    for _ in range(10):
        t.add(0.1)
    assert t.fraction() == 10 * Fraction(0.1) != 1


# ---------------------------------------------------------------------------------------------------- PathVolume
def test_box_quadrant():
    pv = P.PathVolume([G01, G01], {0: (Fraction(0), math.inf), 1: (Fraction(0), math.inf)}, [])
    run_rounds(pv, MP.mpf(1) / 4)
    assert pv.gap < 1e-14


def test_box_centred_square():
    pv = P.PathVolume([G01, G01], {0: (Fraction(-1), Fraction(1)), 1: (Fraction(-1), Fraction(1))}, [])
    truth = (2 * MP.ncdf(1) - 1) ** 2
    assert abs(truth - MP.mpf("0.466065")) < 1e-6           # notes A11 #1
    run_rounds(pv, truth)
    assert pv.gap < 1e-14


def test_example_3_1():
    pv = P.PathVolume([G01, G01], {}, [Constraint(lin({0: 1, 1: 1}), ">=")])
    run_rounds(pv, MP.mpf("0.5"))
    assert pv.gap < 1e-14


def test_example_3_2():
    # x ~ gaussian(0, VARIANCE 4), y ~ gaussian(-1, 1); P[x + y >= 0] = 1 − Φ(1/√5)
    pv = P.PathVolume([ir.Gaussian(0.0, 4.0), ir.Gaussian(-1.0, 1.0)], {}, [Constraint(lin({0: 1, 1: 1}), ">=")])
    truth = 1 - MP.ncdf(1 / MP.sqrt(5))
    assert abs(truth - MP.mpf("0.327360423")) < 1e-9
    run_rounds(pv, truth)
    assert pv.gap < 1e-14


def test_slanted_boundary_with_a_boxed_dimension_converges():
    # P[X > 0, X + Y > 0] for standard normals = 1/4 + asin(1/√2)/(2π) = 3/8 (orthant, correlation 1/√2); X is
    # confined to a box so it cannot be merged into a closed form: cells, at every round sound
    pv = P.PathVolume([G01, G01], {0: (Fraction(0), math.inf)}, [Constraint(lin({0: 1, 1: 1}), ">")])
    hist = run_rounds(pv, MP.mpf(3) / 8, rounds=30)
    assert hist[-1][1] - hist[-1][0] < 1e-3


def test_toy_t2_min_path():
    # T2's min side: x − 1 + y > 0 → 1 − Φ(1/√2), plus a second constraint sharing both dims (cells)
    pv = P.PathVolume([G01, G01], {}, [Constraint(lin({0: 1, 1: 1}, -1), ">")])
    run_rounds(pv, 1 - MP.ncdf(1 / MP.sqrt(2)))
    assert pv.gap < 1e-14
    both = P.PathVolume([G01, G01], {}, [Constraint(lin({0: 1, 1: 1}), ">"), Constraint(lin({0: 1, 1: -1}), ">")])
    # X+Y and X−Y are independent N(0, 2): P = 1/4 exactly
    hist = run_rounds(both, MP.mpf(1) / 4, rounds=40)
    assert hist[-1][1] - hist[-1][0] < 0.05


def _orthant3(rows, variances):
    """P[all three L_i = rows_i · X > 0] for independent centred Gaussians X (closed form for a trivariate
    normal orthant: 1/8 + (asin ρ12 + asin ρ13 + asin ρ23)/(4π))."""
    cov = [[sum(a * b * v for a, b, v in zip(r, s, variances)) for s in rows] for r in rows]
    rho = lambda i, j: cov[i][j] / MP.sqrt(cov[i][i] * cov[j][j])  # noqa: E731
    return MP.mpf(1) / 8 + (MP.asin(rho(0, 1)) + MP.asin(rho(0, 2)) + MP.asin(rho(1, 2))) / (4 * MP.pi)


def test_three_dimensional_polytope_against_orthant_closed_form():
    rows = [(1, 1, 1), (1, -1, 0), (1, 1, -2)]
    variances = [1.0, 2.0, 0.5]
    dists = [ir.Gaussian(0.0, v) for v in variances]
    cons = [Constraint(lin({0: a, 1: b, 2: c}), ">") for a, b, c in rows]
    truth = _orthant3(rows, variances)
    pv = P.PathVolume(dists, {}, cons)
    hist = run_rounds(pv, truth, rounds=40, splits=40)
    assert hist[-1][1] - hist[-1][0] < hist[0][1] - hist[0][0]   # it does refine


def test_three_dimensional_polytope_with_offsets_and_a_step_against_monte_carlo():
    dists = [ir.Gaussian(1.0, 2.0), ir.Gaussian(-0.5, 1.0), ir.Step(((0.0, 1.0, 0.3), (1.0, 3.0, 0.7)))]
    cons = [Constraint(lin({0: 1, 1: 2, 2: -1}, Fraction(1, 2)), ">"),
            Constraint(lin({0: 1, 2: 1}, -2), "<="),
            Constraint(lin({1: 3, 2: 1}), ">=")]
    box = {0: (Fraction(-1), math.inf)}
    rng = np.random.default_rng(11)
    n = 1_000_000
    x = rng.normal(1.0, math.sqrt(2.0), n)
    y = rng.normal(-0.5, 1.0, n)
    piece = rng.random(n) < 0.3
    z = np.where(piece, rng.uniform(0, 1, n), rng.uniform(1, 3, n))
    hit = (x > -1) & (x + 2 * y - z + 0.5 > 0) & (x + z - 2 <= 0) & (3 * y + z >= 0)
    ci = wilson(int(hit.sum()), n, 6.0)
    pv = P.PathVolume(dists, box, cons)
    run_rounds(pv, ci, rounds=30, splits=40)


def test_nonlinear_product_is_positive_half_the_time():
    # x*y > 0 with independent standard normals: exactly 1/2 (same sign)
    pv = P.PathVolume([G01, G01], {}, [Constraint(Nonlinear("*", Affine.dim(0), Affine.dim(1)), ">")])
    hist = run_rounds(pv, MP.mpf("0.5"), rounds=40)
    assert hist[-1][0] > 0.3 and hist[-1][1] < 0.7


def test_nonlinear_with_offset_against_monte_carlo():
    # (x − 0.5)·(y + 1) + x > 0 mixes a product and a sum
    value = Nonlinear("+", Nonlinear("*", lin({0: 1}, Fraction(-1, 2)), lin({1: 1}, 1)), Affine.dim(0))
    dists = [ir.Gaussian(0.0, 1.0), ir.Step(((-2.0, 2.0, 1.0),))]
    rng = np.random.default_rng(5)
    n = 1_000_000
    x, y = rng.normal(0, 1, n), rng.uniform(-2, 2, n)
    ci = wilson(int(((x - 0.5) * (y + 1) + x > 0).sum()), n, 6.0)
    pv = P.PathVolume(dists, {}, [Constraint(value, ">")])
    run_rounds(pv, ci, rounds=30)


def test_box_ends_that_are_not_floats_are_sound():
    # x in (1/3, 2/3) and x + y > 1/3 — the interval ends are not representable in binary
    third = Fraction(1, 3)
    pv = P.PathVolume([G01, G01], {0: (third, 2 * third)}, [Constraint(lin({0: 1, 1: 1}, -third), ">")])

    def f(x):
        return MP.npdf(x) * (1 - MP.ncdf(mp_of(third) - x))

    truth = MP.quad(f, [mp_of(third), mp_of(2 * third)])
    run_rounds(pv, truth, rounds=30)


def test_step_only_polytope_exact_by_enumeration():
    # u, v uniform on (0, 1): P[u + v < 1, u − v > 0] = 1/4 exactly
    u = ir.Step(((0.0, 1.0, 1.0),))
    pv = P.PathVolume([u, u], {}, [Constraint(lin({0: 1, 1: 1}, -1), "<"), Constraint(lin({0: 1, 1: -1}), ">")])
    hist = run_rounds(pv, MP.mpf(1) / 4, rounds=60, splits=40)
    assert hist[-1][1] - hist[-1][0] < 0.1


def _evaluate(value, xs):
    """An Affine / Nonlinear value on sampled points (written here, not taken from the code under test)."""
    if isinstance(value, Affine):
        return float(value.const) + sum(float(a) * xs[d] for d, a in value.coef)
    left, right = _evaluate(value.left, xs), _evaluate(value.right, xs)
    return {"+": left + right, "*": left * right, "/": left / right}[value.op]


def wilson(k: int, n: int, z: float) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion at z standard errors (sound at the edges)."""
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (0.0 if k == 0 else max(0.0, centre - half)), (1.0 if k == n else min(1.0, centre + half))


# ---------------------------------------------------------------------------------------------------- random polytopes
@pytest.mark.parametrize("seed", range(16))
def test_random_polytopes_every_round_against_monte_carlo(seed):
    rng = random.Random(1000 + seed)
    k = rng.randint(2, 3)
    dists = []
    for _ in range(k):
        if rng.random() < 0.6:
            dists.append(ir.Gaussian(float(rng.randint(-2, 2)), float(rng.choice((0.5, 1, 4)))))
        else:
            lo = float(rng.randint(-2, 0))
            dists.append(ir.Step(((lo, lo + 1, 0.5), (lo + 1, lo + 3, 0.5))))
    cons = []
    for _ in range(rng.randint(1, 3)):
        coefs = {d: rng.choice((-2, -1, 1, Fraction(1, 2), 3)) for d in range(k) if rng.random() < 0.8}
        if len(coefs) < 2:
            coefs = {0: 1, 1: -1}
        cons.append(Constraint(lin(coefs, Fraction(rng.randint(-4, 4), 2)), rng.choice((">", "<=", ">=", "<"))))
    if seed % 4 == 3:      # a non-linear constraint: (a·x_i + b)·(x_j + c) + d·x_k op 0
        i, j = rng.sample(range(k), 2)
        value = Nonlinear("+", Nonlinear("*", lin({i: rng.choice((1, -2))}, rng.randint(-1, 1)),
                                         lin({j: 1}, Fraction(rng.randint(-2, 2), 2))),
                          lin({rng.randrange(k): rng.choice((1, -1))}, rng.randint(-1, 1)))
        cons.append(Constraint(value, rng.choice((">", "<="))))
    box = {}
    if rng.random() < 0.5:
        box[0] = (Fraction(rng.randint(-2, 0)), math.inf)
    nrng = np.random.default_rng(seed)
    n = 400_000
    xs = []
    for d in dists:
        if isinstance(d, ir.Gaussian):
            xs.append(nrng.normal(d.mean, math.sqrt(d.variance), n))
        else:
            (a, b, _), (c, e, _) = d.pieces
            first = nrng.random(n) < 0.5
            xs.append(np.where(first, nrng.uniform(a, b, n), nrng.uniform(c, e, n)))
    hit = np.ones(n, dtype=bool)
    for dim, (lo, hi) in box.items():
        hit &= (xs[dim] > float(lo)) & (xs[dim] < hi)
    for c in cons:
        v = _evaluate(c.value, xs)
        hit &= {">": v > 0, ">=": v >= 0, "<": v < 0, "<=": v <= 0}[c.op]
    ci = wilson(int(hit.sum()), n, 5.0)
    pv = P.PathVolume(dists, box, cons)
    run_rounds(pv, ci, rounds=20, splits=20)


# ---------------------------------------------------------------------------------------------------- convergence
_A = ir.Step(((0.0, 1.0, 0.5), (1.0, 3.0, 0.5)))
_B = ir.Step(((-1.0, 0.0, 0.5), (0.0, 2.0, 0.5)))


def _stuck_case():
    """A path of a random program (tests/engines/test_fairsquare.py seed 10): three step draws in a mixed linear
    constraint, one of them also in a constraint with a private Gaussian."""
    dists = [_A, _A, _B, ir.Gaussian(2.0, 4.0)]
    cons = [Constraint(lin({0: -1, 1: 1, 2: 1}), "<="), Constraint(lin({1: 2, 3: -1}, 1), ">")]
    rng = np.random.default_rng(0)
    n = 1_000_000

    def st(d):
        first = rng.random(n) < 0.5
        (a, b, _), (c, e, _) = d.pieces
        return np.where(first, rng.uniform(a, b, n), rng.uniform(c, e, n))

    x0, x1, x2, g = st(_A), st(_A), st(_B), rng.normal(2.0, 2.0, n)
    hit = (-x0 + x1 + x2 <= 0) & (2 * x1 - g + 1 > 0)
    return dists, cons, wilson(int(hit.sum()), n, 6.0)        # ≈ 0.262


def test_mixed_step_constraint_with_private_gaussian_is_sound_every_round():
    dists, cons, ci = _stuck_case()
    run_rounds(P.PathVolume(dists, {}, cons), ci, rounds=25, splits=40)


def test_mixed_step_constraint_with_private_gaussian_converges():
    dists, cons, ci = _stuck_case()
    pv = P.PathVolume(dists, {}, cons)
    for _ in range(50):
        pv.refine(40)
    lo, hi = pv.bounds
    assert lo > 0.1 and hi - lo < 0.2, pv.bounds
