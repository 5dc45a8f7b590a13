"""Sampling ``.fr`` programs: determinism, the masks' semantics, and the notes' exact answers (§A8, §A11, DT4)
inside a Hoeffding confidence interval at δ = 1e-6 per check."""
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from fairaudit.programs import estimate, parse_file, parse_program, sample
from tests.scripts import load_script

BENCH = Path(__file__).resolve().parents[2] / "bench" / "fairsquare"
N = 200_000
DELTA = 1e-6


def hoeffding(m: int, delta: float = DELTA) -> float:
    """Half-width of a two-sided Hoeffding interval for a mean of ``m`` Bernoulli draws."""
    return math.sqrt(math.log(2 / delta) / (2 * m))


def assert_conditionals(path: Path, p_min: float, p_maj: float, seed: int = 1) -> None:
    e = estimate(parse_file(path), N, seed)
    assert abs(e.p_min - p_min) <= hoeffding(e.n_min), (e.p_min, p_min, hoeffding(e.n_min))
    assert abs(e.p_maj - p_maj) <= hoeffding(e.n_maj), (e.p_maj, p_maj, hoeffding(e.n_maj))


def sf(x, mean, variance):
    return norm.sf(x, mean, math.sqrt(variance))


# ---- exact answers ----------------------------------------------------------------------------------------

def test_fig1_original_notes_a8():
    assert_conditionals(BENCH / "examples" / "fig1_original.fr", 0.08990737, 0.18571423)


def test_fig1_fixed_notes_a8():
    assert_conditionals(BENCH / "examples" / "fig1_fixed.fr", 0.82352657, 0.86777281)


def test_fig1_p_min():
    s = sample(parse_file(BENCH / "examples" / "fig1_original.fr"), N, 3)
    assert abs(s.sensitive.mean() - 0.1586552539) <= hoeffding(N)


def test_toy_t1():
    assert_conditionals(BENCH / "examples" / "toy_t1.fr", norm.sf(1), 0.5)


def test_toy_t2():
    assert_conditionals(BENCH / "examples" / "toy_t2.fr", norm.sf(1 / math.sqrt(2)), 0.5)


def test_toy_t3():
    assert_conditionals(BENCH / "examples" / "toy_t3.fr", 1 / 5, 3 / 5)


def test_example_3_2_variance_convention():
    """gaussian(0, 4) has sd 2: P[z >= 0] = 1 − Φ(1/√5) = 0.327360 (with sd 4 it would differ by > 0.05)."""
    s = sample(parse_file(BENCH / "examples" / "ex3_2.fr"), N, 5, keep_values=True)
    assert abs(s.target.mean() - 0.327360423) <= hoeffding(N)
    assert abs(s.values["x"].var() - 4.0) < 0.1
    assert abs(s.values["y"].mean() + 1.0) < 0.02


def test_dt4_ind_exact():
    """DT4 never reads sex and Ind is independent: both groups have P = P[cg ≥ 7073.5]·P[age ≥ 20] (ratio 1)."""
    p = sf(7073.5, 1077.6488, 54542539.1784) * sf(20, 38.5816, 186.0614)
    assert_conditionals(BENCH / "ind_dt4.fr", p, p)


def test_dt4_bn1_exact():
    """DT4 under BN1 in closed form from the notes' §A10.2 table: ratio 0.381589 (notes §A11.10)."""
    f_cg, m_cg = (568.4105, 24248365.5428), (1329.3700, 69327473.1006)
    p_f = (sf(7298, *f_cg) * sf(20, 38.8125, 193.4918)
           + (sf(7073.5, *f_cg) - sf(7298, *f_cg)) * sf(20, 38.4208, 184.9151))
    p_m = sf(7073.5, *m_cg) * sf(20, 38.2668, 187.2747)  # 7073.5 > 5178: only the high-gain leaf
    assert abs(p_f / p_m - 0.381589) < 5e-7
    assert_conditionals(BENCH / "bn1_dt4.fr", p_f, p_m)


def test_dt4_bn1_qualified_exact():
    """The qualified(age > 18) variant: P[T | min ∧ qual] = P[T ∧ min] / P[min ∧ qual] (T implies age ≥ 20)."""
    f_cg, m_cg = (568.4105, 24248365.5428), (1329.3700, 69327473.1006)
    t_f = (sf(7298, *f_cg) * sf(20, 38.8125, 193.4918)
           + (sf(7073.5, *f_cg) - sf(7298, *f_cg)) * sf(20, 38.4208, 184.9151))
    q_f = sf(7298, *f_cg) * sf(18, 38.8125, 193.4918) + (1 - sf(7298, *f_cg)) * sf(18, 38.4208, 184.9151)
    t_m = sf(7073.5, *m_cg) * sf(20, 38.2668, 187.2747)
    q_m = sf(5178, *m_cg) * sf(18, 38.2668, 187.2747) + (1 - sf(5178, *m_cg)) * sf(18, 38.6361, 187.2435)
    assert_conditionals(BENCH / "qual" / "bn1_dt4.fr", t_f / q_f, t_m / q_m)
    s = sample(parse_file(BENCH / "qual" / "bn1_dt4.fr"), N, 4, keep_values=True)
    np.testing.assert_array_equal(s.qualified, s.values["age"] > 18)


