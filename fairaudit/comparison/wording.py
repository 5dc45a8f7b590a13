"""The comparison's sentences, in one place: what each difference says, the headline, and what they are worth.

Every sentence names a node of the specification by its clause name, else in words built from its syntax tree
(:func:`node_words`: ``fairaudit.spec.words`` for the groups), never by a node id nor by its printed text; and a model
by the phrase it was given (:func:`said`: "the current model (logreg)", "the decision tree"), else by its name.
"""
from __future__ import annotations

from fairaudit.core.explain import _WORDS, FLIP, interval, number, verdict_word
from fairaudit.spec import ast
from fairaudit.spec.printer import format_number
from fairaudit.spec.words import condition_words, group_words

BETTER_WHEN_HIGHER = (">", ">=")
BINARY_WORDS = {"add": "plus", "sub": "minus", "mul": "times", "div": "divided by"}


# ------------------------------------------------------------------------------------------------ names in words
def said(result, name: str) -> str:
    """How a sentence names the compared model ``name``: the phrase it was given (``compare(..., said=...)``: "the
    current model (logreg)"), else its name."""
    return (getattr(result, "said", None) or {}).get(name) or name


def _capital(text: str, result=None) -> str:
    """A sentence's first letter capitalised — unless the sentence starts with a model's name as given ("new",
    "logreg": ``result``'s names without a phrase) or a clause's name, kept as written."""
    if result is not None:
        kept = [n for n in result.names if said(result, n) == n]
        kept += [tn.name for tn in result.tree.nodes if tn.name]
        if any(text == k or text.startswith(k + " ") or text.startswith(k + ":") or text.startswith(k + "'")
               for k in kept):
            return text
    return text[:1].upper() + text[1:]


def _constant(node) -> float | None:
    """The number of a constant (or a negated constant: ``-0.1`` parses as the negation of 0.1), else None."""
    if node.kind == "const":
        return float(node.value)
    if node.kind == "neg" and node.operand.kind == "const":
        return -float(node.operand.value)
    return None


def _rate(node) -> str | None:
    """``E[pred | condition]`` as "the favourable rate of those with …"; None for any other node."""
    if node.kind == "expect" and isinstance(node.event, ast.Name) and node.event.reserved \
            and node.event.name == "pred":
        return f"the favourable rate of {group_words(node.given)}"
    return None


def term_words(node, ranges=None) -> str:
    """A term of the specification (``fairaudit.spec.ast``) in words: "the favourable rate of those with sex =
    Female divided by that of those with sex = Male", "the average score of those with sex = Female" (``ranges``:
    the declared ones, which tell an averaged column from a 0/1 one); built from the syntax tree, never from its
    printed text."""
    value = _constant(node)
    if value is not None:
        return format_number(value)
    kind = node.kind
    if kind == "neg":
        return f"minus {_operand_words(node.operand, ranges)}"
    if kind == "expect":
        rate = _rate(node)
        if rate is not None:
            return rate
        from fairaudit.spec.quantities import is_quantity

        if is_quantity(node.event, ranges or {}):
            from fairaudit.spec.printer import quantity_text

            return f"the average {quantity_text(node.event)} of {group_words(node.given)}"
        return f"the share of {group_words(node.given)} for whom {condition_words(node.event)}"
    if kind == "fair":
        return f"the share of individuals whose decision does not change with {node.column}"
    if kind in ("sub", "div") and _rate(node.left) and _rate(node.right):
        return f"{_rate(node.left)} {BINARY_WORDS[kind]} that of {group_words(node.right.given)}"
    if kind in BINARY_WORDS:
        return f"{_operand_words(node.left, ranges)} {BINARY_WORDS[kind]} {_operand_words(node.right, ranges)}"
    raise TypeError(f"not a term: {node!r}")


def _operand_words(node, ranges=None) -> str:
    """A term inside an arithmetic term: in parentheses when it is itself arithmetic (so that the reader never has
    to know which binds tighter)."""
    text = term_words(node, ranges)
    return f"({text})" if node.kind in BINARY_WORDS and not (_rate(node.left) and _rate(node.right)) else text


def _cmp_words(node, ranges=None) -> str:
    left, right = _constant(node.left), _constant(node.right)
    if right is not None:
        return f"{term_words(node.left, ranges)} is {_WORDS[node.op]} {format_number(right)}"
    if left is not None:
        return f"{term_words(node.right, ranges)} is {_WORDS[FLIP[node.op]]} {format_number(left)}"
    return f"{term_words(node.left, ranges)} is {_WORDS[node.op]} {term_words(node.right, ranges)}"


