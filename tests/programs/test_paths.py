"""Symbolic paths of a ``.fr`` program (``fairaudit.engines.fairsquare.paths.enumerate_paths``), checked against independent
oracles: exact masses recomputed here (Fractions for steps, mpmath for Gaussians), closed forms, and the sampler."""
from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest

from fairaudit.base.errors import FairauditError
from fairaudit.programs import ir
from fairaudit.programs.parse import parse_file, parse_program
from fairaudit.engines.fairsquare.paths import Affine, Nonlinear, enumerate_paths
from fairaudit.programs.sample import sample

EXAMPLES = Path(__file__).resolve().parents[2] / "bench" / "fairsquare" / "examples"
MP = mpmath.MPContext()
MP.prec = 200


def prog(body: str, target: str = "x > 0", sensitive: str = "s < 1") -> ir.Program:
    """A program whose popModel is ``body`` (4-space indented lines) plus a fair coin s."""
    lines = ["def popModel():", "    s = step([(0,1,0.5), (1,2,0.5)])"]
    lines += ["    " + ln for ln in body.strip("\n").splitlines()]
    lines += [f"    sensitiveAttribute({sensitive})", "", "def F():", f"    fairnessTarget({target})", ""]
    return parse_program("\n".join(lines), filename="t.fr")


# -------------------------------------------------------------------------------- independent mass oracle
def _step_mass(dist: ir.Step, lo, hi) -> Fraction:
    """P[lo < X < hi] for a piecewise-uniform X, written independently of paths.step_mass."""
    total = Fraction(0)
    for a, b, p in dist.pieces:
        a, b, p = Fraction(a), Fraction(b), Fraction(p)
        left = a if lo == -np.inf else max(a, Fraction(lo))
        right = b if hi == np.inf else min(b, Fraction(hi))
        if right > left:
            total += p * (right - left) / (b - a)
    return total


def _gauss_mass(dist: ir.Gaussian, lo, hi):
    sd = MP.sqrt(MP.mpf(dist.variance))
    mu = MP.mpf(dist.mean)

    def cdf(x):
        if x == -np.inf:
            return MP.mpf(0)
        if x == np.inf:
            return MP.mpf(1)
        x = Fraction(x)
        return MP.ncdf((MP.mpf(x.numerator) / x.denominator - mu) / sd)

    return cdf(hi) - cdf(lo)


def box_mass(path):
    """Exact (Fraction) or 200-bit mass of a path with no multi-dimensional constraint."""
    assert not path.constraints, "box-only oracle used on a path with constraints"
    exact, real = Fraction(1), MP.mpf(1)
    for d, (lo, hi) in path.box.items():
        dist = path.dists[d]
        if isinstance(dist, ir.Step):
            exact *= _step_mass(dist, lo, hi)
        else:
            real *= _gauss_mass(dist, lo, hi)
    return exact, real


def total(paths, pred=lambda tags: True):
    acc = MP.mpf(0)
    for p in paths:
        if pred(p.tags):
            e, r = box_mass(p)
            acc += MP.mpf(e.numerator) / e.denominator * r
    return acc


# -------------------------------------------------------------------------------- cover and disjointness
def test_t3_paths_are_boxes_and_exact_masses_sum_to_one():
    en = enumerate_paths(parse_file(EXAMPLES / "toy_t3.fr"))
    exact = [box_mass(p)[0] for p in en.paths]
    assert sum(exact) == 1                      # disjoint and covering: exactly 1, as rationals
    joint = lambda s, t: sum(m for m, p in zip(exact, en.paths)  # noqa: E731
                             if p.tags["sensitive"] == s and p.tags["target"] == t)
    # the program's constants are floats (0.4 is 0.4000000000000000222...): equal up to that rounding
    assert abs(joint(True, True) - Fraction(1, 10)) < Fraction(1, 10 ** 15)     # 1/2 · P[u > 0.8] = 1/2 · 1/5
    assert abs(joint(False, True) - Fraction(3, 10)) < Fraction(1, 10 ** 15)    # 1/2 · 3/5
    assert abs(joint(True, False) - Fraction(4, 10)) < Fraction(1, 10 ** 15)
    assert all(p.tags["qualified"] is True for p in en.paths)   # no qualified(...): true everywhere


