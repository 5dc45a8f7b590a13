"""Refinement suggestions (``fairaudit.core.suggest``): the thresholds certifiable / refutable now, checked by
re-evaluating the rewritten specification on the same leaf intervals; the projection against an independent
inversion of the Hoeffding radius; the text; the safe rewrite of the source."""
import math

import numpy as np
import pytest
from scipy.optimize import brentq

from fairaudit.core import suggest
from fairaudit.bounds.concentration import hoeffding_radius
from fairaudit.base.errors import FairauditError
from fairaudit.core.evaluate import LeafValue, evaluate
from fairaudit.spec import parse
from fairaudit.core.trace import AuditResult, Trace, node_infos, verdict_text

A, B = 'E[pred | sex == "Female"]', 'E[pred | sex == "Male"]'


def leaf_values(leaves):
    return {key: LeafValue(np.array([est]), np.array([lo]), np.array([hi]), delta, np.array([float(n)]))
            for key, (est, lo, hi, n, delta) in leaves.items()}


def result_of(text, leaves, engine="monitor", steps=1000, options=None):
    """A result built by hand: ``leaves`` maps a leaf's text to (estimate, lo, hi, n, δ)."""
    spec = parse(text)
    values = evaluate(spec, leaf_values(leaves))
    trace = Trace.from_values([steps], [tn.id for tn in spec.nodes], values)
    return AuditResult(spec.text, engine, options if options is not None else {"bound": "hoeffding", "delta": 0.05},
                       verdict_text(trace.verdict[-1, 0]), None, steps, node_infos(spec), trace, unit="observations",
                       tree=spec)


def root_verdict(text, leaves):
    spec = parse(text)
    return verdict_text(evaluate(spec, leaf_values(leaves))[spec.nodes[0].id].verdict[0])


ONE = {A: (0.4, 0.3, 0.5, 400, 0.05)}

# op, constant on the left?, expected certify, expected refute — for a leaf in [0.3, 0.5] and threshold 0.4
CASES = [
    (">=", False, 0.3, 0.501),   # TRUE iff 0.3 >= c; FALSE iff 0.5 < c
    (">", False, 0.299, 0.5),    # TRUE iff 0.3 > c;  FALSE iff 0.5 <= c
    ("<=", False, 0.5, 0.299),   # TRUE iff 0.5 <= c; FALSE iff 0.3 > c
    ("<", False, 0.501, 0.3),    # TRUE iff 0.5 < c;  FALSE iff 0.3 >= c
    ("<=", True, 0.3, 0.501),    # c <= A  ⇔  A >= c
    ("<", True, 0.299, 0.5),     # c < A   ⇔  A > c
    (">=", True, 0.5, 0.299),    # c >= A  ⇔  A <= c
    (">", True, 0.501, 0.3),     # c > A   ⇔  A < c
]


@pytest.mark.parametrize("op,left,certify,refute", CASES)
def test_thresholds_every_operator_and_side(op, left, certify, refute):
    text = f"0.4 {op} {A}" if left else f"{A} {op} 0.4"
    r = result_of(text, ONE)
    assert r.verdict == "unknown"
    (s,) = suggest.suggestions(r)
    assert s.form == "threshold" and s.constant_left == left and s.threshold == 0.4
    assert s.certify.value == certify and s.refute.value == refute
    # the rewritten specification, evaluated on the same leaf intervals, is decided as promised
    assert root_verdict(suggest.apply(text, s, "certify"), ONE) == "true"
    assert root_verdict(suggest.apply(text, s, "refute"), ONE) == "false"
    # and they are the tightest at 3 digits: one unit further towards the interval is undecided
    inward = lambda c, other: c + 0.001 * np.sign(other - c)  # noqa: E731
    for value, want in ((s.certify.value, "true"), (s.refute.value, "false")):
        nudged = float(round(inward(value, 0.4), 3))
        moved = text.replace("0.4", repr(nudged))
        assert root_verdict(moved, ONE) == "unknown", (value, nudged, want)


def test_threshold_text_keeps_the_constant_where_it_was():
    (s,) = suggest.suggestions(result_of(f"0.4 <= {A}", ONE))
    assert s.certify.text == f"0.3 <= {A}"
    (s,) = suggest.suggestions(result_of(f"{A} >= 0.4", ONE))
    assert s.certify.text == f"{A} >= 0.3"


def test_rounding_is_outward_for_an_endpoint_that_is_not_a_round_number():
    leaves = {A: (0.4, 0.312345, 0.487654, 400, 0.05)}
    (s,) = suggest.suggestions(result_of(f"{A} >= 0.4", leaves))
    assert s.certify.value == 0.312 and s.refute.value == 0.488
    (s,) = suggest.suggestions(result_of(f"{A} > 0.4", leaves))
    assert s.certify.value == 0.312 and s.refute.value == 0.488