def _chain(node, kind: str) -> list:
    if node.kind != kind:
        return [node]
    return _chain(node.left, kind) + _chain(node.right, kind)


def _words(node, names: dict, ranges=None) -> str:
    if id(node) in names:
        return names[id(node)]
    if node.kind == "cmp":
        return _cmp_words(node, ranges)
    if node.kind in ("and", "or"):
        parts = _chain(node, node.kind)
        if all(id(p) in names for p in parts):
            return f" {node.kind} ".join(names[id(p)] for p in parts)
        head = "all of" if node.kind == "and" else "at least one of"
        return f"{head}: " + "; ".join(_words(p, names, ranges) for p in parts)
    if node.kind == "not":
        return f"not ({_words(node.operand, names, ranges)})"
    return term_words(node, ranges)


def node_words(tree, node_id: str) -> str:
    """A node of the parsed specification ``tree`` (``fairaudit.spec.ast.Spec``) as every page, PDF and sentence
    names it: its clause name ("ratio"), else its words from the syntax tree — a comparison "the favourable rate of
    those with sex = Female divided by that of those with sex = Male is at least 0.8", a conjunction of named clauses
    "ratio and gap". Never its node id."""
    from fairaudit.spec.quantities import ranges_of

    names = {id(tn.node): tn.name for tn in tree.nodes if tn.name}
    return _words(tree.node(node_id).node, names, ranges_of(tree))


def spec_words(result) -> str:
    """The whole specification as a sentence names it: "the specification", with its clauses' names when they
    have them ("the specification (ratio and gap)")."""
    root = result.tree.nodes[0]
    names = [tn.name for tn in result.tree.nodes if tn.name]
    if root.name:
        return f"the specification ({root.name})"
    words = node_words(result.tree, root.id)
    return f"the specification ({words})" if names and words == " and ".join(names) else "the specification"


def model_verdict_word(verdict: str | None) -> str:
    """A model's verdict of a node as every front end says it (``fairaudit.core.explain.verdict_word``: "certified
    true" / "violated" / "undecided"); "" when the node has no verdict (a term)."""
    return "" if verdict is None else verdict_word(verdict)


def difference_word(verdict: str, a: str, b: str) -> str:
    """A difference's verdict in words: ``a_lower`` → "A lower", ``b_lower`` → "B lower", ``equal`` (the same for
    both), else "undecided" (the word the rest of fairaudit uses for a verdict not yet decided)."""
    return {"a_lower": f"{a} lower", "b_lower": f"{b} lower", "equal": "equal"}.get(
        verdict, verdict_word("unknown"))
BETTER_WHEN_LOWER = ("<", "<=")


def holds_phrase(result) -> str:
    """How a decided difference holds, for the scope it is about."""
    if result.scope == "rows":
        return f"exactly, on these {result.rows.get('audited') or 0:,} rows (not the population they were drawn from)"
    if result.engine == "monitor":
        return (f"with probability ≥ {1 - result.delta:g}, about the population the rows were drawn from, assuming "
                "they arrive in random order")
    if result.delta > 0:
        return f"with probability ≥ {1 - result.delta:g}, about {_scope(result)}"
    return f"with certainty (sound bounds), about {_scope(result)}"


SCOPES = {
    "population": "the population the rows were drawn from",
    "rows": "these rows exactly (not the population they were drawn from)",
    "domain": "the models' input domain",
    "modelled": "a distribution modelled from the rows",
    "program": "the population program",
}


def _scope(result) -> str:
    return SCOPES.get(result.scope, result.scope)


def _op(result, node_id: str) -> str | None:
    for tn in result.tree.nodes:
        if tn.id == node_id and tn.kind == "cmp":
            return tn.node.op
    return None


def _margin(result, node_id: str) -> str:
    """What a comparison's margin is, in words: its left side when the right side is a constant."""
    node = result.tree.node(node_id).node
    return (f"value of {term_words(node.left)}" if _constant(node.right) is not None
            else "margin (left side minus right side)")


