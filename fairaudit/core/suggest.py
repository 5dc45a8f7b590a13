"""Refinement suggestions for the undecided comparisons of an audit result (engine-generic).

For every comparison ``left op right`` whose verdict is undecided at the last check, ``suggestions(result)``
says, from the node's current interval only (nothing is re-run):

* the tightest threshold that is *certifiable now* and the tightest that is *refutable now*, at the same
  guarantee (the same leaves, so the same δ per leaf). The comparison is first written as ``subject op c``:
  with a constant on the right the subject is the left side; with the constant on the left
  (``0.8 <= E[a] / E[b]``) the subject is the right side and the operator is flipped for the arithmetic (the
  suggestion keeps the constant on the left, as written); between two expressions the subject is their
  difference ``left − right`` and the suggestion is a margin, ``left - right op m``. With the subject's interval
  ``[a, b]`` (the rules of ``fairaudit.bounds.rules``)::

      subject >= c   TRUE iff a >= c  (certifiable: c ≤ a)   FALSE iff b < c   (refutable: c > b)
      subject >  c   TRUE iff a > c   (c < a)                FALSE iff b <= c  (c ≥ b)
      subject <= c   TRUE iff b <= c  (c ≥ b)                FALSE iff a > c   (c < a)
      subject <  c   TRUE iff b < c   (c > b)                FALSE iff a >= c  (c ≤ a)

  The suggested number is rounded to ``DIGITS`` significant digits *towards the side that keeps it decided*
  (and one unit further when a strict inequality needs it), and re-checked with the same comparison rule.
  ``==`` and ``!=`` get no threshold (an interval certifies ``==`` only when it is a point).

  **Only thresholds that mean something are offered**: a suggested ``c`` must lie *strictly inside* the values
  the subject can take at all (``term_range``: every ``E[...]`` and ``Fair[...]`` is a rate in [0, 1], the rest
  follows by the rules — a difference of two rates in [−1, 1], a ratio in [0, ∞)) and decide the comparison with
  the current bounds. So a rate whose upper bound is already 1 has no refutable ``>=`` threshold (``>= 1.01`` is
  false for every rate, ``>= 1`` is not decided by an upper bound of 1), and ``<= 1``, ``>= 0`` and the like, true
  of every rate, are never offered as certifiable. When rounding to ``DIGITS`` lands on the range's edge a few
  more digits are tried; a side with no such threshold is left out and ``lines`` says why.
* a projection of how many more observations would decide the comparison *as written*, for engines that
  declare how their leaf intervals shrink with the number of observations (``Engine.leaf_bound``): every leaf
  keeps its estimate and its δ, its count is scaled by a factor f, the tree is re-evaluated, and the smallest
  f that decides the comparison gives ``steps · (f − 1)`` more. It assumes the estimates stay where they are;
  it is a projection, not a guarantee. Engines that are not row-based get none.

``POST_HOC`` is the one sentence every front end shows with the suggestions: a threshold chosen after looking
is a new hypothesis. ``apply(source, suggestion)`` rewrites the specification's source at the comparison's span
(numbers written by the spec printer) and re-parses it to check that exactly that comparison changed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

import numpy as np

from fairaudit.base.errors import FairauditError
from fairaudit.base.numbers import clean

DIGITS = 3  # significant digits of a suggested threshold
MAX_FACTOR = 1e4  # the projection looks up to this many times the current observations
_GRID = np.geomspace(1.0, MAX_FACTOR, 601)[1:]  # scale factors tried (≈ 1.5 % apart)
FACTORS = _GRID  # public: the subgroup scan's projection tries the same factors

POST_HOC = ("A threshold chosen after looking at these intervals is a new hypothesis: this audit tested the "
            "specification as written, and a suggested threshold only restates what the current interval already "
            "shows — report it as chosen from these data, and test it on fresh rows to claim it.")
PROJECTION_NOTE = ("a projection that assumes the estimates stay where they are, not a guarantee")

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_SYMBOL = {"<": "<", "<=": "≤", ">": ">", ">=": "≥"}


@dataclass(frozen=True)
class Threshold:
    """A suggested constant and the comparison it makes (canonical text)."""

    value: float
    text: str
    limit: float  # the interval's end the thresholds that decide reach (the suggested value is it, rounded)


@dataclass(frozen=True)
class Suggestion:
    node_id: str
    name: str | None
    text: str  # the comparison as written (canonical)
    form: str  # "threshold" (a constant side) | "margin" (two expressions: their difference) | "none"
    subject: str  # what the threshold bounds: a side's text, or "left − right"
    op: str  # the operator in ``subject op threshold`` form
    threshold: float | None  # the constant as written (0 for a margin)
    lo: float
    hi: float
    certify: Threshold | None = None
    refute: Threshold | None = None
    why_none: str | None = None  # why there is no threshold
    more: int | None = None  # projected further observations to decide the comparison as written
    projected: str | None = None  # the verdict it would then get ("true" / "false")
    beyond: bool = False  # not decided within MAX_FACTOR × the current observations
    unit: str = "observations"
    constant_left: bool = False
    range: tuple[float, float] = (-math.inf, math.inf)  # the values the subject can take at all (``term_range``)
    impossible: tuple[str, ...] = ()  # "certify" / "refute": sides no threshold strictly inside ``range`` decides


# ------------------------------------------------------------------------------------------------ thresholds
def threshold_range(op: str, lo: float, hi: float) -> tuple[float | None, float | None]:
    """``(certify, refute)``: the tightest thresholds ``c`` for ``subject op c`` that the interval ``[lo, hi]`` of
    the subject decides TRUE and FALSE (before rounding; a strict inequality's open end is returned as the
    endpoint itself, and ``round_threshold`` moves it off). None where the interval is unbounded."""
    fin = lambda x: x if math.isfinite(x) else None  # noqa: E731
    if op in (">=", ">"):
        return fin(lo), fin(hi)
    if op in ("<=", "<"):
        return fin(hi), fin(lo)
    raise ValueError(f"no threshold for {op!r}")


def decides(op: str, lo: float, hi: float, c: float) -> bool | None:
    """The verdict of ``subject op c`` for a subject in ``[lo, hi]`` (``fairaudit.bounds.rules.CmpRule``)."""
    from fairaudit.bounds.rules import CMP, FALSE, TRUE

    true, false = CMP._cases(op, np.float64(lo), np.float64(hi), np.float64(c), np.float64(c))
    return True if bool(true) else False if bool(false) else None


def round_threshold(op: str, lo: float, hi: float, raw: float, want: bool, digits: int = DIGITS) -> float:
    """``raw`` rounded to ``digits`` significant digits in the direction that keeps ``subject op c`` decided
    ``want`` (down for "c ≤ lo", up for "c ≥ hi"), a unit further while it is not (a strict end)."""
    down = (op in (">=", ">")) == want
    x = Decimal(repr(float(raw)))
    exponent = (x.adjusted() if x != 0 else 0) - digits + 1
    unit = Decimal(1).scaleb(exponent)
    c = x.quantize(unit, rounding=ROUND_FLOOR if down else ROUND_CEILING)
    for _ in range(4):
        value = float(c)
        if decides(op, lo, hi, value) is want:
            return value
        c = c - unit if down else c + unit
        if float(c) == value:  # a unit below the float's resolution (an end such as -5e-324): the next float
            c = Decimal(repr(math.nextafter(value, -math.inf if down else math.inf)))
    raise AssertionError(f"no {digits}-digit threshold decides {op} on [{lo}, {hi}]")  # pragma: no cover


EXTRA_DIGITS = 4  # at most this many more digits when a rounded threshold lands on the edge of the term's range


def term_range(result, node_id: str) -> tuple[float, float]:
    """The values term ``node_id`` can take at all: every leaf (``E[...]``, ``Fair[...]``) is a rate in [0, 1] (the
    mean of an amount lies in its range) and the rest follows by the rules of ``fairaudit.bounds.rules`` (a difference of two rates in [−1, 1], a ratio of
    rates in [0, ∞)); (−∞, ∞) when the result has no specification tree."""
    from fairaudit.core.evaluate import LeafValue, compile_spec, term_intervals

    spec = _spec_tree(result)
    if spec is None:
        return -math.inf, math.inf
    cs = compile_spec(spec)
    leaves = {}
    for key in cs.leaf_keys:  # a rate in [0, 1]; the mean of an amount in its range
        low, high = cs.leaf_range.get(key, (0.0, 1.0))
        leaves[key] = LeafValue(np.array([(low + high) / 2]), np.array([low]), np.array([high]))
    interval = term_intervals(spec, leaves)[node_id]
    return float(interval.lo[0]), float(interval.hi[0])


def inside(c: float, span: tuple[float, float]) -> bool:
    """Whether ``c`` lies strictly inside ``span`` (its ends known only to within their outward rounding: a
    threshold within 1e-12 of an end counts as on it)."""
    lo, hi = span

    def off(end):
        return 1e-12 * max(1.0, abs(end))

    return (lo == -math.inf or c > lo + off(lo)) and (hi == math.inf or c < hi - off(hi))


def _side_value(result, node_id: str) -> float | None:
    """The value of a constant side (a subtree without leaves: ``0.8``, ``-0.1``), or None."""
    info = result.node(node_id)
    if info.kind == "const":
        return float(info.value)
    if info.kind in ("expect", "fair"):
        return None
    if not info.children:
        return None
    if any(_side_value(result, c) is None for c in info.children):
        return None
    f = result.final_values(node_id)
    return float(f["lo"]) if f["lo"] == f["hi"] else None


def _fmt(x: float) -> str:
    return f"{clean(x):.{DIGITS + 1}g}"


def _number_text(value: float) -> str:
    from fairaudit.spec.printer import format_number

    return format_number(float(value))


def suggest_node(result, node_id: str) -> Suggestion | None:
    """The suggestion for one comparison, or None when it is not an undecided comparison."""
    info = result.node(node_id)
    if info.kind != "cmp" or len(info.children) != 2:
        return None
    final = result.final_values(node_id)
    if final.get("verdict") != "unknown":
        return None
    left_id, right_id = info.children
    left, right = result.node(left_id), result.node(right_id)
    op = info.op
    c_left, c_right = _side_value(result, left_id), _side_value(result, right_id)
    base = dict(node_id=node_id, name=info.name, text=info.text)
    if c_right is not None and c_left is None:
        f = result.final_values(left_id)
        s = Suggestion(**base, form="threshold", subject=left.text, op=op, threshold=c_right, lo=f["lo"], hi=f["hi"],
                       range=term_range(result, left_id))
    elif c_left is not None and c_right is None:
        f = result.final_values(right_id)
        s = Suggestion(**base, form="threshold", subject=right.text, op=_FLIP[op], threshold=c_left, lo=f["lo"],
                       hi=f["hi"], constant_left=True, range=term_range(result, right_id))
    elif c_left is None and c_right is None:
        from fairaudit.bounds.rules import SUB, Interval

        (a_lo, a_hi), (b_lo, b_hi) = term_range(result, left_id), term_range(result, right_id)
        span = SUB.interval(Interval(0.0, np.float64(a_lo), np.float64(a_hi)),
                            Interval(0.0, np.float64(b_lo), np.float64(b_hi)))
        s = Suggestion(**base, form="margin", subject=f"{left.text} − {right.text}", op=op, threshold=0.0,
                       lo=final["lo"], hi=final["hi"], range=(float(span.lo), float(span.hi)))
    else:
        return Suggestion(**base, form="none", subject=info.text, op=op, threshold=None, lo=final["lo"],
                          hi=final["hi"], why_none="both sides are constants")
    s = _with_thresholds(s, left.text, right.text)
    return _with_projection(result, s)


def _with_thresholds(s: Suggestion, left_text: str, right_text: str) -> Suggestion:
    if s.op not in _SYMBOL:
        return replace(s, why_none=f"a comparison with {s.op} has no threshold to move (an interval decides "
                                   f"{s.op} only by excluding or being a single value)")
    if not (math.isfinite(s.lo) or math.isfinite(s.hi)) or math.isnan(s.lo) or math.isnan(s.hi):
        return replace(s, why_none="the interval is unbounded or has no value yet")
    certify, refute = threshold_range(s.op, s.lo, s.hi)

    impossible = []

    def make(raw, want):
        if raw is None:
            return None
        for digits in range(DIGITS, DIGITS + EXTRA_DIGITS + 1):
            value = round_threshold(s.op, s.lo, s.hi, raw, want, digits)
            if inside(value, s.range):
                break
        else:  # every threshold that decides it lies on or beyond the edge of what the subject can be
            impossible.append("certify" if want else "refute")
            return None
        number = _number_text(value)
        if s.form == "margin":
            text = f"{left_text} - {right_text} {s.op} {number}"
        elif s.constant_left:
            text = f"{number} {_FLIP[s.op]} {right_text}"
        else:
            text = f"{left_text} {s.op} {number}"
        return Threshold(value, text, raw)

    return replace(s, certify=make(certify, True), refute=make(refute, False), impossible=tuple(impossible))


# ------------------------------------------------------------------------------------------------ projection
def _leaf_bound(result):
    """The engine's leaf bound for this result's options, or None (not row-based, or not installed here)."""
    from fairaudit.core import registry

    try:
        engine = registry.get(result.engine)
    except (FairauditError, ImportError):
        return None
    return engine.leaf_bound(result.options or {})


def _spec_tree(result):
    if result.tree is not None:
        return result.tree
    from fairaudit.spec import parse
    from fairaudit.spec.quantities import with_ranges

    try:
        tree = parse(result.spec)
    except FairauditError:
        return None
    ranges = (getattr(result, "options", None) or {}).get("ranges")  # the amounts' declared ranges it ran with
    return with_ranges(tree, {k: tuple(v) for k, v in ranges.items()}) if ranges else tree


def _with_projection(result, s: Suggestion) -> Suggestion:
    bound = _leaf_bound(result)
    spec = _spec_tree(result) if bound is not None else None
    if bound is None or spec is None or not len(result.trace_table) or result.steps < 1:
        return s
    factor = projected_factor(result, spec, s.node_id, bound)
    if factor is None:
        return replace(s, beyond=True, unit=result.unit)
    f, verdict = factor
    return replace(s, more=max(1, math.ceil(result.steps * f) - result.steps), projected=verdict, unit=result.unit)


def projected_factor(result, spec, node_id: str, bound, grid=_GRID) -> tuple[float, str] | None:
    """The smallest factor f on ``grid`` such that, with every leaf's count scaled by f at its current estimate
    and δ, the comparison ``node_id`` is decided; with the verdict it gets. None when no f on the grid does
    (or a leaf has no observations)."""
    from fairaudit.bounds.rules import TRUE, UNKNOWN
    from fairaudit.core.evaluate import LeafValue, compile_spec, leaf_key, term_intervals

    cs = compile_spec(spec)
    leaves = {}
    for key in cs.leaf_keys:
        tn = cs.leaf_node[key]
        f = result.final_values(tn.id)
        n, est, delta = f.get("n"), f["estimate"], f["delta"]
        if n is None or not n > 0 or math.isnan(est) or not delta > 0:
            return None
        counts = n * grid
        unit = cs.unit_value(key, est)  # a mean of an amount: on [0, 1], as its statistics are kept
        lo, hi = bound(unit * counts, counts, delta)
        leaves[leaf_key(tn)] = cs.leaf_value(key, np.full(grid.shape, unit), np.asarray(lo, float),
                                             np.asarray(hi, float), delta, counts)
    verdicts = np.asarray(term_intervals(spec, leaves)[node_id])
    decided = np.flatnonzero(verdicts != UNKNOWN)
    if not len(decided):
        return None
    i = int(decided[0])
    return float(grid[i]), ("true" if verdicts[i] == TRUE else "false")


# ------------------------------------------------------------------------------------------------ all of them
def suggestions(result) -> list[Suggestion]:
    """A suggestion for every undecided comparison of ``result``, in node order."""
    out = []
    for info in result.node_info:
        if info.kind == "cmp":
            s = suggest_node(result, info.id)
            if s is not None:
                out.append(s)
    return out


def lines(s: Suggestion) -> list[str]:
    """The suggestion in plain sentences (the dashboard, the CLI and the PDF print these)."""
    out = []
    interval = f"[{_fmt(s.lo)}, {_fmt(s.hi)}]"
    if s.form == "margin":
        out.append(f"The difference {s.subject} lies in {interval}; the comparison as written asks it to be "
                   f"{_SYMBOL.get(s.op, s.op)} 0.")
    elif s.form == "threshold":
        out.append(f"{s.subject} lies in {interval}, which still contains the threshold {_fmt(s.threshold)}.")
    if s.why_none:
        out.append(f"No threshold to suggest: {s.why_none}.")
    else:
        what = "margin" if s.form == "margin" else "threshold"
        if s.certify is not None:
            out.append(f"Certifiable now, at the same guarantee: {s.certify.text} (any {what} "
                       f"{_bound_word(s, True)} {_fmt(s.certify.limit)}).")
        if s.refute is not None:
            out.append(f"Refutable now, at the same guarantee: {s.refute.text} would be violated (any {what} "
                       f"{_bound_word(s, False)} {_fmt(s.refute.limit)}).")
        for side in s.impossible:
            word = "certifiable" if side == "certify" else "refutable"
            limit = s.hi if (s.op in ("<=", "<")) == (side == "certify") else s.lo
            out.append(f"Not {word} now at any {what}: {s.subject} can only take values in {_span(s.range)}, "
                       f"and every {what} that its {'upper' if limit == s.hi else 'lower'} bound {_fmt(limit)} "
                       f"would decide lies on or beyond that range's edge.")
    if s.more is not None:
        verdict = {"true": "certify", "false": "refute"}[s.projected]
        out.append(f"Projection: about {s.more:,} more {s.unit} would {verdict} {s.text} as written "
                   f"({PROJECTION_NOTE}).")
    elif s.beyond:
        out.append(f"Projection: not decided even with {MAX_FACTOR:,.0f} times the {s.unit} so far, if the "
                   "estimates stay where they are (the estimate sits at or near the threshold).")
    return out


def _span(span: tuple[float, float]) -> str:
    def end(x: float) -> str:
        return "∞" if x == math.inf else "−∞" if x == -math.inf else _fmt(x)

    return f"[{end(span[0])}, {end(span[1])}]"


def _bound_word(s: Suggestion, certify: bool) -> str:
    """How far the threshold may go while staying decided, in the comparison's own orientation."""
    up = (s.op in ("<=", "<")) == certify  # certify x <= c: any c ≥ hi; refute: any c < lo
    strict = _strict(s.op, certify)
    return ("above" if strict else "at or above") if up else ("below" if strict else "at or below")


