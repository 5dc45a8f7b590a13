"""Parsing ``.fr`` programs: the benchmark files, the IR's shape, and positioned errors outside the subset."""
from pathlib import Path

import pytest

from fairaudit.programs import ir, parse_file, parse_program
from fairaudit.spec.errors import SpecError

BENCH = Path(__file__).resolve().parents[2] / "bench" / "fairsquare"
MODELS = ("ind", "bn1", "bn2")
PROGRAMS = ("dt4", "dt14", "dt16", "dt16a", "dt44", "svm3", "svm4", "svm4a", "svm5", "svm6", "nn21", "nn22", "nn32")

OK = """\
def popModel():
    s = step([(0,1,0.3), (1,2,0.7)])
    x = gaussian(0, 4)
    sensitiveAttribute(s < 1)

def F():
    y = 2 * x - 1
    fairnessTarget(y > 0)
"""


def error_of(text: str) -> SpecError:
    with pytest.raises(SpecError) as info:
        parse_program(text)
    return info.value


def test_all_39_benchmark_programs_are_present_and_parse():
    files = sorted(BENCH.glob("*.fr"))
    assert {f.name for f in files} == {f"{m}_{p}.fr" for m in MODELS for p in PROGRAMS}
    for f in files:
        program = parse_file(f)
        assert program.sensitive == ir.Compare("<", ir.Var("sex", *pos(program.sensitive.left)),
                                               ir.Num(1.0, *pos(program.sensitive.right)),
                                               *pos(program.sensitive))
        assert program.qualified is None
        assert "sex" in program.variables


def pos(node):
    return node.line, node.column


def test_qualified_variants_parse():
    files = sorted((BENCH / "qual").glob("*.fr"))
    assert len(files) == 39
    for f in files:
        program = parse_file(f)
        assert program.qualified == ir.Compare(">", ir.Var("age"), ir.Num(18.0))


@pytest.mark.parametrize("name", ["fig1_original", "fig1_fixed", "toy_t1", "toy_t2", "toy_t3", "ex3_2"])
def test_examples_parse(name):
    parse_file(BENCH / "examples" / f"{name}.fr")


def test_fig1_ir_shape():
    program = parse_file(BENCH / "examples" / "fig1_original.fr")
    first = program.population[0]
    assert isinstance(first, ir.Draw) and first.name == "ethnicity"
    assert first.dist == ir.Gaussian(0.0, 100.0)  # the second argument is kept as the VARIANCE
    branch = program.population[3]
    assert isinstance(branch, ir.If) and branch.orelse == ()
    assert branch.body[0] == ir.Assign("colRank", ir.BinOp("+", ir.Var("colRank", 7, 19), ir.Num(5.0, 7, 29), 7, 19),
                                       7, 9)  # line 1 is a comment
    plus = branch.body[0].value
    assert (branch.body[0].line, branch.body[0].column) == (7, 9)
    assert [(n.line, n.column) for n in (plus, plus.left, plus.right)] == [(7, 19), (7, 19), (7, 29)]
    assert ir.Num(5.0, 1, 1) == ir.Num(5.0, 9, 9)  # positions take no part in equality
    chain = program.decision[1]
    assert isinstance(chain, ir.If) and isinstance(chain.orelse[0], ir.If)  # elif = nested If
    assert isinstance(program.decision[-1], ir.Event) and program.decision[-1].kind == "target"
    assert program.variables == ("ethnicity", "colRank", "yExp", "expRank", "hire")


def test_step_and_chained_comparison_and_qualified():
    program = parse_program(OK.replace("    y = 2 * x - 1\n", "    y = 2 * x - 1\n    qualified(0 <= x < 5)\n"))
    assert program.population[0].dist == ir.Step(((0.0, 1.0, 0.3), (1.0, 2.0, 0.7)))
    assert isinstance(program.qualified, ir.BoolOp) and program.qualified.op == "and"
    assert [c.op for c in program.qualified.values] == ["<=", "<"]