def difference_sentence(result, d) -> str:
    """One plain sentence for one difference (``a − b`` of a node, or of a comparison's margin ``left − right``),
    naming the node in words (:func:`node_words`) and the models as they were given (:func:`said`)."""
    root = d.node == result.tree.nodes[0].id and d.kind in ("and", "or", "not")
    what = spec_words(result) if root else node_words(result.tree, d.node)
    a, b = said(result, d.a), said(result, d.b)
    span = interval(d.lo, d.hi)
    if d.verdict == "equal":
        if d.pairing == "same":
            return f"{_capital(what, result)}: the same for {a} and {b} (it does not read the decision)."
        return f"{_capital(what, result)}: exactly the same for {a} and {b} on these rows."
    value = "slack" if d.kind in ("and", "or", "not") else "margin" if d.kind == "cmp" else "value"
    if d.verdict == "undecided":
        return (f"{_capital(what, result)}: not established which of {a} and {b} is lower — {a}'s {value} minus {b}'s is "
                f"in {span} (estimate {number(d.estimate)}), which still contains 0.")
    lower, higher = (a, b) if d.verdict == "a_lower" else (b, a)
    lo, hi = (-d.hi, -d.lo) if d.verdict == "a_lower" else (d.lo, d.hi)
    gap = number(lo) if interval(lo, hi) == number(lo) else f"{number(lo)} to {number(hi)}"
    when = f" (decided after {d.decided_at:,} rows)" if d.decided_at else ""
    if d.kind in ("and", "or", "not"):
        better, worse = higher, lower
        return (f"{_capital(better, result)} is further from failing {what} than {worse}: its slack (how far it is from "
                f"failing; negative: by how much it fails) is higher by {gap}, {holds_phrase(result)}{when}.")
    op = _op(result, d.node) if d.kind == "cmp" else None
    if op in BETTER_WHEN_HIGHER or op in BETTER_WHEN_LOWER:
        better = higher if op in BETTER_WHEN_HIGHER else lower
        worse = lower if better == higher else higher
        return (f"{_capital(better, result)} is further on the passing side of “{what}” than {worse}: its "
                f"{_margin(result, d.node)} is {'higher' if better == higher else 'lower'} by {gap}, "
                f"{holds_phrase(result)}{when}.")
    return f"{_capital(what, result)} is lower for {lower} than for {higher} by {gap}, {holds_phrase(result)}{when}."


VERDICT_VERBS = {"true": ("satisfies", "satisfy"), "false": ("violates", "violate")}


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _model_verdicts(result) -> str:
    """Each model's verdict on the whole specification, grouped by verdict, every model by its phrase and the
    specification named (never "it"): "the current model (logreg) violates the specification (ratio); the decision
    tree is undecided on the specification (ratio)"."""
    whole = spec_words(result)
    groups: dict[str, list[str]] = {}
    for name in result.names:
        verdict = result.verdict_of(name)
        groups.setdefault(verdict if verdict in VERDICT_VERBS else "unknown", []).append(said(result, name))
    parts = []
    for verdict, who in groups.items():
        if verdict in VERDICT_VERBS:
            verb = VERDICT_VERBS[verdict][0 if len(who) == 1 else 1]
            parts.append(f"{_join(who)} {verb} {whole}")
        else:
            parts.append(f"{_join(who)} {'is' if len(who) == 1 else 'are'} undecided on {whole}")
    return "; ".join(parts)


def headline(result) -> str:
    """The strongest claim the comparison supports, in one sentence: which of the first two models is further from
    failing the specification as a whole (its slack), else the first decided comparison of its parts, else what is
    not established; with each model's own verdict."""
    a, b = result.names[0], result.names[1]
    first = [d for d in result.questions() if d.a == a and d.b == b]
    root = result.tree.nodes[0].id
    whole = next((d for d in first if d.node == root), None)
    verdicts = _model_verdicts(result)
    lead = ("On these rows: " if result.scope == "rows" else "Certified: " if result.engine == "monitor"
            else "Certified (sound bounds): " if result.delta == 0 else "Certified: ")
    if whole is not None and whole.verdict in ("a_lower", "b_lower"):
        return f"{lead}{difference_sentence(result, whole).rstrip('.')} ({verdicts})."
    cmps = [d for d in first if d.kind == "cmp" and d.pairing != "same"]
    decided = [d for d in cmps if d.verdict in ("a_lower", "b_lower")]
    pair = f"{said(result, a)} and {said(result, b)}"
    if result.exact and cmps and all(d.verdict == "equal" for d in cmps):
        return _capital(f"{pair} give exactly the same values on the comparisons of {spec_words(result)}, on these "
                        f"rows ({verdicts}).", result)
    read = f"after {result.rows_read:,} rows" if result.rows_read and result.engine == "monitor" else "on this evidence"
    if decided:
        part = difference_sentence(result, decided[0]).rstrip(".")
        more = f" ({len(decided)} of {len(cmps)} comparisons decided)" if len(cmps) > 1 else ""
        return (f"Not established {read} which of {pair} is further from failing {spec_words(result)} as a whole; "
                f"of its parts: {part}{more} ({verdicts}).")
    return (f"Not established {read}: no comparison of {spec_words(result)} is shown to differ between {pair} "
            f"(every difference interval still contains 0). {_capital(verdicts, result)}.")


