"""Every headline names groups from the parsed specification, never from its printed text (issue 44, item 1).

A condition's words (``fairaudit.spec.words``) are read back here by a small reader of their own — split at the top
level on "and" / "or", then "name sign value" — and must give the condition back (up to what the words normalise:
a negated comparison is the opposite comparison, sides are read column first, nested "and"s are one list). The
headline of a result (CLI ``summary:``, JSON, PDF page 1, the dashboard's pages: ``AuditResult.summary``) must name
exactly the two groups of ``E[pred | A] - E[pred | B] <= 0.1``, in those words, for generated conditions —
conjunctions, disjunctions, negations, numeric comparisons, ``in`` sets, text with quotes, spaces, the word "and",
apostrophes, unicode — both on a hand-made result and on an exact audit of generated rows."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairaudit.core.evaluate import LeafValue, evaluate
from fairaudit.core.trace import AuditResult, Trace, node_infos
from fairaudit.spec import ast, parse, to_text
from fairaudit.spec.words import group_words

# ------------------------------------------------------------------------------------------------ generated conditions

TEXT = st.one_of(
    st.sampled_from(["Female", "Male", "Black", "White and Asian", "O'Brien", 'say "hi"', "New York", "Zoë",
                     "日本", " padded ", "and", "or", "x, y", "a = b", "true", "40", "(none)", "it's \"fine\"", ""]),
    st.lists(st.sampled_from(list("ab '\"éZ日,=()&|:\\") + [" and ", " or ", "\n"]), max_size=6).map("".join))
NAMES = st.sampled_from(["sex", "race", "age", "first name", "naïve", "score_2", "x and y", "40"])
NUMBERS = st.one_of(st.integers(-100, 100), st.sampled_from([0.5, -3.25, 1e-07, 40.0]))


def _atoms():
    name = NAMES.map(lambda n: ast.Name(n, column=n in ast.RESERVED))
    text_cmp = st.builds(lambda n, op, v: ast.Compare(op, n, ast.Value(v)), name, st.sampled_from(["==", "!="]), TEXT)
    num_cmp = st.builds(lambda n, op, v, swap: ast.Compare(op, ast.Value(v), n) if swap else
                        ast.Compare(op, n, ast.Value(v)), name, st.sampled_from(ast.CMP_OPS), NUMBERS, st.booleans())
    member = st.builds(lambda n, vs, neg: ast.In(n, tuple(ast.Value(v) for v in vs), neg), name,
                       st.lists(st.one_of(TEXT, NUMBERS), min_size=1, max_size=3), st.booleans())
    return st.one_of(text_cmp, num_cmp, member, name)


CONDITIONS = st.recursive(_atoms(), lambda inner: st.one_of(
    st.builds(ast.EvAnd, inner, inner), st.builds(ast.EvOr, inner, inner), st.builds(ast.EvNot, inner)),
    max_leaves=5)

# ------------------------------------------------------------------------------------------------ the words, read back

SIGN_OPS = {"=": "==", "≠": "!=", "<": "<", "≤": "<=", ">": ">", "≥": ">="}
SWAP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
NEG = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def _scan(text: str):
    """``(index, char, depth)`` of every character outside quotes (``'…'``, ``"…"`` with escapes, `` `…` ``)."""
    depth, i, quote = 0, 0, None
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote != "'":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "\"'`" and (i == 0 or text[i - 1] in " {(,"):
            quote = ch
        else:
            if ch in "({":
                depth += 1
            elif ch in ")}":
                depth -= 1
            yield i, ch, depth
        i += 1


def _split(text: str, word: str) -> list[str]:
    """``text`` split at ``word`` (" and ") outside quotes, brackets and braces."""
    cuts, top = [], {i for i, _, d in _scan(text) if d == 0}
    start = 0
    for m in re.finditer(re.escape(word), text):
        if m.start() in top and m.start() >= start:
            cuts.append(text[start:m.start()])
            start = m.end()
    return cuts + [text[start:]]


def _unquote(text: str):
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1]
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r", "t": "\t"}.get(m.group(1), m.group(1)), text[1:-1])
    return None


def _read_name(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] == "`":
        return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r", "t": "\t"}.get(m.group(1), m.group(1)), text[1:-1])
    return text


def _read_value(text: str):
    quoted = _unquote(text)
    if quoted is not None:
        return ("text", quoted)
    try:
        return ("number", float(text))
    except ValueError:
        return ("text", text)


def read_words(text: str):
    """A condition's words back to a normal form: ``("and"|"or", [parts])``, ``("not", part)``,
    ``("cmp", name, op, value)``, ``("in", name, negated, (values))``."""
    text = text.strip()
    for word, kind in ((" or ", "or"), (" and ", "and")):
        parts = _split(text, word)
        if len(parts) > 1:
            return (kind, [read_words(p) for p in parts])
    if text.startswith("not (") and text.endswith(")"):
        return ("not", read_words(text[5:-1]))
    if text.startswith("(") and text.endswith(")") and all(d > 0 for i, _, d in _scan(text) if i < len(text) - 1):
        return read_words(text[1:-1])
    top = {i for i, _, d in _scan(text) if d == 0}
    for marker, negated in ((" not in {", True), (" in {", False)):
        at = next((m.start() for m in re.finditer(re.escape(marker), text) if m.start() in top), None)
        if at is not None and text.endswith("}"):
            body = text[at + len(marker):-1]
            return ("in", _read_name(text[:at]), negated, tuple(_read_value(v) for v in _split(body, ", ")))
    for i, ch, d in _scan(text):
        if d == 0 and ch in SIGN_OPS and text[i - 1:i] == " " and text[i + 1:i + 2] == " ":
            return ("cmp", _read_name(text[:i - 1]), SIGN_OPS[ch], _read_value(text[i + 2:]))
    raise AssertionError(f"cannot read {text!r}")


def _value(v: ast.Value):
    return ("text", v.value) if isinstance(v.value, str) else ("number", float(v.value))


def normal(event, negated: bool = False):
    """What ``read_words`` should give for ``event``: negations pushed into comparisons, ``in`` and bare names;
    the negation of an ``and``/``or`` kept; nested ``and``s (``or``s) flattened."""
    if isinstance(event, ast.EvNot):
        return normal(event.operand, not negated)
    if isinstance(event, ast.Name):
        return ("cmp", event.name, "==", ("bool", not negated))
    if isinstance(event, ast.Compare):
        op, left, right = event.op, event.left, event.right
        if isinstance(left, ast.Value) and isinstance(right, ast.Name):
            op, left, right = SWAP[op], right, left
        op = NEG[op] if negated else op
        right = ("name", right.name) if isinstance(right, ast.Name) else _value(right)
        return ("cmp", left.name, op, right)
    if isinstance(event, ast.In):
        return ("in", event.operand.name, event.negated != negated, tuple(_value(v) for v in event.values))
    if negated:
        return ("not", normal(event))
    kind = "and" if isinstance(event, ast.EvAnd) else "or"
    cls = type(event)
    parts = []
    for side in (event.left, event.right):
        got = normal(side)
        parts.extend(got[1] if isinstance(side, cls) else [got])
    return (kind, parts)


def _as_read(form):
    """``normal``'s form as the reader sees it (true/false and a column on the right are read as words)."""
    if form[0] in ("and", "or"):
        return (form[0], [_as_read(p) for p in form[1]])
    if form[0] == "not":
        return ("not", _as_read(form[1]))
    if form[0] == "cmp" and form[3][0] in ("bool", "name"):
        return ("cmp", form[1], form[2], ("text", str(form[3][1]).lower() if form[3][0] == "bool" else form[3][1]))
    return form