def test_t1_masses_sum_to_one_and_match_closed_form():
    en = enumerate_paths(parse_file(EXAMPLES / "toy_t1.fr"))
    # the step's weights are the floats 0.3 and 0.7 (their sum is 1 − 2^-54): equal up to that
    assert abs(total(en.paths) - 1) < 1e-15
    t_min = total(en.paths, lambda t: t["sensitive"] and t["target"])
    t_maj = total(en.paths, lambda t: not t["sensitive"] and t["target"])
    assert abs(t_min - MP.mpf("0.3") * (1 - MP.ncdf(1))) < 1e-15    # weights are floats
    assert abs(t_maj - MP.mpf("0.35")) < 1e-15


def test_tags_present_on_every_path_with_booleans():
    en = enumerate_paths(parse_file(EXAMPLES / "fig1_original.fr"))
    for p in en.paths:
        assert {"sensitive", "qualified", "target"} <= set(p.tags)
        assert all(isinstance(v, bool) for v in p.tags.values())
    # both groups and both outcomes occur
    assert {(p.tags["sensitive"], p.tags["target"]) for p in en.paths} == {(a, b) for a in (0, 1) for b in (0, 1)}


def test_atoms_become_tags():
    program = prog("x = gaussian(0, 1)")
    en = enumerate_paths(program, {"big": ir.Compare(">", ir.Var("x"), ir.Num(1.0))})
    assert all("big" in p.tags for p in en.paths)
    p_big = total(en.paths, lambda t: t["big"])
    assert abs(p_big - (1 - MP.ncdf(1))) < 1e-40
    p_both = total(en.paths, lambda t: t["big"] and t["target"])
    assert abs(p_both - (1 - MP.ncdf(1))) < 1e-40   # x > 1 implies x > 0


# -------------------------------------------------------------------------------- static decisions
def test_constant_comparisons_are_decided_statically():
    program = prog("""
c = 3
x = gaussian(0, 1)
if c > 2:
    x = x + 1
else:
    x = x - 100
if c * 2 == 6:
    x = x + 1
""", target="c < 3 or x > 2")
    en = enumerate_paths(program)
    # only the sensitive coin and the target fork: 2 × 2 paths, no solver call, no pruning
    assert len(en.paths) == 4
    assert en.solver_calls == 0
    # x + 2 > 2  <=>  x > 0 : the constant branches were both taken "true"
    p = total(en.paths, lambda t: t["target"])
    assert abs(p - MP.mpf("0.5")) < 1e-40


@pytest.mark.parametrize("op, truth", [("==", False), ("!=", True)])
def test_equality_on_continuous_values_has_probability_zero(op, truth):
    program = prog("x = gaussian(0, 1)\ny = gaussian(2, 3)", target=f"x + y {op} 2")
    en = enumerate_paths(program)
    assert len(en.paths) == 2                       # no fork on the target
    assert all(p.tags["target"] is truth for p in en.paths)
    step = prog("x = step([(0,1,1.0)])", target=f"x {op} 0.5")
    assert all(p.tags["target"] is truth for p in enumerate_paths(step).paths)