def share_sentence(result) -> str | None:
    """Why a model's verdict here can differ from an audit of that model alone: the comparison shares its failure
    probability among more intervals (every model's and every difference's, ``fairaudit.comparison.run``), so each
    model's leaf interval holds at a smaller share than any level an audit of that model alone at the same failure
    probability gives that leaf (the monitor's directed split never goes below ``display_deltas``; the equal split
    gives Δ/k). None when that is not so (nothing is shared: the dataset engine, a verifier engine)."""
    level = (result.levels or {}).get("model_leaf")
    if result.engine != "monitor" or not level:
        return None
    from fairaudit.engines.monitor.directed import display_deltas

    alone = list(display_deltas(result.tree, result.delta).values())
    if not alone or not level < min(alone):
        return None
    return ("Each model's interval here holds at a smaller share of the failure probability than in an audit of that "
            "model alone at the same failure probability (the comparison also certifies the differences between the "
            "models), so it is wider: an audit of one model may decide what this comparison leaves undecided.")


def guarantee_sentence(result) -> str:
    """What every interval and difference verdict of the result is worth, and what it assumes."""
    if result.scope == "rows":
        return (f"Exact values of every model on the same {result.rows.get('audited') or 0:,} rows; the differences "
                "are exact too. They describe these rows only, not the population they were drawn from.")
    if result.engine == "monitor":
        order = (f"the rows were shuffled (seed {result.seed}) before they were read" if result.order == "shuffle"
                 else "the rows were read in the order given, which the guarantee assumes is random")
        return (f"Every model's interval and every difference interval holds at once, at every look, with probability "
                f"≥ {1 - result.delta:g} (Δ = {result.delta:g}, shared by a union bound), about the population the "
                f"rows were drawn from. It assumes the rows are independent draws in random order ({order}). "
                "Differences are paired: the same individuals went through every model.")
    kind = f"probability ≥ {1 - result.delta:g}" if result.delta > 0 else "certainty (sound bounds)"
    return (f"Each model's bounds come from the {result.engine} engine ({kind}, about {_scope(result)}); a "
            "difference is the subtraction of two models' bounds (not paired).")


ENGINE_WORDS = {"monitor": "monitor (anytime-valid, paired: about the population the rows were drawn from)",
                "dataset": "dataset (exact values on these rows)"}


def facts(result) -> list[tuple[str, str]]:
    """What was compared and how, as (key, value) rows."""
    rows = [("data", result.data or "—"),
            ("rows", result.rows.get("text") or "—")]
    if result.engine == "monitor":
        rows.append(("rows read", f"{result.rows_read:,}" + (" (stopped when every difference was decided)"
                                                             if result.stop == "decided" else "")))
        rows.append(("row order", "shuffled with seed " + str(result.seed) if result.order == "shuffle"
                     else "as given (the guarantee assumes it is random)"))
    rows.append(("engine", ENGINE_WORDS.get(result.engine, f"{result.engine} (each model's own bounds, subtracted)")))
    if result.delta:
        rows.append(("failure probability", f"Δ = {result.delta:g}: every interval and difference shown holds at once "
                                            f"with probability ≥ {1 - result.delta:g}"))
    levels = result.levels or {}
    if levels.get("paired_estimators"):
        rows.append(("how Δ is spent", f"{levels['model_estimators']} model leaf interval(s) at δ = "
                                       f"{levels['model_leaf']:.3g} each, {levels['paired_estimators']} paired "
                                       f"difference(s) at δ = {levels['paired_leaf']:.3g} each (a union bound)"))
    return rows
