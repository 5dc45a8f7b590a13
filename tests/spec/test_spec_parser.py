"""Parsing: precedence, node ids / parents / texts, named specs, events, and error positions."""
import pytest

from fairaudit.spec import SpecError, parse, parse_event, to_text
from fairaudit.spec import ast
from fairaudit.base.errors import FairauditError

AVOIR_ADULT = '(E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.5) & (E[pred | race == "White"] - E[pred | race != "White"] < 0.5)'


def test_avoir_adult_tree_ids_parents_texts():
    spec = parse(AVOIR_ADULT)
    rows = [(tn.id, tn.parent, tn.kind, tn.text) for tn in spec]
    assert rows[:6] == [
        ("n0", None, "and", 'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.5 and '
                            'E[pred | race == "White"] - E[pred | race != "White"] < 0.5'),
        ("n1", "n0", "cmp", 'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.5'),
        ("n2", "n1", "sub", 'E[pred | sex == "Male"] - E[pred | sex == "Female"]'),
        ("n3", "n2", "expect", 'E[pred | sex == "Male"]'),
        ("n4", "n2", "expect", 'E[pred | sex == "Female"]'),
        ("n5", "n1", "const", "0.5"),
    ]
    assert [tn.id for tn in spec] == [f"n{i}" for i in range(11)]
    assert spec.node("n0").children == ("n1", "n6")
    assert spec.node("n6").depth == 1 and spec.node("n8").depth == 3
    assert [tn.id for tn in spec.leaves] == ["n3", "n4", "n8", "n9"]
    assert spec.source == AVOIR_ADULT
    leaf = spec.node("n3").node
    assert leaf == ast.Expect(ast.Name("pred"), ast.Compare("==", ast.Name("sex"), ast.Value("Male")))
    assert leaf.span.line == 1 and leaf.span.column == 2


@pytest.mark.parametrize("text, canonical", [
    ("E[a] < 1 or E[b] < 1 and E[c] < 1", "E[a] < 1 or E[b] < 1 and E[c] < 1"),
    ("(E[a] < 1 or E[b] < 1) and E[c] < 1", "(E[a] < 1 or E[b] < 1) and E[c] < 1"),
    ("not E[a] < 1 & E[b] > 0", "not E[a] < 1 and E[b] > 0"),
    ("not (E[a] < 1 | E[b] > 0)", "not (E[a] < 1 or E[b] > 0)"),
    ("E[a] + E[b] * 2 < 1", "E[a] + E[b] * 2 < 1"),
    ("(E[a] + E[b]) * 2 < 1", "(E[a] + E[b]) * 2 < 1"),
    ("E[a] - (E[b] - E[c]) < 1", "E[a] - (E[b] - E[c]) < 1"),
    ("(E[a] - E[b]) - E[c] < 1", "E[a] - E[b] - E[c] < 1"),
    ("-E[a] * 2 < -1", "-E[a] * 2 < -1"),
    ("-(E[a] * 2) < 1", "-(E[a] * 2) < 1"),
    ("E[a] / E[b] / E[c] >= 0.8", "E[a] / E[b] / E[c] >= 0.8"),
    ("E[a]/(E[b]/E[c])>=8e-1", "E[a] / (E[b] / E[c]) >= 0.8"),
    ("E[x] < 1.0e-6", "E[x] < 1e-06"),
    ("E[x] < 100.", "E[x] < 100"),
    ("E[pred | (race == 'A' | race == \"B\") & not age < 30] > .5",
     'E[pred | (race == "A" or race == "B") and not age < 30] > 0.5'),
    ("E[pred & label | x in {1, -2, 'a',}] > 0", 'E[pred and label | x in {1, -2, "a"}] > 0'),
    ("E[pred | x not in {\"a\"}] > 0", 'E[pred | x not in {"a"}] > 0'),
    ("Fair[`marital-status`] >= 0.9", "Fair[`marital-status`] >= 0.9"),
    ("E[`E` == \"say \\\"hi\\\"\\n\"] > 0", 'E[`E` == "say \\"hi\\"\\n"] > 0'),
    ("E[pred] > 0.5  # a comment\n", "E[pred] > 0.5"),
])
def test_precedence_and_canonical_text(text, canonical):
    spec = parse(text)
    assert spec.text == canonical
    assert parse(canonical) == spec


def test_precedence_structure():
    root = parse("E[a] < 1 or E[b] < 1 and not E[c] < 1").root
    assert root.kind == "or" and root.right.kind == "and" and root.right.right.kind == "not"
    root = parse("-E[a] + E[b] * E[c] / 2 > 0").root
    assert root.left.kind == "add" and root.left.left.kind == "neg"
    assert root.left.right.kind == "div" and root.left.right.left.kind == "mul"


def test_named_specs():
    spec = parse("# two parts\nsex_parity: E[pred | sex == \"F\"] > 0.5\nrace: E[pred] < 1\n`odd name`: Fair[sex] > 0.9")
    assert spec.root.kind == "and" and spec.root.left.kind == "and"  # left-nested
    named = {tn.name: tn.id for tn in spec if tn.name}
    assert named == {"sex_parity": "n2", "race": "n5", "odd name": "n8"}
    assert parse(to_text(spec)) == spec
    assert [tn.name for tn in parse(to_text(spec))] == [tn.name for tn in spec]


def test_single_named_spec_is_its_own_root():
    spec = parse("only: E[pred] > 0.5")
    assert spec.nodes[0].name == "only" and spec.root.kind == "cmp"


def test_parse_event():
    assert parse_event("decile_score > 3") == ast.Compare(">", ast.Name("decile_score"), ast.Value(3.0))
    assert parse_event('income == ">50K"') == ast.Compare("==", ast.Name("income"), ast.Value(">50K"))
    event = parse_event("a == 1 | b == 2 and not c")  # outside E[...], | is or
    assert isinstance(event, ast.EvOr) and isinstance(event.right, ast.EvAnd)
    assert to_text(event) == "a == 1 or b == 2 and not c"
    assert parse_event("pred").reserved