# -------------------------------------------------------------------------------- boolean operators
@pytest.mark.parametrize("cond, expected", [
    ("x > 0 and y > 0", Fraction(1, 4)),
    ("x > 0 or y > 0", Fraction(3, 4)),
    ("not (x > 0 and y > 0)", Fraction(3, 4)),
    ("not x > 0.5 or (y < 0.25 and x < 0.25)", Fraction(1, 2) + Fraction(1, 2) * 0),
    ("(x > 0.5 or y > 0.5) and not (x > 0.75 and y > 0.75)", Fraction(3, 4) - Fraction(1, 16)),
])
def test_boolean_operators_fork_into_disjoint_paths(cond, expected):
    # x, y uniform on (-1, 1) for the first three; the rational answers are exact
    program = prog("x = step([(-1,1,1.0)])\ny = step([(-1,1,1.0)])", target=cond)
    en = enumerate_paths(program)
    masses = [box_mass(p)[0] for p in en.paths]
    assert sum(masses) == 1
    got = sum(m for m, p in zip(masses, en.paths) if p.tags["target"])
    # independent oracle: exact area on the square (-1,1)² by enumeration of a fine rational grid of cells
    n = 16
    area = Fraction(0)
    for i in range(n):
        for j in range(n):
            x = Fraction(2 * i + 1, n) - 1      # cell centres; every boundary here is on a grid line
            y = Fraction(2 * j + 1, n) - 1
            env = {"x": x, "y": y}
            if _eval_cond(cond, env):
                area += Fraction(1, n * n)
    assert got == area
    if cond.startswith("x > 0 and") or cond.startswith("x > 0 or") or cond.startswith("not (x > 0"):
        assert got == expected


def _eval_cond(text, env):
    """A tiny evaluator of the conditions above (no eval): Python's ast over a whitelist."""
    import ast as pyast

    def ev(node):
        if isinstance(node, pyast.BoolOp):
            vals = [ev(v) for v in node.values]
            return all(vals) if isinstance(node.op, pyast.And) else any(vals)
        if isinstance(node, pyast.UnaryOp) and isinstance(node.op, pyast.Not):
            return not ev(node.operand)
        if isinstance(node, pyast.UnaryOp) and isinstance(node.op, pyast.USub):
            return -ev(node.operand)
        if isinstance(node, pyast.Compare):
            a, b = ev(node.left), ev(node.comparators[0])
            op = type(node.ops[0])
            return {pyast.Gt: a > b, pyast.Lt: a < b, pyast.GtE: a >= b, pyast.LtE: a <= b}[op]
        if isinstance(node, pyast.Name):
            return env[node.id]
        if isinstance(node, pyast.Constant):
            return Fraction(str(node.value))
        raise AssertionError(node)

    return ev(pyast.parse(text, mode="eval").body)


# -------------------------------------------------------------------------------- z3 pruning
def test_z3_prunes_an_infeasible_path_and_keeps_feasible_ones():
    infeasible = prog("""
x = gaussian(0, 1)
y = gaussian(0, 1)
z = x + y
flag = 0
if z > 1:
    if z < 0:
        flag = 1
""", target="flag > 0.5")
    en = enumerate_paths(infeasible)
    assert en.pruned >= 1 and en.solver_calls >= 1
    assert not any(p.tags["target"] for p in en.paths)   # the x = 100 path was dropped
    feasible = prog("""
x = gaussian(0, 1)
y = gaussian(0, 1)
z = x + y
flag = 0
if z > 1:
    if x < 0:
        flag = 1
""", target="flag > 0.5")
    en = enumerate_paths(feasible)
    assert any(p.tags["target"] for p in en.paths)     # z > 1 and x < 0 (y > 1 − x) is feasible
    assert not any(p.tags["target"] for p in en.paths if not p.constraints)


def test_z3_prunes_across_box_and_constraint():
    # x > 1 first (a box), then x − y < 0 and y < 0: together x < y < 0 contradicts x > 1
    program = prog("""
x = gaussian(0, 1)
y = gaussian(0, 1)
flag = 0
if x > 1:
    if x - y < 0:
        if y < 0:
            flag = 1
""", target="flag > 0.5")
    en = enumerate_paths(program)
    assert en.pruned >= 1
    assert not any(p.tags["target"] for p in en.paths)