def test_negative_constants_fold_and_bool_ops():
    program = parse_program(OK.replace("x = gaussian(0, 4)", "x = gaussian(-1.5, 4)")
                            .replace("fairnessTarget(y > 0)", "fairnessTarget(not (y > -2 or x <= 1) and y != 3)"))
    assert program.population[1].dist == ir.Gaussian(-1.5, 4.0)
    assert program.target.op == "and" and isinstance(program.target.values[0], ir.Not)


# ---- errors: every one positioned (line:column) with a hint -------------------------------------------------

@pytest.mark.parametrize("old,new,where,words", [
    # unknown function (a typo must not change a verdict)
    ("x = gaussian(0, 4)", "x = gausian(0, 4)", (3, 9), "unknown function 'gausian'"),
    ("y = 2 * x - 1", "y = 2 * abs(x) - 1", (7, 13), "unknown function 'abs'"),
    # eval-like attacks
    ("y = 2 * x - 1", "y = __import__('os').system('touch /tmp/fr_pwned')", (7, 9), "unknown function"),
    ("y = 2 * x - 1", "y = eval('1')", (7, 9), "unknown function 'eval'"),
    ("y = 2 * x - 1", "y = x.__class__", (7, 9), "not allowed"),
    ("    y = 2 * x - 1\n", "    import os\n    y = 1\n", (7, 5), "'import' statement is not allowed"),
    ("    y = 2 * x - 1\n", "    y = (lambda: 1)()\n", (7, 9), "unknown function"),
    # wrong arity
    ("x = gaussian(0, 4)", "x = gaussian(0)", (3, 9), "takes exactly 2 positional arguments, got 1"),
    ("x = gaussian(0, 4)", "x = gaussian(0, 4, 5)", (3, 9), "got 3"),
    ("sensitiveAttribute(s < 1)", "sensitiveAttribute(s < 1, s > 0)", (4, 5), "takes exactly 1"),
    ("x = gaussian(0, 4)", "x = gaussian(mean=0, variance=4)", (3, 9), "takes exactly 2"),
    # unknown / possibly unassigned names
    ("y = 2 * x - 1", "y = 2 * xx - 1", (7, 13), "unknown name 'xx'"),
    ("    y = 2 * x - 1\n", "    if x > 0:\n        z = 1\n    y = z\n", (9, 9), "may be unassigned"),
    # outside the subset
    ("x = gaussian(0, 4)", "x = gaussian(0, -4)", (3, 21), "variance must be positive"),
    ("x = gaussian(0, 4)", "x = gaussian(s, 4)", (3, 18), "numeric constants"),
    ("(1,2,0.7)", "(1,2,0.6)", (2, 14), "sum to 0.9"),
    ("(1,2,0.7)", "(0.5,2,0.7)", (2, 26), "sorted and disjoint"),
    ("y = 2 * x - 1", "y = 1 / x", (7, 13), "non-zero numeric constant"),
    ("y = 2 * x - 1", "y = x > 1", (7, 9), "a condition is not a number"),
    ("y = 2 * x - 1", "y = 1 if x > 0 else 0", (7, 9), "not allowed"),
    ("y = 2 * x - 1", "y = 'a'", (7, 9), "only numbers"),
    ("y = 2 * x - 1", "y += 1", (7, 5), "augmented assignment"),
    ("y = 2 * x - 1", "y = x ** 2", (7, 9), "not allowed"),
    ("    y = 2 * x - 1\n", "    y = 1\n    return y\n", (8, 5), "'return' is not part"),
    ("    y = 2 * x - 1\n", "    y = 1\n    for i in range(3):\n        y = y + 1\n", (8, 5), "'for' statement"),
    ("    y = 2 * x - 1\n", "    y = 1\n    if x > 0:\n        fairnessTarget(y > 0)\n", (9, 9), "top level"),
    ("fairnessTarget(y > 0)", "fairnessTarget(y)", (8, 20), "is not a condition"),
    ("def F():", "def F(x):", (6, 1), "takes no parameters"),
    ("def F():", "def G():", (6, 1), "unknown function definition 'G'"),
    ("    y = 2 * x - 1\n", "    y = 2 * x - 1\n    sensitiveAttribute(y > 0)\n", (8, 5), "given twice"),
    ("    s = step", "    gaussian = step", (2, 5), "cannot be used as a variable name"),
])
def test_errors_are_positioned(old, new, where, words):
    assert old in OK
    err = error_of(OK.replace(old, new, 1))
    assert (err.line, err.column) == where, str(err)
    assert words in err.message
    assert str(err).startswith(f"{where[0]}:{where[1]}: ")
    assert "^" in err.pretty()