def test_spec_error_is_a_fairaudit_error_with_one_line_str():
    with pytest.raises(SpecError) as info:
        parse('E[pred | sex == "Male"\n] < 1 )')
    err = info.value
    assert isinstance(err, FairauditError)
    assert "\n" not in str(err)
    assert str(err) == f"{err.line}:{err.column}: {err.message}"


def test_pretty_puts_a_caret_under_the_token():
    with pytest.raises(SpecError) as info:
        parse('E[pred] > 0.5 and P[pred] < 1')
    lines = info.value.pretty().splitlines()
    assert lines[0] == "1:19: unknown function 'P'; use E[...] or Fair[...]"
    assert lines[1].strip() == "E[pred] > 0.5 and P[pred] < 1"
    assert lines[2].index("^") == lines[1].index("P")


# (input, line, column, part of the message)
BAD = [
    ("", 1, 1, "empty specification"),
    ("  # only a comment\n", 1, 1, "empty specification"),
    ("E[pred", 1, 2, "unclosed '['"),
    ("E[pred] < 1)", 1, 12, "unexpected ')'"),
    ("(E[pred] < 1]", 1, 13, "unexpected ']'"),
    ("E[pred]", 1, 8, "expected a comparison after E[...]"),
    ("E[pred] 0.5", 1, 9, "expected a comparison after E[...]"),
    ("P[pred] < 1", 1, 1, "unknown function 'P'; use E[...] or Fair[...]"),
    ('E[pred | sex = "M"] < 1', 1, 14, "use '==' to compare"),
    ("E[pred | a | b] < 1", 1, 12, "only one '|' is allowed in E[...]"),
    ("E[a * 2] < 2", 1, 5, "arithmetic is not allowed here inside E[...]"),
    ("E[pred | race == African-American] < 0.1", 1, 18,
     'write the value in quotes: race == "African-American" (a value with a "-"'),
    ("E[pred | a - 1 == b] < 0.1", 1, 16, "arithmetic such as a - b is only for the averaged amount"),
    ("E[pred] < 1 < 2", 1, 13, "comparisons cannot be chained"),
    ("E[] < 1", 1, 3, "empty E[...]"),
    ("Fair[] > 1", 1, 6, "Fair[...] needs a protected column"),
    ("E[pred] && E[x] > 1", 1, 10, "not '&&'"),
    ("E[pred] <", 1, 10, "unexpected end of the specification"),
    ("sex == 1", 1, 1, "unexpected name 'sex'"),
    ('E[pred | sex == "Male] < 1', 1, 17, "unclosed string"),
    ("E[x] < 1 and\n  (E[y] < 2", 2, 3, "unclosed '('"),
    ("E[x] < 1\nE[y] < 2", 2, 1, "must each be named"),
    ("a: E[x] < 1\na: E[y] < 1", 2, 1, "the name 'a' is already used at line 1"),
    ("E[x] < 1e999", 1, 8, "too large"),
    ('E[x == "\\q"] < 1', 1, 9, "unknown escape"),
    ("Fair[pred] > 1", 1, 6, "Fair[...] takes a protected column"),
    ("E[x in {}] < 1", 1, 9, "empty set"),
    ("!E[x] > 0", 1, 1, "use 'not'"),
    ("E[x] => 1", 1, 6, "did you mean '>='?"),
    ("E[x] < 1 and E[y]", 1, 18, "expected a comparison after E[...]"),
    ("(E[x] < 1) + 1 > 0", 1, 2, "is a condition"),
    ("E[x] < 1 and\n\n   E[y] < 2 ]", 3, 13, "unexpected ']'"),
    ("E[x] < 1 % 2", 1, 10, "unexpected character '%'"),
    ("E[x] < 10%", 1, 10, "write a percentage as a fraction (10% is 0.1)"),
    ("E[x | s == \u201cF\u201d] < 1", 1, 12, "use straight quotes (\") around a value, not '\u201c'"),
    ("E[x | s == \u2018F\u2019] < 1", 1, 12, "use straight quotes"),
    ("E pred", 1, 3, "expected '[' after E"),
    ("``: E[x] < 1", 1, 1, "empty name"),
]


@pytest.mark.parametrize("text, line, column, message", BAD)
def test_error_positions(text, line, column, message):
    with pytest.raises(SpecError) as info:
        parse(text)
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert message in err.message


@pytest.mark.parametrize("text, column, message", [
    ("", 1, "empty event"),
    ("x ==", 5, "unexpected end of the event"),
    ("decile_score > 3 x", 18, "an operator is missing"),
    ("income = '>50K'", 8, "use '=='"),
])
def test_event_errors(text, column, message):
    with pytest.raises(SpecError) as info:
        parse_event(text)
    assert info.value.column == column and message in info.value.message


def test_too_deep_nesting_is_a_spec_error():
    with pytest.raises(SpecError, match="nested"):
        parse("(" * 500 + "E[x] < 1" + ")" * 500)
    with pytest.raises(SpecError, match="too long"):
        parse(" and ".join(["E[x] < 1"] * 400))
    parse(" and ".join(["E[x] < 1"] * 50))  # ordinary sizes are fine


def test_never_eval(monkeypatch):
    import builtins

    def boom(*args, **kwargs):
        raise AssertionError("eval/exec must not be used")

    monkeypatch.setattr(builtins, "eval", boom)
    monkeypatch.setattr(builtins, "exec", boom)
    assert parse("E[__import__ == 1] > 0").text == "E[__import__ == 1] > 0"
