"""The comparison's sentences, in one place: what each difference says, the headline, and what they are worth."""
from __future__ import annotations

from fairaudit.core.explain import interval, number, verdict_word

BETTER_WHEN_HIGHER = (">", ">=")


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


def _short(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


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
    nodes = {tn.id: tn for tn in result.tree.nodes}
    left, right = (nodes[c] for c in nodes[node_id].children)
    return f"value of {_short(left.text, 60)}" if right.kind == "const" else "margin (left side − right side)"


def difference_sentence(result, d) -> str:
    """One plain sentence for one difference (``a − b`` of a node, or of a comparison's margin ``left − right``)."""
    what = "the specification" if d.node == result.tree.nodes[0].id and d.kind in ("and", "or", "not") \
        else _short(d.text)
    span = interval(d.lo, d.hi)
    if d.verdict == "equal":
        if d.pairing == "same":
            return f"{what}: the same for {d.a} and {d.b} (it does not read the decision)."
        return f"{what}: exactly the same for {d.a} and {d.b} on these rows."
    if d.verdict == "undecided":
        return (f"{what}: not established which of {d.a} and {d.b} is lower — the difference {d.a} − {d.b} is "
                f"in {span} (estimate {number(d.estimate)}), which still contains 0.")
    lower, higher = (d.a, d.b) if d.verdict == "a_lower" else (d.b, d.a)
    lo, hi = (-d.hi, -d.lo) if d.verdict == "a_lower" else (d.lo, d.hi)
    gap = number(lo) if interval(lo, hi) == number(lo) else f"{number(lo)} to {number(hi)}"
    when = f" (decided after {d.decided_at:,} rows)" if d.decided_at else ""
    if d.kind in ("and", "or", "not"):
        better, worse = higher, lower
        return (f"{better} is further from failing {what} than {worse}: its slack (how far it is from failing; "
                f"negative: by how much it fails) is higher by {gap}, {holds_phrase(result)}{when}.")
    op = _op(result, d.node) if d.kind == "cmp" else None
    if op in BETTER_WHEN_HIGHER or op in BETTER_WHEN_LOWER:
        better = higher if op in BETTER_WHEN_HIGHER else lower
        worse = lower if better == higher else higher
        return (f"{better} is further on the passing side of {what} than {worse}: its {_margin(result, d.node)} is "
                f"{'higher' if better == higher else 'lower'} by {gap}, {holds_phrase(result)}{when}.")
    return (f"{lower}'s {what} is lower than {higher}'s by {gap}, {holds_phrase(result)}{when}.")


def _model_verdicts(result) -> str:
    """Each model's verdict on the whole specification: "old violates it, new satisfies it"."""
    words = {"true": "satisfies it", "false": "violates it"}
    parts = [f"{name} {words.get(result.verdict_of(name), 'is undecided on it')}" for name in result.names]
    return ", ".join(parts)


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
    pair = f"{a} and {b}"
    if result.exact and cmps and all(d.verdict == "equal" for d in cmps):
        return f"{pair} give exactly the same values on the specification's comparisons, on these rows ({verdicts})."
    read = f"after {result.rows_read:,} rows" if result.rows_read and result.engine == "monitor" else "on this evidence"
    if decided:
        part = difference_sentence(result, decided[0]).rstrip(".")
        more = f" ({len(decided)} of {len(cmps)} comparisons decided)" if len(cmps) > 1 else ""
        return (f"Not established {read} which of {pair} is further from failing the specification as a whole; of "
                f"its parts: {part}{more} ({verdicts}).")
    return (f"Not established {read}: no comparison of the specification is shown to differ between {pair} "
            f"(every difference interval still contains 0; {verdicts}).")


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