def test_syntax_error_is_positioned():
    err = error_of(OK.replace("y = 2 * x - 1", "y = 2 * (x - 1"))
    assert err.line is not None and err.column is not None
    assert str(err).startswith(f"{err.line}:{err.column}: syntax error")


def test_missing_parts():
    assert "missing 'fairnessTarget" in error_of(OK.replace("    fairnessTarget(y > 0)\n", "")).message
    assert "missing 'def F()" in error_of(OK.split("def F")[0]).message
    assert "missing 'sensitiveAttribute" in error_of(OK.replace("    sensitiveAttribute(s < 1)\n", "")).message


def test_parse_never_executes(tmp_path):
    marker = tmp_path / "pwned"
    text = OK.replace("y = 2 * x - 1", f"y = __import__('os').system('touch {marker}')")
    with pytest.raises(SpecError):
        parse_program(text)
    text = f"__import__('os').system('touch {marker}')\n" + OK
    with pytest.raises(SpecError) as info:
        parse_program(text)
    assert (info.value.line, info.value.column) == (1, 1)
    assert not marker.exists()


def test_file_errors_name_the_file(tmp_path):
    path = tmp_path / "bad.fr"
    path.write_text(OK.replace("x = gaussian(0, 4)", "x = gausian(0, 4)"))
    with pytest.raises(SpecError) as info:
        parse_file(path)
    assert str(info.value).startswith("bad.fr:3:9: unknown function 'gausian'")


def test_huge_expression_is_a_spec_error_not_a_crash():
    long_sum = " + ".join(["x"] * 20_000)
    err = error_of(OK.replace("y = 2 * x - 1", f"y = {long_sum}"))
    assert "too deeply nested" in err.message or "syntax error" in err.message


def test_round_trip_every_bench_file():
    from fairaudit.programs.printer import format_program
    for path in sorted(BENCH.glob("**/*.fr")):
        program = parse_file(path)
        text = format_program(program)
        assert parse_program(text) == program, path.name
        assert format_program(parse_program(text)) == text


def test_round_trip_keeps_tree_shape():
    from fairaudit.programs.printer import format_program
    body = ("    y = (x - (1 - x)) / 2 - -x * (x + 1)\n    z = -(x + 1) * -3\n"
            "    qualified(not (y > 0 or (z < 1 and y < 2)) and 0 <= x < 5)\n")
    program = parse_program(OK.replace("    y = 2 * x - 1\n", body))
    assert parse_program(format_program(program)) == program


def test_mutated_programs_parse_or_raise_spec_error():
    """Any one-character edit of a real program either parses (and then samples) or is a SpecError, never a crash."""
    from fairaudit.programs import sample
    from hypothesis import given, settings, strategies as st

    text = (BENCH / "bn2_dt16a.fr").read_text()

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(st.integers(0, len(text) - 1), st.sampled_from(list("()[],:=<>+-*/.0123456789 \nabcxyz_'\"#\\") + [""]))
    def check(index, char):
        mutated = text[:index] + char + text[index + 1:]
        try:
            program = parse_program(mutated)
        except SpecError as err:
            assert err.message
            assert err.line is None or err.column is not None
        else:
            assert sample(program, 50, 0).target.shape == (50,)

    check()
