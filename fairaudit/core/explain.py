"""A result's nodes in plain words: why a node is certified, violated or undecided, its numbers as a reader reads
them, and two results of the same specification side by side.

Everything here reads the ``nodes`` of the audit-result contract (``AuditResult.nodes``: ``id``, ``parent``,
``kind``, ``text``, ``name``, ``op``, ``value``, ``final``) and the result's ``Guarantee``; it never parses node
text (a comparison's operator is its ``op``, a constant's number its ``value``) and never words a guarantee itself:
how an interval holds is ``Guarantee.phrase``. Numbers follow the one rule of ``fairaudit.base.numbers`` /
``fairaudit.core.guarantee.format_interval``. No Streamlit: the dashboard draws these sentences, any front end may.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Mapping, Sequence

from fairaudit.core.guarantee import Guarantee, evidence_note, format_interval

VERDICT_WORDS = {"true": "certified true", "false": "violated", "unknown": "undecided", "exploratory": "exploratory"}
HEADS = {"true": "Certified", "false": "Violated", "unknown": "Undecided"}
# a comparison read the other way round (the constant on the left: ``0.8 <= x`` is ``x >= 0.8``)
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
PRETTY = {"<=": "≤", ">=": "≥", "==": "=", "!=": "≠", "<": "<", ">": ">"}
_WORDS = {"<": "below", "<=": "at most", ">": "above", ">=": "at least", "==": "equal to", "!=": "different from"}

Node = Mapping[str, Any]


def verdict_word(verdict: str | None) -> str:
    """"certified true" / "violated" / "undecided"; "not run" when there is no verdict."""
    return VERDICT_WORDS.get(verdict or "", "not run")


#: a decided verdict whose guarantee the run itself found evidence against (``AuditResult.assumption_broken``:
#: rows not in random order, drift, a verdict that changed after a decision); the CLI's exit code 3
NOT_BACKED = "not backed by its guarantee"
NOT_BACKED_WHY = "the run found evidence against what the guarantee assumes (see the warnings)"


#: under a comparison's e-value plot (dashboard and PDF): what the dashed 1/β line is, and why it can step
JOINT_TEST_HELP = ("The plot under the band is the comparison's joint test: its e-value (the evidence so far, log "
                   "scale) against the dashed line 1/β; the comparison is decided when the e-value reaches the line, "
                   "even while its band still crosses the threshold. β is the share of the failure probability this "
                   "comparison gets for the direction the evidence leans to — certifying and refuting get different "
                   "shares — so the line steps up or down when that direction changes.")
#: why changing one threshold can change another part's interval (a monitor run with several probabilities)
SHARED_BUDGET_HELP = ("the parts of the specification share one failure probability; from the decision on, each "
                      "interval is shown at the share the deciding test gave it, and which test decides depends on "
                      "every comparison and its threshold, so changing one threshold can change the width of "
                      "another part's interval (each interval still holds at the δ shown beside it)")


def not_backed(result) -> bool:
    """Whether ``result`` is a decided verdict its own run found evidence against (not a pass, not a proof)."""
    return bool(getattr(result, "assumption_broken", False)) and getattr(result, "verdict", None) in ("true", "false")


def not_backed_sentence() -> str:
    """"This verdict is not backed by its guarantee: the run found evidence against …" (dashboard and PDF)."""
    return f"This verdict is {NOT_BACKED}: {NOT_BACKED_WHY}."


# ------------------------------------------------------------------------------------------------ numbers


def finite(*xs: Any) -> bool:
    try:
        return all(x is not None and math.isfinite(float(x)) for x in xs)
    except (TypeError, ValueError):
        return False


def number(x: Any) -> str:
    """A value as the reader sees it (``format_interval``'s rule); "–" when there is none."""
    try:
        value = float(x)
    except (TypeError, ValueError):
        return "–"
    if math.isnan(value):
        return "–"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return format_interval(value, value)


def is_point(lo: Any, hi: Any) -> bool:
    """Whether ``[lo, hi]`` reads as one number (an exact value; a difference of exact values rounded outwards
    in its last bit is one too)."""
    return finite(lo, hi) and number(lo) == number(hi)


def interval(lo: Any, hi: Any) -> str:
    """``[lo, hi]`` (a single value when they are equal as shown, e.g. an exact difference whose bounds were
    rounded outwards in the last bit); "–" when a bound is missing."""
    if not finite(lo, hi):
        return "–"
    if is_point(lo, hi):
        return number(lo)
    return format_interval(float(lo), float(hi))


# ------------------------------------------------------------------------------------------------ the tree


def _by_id(nodes: Sequence[Node]) -> dict[str, Node]:
    return {str(n["id"]): n for n in nodes}


def children(node_id: str, nodes: Sequence[Node]) -> list[Node]:
    """The children of ``node_id`` in order (left before right)."""
    return [n for n in nodes if str(n.get("parent")) == str(node_id)]


def const_value(node: Node, nodes: Sequence[Node] | None = None) -> float | None:
    """The number of a constant node (its ``value``), or of a negated one (``-0.1`` is parsed as the negation of
    0.1; given ``nodes``, to find its child), or None."""
    if node.get("kind") == "neg" and nodes is not None:
        kids = children(node["id"], nodes)
        inner = const_value(kids[0], nodes) if len(kids) == 1 else None
        return None if inner is None else -inner
    if node.get("kind") != "const":
        return None
    value = node.get("value")
    if value is None:
        value = (node.get("final") or {}).get("estimate")
    return float(value) if finite(value) else None


def comparison_parts(node_id: str, nodes: Sequence[Node]):
    """``(term node, op, threshold)`` of a comparison with a constant side, the op read with the term on the
    left (``0.8 <= x`` gives ``(x, ">=", 0.8)``); None for any other node."""
    node = _by_id(nodes).get(str(node_id))
    if node is None or node.get("kind") != "cmp":
        return None
    kids = children(node_id, nodes)
    if len(kids) != 2 or not node.get("op"):
        return None
    op = str(node["op"])
    right, left = const_value(kids[1], nodes), const_value(kids[0], nodes)
    if right is not None:
        return kids[0], op, right
    if left is not None:
        return kids[1], FLIP.get(op, op), left
    return None


def fair_term(node_id: str, nodes: Sequence[Node]) -> Node | None:
    """The ``Fair[...]`` node a node shows: itself, or the compared term of a comparison with a constant side
    (``Fair[sex] >= 0.95``); None otherwise. The dashboard draws its rates and counterexamples for either."""
    node = _by_id(nodes).get(str(node_id))
    if node is None:
        return None
    if node.get("kind") == "fair":
        return node
    parts = comparison_parts(node_id, nodes)
    return parts[0] if parts is not None and parts[0].get("kind") == "fair" else None


def fair_rates(final: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    """``(certified, upper bound, undecided)`` of a ``Fair[...]`` node's final values: the certified share (the
    lower bound), 1 − the unfair share (the upper bound) and the share in between. A Fair node has no value to
    show between them: a midpoint would read as a rate it does not have."""
    lo, hi = final.get("lo"), final.get("hi")
    certified = final.get("certified") if finite(final.get("certified")) else lo
    upper = 1.0 - float(final["unfair"]) if finite(final.get("unfair")) else hi
    undecided = final.get("undecided")
    if not finite(undecided) and finite(certified, upper):
        undecided = max(0.0, float(upper) - float(certified))
    return certified, upper, undecided


FAIR_LABELS = ("certified (lower bound)", "upper bound (1 − unfair)", "undecided")


def fair_facts(final: Mapping[str, Any]) -> dict[str, str]:
    """A ``Fair[...]`` node's numbers, labelled (``FAIR_LABELS``), for a panel or a table."""
    return dict(zip(FAIR_LABELS, (number(x) for x in fair_rates(final))))


def fair_text(final: Mapping[str, Any]) -> str:
    """A ``Fair[...]`` node's numbers on one line: "certified 0.9011, upper bound 1 (1 − unfair), undecided
    0.0989"."""
    certified, upper, undecided = (number(x) for x in fair_rates(final))
    return f"certified {certified}, upper bound {upper} (1 − unfair), undecided {undecided}"


def part_name(node: Node, limit: int = 60, nodes: Sequence[Node] | None = None) -> str:
    """A node as a sentence names it: its name; a conjunction or disjunction of named parts by their names
    (given ``nodes``); else its text (shortened)."""
    if node.get("name"):
        return str(node["name"])
    if nodes is not None and node.get("kind") in ("and", "or"):
        kids = children(node["id"], nodes)
        if kids and all(k.get("name") for k in kids):
            return f" {node['kind']} ".join(str(k["name"]) for k in kids)
    text = str(node.get("text", node.get("id")))
    return text if len(text) <= limit else text[:limit - 1] + "…"


#: what an arithmetic term is, as a sentence names it ("the ratio's estimate")
TERM_KINDS = {"div": "ratio", "sub": "gap", "add": "sum", "mul": "product", "neg": "negation"}
_TERM_SIGNS = {"div": "÷", "sub": "−", "add": "+", "mul": "×"}


def _leaf(text: str):
    """The parsed leaf (``fairaudit.spec.ast.Expect`` / ``Fair``) whose canonical text is ``text``; None when it is
    not one (a term is parsed as the left side of a condition)."""
    from fairaudit.base.errors import FairauditError
    from fairaudit.spec import ast, parse

    try:
        leaf = parse(f"{text} < 1").root.left
    except (FairauditError, ValueError, RecursionError, AttributeError):
        return None
    return leaf if isinstance(leaf, (ast.Expect, ast.Fair)) else None


def _leaf_words(node: Node) -> tuple[str, str | None]:
    """``(words, group)`` of a leaf, from its parsed syntax (``fairaudit.spec.words``): "favourable rate of sex =
    Female" and the group's condition words ("sex = Female"); ``group`` is None when it is not a favourable rate."""
    from fairaudit.spec import ast
    from fairaudit.spec.words import condition_words

    leaf = _leaf(str(node.get("text", "")))
    if isinstance(leaf, ast.Fair):
        return f"share whose decision does not change with {leaf.column}", None
    if leaf is None:
        return "this term", None
    if _averages(node, leaf):  # the mean of an amount: "average amount among those with sex = Female"
        from fairaudit.spec.printer import quantity_text

        given = f" among those with {condition_words(leaf.given)}" if leaf.given is not None else ""
        return f"average {quantity_text(leaf.event)}{given}", None
    decision = isinstance(leaf.event, ast.Name) and leaf.event.reserved and leaf.event.name == "pred"
    if decision:
        group = condition_words(leaf.given) if leaf.given is not None else "everyone"
        return f"favourable rate of {group}", group
    event = condition_words(leaf.event)
    given = f" among those with {condition_words(leaf.given)}" if leaf.given is not None else ""
    return f"share with {event}{given}", None


def _averages(node: Node, leaf) -> bool:
    """Whether a leaf averages an amount (``fairaudit.spec.quantities``): arithmetic or ``score`` before its ``|``, or
    a column whose range the audit declared (the node's ``range``)."""
    from fairaudit.spec import ast
    from fairaudit.spec.quantities import is_quantity

    return isinstance(leaf, ast.Expect) and (bool(node.get("range")) or is_quantity(leaf.event, {}))


def term_words(node: Node, nodes: Sequence[Node]) -> str:
    """A term in words, from its parsed syntax, never its printed text: "favourable rate of sex = Female"; a ratio
    or gap of two favourable rates "favourable rate of sex = Female ÷ that of sex = Male"; a constant its number."""
    kind = node.get("kind")
    if node.get("name"):
        return str(node["name"])
    if kind == "const":
        return number(const_value(node, nodes))
    if kind in ("expect", "fair"):
        return _leaf_words(node)[0]
    kids = children(node["id"], nodes)
    if kind == "neg" and len(kids) == 1:
        value = const_value(node, nodes)
        return number(value) if value is not None else f"minus ({term_words(kids[0], nodes)})"
    if kind in _TERM_SIGNS and len(kids) == 2:
        (a, ga), (b, gb) = (_leaf_words(k) if k.get("kind") == "expect" else (term_words(k, nodes), None)
                            for k in kids)
        if ga is not None and gb is not None:  # two favourable rates: the second as "that of"
            return f"favourable rate of {ga} {_TERM_SIGNS[kind]} that of {gb}"
        wrap = lambda k, w: w if k.get("kind") in ("expect", "fair", "const") or k.get("name") else f"({w})"  # noqa: E731
        return f"{wrap(kids[0], a)} {_TERM_SIGNS[kind]} {wrap(kids[1], b)}"
    return part_name(node, nodes=nodes)


def term_kind(node: Node) -> str:
    """What a compared term is called in a sentence: "ratio", "gap", "favourable rate", "value"."""
    kind = node.get("kind")
    if kind in TERM_KINDS:
        return TERM_KINDS[kind]
    if kind == "expect":
        if _averages(node, _leaf(str(node.get("text", "")))):
            return "average"
        return "favourable rate" if _leaf_words(node)[1] is not None else "share"
    if kind == "fair":
        return "share"
    return "value"


def clause_words(node_id: str, nodes: Sequence[Node], threshold: bool = True) -> str:
    """A clause of the specification in words, built from its parsed syntax (never its text, never its id): a
    comparison "favourable rate of sex = Female ÷ that of sex = Male ≥ 0.8" (``threshold=False``: its compared
    term only); and/or/not their parts' words; a term ``term_words``. The clause's name is not included (see
    ``clause_label``)."""
    node = _by_id(nodes)[str(node_id)]
    kind = node.get("kind")
    kids = children(node_id, nodes)
    if kind == "cmp":
        parts = comparison_parts(node_id, nodes)
        if parts is not None:
            term, op, c = parts
            words = term_words(term, nodes)
            return f"{words} {threshold_text(op, c)}" if threshold else words
        if len(kids) == 2:
            return (f"{term_words(kids[0], nodes)} {PRETTY.get(str(node.get('op')), node.get('op'))} "
                    f"{term_words(kids[1], nodes)}")
    if kind in ("and", "or") and kids:
        return f" {kind} ".join(str(k["name"]) if k.get("name") else f"({clause_words(k['id'], nodes)})"
                                for k in kids)
    if kind == "not" and kids:
        return f"not ({kids[0].get('name') or clause_words(kids[0]['id'], nodes)})"
    return term_words(node, nodes) if not node.get("name") else term_words({**node, "name": None}, nodes)


def clause_label(node_id: str, nodes: Sequence[Node], threshold: bool = True) -> str:
    """A clause as a reader names it: "ratio: favourable rate of sex = Female ÷ that of sex = Male ≥ 0.8" (its
    name, then its words); its words alone when it has no name. Never a node id."""
    node = _by_id(nodes)[str(node_id)]
    words = clause_words(node_id, nodes, threshold)
    return f"{node['name']}: {words}" if node.get("name") else words


def threshold_text(op: str, threshold: float) -> str:
    """``< 0.1``, ``≥ 0.8``."""
    return f"{PRETTY.get(op, op)} {number(threshold)}"


# ------------------------------------------------------------------------------------------------ guarantee


def node_guarantee(final: Mapping[str, Any], guarantee: Guarantee | None) -> Guarantee | None:
    """What a node's interval is worth: a probabilistic guarantee at the node's own δ (the intervals of the parts
    of a specification share the run's failure probability), otherwise the run's guarantee itself."""
    delta = final.get("delta")
    if guarantee is None:
        if finite(delta) and float(delta) > 0:
            return Guarantee("probabilistic", min(1.0, float(delta)))
        return None
    if guarantee.kind == "probabilistic":
        level = float(delta) if finite(delta) else guarantee.delta
        return replace(guarantee, delta=min(1.0, max(0.0, level)), note=None)
    return guarantee


def percent(confidence: float) -> str:
    """A confidence as a percentage, never read higher than it is (``Guarantee``'s rule): 0.975 → "97.5 %"."""
    from decimal import Decimal

    from fairaudit.core.guarantee import _at_most

    text = _at_most(float(confidence))
    try:
        value = (Decimal(text) * 100).normalize()
    except ArithmeticError:
        return text
    return f"{value:f} %"


def _holds(final: Mapping[str, Any], guarantee: Guarantee | None, what: str = "these bounds") -> str:
    """How a node's interval holds. Under a probabilistic guarantee whose failure probability the parts of the
    specification share, the node's own level is said as what it is — its share of the audit's: "This comparison's
    interval holds with probability ≥ 97.5 %, its share of the audit's 95 %." (beside the headline's ≥ 0.95 a bare
    "≥ 0.975" reads as a second, stronger verdict)."""
    g = node_guarantee(final, guarantee)
    if g is None:
        return ""
    if g.kind == "exact":
        return f" The value is computed {g.phrase}."
    if (guarantee is not None and guarantee.kind == "probabilistic" and g.kind == "probabilistic"
            and not g.scope and g.delta < guarantee.delta):
        whose = "These bounds hold" if what == "these bounds" else f"This {what}'s interval holds"
        return (f" {whose} with probability ≥ {percent(g.confidence)}, its share of the audit's "
                f"{percent(guarantee.confidence)}.")
    return f" These bounds hold {g.phrase}."


# ------------------------------------------------------------------------------------------------ sentences


def compare_sentence(op: str, lo: float, hi: float, c: float, verdict: str, what: str) -> str:
    """Why ``what`` (with bounds [lo, hi]) ``op`` ``c`` has ``verdict``, from the bounds and the threshold."""
    if is_point(lo, hi):
        word = _WORDS.get(op, op)
        if verdict == "true":
            return f"the value {number(lo)} of {what} is {word} the threshold {number(c)}."
        if verdict == "false":
            return f"the value {number(lo)} of {what} is not {word} the threshold {number(c)}."
        return f"the value {number(lo)} of {what} cannot be compared with the threshold {number(c)}."
    below = op in ("<", "<=")
    lo_s, hi_s, c_s = number(lo), number(hi), number(c)
    if op in ("<", "<=", ">", ">="):
        if verdict == "true":
            return (f"the upper bound {hi_s} of {what} is below the threshold {c_s}." if below else
                    f"the lower bound {lo_s} of {what} is above the threshold {c_s}.")
        if verdict == "false":
            return (f"the lower bound {lo_s} of {what} is already above the threshold {c_s}." if below
                    else f"the upper bound {hi_s} of {what} is already below the threshold {c_s}.")
        if below:
            return (f"the upper bound {hi_s} of {what} is above the threshold {c_s}: cannot be certified yet; "
                    f"the lower bound {lo_s} is below {c_s}: cannot be ruled violated either.")
        return (f"the lower bound {lo_s} of {what} is below the threshold {c_s}: cannot be certified yet; "
                f"the upper bound {hi_s} is above {c_s}: cannot be ruled violated either.")
    span = interval(lo, hi)
    if op == "==":
        if verdict == "false":
            return f"the interval {span} of {what} excludes {c_s}."
        if verdict == "true":
            return f"the interval {span} of {what} is the single value {c_s}."
        return f"the interval {span} of {what} contains {c_s}: equality cannot be decided yet."
    if verdict == "true":
        return f"the interval {span} of {what} excludes {c_s}."
    return f"the interval {span} of {what} contains {c_s}: cannot be certified yet."


def _join(items: Sequence[str]) -> str:
    items = list(items) or ["a part"]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _is(items: Sequence[str]) -> str:
    return "is" if len(items) <= 1 else "are"


def explain_node(node_id: str, nodes: Sequence[Node], guarantee: Guarantee | None = None,
                 unit: str | None = None, labels: Mapping[str, str] | None = None) -> str:
    """One plain paragraph saying why a node is certified, violated or undecided (or what a term's bounds mean),
    ending with how its bounds hold (``guarantee``: the result's; ``unit``: what a leaf's ``n`` counts;
    ``labels``: short names of the nodes, e.g. the tree chart's, used for the compared term).

    For ``X < 0.5`` with ``X`` in [0.38, 0.52]: "Undecided: the upper bound 0.52 of X is above the threshold 0.5:
    cannot be certified yet; the lower bound 0.38 is below 0.5: cannot be ruled violated either. These bounds
    hold with probability ≥ 0.95."
    """
    node = _by_id(nodes)[str(node_id)]
    kind = node.get("kind")
    final = node.get("final") or {}
    verdict = final.get("verdict")
    head = HEADS.get(verdict or "", "")
    kids = children(node_id, nodes)
    if kind == "cmp" and len(kids) == 2:
        parts = comparison_parts(node_id, nodes)
        if parts is not None:
            term, op, c = parts
            tf = term.get("final") or {}
            lo, hi = tf.get("lo"), tf.get("hi")
            what = (labels or {}).get(str(term["id"])) or "the " + term_words(term, nodes)
        else:
            op, c = str(node.get("op") or "<"), 0.0
            lo, hi, what = final.get("lo"), final.get("hi"), "left − right"
        if not finite(lo, hi):
            return f"{head or 'Not decided'}: nothing has reached this comparison yet."
        joint = evidence_note(final, str(node.get("op") or ""))
        if joint is not None:  # its own test decided it; its interval alone does not
            return (f"{head}: the evidence taken together decides it, although the interval {interval(lo, hi)} "
                    f"of {what} still contains the threshold {number(c)} (how: a joint test of the two groups; see "
                    f"How this was decided)." + _holds(final, guarantee, "comparison"))
        return (f"{head}: " + compare_sentence(op, float(lo), float(hi), float(c), verdict or "unknown", what)
                + _holds(final, guarantee, "comparison"))
    if kind in ("and", "or", "not"):
        by_verdict: dict[str, list[str]] = {}
        for k in kids:
            by_verdict.setdefault((k.get("final") or {}).get("verdict") or "unknown", []).append(part_name(k))
        false, true, unknown = by_verdict.get("false", []), by_verdict.get("true", []), by_verdict.get("unknown", [])
        if kind == "not":
            inner = part_name(kids[0]) if kids else "its part"
            return {"true": f"Certified: {inner} is violated, so its negation holds.",
                    "false": f"Violated: {inner} is certified, so its negation fails."}.get(
                verdict or "", f"Undecided: {inner} is undecided.")
        if kind == "and":
            if verdict == "false":
                return f"Violated: every part must hold and {_join(false)} {_is(false)} violated."
            if verdict == "true":
                return "Certified: every part is certified."
            return f"Undecided: no part is violated, but {_join(unknown)} {_is(unknown)} still undecided."
        if verdict == "true":
            return f"Certified: one part must hold and {_join(true)} {_is(true)} certified."
        if verdict == "false":
            return "Violated: every part is violated."
        return f"Undecided: no part is certified yet, and {_join(unknown)} {_is(unknown)} still undecided."
    if kind == "const":
        return "A constant (a threshold of the comparison above it)."
    lo, hi, est = final.get("lo"), final.get("hi"), final.get("estimate")
    if not finite(lo, hi):
        return "A term, not a claim: it has no value yet."
    if kind == "fair":
        certified, upper, undecided = (number(x) for x in fair_rates(final))
        return (f"A term, not a claim: at least {certified} of the individuals are certified to keep their "
                f"decision when only the attribute changes, at most {upper} do (1 − the share proven unfair), and "
                f"{undecided} are undecided." + _holds(final, guarantee))
    n = final.get("n")
    seen = f" from {int(n):,} {unit or 'steps'}" if finite(n) else ""
    if is_point(lo, hi):
        return f"A term, not a claim: its value is {number(lo)}{seen}." + _holds(final, guarantee)
    return (f"A term, not a claim: estimate {number(est)}{seen}; its true value lies in {interval(lo, hi)}."
            + _holds(final, guarantee))


def node_facts(node_id: str, nodes: Sequence[Node], guarantee: Guarantee | None = None,
               unit: str | None = None) -> dict[str, str]:
    """A node's final numbers, labelled, for a "selected node" panel: a comparison with a threshold shows its
    compared term's ``value`` and ``interval`` beside the ``threshold`` (not the internal difference); δ only
    under a probabilistic guarantee; a leaf's ``n`` labelled by ``unit``; the interval left out when it is a
    single value (it would repeat the value). A ``Fair[...]`` node, or a comparison of one, shows its certified
    share, its upper bound (1 − unfair) and its undecided share instead (``fair_facts``): never a midpoint."""
    node = _by_id(nodes)[str(node_id)]
    final = node.get("final") or {}
    verdict = final.get("verdict")
    g = node_guarantee(final, guarantee)
    delta = {"δ": number(final.get("delta"))} if g is not None and g.kind == "probabilistic" else {}
    word = {"verdict": verdict_word(verdict) if verdict else "— (a term)"}
    kind = node.get("kind")
    parts = comparison_parts(node_id, nodes)
    if parts is not None and parts[0].get("kind") == "fair":  # the rates, never a midpoint "value"
        term, op, c = parts
        facts = {**fair_facts(term.get("final") or {}), "threshold": threshold_text(op, c)}
        lo = hi = None
    elif parts is not None:
        term, op, c = parts
        tf = term.get("final") or {}
        facts = {"value": number(tf.get("estimate")), "interval": interval(tf.get("lo"), tf.get("hi")),
                 "threshold": threshold_text(op, c)}
        lo, hi = tf.get("lo"), tf.get("hi")
    elif kind in ("and", "or", "not"):  # a claim built from claims: a verdict, not a value
        return {**delta, **word}
    elif kind == "fair":
        facts = fair_facts(final)
        lo = hi = None
    else:
        facts = {"estimate": number(final.get("estimate")), "interval": interval(final.get("lo"), final.get("hi"))}
        lo, hi = final.get("lo"), final.get("hi")
        if kind == "cmp":
            facts["interval"] += " (left − right)"
    if "interval" in facts and is_point(lo, hi):
        facts.pop("interval")
    facts.update(delta)
    facts.update(word)
    if finite(final.get("n")):
        facts[unit or "n"] = f"{int(final['n']):,}"
    return facts


# ------------------------------------------------------------------------------------------------ two results


def engine_title(result) -> str:
    """The title of the engine that computed ``result`` (its name when the engine is not installed here)."""
    from fairaudit.core import registry

    try:
        return registry.get(result.engine).title or result.engine
    except Exception:  # noqa: BLE001 - a result of an engine this installation does not have
        return str(result.engine)


def _cell(node_id: str, nodes: Sequence[Node]) -> str:
    node = _by_id(nodes).get(str(node_id))
    if node is None:
        return "–"
    final = node.get("final") or {}
    verdict = final.get("verdict")
    parts = comparison_parts(node_id, nodes)
    if parts is not None:
        term, op, c = parts
        tf = term.get("final") or {}
        if term.get("kind") == "fair":
            return f"{verdict_word(verdict)}: {fair_text(tf)} vs {threshold_text(op, c)}"
        return f"{verdict_word(verdict)}: {interval(tf.get('lo'), tf.get('hi'))} vs {threshold_text(op, c)}"
    if node.get("kind") in ("and", "or", "not"):
        return verdict_word(verdict)
    if node.get("kind") == "fair":
        return fair_text(final)
    span = interval(final.get("lo"), final.get("hi"))
    return f"{verdict_word(verdict)}: {span} (left − right)" if node.get("kind") == "cmp" else span


def compare_rows(result, other) -> list[dict]:
    """The parts of one specification as two results give them, one row per part (constants, and the terms a
    comparison's row shows, left out): the part, then each result's value — a term's interval (a single number when exact), a comparison's verdict
    with its term's interval and threshold — in columns named by the engine and its guarantee's caption. Empty
    when the two results are not of the same specification."""
    if result.spec.strip() != other.spec.strip():
        return []
    a = f"{engine_title(result)} ({result.guarantee.caption})"
    b = f"{engine_title(other)} ({other.guarantee.caption})"
    if a == b:
        b += " "  # two runs of one engine: the column names must differ
    nodes = result.nodes
    # a comparison's row already shows its compared term: that term gets no row of its own
    shown_by_comparison = {str(parts[0]["id"]) for n in nodes
                           if (parts := comparison_parts(n["id"], nodes)) is not None}
    rows = []
    for node in nodes:
        if node.get("kind") == "const" or str(node["id"]) in shown_by_comparison:
            continue
        rows.append({"part": part_name(node, 48, nodes), a: _cell(node["id"], nodes),
                     b: _cell(node["id"], other.nodes)})
    return rows