def _strict(op: str, certify: bool) -> bool:
    """Whether the set of thresholds that decide is open at the interval's end (table in the module doc)."""
    return {(">=", True): False, (">=", False): True, (">", True): True, (">", False): False,
            ("<=", True): False, ("<=", False): True, ("<", True): True, ("<", False): False}[(op, certify)]


def summary_lines(result) -> list[str]:
    """Every undecided comparison's suggestion, each headed by its name/id, then ``POST_HOC`` once; empty when
    there is nothing undecided."""
    found = suggestions(result)
    out = []
    for s in found:
        head = f"{s.name} ({s.node_id})" if s.name else s.node_id
        out.append(f"{head} {s.text}: undecided.")
        out.extend("  " + line for line in lines(s))
    if found:
        out.append(POST_HOC)
    return out


# ------------------------------------------------------------------------------------------------ rewriting
def apply(source: str, suggestion: Suggestion, which: str = "certify", result=None) -> str:
    """``source`` (the audited specification, headers and names included) with ``suggestion``'s comparison
    changed to its ``certify`` (or ``refute``) threshold: the constant side (or, for a margin, the whole
    comparison) is replaced at its source span by the printer's text, and the result is parsed again and
    checked to be the old tree with only that comparison changed. ``FairauditError`` when it cannot be.

    A threshold chosen this way was chosen after looking at the audited rows: the text returned carries a
    ``# threshold-chosen-from:`` line (``fairaudit.core.claim.chosen_mark``: the data's content hash, the comparison, the
    old and new threshold, the rows of ``result``), so that a verdict on these data is exploratory wherever it is
    audited (dashboard, CLI, Python) until it is confirmed on rows the choice did not see (``fairaudit.confirm``)."""
    from fairaudit.spec import ast, parse
    from fairaudit.spec.printer import to_text

    chosen = getattr(suggestion, which, None)
    if chosen is None:
        raise FairauditError(f"{suggestion.name or suggestion.text} has no {which} threshold to apply")
    old = parse(source)
    try:
        cmp_node = old.node(suggestion.node_id)
    except KeyError:
        cmp_node = None
    if cmp_node is None or cmp_node.kind != "cmp" or cmp_node.text != suggestion.text:
        raise FairauditError("the specification has changed since this result was computed: run the audit again "
                             "before applying a suggestion")
    node = cmp_node.node
    number = ast.Const(abs(chosen.value))
    number = ast.Neg(number) if chosen.value < 0 else number
    if suggestion.form == "margin":
        target, new = node, ast.Cmp(node.op, ast.Sub(node.left, node.right), number)
    elif suggestion.constant_left:
        target, new = node.left, number
    else:
        target, new = node.right, number
    expected_cmp = new if suggestion.form == "margin" else (
        ast.Cmp(node.op, new, node.right) if suggestion.constant_left else ast.Cmp(node.op, node.left, new))
    expected = _replaced(old.root, cmp_node.id, expected_cmp)
    span = target.span
    for piece in (to_text(new), f"({to_text(new)})"):
        text = source[:span.start] + piece + source[span.end:]
        try:
            if parse(text).root == expected:
                return _marked(text, suggestion, chosen.value, result)
        except FairauditError:
            continue
    raise FairauditError(f"could not rewrite {suggestion.text} safely; edit the threshold by hand")