# ---- determinism and semantics ---------------------------------------------------------------------------

def test_same_seed_same_sample():
    program = parse_file(BENCH / "bn2_dt16a.fr")
    a, b = sample(program, 10_000, 42, keep_values=True), sample(program, 10_000, 42, keep_values=True)
    for name in a.values:
        np.testing.assert_array_equal(a.values[name], b.values[name])
    np.testing.assert_array_equal(a.target, b.target)
    c = sample(program, 10_000, 43)
    assert not np.array_equal(a.target, c.target)


def test_estimate_in_one_batch_matches_sample():
    program = parse_file(BENCH / "ind_svm4.fr")
    s = sample(program, 5_000, 9)
    e = estimate(program, 5_000, 9, batch=5_000)
    assert e.n_min == int((s.sensitive & s.qualified).sum())
    assert e.hits_maj == int((~s.sensitive & s.qualified & s.target).sum())
    assert estimate(program, 5_000, 9, batch=1_000) == estimate(program, 5_000, 9, batch=1_000)


def test_masks_branches_and_events():
    program = parse_program("""\
def popModel():
    s = step([(0,1,0.25), (1,2,0.25), (2,4,0.5)])
    if s < 1:
        b = 10
    elif s < 2:
        b = gaussian(100, 1)
    else:
        b = -s
    sensitiveAttribute(b > 5)
    qualified(s < 3)

def F():
    b = b + 1
    fairnessTarget(b > 50)
""")
    s = sample(program, 20_000, 0, keep_values=True)
    sv, b = s.values["s"], s.values["b"]
    assert ((sv >= 0) & (sv < 4)).all()
    assert np.allclose(b[sv < 1], 11)
    mid = (sv >= 1) & (sv < 2)
    assert abs(b[mid].mean() - 101) < 0.1
    assert np.allclose(b[sv >= 2], 1 - sv[sv >= 2])
    # events are evaluated where they stand: sensitive on b before F's "+ 1", target after it
    np.testing.assert_array_equal(s.sensitive, sv < 2)
    np.testing.assert_array_equal(s.target, mid)
    np.testing.assert_array_equal(s.qualified, sv < 3)
    assert abs((sv >= 2).mean() - 0.5) <= hoeffding(20_000)


def test_step_pieces_and_frequencies():
    program = parse_file(BENCH / "ind_dt44.fr")
    s = sample(program, N, 11, keep_values=True)
    edu = s.values["education"]
    expected = [0.1644, 0.2239, 0.0361, 0.3225, 0.0177, 0.0328, 0.0424, 0.0158, 0.0198, 0.0133, 0.0530,
                0.0051, 0.0287, 0.0127, 0.0102, 0.0016]
    counts = np.bincount(np.floor(edu).astype(int), minlength=16)
    assert counts.sum() == N and len(counts) == 16
    for k, p in enumerate(expected):
        assert abs(counts[k] / N - p) <= hoeffding(N)
    frac = edu - np.floor(edu)
    assert abs(frac.mean() - 0.5) < 0.01  # uniform inside each piece


def test_no_qualified_means_everyone():
    s = sample(parse_file(BENCH / "examples" / "toy_t3.fr"), 100, 0)
    assert s.qualified.all() and s.n == 100
    assert sample(parse_file(BENCH / "examples" / "toy_t3.fr"), 0, 0).n == 0


@pytest.mark.parametrize("model", ["ind", "bn1", "bn2"])
def test_every_benchmark_samples(model):
    for path in sorted(BENCH.glob(f"{model}_*.fr")):
        s = sample(parse_file(path), 2_000, 0)
        assert s.sensitive.dtype == bool and s.target.dtype == bool and s.target.shape == (2_000,)
        assert 0 < s.sensitive.sum() < 2_000


def test_bn2_integrity_constraint_holds():
    s = sample(parse_file(BENCH / "bn2_nn21.fr"), 50_000, 2, keep_values=True)
    assert (s.values["age"] >= s.values["education_num"]).all()
    s1 = sample(parse_file(BENCH / "bn1_nn21.fr"), 50_000, 2, keep_values=True)
    assert (s1.values["age"] < s1.values["education_num"]).any()


def test_bench_files_match_their_generator():
    """The committed .fr files are exactly what bench/fairsquare/make_programs.py writes."""
    module = load_script(BENCH / "make_programs.py", "make_programs")
    for model in module.MODELS:
        for name in module.PROGRAMS:
            assert (BENCH / f"{model}_{name}.fr").read_text() == module.program_text(model, name)
            assert (BENCH / "qual" / f"{model}_{name}.fr").read_text() == module.program_text(model, name, qual=True)