def test_two_expressions_get_a_margin_on_their_difference():
    leaves = {A: (0.40, 0.30, 0.50, 400, 0.025), B: (0.38, 0.33, 0.43, 900, 0.025)}
    text = f"{A} >= {B}"
    r = result_of(text, leaves)
    (s,) = suggest.suggestions(r)
    assert s.form == "margin" and s.op == ">=" and (s.lo, s.hi) == pytest.approx((-0.13, 0.17))
    assert s.certify.value == -0.131 and s.refute.value == 0.171  # the difference is rounded outward first
    new = suggest.apply(text, s, "certify")
    assert parse(new).text == f"{A} - {B} >= -0.131"
    assert root_verdict(new, leaves) == "true"
    assert root_verdict(suggest.apply(text, s, "refute"), leaves) == "false"


def test_ratio_against_a_constant_on_the_left():
    leaves = {A: (0.40, 0.35, 0.45, 400, 0.025), B: (0.50, 0.45, 0.55, 900, 0.025)}
    text = f"dp: 0.8 <= {A} / {B}"
    r = result_of(text, leaves)
    (s,) = suggest.suggestions(r)
    # A / B lies in [0.35/0.55, 0.45/0.45] = [0.636, 1]: 0.8 is inside
    assert s.subject == f"{A} / {B}" and s.lo == pytest.approx(0.35 / 0.55)
    assert root_verdict(suggest.apply(text, s, "certify"), leaves) == "true"
    assert s.refute is None or root_verdict(suggest.apply(text, s, "refute"), leaves) == "false"


def test_equality_and_decided_comparisons_get_no_threshold():
    (s,) = suggest.suggestions(result_of(f"{A} == 0.4", ONE))
    assert s.certify is None and s.refute is None and "==" in s.why_none
    assert suggest.suggestions(result_of(f"{A} >= 0.2", ONE)) == []  # decided: nothing to suggest


def test_negative_thresholds_are_written_by_the_printer_and_checked():
    leaves = {A: (0.3, 0.25, 0.375, 400, 0.05), B: (0.3, 0.25, 0.4375, 400, 0.05)}  # A − B in [−0.1875, 0.125]
    text = f"{A} - {B} >= -0.1"
    (s,) = suggest.suggestions(result_of(text, leaves))
    assert s.certify.value == -0.188 and s.refute.value == 0.126  # the difference is rounded outward first
    assert suggest.apply(text, s, "certify") == (f"# threshold-chosen-from: unidentified data; {A} - {B} >= -0.1 → "
                                                 f">= -0.188\n{A} - {B} >= -0.188")
    assert root_verdict(suggest.apply(text, s, "certify"), leaves) == "true"


def test_apply_keeps_headers_names_and_the_other_parts():
    source = (f"# dataset: adult\n# delta: 0.1\nfirst: {A} >= 0.9\n"
              f"second: {A} - {B} <= 0.05  # a comment\n")
    leaves = {A: (0.95, 0.91, 0.99, 400, 0.05), B: (0.92, 0.85, 0.97, 900, 0.05)}
    r = result_of(source, leaves)
    (s,) = suggest.suggestions(r)
    assert s.name == "second"
    new = suggest.apply(source, s, "certify")
    assert new.startswith("# dataset: adult\n# delta: 0.1\n# threshold-chosen-from: unidentified data; second <= 0.05 "
                          "→ <= 0.141\nfirst: ")
    assert new.endswith("  # a comment\n") and "second: " in new
    assert parse(new).nodes[1].name == "first"
    assert root_verdict(new, leaves) == "true"


def test_apply_refuses_a_source_that_is_not_the_audited_one():
    r = result_of(f"{A} >= 0.4", ONE)
    (s,) = suggest.suggestions(r)
    with pytest.raises(FairauditError, match="changed since"):
        suggest.apply(f"{B} >= 0.4", s)


# ------------------------------------------------------------------------------------------------ projection
def test_projection_inverts_the_hoeffding_radius():
    """One leaf at estimate 0.45, n = 400, δ = 0.05 and threshold 0.4: the comparison is decided once the
    radius at n·f is below 0.05 — solved here with brentq on the radius (an independent inversion)."""
    est, n, delta = 0.45, 400, 0.05
    eps = float(hoeffding_radius(delta, n))
    leaves = {A: (est, est - eps, est + eps, n, delta)}
    r = result_of(f"{A} >= 0.4", leaves, steps=n)
    (s,) = suggest.suggestions(r)
    f = brentq(lambda f: float(hoeffding_radius(delta, n * f)) - (est - 0.4), 1.0, 1e4)
    expected_more = n * f - n
    assert s.projected == "true"
    assert expected_more <= s.more <= n * f * 1.02 - n + 1  # the grid is ≈ 1.5 % apart, rounded up


def test_projection_goes_the_way_the_estimate_leans():
    est, n, delta = 0.35, 400, 0.05
    eps = float(hoeffding_radius(delta, n))
    (s,) = suggest.suggestions(result_of(f"{A} >= 0.4", {A: (est, est - eps, est + eps, n, delta)}, steps=n))
    assert s.projected == "false" and s.more > 0