def _replaced(root, node_id: str, new):
    """``root`` with the node of pre-order id ``node_id`` replaced by ``new`` (ids as ``Spec`` numbers them)."""
    from fairaudit.spec import ast

    counter = iter(range(10 ** 9))

    def walk(node):
        here = f"n{next(counter)}"
        if here == node_id:
            for _ in list(ast.walk(node))[1:]:  # the replaced subtree's other ids
                next(counter)
            return new
        kids = ast.children(node)
        if not kids:
            return node
        new_kids = [walk(k) for k in kids]
        if isinstance(node, (ast.Not, ast.Neg)):
            return replace(node, operand=new_kids[0])
        return replace(node, left=new_kids[0], right=new_kids[1])

    return walk(root)


def clause_name(text: str, suggestion: Suggestion) -> str:
    """How the user knows ``suggestion``'s comparison in the rewritten specification ``text``
    (``fairaudit.core.claim.clause_label``: its name, else the side that is not the threshold — for a margin,
    ``left - right`` — as printed). The comparison keeps its pre-order id there: only its own subtree changed."""
    from fairaudit.core.claim import clause_label
    from fairaudit.spec import parse

    tree = parse(text)
    node = tree.node(suggestion.node_id)
    sides = [tree.node(c).text for c in node.children]
    return clause_label(node.name or suggestion.name, sides, constant_left=suggestion.constant_left)


def _marked(text: str, suggestion: Suggestion, value: float, result) -> str:
    """``text`` with the line saying which threshold was chosen from which data (``fairaudit.core.claim.chosen_mark``)
    after its leading header lines (``# key: value``: the file's own headers stay first)."""
    from fairaudit.core.claim import chosen_mark

    dataset = ((getattr(result, "provenance", None) or {}).get("dataset") or {}) if result is not None else {}
    old = "0" if suggestion.threshold is None else f"{suggestion.threshold:g}"
    mark = chosen_mark(getattr(result, "rows_text", None) if result is not None else None,
                       dataset.get("content_hash"), clause_name(text, suggestion), f"{suggestion.op} {old}",
                       f"{suggestion.op} {value:g}")
    from fairaudit.spec.files import _HEADER

    lines = text.splitlines(keepends=True)
    at = 0
    while at < len(lines) and _HEADER.match(lines[at]):
        at += 1
    return "".join(lines[:at]) + mark + "\n" + "".join(lines[at:])