# -------------------------------------------------------------------------------- undefined variables
def test_undefined_variables_behave_like_the_sampler():
    # the parser refuses a program READING a maybe-unassigned variable, but a spec's conditions (atoms) are
    # read at the end, where c exists only on the sensitive side
    text = """
def popModel():
    s = step([(0,1,0.5), (1,2,0.5)])
    x = gaussian(0, 1)
    if s < 1:
        c = gaussian(0, 1)
    sensitiveAttribute(s < 1)

def F():
    fairnessTarget(x > 0)
"""
    program = parse_program(text, filename="u.fr")
    c = ir.Var("c")
    atoms = {"gt": ir.Compare(">", c, ir.Num(-1000.0)), "le": ir.Compare("<=", c, ir.Num(-1000.0)),
             "ne": ir.Compare("!=", c, ir.Num(0.0)), "eq": ir.Compare("==", c, c),
             "ge": ir.Compare(">=", c, c), "or": ir.BoolOp("or", (ir.Compare(">", c, ir.Num(0.0)),
                                                                  ir.Compare("<=", c, ir.Num(0.0))))}
    en = enumerate_paths(program, atoms)
    s = sample(program, 20_000, seed=1, keep_values=True)
    cv = s.values["c"]
    with np.errstate(invalid="ignore"):
        sampled = {"gt": cv > -1000, "le": cv <= -1000, "ne": cv != 0, "eq": cv == cv, "ge": cv >= cv,
                   "or": (cv > 0) | (cv <= 0)}
    off = ~s.sensitive
    assert off.any()
    for name in atoms:
        on_paths = {p.tags[name] for p in en.paths if not p.tags["sensitive"]}
        assert on_paths == {bool(v) for v in np.unique(sampled[name][off])}, name
    # and on the sensitive side, where c is defined: "gt" and "or" hold with probability 1
    assert total(en.paths, lambda t: t["sensitive"] and not t["gt"]) < 1e-100
    assert abs(total(en.paths, lambda t: t["sensitive"] and t["or"]) - MP.mpf("0.5")) < 1e-40


# -------------------------------------------------------------------------------- non-linear arithmetic and errors
def test_product_of_two_draws_gives_a_nonlinear_constraint():
    program = prog("x = gaussian(0, 1)\ny = gaussian(0, 1)\nz = x * y", target="z > 0")
    en = enumerate_paths(program)
    cons = [c for p in en.paths for c in p.constraints]
    assert cons and all(isinstance(c.value, Nonlinear) and not c.linear for c in cons)
    assert {c.op for c in cons} == {">", "<="}
    # multiplication by a constant stays affine
    lin = prog("x = gaussian(0, 1)\ny = gaussian(0, 1)\nz = 3 * x - y * 2", target="z > 0")
    cons = [c for p in enumerate_paths(lin).paths for c in p.constraints]
    assert cons and all(isinstance(c.value, Affine) for c in cons)
    assert dict(cons[0].value.coef).values() and {abs(v) for v in dict(cons[0].value.coef).values()} == {3, 2}


@pytest.mark.parametrize("expr", ["x / 0", "x / (c - c)", "x / c"])
def test_the_parser_refuses_division_by_zero_or_by_a_variable(expr):
    from fairaudit.spec.errors import SpecError

    with pytest.raises(SpecError, match=r"t\.fr:\d+:\d+"):
        prog(f"c = 2\nx = gaussian(0, 1)\nz = {expr}", target="z > 0")


def test_division_by_constant_zero_is_a_clear_error():
    # the parser refuses it; an IR built otherwise (generated programs) must still fail clearly in paths
    base = prog("c = 2\nx = gaussian(0, 1)\nz = x", target="z > 0")
    zero = ir.BinOp("-", ir.Var("c"), ir.Var("c"))
    bad = ir.Assign("z", ir.BinOp("/", ir.Var("x"), zero, line=7, column=9), line=7, column=5)
    population = tuple(bad if isinstance(st, ir.Assign) and st.name == "z" else st for st in base.population)
    import dataclasses

    program = dataclasses.replace(base, population=population)
    with pytest.raises(FairauditError, match=r"division by zero at line 7, column 9"):
        enumerate_paths(program)