def _group(words: str):
    """The condition a group's words name (``normal``'s form)."""
    if words.startswith("everyone except those with "):
        return ("not", read_words(words[len("everyone except those with "):]))
    assert words.startswith("those with "), words
    return read_words(words[len("those with "):])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CONDITIONS)
def test_a_condition_in_words_reads_back_as_the_condition(event):
    """The words are faithful and unambiguous: read back, they are the condition (its normal form)."""
    words = group_words(parse(f"E[pred | {to_text(event)}] >= 0").nodes[1].node.given)
    assert _group(words) == _as_read(normal(event)), words
    assert "E[" not in words and "pred |" not in words


# ------------------------------------------------------------------------------------------------ headlines

def _result(spec_text: str, a: tuple[float, float], b: tuple[float, float]) -> AuditResult:
    """A hand-made exact result of ``spec_text`` (two ``E[...]`` leaves with the intervals ``a`` and ``b``)."""
    spec = parse(spec_text)
    keys = [tn.text for tn in spec.leaves]
    leaves = {keys[0]: LeafValue(np.array([sum(a) / 2]), np.array([a[0]]), np.array([a[1]]), 0.0, np.array([50.0]))}
    leaves[keys[1]] = LeafValue(np.array([sum(b) / 2]), np.array([b[0]]), np.array([b[1]]), 0.0, np.array([50.0]))
    values = evaluate(spec, leaves)
    trace = Trace.from_values([100], [tn.id for tn in spec.nodes], values)
    root = {1: "true", 0: "false"}.get(int(values["n0"].verdict[0]), "unknown")
    return AuditResult(spec.text, "dataset", {}, root, 100, 100, node_infos(spec), trace, tree=spec)


