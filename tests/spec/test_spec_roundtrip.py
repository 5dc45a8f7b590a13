"""Property tests: printing any tree and parsing it back gives the same tree."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairaudit.spec import ast, build_spec, parse, parse_event, to_text
from fairaudit.spec.printer import format_number

identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)
odd_names = st.text(min_size=1, max_size=6)  # printed back-quoted when needed
names = st.one_of(identifiers, odd_names, st.sampled_from(ast.RESERVED))
columns = st.one_of(identifiers, odd_names).filter(lambda n: n not in ast.RESERVED)
finite = st.floats(allow_nan=False, allow_infinity=False)
values = st.one_of(finite.map(ast.Value), st.text(max_size=8).map(ast.Value))
operands = st.one_of(names.map(ast.Name), values)
ops = st.sampled_from(ast.CMP_OPS)

event_leaves = st.one_of(
    names.map(ast.Name),
    st.builds(ast.Compare, ops, operands, operands),
    st.builds(ast.In, names.map(ast.Name), st.lists(values, min_size=1, max_size=3).map(tuple), st.booleans()),
)
events = st.recursive(event_leaves, lambda inner: st.one_of(
    st.builds(ast.EvAnd, inner, inner), st.builds(ast.EvOr, inner, inner), st.builds(ast.EvNot, inner)),
    max_leaves=8)

term_leaves = st.one_of(
    finite.map(lambda x: ast.Const(abs(x) + 0.0)),  # the parser reads -1 as neg(1)
    st.builds(ast.Expect, events, st.one_of(st.none(), events)),
    columns.map(ast.Fair),
)
terms = st.recursive(term_leaves, lambda inner: st.one_of(
    st.builds(ast.Add, inner, inner), st.builds(ast.Sub, inner, inner), st.builds(ast.Mul, inner, inner),
    st.builds(ast.Div, inner, inner), st.builds(ast.Neg, inner)), max_leaves=6)
comparisons = st.builds(ast.Cmp, ops, terms, terms)
specs = st.recursive(comparisons, lambda inner: st.one_of(
    st.builds(ast.And, inner, inner), st.builds(ast.Or, inner, inner), st.builds(ast.Not, inner)), max_leaves=5)

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(specs)
def test_spec_round_trip(tree):
    text = to_text(tree)
    spec = parse(text)
    assert spec.root == tree, text
    assert spec.text == text  # printing is canonical: a fixed point


@SETTINGS
@given(events)
def test_event_round_trip(event):
    text = to_text(event)
    assert parse_event(text) == event, text
    assert parse(f"E[{text}] > 0").root.left.event == event


@SETTINGS
@given(specs)
def test_ids_are_preorder_with_consistent_parents(tree):
    spec = build_spec(tree)
    assert [tn.id for tn in spec] == [f"n{i}" for i in range(len(spec))]
    for tn in spec:
        if tn.parent is None:
            assert tn.id == "n0" and tn.node == tree
        for child in tn.children:
            assert spec.node(child).parent == tn.id
            assert int(child[1:]) > int(tn.id[1:])
        assert tn.text == to_text(tn.node)


@SETTINGS
@given(finite)
def test_number_format_round_trips(x):
    text = format_number(x)
    assert float(text) == x and not text.endswith(".0")
    value = parse_event(f"a == {text}").right.value
    assert value == x