def test_division_by_nonzero_constant_is_exact():
    program = prog("x = gaussian(0, 1)\nz = x / 3", target="z > 1/3")
    en = enumerate_paths(program)
    # z > 1/3 <=> x > 1 exactly (rational arithmetic, no float rounding of 1/3)
    for p in en.paths:
        lo, hi = p.box[1]        # x is the second draw
        if p.tags["target"]:
            assert lo == 1 and hi == np.inf
        else:
            assert lo == -np.inf and hi == 1


# ------------------------------------------------------------------------ equality of identical non-linear values
@pytest.mark.parametrize("cond, truth", [("x * y * 0 == 0", True), ("x * y == x * y", True),
                                         ("x * y != y * x", False), ("x * y - y * x != 0", False)])
def test_identically_equal_nonlinear_values(cond, truth):
    """A non-linear difference that is identically 0 is not 'probability 0': the paths never claim the wrong truth
    for certain. A product by the constant 0 is simplified, so that case is decided on one path; x*y - y*x is split
    into <, > and = sub-paths whose bounds (not their tags) carry the answer (see the engine test)."""
    program = prog("x = gaussian(0, 1)\ny = gaussian(1, 1)", target=cond)
    s = sample(program, 1000, seed=0)
    assert s.target.all() if truth else not s.target.any()      # the sampler: always true / never true
    en = enumerate_paths(program)
    assert any(p.tags["target"] is truth for p in en.paths)
    if "* 0" in cond:
        assert all(p.tags["target"] is truth for p in en.paths)


def test_sampler_and_paths_agree_on_nonlinear_inequalities():
    # x*y > 0 forks into two paths carrying the non-linear constraint; x*y*0 > -1 is decided on no path but
    # is still a constraint over both draws (its volume is 1)
    program = prog("x = gaussian(0, 1)\ny = gaussian(1, 1)", target="x * y > 0")
    en = enumerate_paths(program)
    assert {p.tags["target"] for p in en.paths} == {True, False}


# -------------------------------------------------------------------------------- lazy enumeration (Explorer)
def _count_program(n=6):
    lines = ["def popModel():", "    s = step([(0,1,0.25), (1,2,0.75)])", "    t = 0"]
    for i in range(n):
        lines += [f"    a{i} = step([(0,1,0.5), (1,3,0.5)])", f"    if a{i} > 1:", "        t = t + 1"]
    lines += ["    sensitiveAttribute(s < 1)", "", "def F():", "    fairnessTarget(t > 2.5)", ""]
    return parse_program("\n".join(lines), filename="count.fr")


@pytest.mark.parametrize("limit", [1, 2, 5, 17, 64])
def test_explorer_finished_and_open_parts_partition_the_space(limit):
    from fairaudit.engines.fairsquare.paths import Explorer

    program = _count_program()
    ex = Explorer(program)
    done, open_ = ex.expand(ex.root, limit)
    assert len(done) + len(open_) <= max(limit, 1) + 2
    parts = [p for p in done] + [item.path for item in open_]
    assert sum(box_mass(p)[0] for p in parts) == 1        # disjoint and covering, exactly
    # expanding every open part finishes the same paths as a full enumeration, with the same masses
    finished = list(done)
    for item in open_:
        more, rest = ex.expand(item)
        assert rest == []
        finished += more
    full = enumerate_paths(program).paths
    assert len(finished) == len(full) == 2 ** 7
    key = lambda p: (tuple(sorted(p.box.items())), tuple(sorted(p.tags.items())))  # noqa: E731
    assert sorted(map(key, finished)) == sorted(map(key, full))
    hits = sum(box_mass(p)[0] for p in finished if p.tags["target"])
    assert hits == Fraction(sum(math.comb(6, k) for k in range(3, 7)), 64)


def test_explorer_with_no_time_left_still_partitions():
    from fairaudit.engines.fairsquare.paths import Explorer

    program = _count_program()
    ex = Explorer(program)
    done, open_ = ex.expand(ex.root, None, remaining=lambda: 0.0)
    parts = [p for p in done] + [item.path for item in open_]
    assert parts and len(parts) < 2 ** 7
    assert sum(box_mass(p)[0] for p in parts) == 1