def _subject(summary: str) -> tuple[str, str]:
    found = re.match(r"(Those with .*|Everyone except .*) receive a favourable decision more often than "
                     r"(those with .*|everyone except .*): the gap is ", summary, re.S)
    assert found, summary
    return found.group(1)[:1].lower() + found.group(1)[1:], found.group(2)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CONDITIONS, CONDITIONS)
def test_the_headline_names_exactly_the_groups_of_the_specification(a, b):
    """A favoured over B, violated: the headline names A then B in their words; so does the result read back from
    JSON (no parsed tree kept: it parses the specification's canonical text, never a node's)."""
    if a == b:
        return
    text = f"E[pred | {to_text(a)}] - E[pred | {to_text(b)}] <= 0.1"
    r = _result(text, (0.6, 0.7), (0.2, 0.3))
    assert r.claim.verdict == "false"
    for result in (r, AuditResult.from_json(r.to_json())):
        first, second = _subject(result.summary)
        assert _group(first) == _as_read(normal(a)) and _group(second) == _as_read(normal(b)), result.summary
    assert r.summary.startswith(f"{group_words(a)[:1].upper()}{group_words(a)[1:]} receive")


def test_the_issue_intersection_reads_plainly():
    """The issue's headline: "Those with sex = Female" and race == "Black receive …" before."""
    text = ('E[pred | sex == "Female" and race == "Black"] - E[pred | sex == "Male" and race == "Black"] <= 0.1')
    r = _result(text, (0.1, 0.2), (0.5, 0.6))
    assert r.summary.startswith("Those with sex = Female and race = Black receive a favourable decision less often "
                                "than those with sex = Male and race = Black: the gap is between ")
    assert '"' not in r.summary and "==" not in r.summary


# ------------------------------------------------------------------------------------------------ an exact audit

VALUES = ["Female", "Male", "O'Brien", "White and Asian", 'say "hi"', "Zoë 日本", " x"]


@pytest.fixture(scope="module")
def rows_file(tmp_path_factory):
    rng = np.random.default_rng(7)
    n = 600
    frame = pd.DataFrame({"group": rng.choice(VALUES, n), "age": rng.integers(18, 70, n),
                          "region": rng.choice(["north", "south"], n)})
    frame["hired"] = (rng.random(n) < np.where(frame["group"] == "Female", 0.2, 0.7)).astype(int)
    path = tmp_path_factory.mktemp("rows") / "rows.csv"
    frame.to_csv(path, index=False)
    return str(path), frame


EXACT = st.recursive(
    st.one_of(st.builds(lambda v, op: ast.Compare(op, ast.Name("group"), ast.Value(v)), st.sampled_from(VALUES),
                        st.sampled_from(["==", "!="])),
              st.builds(lambda v, op: ast.Compare(op, ast.Name("age"), ast.Value(v)), st.integers(20, 60),
                        st.sampled_from(["<", "<=", ">", ">="])),
              st.builds(lambda vs: ast.In(ast.Name("region"), tuple(ast.Value(v) for v in vs)),
                        st.lists(st.sampled_from(["north", "south"]), min_size=1, max_size=2))),
    lambda inner: st.one_of(st.builds(ast.EvAnd, inner, inner), st.builds(ast.EvOr, inner, inner),
                            st.builds(ast.EvNot, inner)), max_leaves=3)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(EXACT, EXACT)
def test_an_exact_audit_headline_names_the_groups_of_the_specification(rows_file, a, b):
    """The dataset engine on generated rows, whatever the verdict: the headline's groups are the spec's, in words
    that read back as the conditions, in the result and in its JSON."""
    from fairaudit import audit
    from fairaudit.base.errors import FairauditError
    from fairaudit.spec.events import evaluate_event

    path, frame = rows_file
    if a == b or not evaluate_event(a, frame).any() or not evaluate_event(b, frame).any():
        return
    text = f"E[pred | {to_text(a)}] - E[pred | {to_text(b)}] <= 0.1"
    try:
        r = audit(path, text, engine="dataset", pred="hired")
    except FairauditError:  # a condition no row satisfies after the engine's own split
        return
    summary = json.loads(r.to_json())["summary"]
    assert summary == r.summary
    group = r"(?:those with|everyone except) .*"
    found = re.match(rf"(?:({group}) receive a favourable decision (?:more|less) often than ({group}): the gap is|"
                     rf"The gap in favourable rates between ({group}) and ({group}) is )", summary, re.S | re.I)
    assert found, summary
    first, second = [g for g in found.groups() if g is not None]
    first = first[:1].lower() + first[1:]
    assert _group(first) == _as_read(normal(a)) and _group(second) == _as_read(normal(b)), summary