def test_no_projection_at_the_threshold_or_for_engines_without_a_leaf_bound():
    eps = float(hoeffding_radius(0.05, 400))
    at = {A: (0.4, 0.4 - eps, 0.4 + eps, 400, 0.05)}
    (s,) = suggest.suggestions(result_of(f"{A} >= 0.4", at, steps=400))
    assert s.more is None and s.beyond
    assert any("not decided even with" in line for line in suggest.lines(s))
    sound = result_of(f"{A} >= 0.4", ONE, engine="fairsquare", options={})
    (s,) = suggest.suggestions(sound)
    assert s.more is None and not s.beyond
    assert not any(line.startswith("Projection") for line in suggest.lines(s))


# ------------------------------------------------------------------------------------------------ text
def test_text_says_what_was_tested_once():
    leaves = {A: (0.40, 0.30, 0.50, 400, 0.025), B: (0.38, 0.33, 0.43, 900, 0.025)}
    r = result_of(f"x: {A} >= 0.4\ny: {B} <= 0.4", leaves)
    text = suggest.summary_lines(r)
    assert sum(line == suggest.POST_HOC for line in text) == 1
    assert "new hypothesis" in suggest.POST_HOC and "as written" in suggest.POST_HOC
    assert text[0] == f"x (n1) {A} >= 0.4: undecided."
    joined = "\n".join(text)
    assert f"Certifiable now, at the same guarantee: {A} >= 0.3 (any threshold at or below 0.3)" in joined
    assert f"Refutable now, at the same guarantee: {A} >= 0.501 would be violated (any threshold above 0.5)" in joined
    assert "Projection: about" in joined and suggest.PROJECTION_NOTE in joined
    assert suggest.summary_lines(result_of(f"{A} >= 0.2", ONE)) == []


# ------------------------------------------------------------------------------------------------ the term's range
F = "Fair[sex]"


@pytest.mark.parametrize("text, interval, certify, refute", [
    # the case: a Fair rate in [0.9011, 1] — "Use 1.01 / 1 (refutable now)" was offered
    (f"{F} >= 0.95", (0.9011, 1.0), 0.901, None),
    (f"{F} >= 0.95", (0.9011, 0.99951), 0.901, 0.9996),  # 3 digits give 1, on the edge: a fourth digit
    (f"{F} > 0.95", (0.9011, 1.0), 0.901, None),
    (f"{F} <= 0.95", (0.9011, 1.0), None, 0.901),  # "<= 1" is true of every rate: not offered
    (f"{F} < 0.5", (0.0, 0.7), 0.701, None),  # a refute would need "< 0": false of every rate
    (f"{F} > 0.5", (0.0, 0.7), None, 0.7),
    (f"0.95 <= {F}", (0.9011, 1.0), 0.901, None),
    (f"{A} <= 0.5", (0.2, 1.0), None, 0.199),
    (f"{A} / {B} >= 0.8", None, None, None),  # a ratio of rates: [0, ∞) (filled in below)
])
def test_only_thresholds_strictly_inside_the_terms_range_are_offered(text, interval, certify, refute):
    """A suggested threshold lies strictly inside the values the term can take (a rate: [0, 1]) and decides the
    comparison with the current bounds; a side with none is left out and the text says why."""
    if interval is None:  # A / B with A in [0, 0.5], B in [0.5, 0.6]: [0, 1]; certify needs c ≤ 0 (the edge)
        leaves = {A: (0.3, 0.0, 0.5, 400, 0.025), B: (0.55, 0.5, 0.6, 400, 0.025)}
        certify, refute = None, 1.01
    else:
        leaf = F if F in text else A
        leaves = {leaf: (sum(interval) / 2, interval[0], interval[1], 400, 0.05)}
    r = result_of(text, leaves)
    (s,) = suggest.suggestions(r)
    got = (None if s.certify is None else s.certify.value, None if s.refute is None else s.refute.value)
    assert got == (certify, refute)
    for which, want in (("certify", "true"), ("refute", "false")):
        t = getattr(s, which)
        if t is not None:
            assert suggest.inside(t.value, s.range)
            assert root_verdict(suggest.apply(text, s, which), leaves) == want
        else:
            assert which in s.impossible
            word = "certifiable" if which == "certify" else "refutable"
            assert any(line.startswith(f"Not {word} now at any threshold") for line in suggest.lines(s))


def test_the_range_of_a_term():
    r = result_of(f"{A} - {B} <= 0.1 and {A} / {B} >= 0.8 and {F} >= 0.9",
                  {A: (0.4, 0.3, 0.5, 400, 0.05), B: (0.4, 0.3, 0.5, 400, 0.05), F: (0.9, 0.8, 1.0, 400, 0.05)})
    by_text = {info.text: info.id for info in r.node_info}
    lo, hi = suggest.term_range(r, by_text[f"{A} - {B}"])
    assert lo == pytest.approx(-1) and hi == pytest.approx(1)
    assert suggest.term_range(r, by_text[f"{A} / {B}"]) == (0.0, math.inf)
    assert suggest.term_range(r, by_text[F]) == (0.0, 1.0)
