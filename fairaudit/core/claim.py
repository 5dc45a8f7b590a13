"""What a result may claim, and every headline sentence about it (one place: CLI, dashboard, PDF and JSON).

An engine's verdict is about its **scope** (``SCOPES``): these rows, the population the rows were drawn from, a
modelled distribution fitted to rows, a population program the user wrote, or a network's input domain. The
**headline** is the strongest claim that all the evidence supports about what the user asked about:

* For an engine whose bounds are certain for a distribution *fitted to the audited rows* (justicia: independent
  features per group; fvgm: a Bayesian network; fairsquare over a program generated from the rows), certainty
  about the fit is not certainty about the population. The headline composes the engine's bound with what the
  rows themselves support: every leaf's interval is widened to cover the exact binomial (Clopper–Pearson) interval
  of its count on the audited rows (``population_check``), which covers the estimation error of the fitted
  distribution and the gap between it and the rows at once. The verdict evaluated on the widened leaves is the
  headline: it holds with probability ≥ 1 − ``POPULATION_DELTA`` (a union bound over the distinct leaves), assuming
  the audited rows are an i.i.d. sample of the population. When it does not decide, the headline is *undecided for
  the population* and the engine's certain verdict stays visible as the second line (``Claim.second``).
* A threshold the tool proposed after looking at the rows (``suggest.apply`` marks the specification with a
  ``# threshold-chosen-from:`` header, ``chosen_from``) is a hypothesis: its verdict is **exploratory** — its own
  badge, exit 3 — until it is confirmed on rows it was not chosen on (``fairaudit.confirm``).

``Claim`` holds the headline verdict, its status word, what it is about and the sentences; ``claim(result)``
builds it. ``summary_sentence`` is the one plain sentence a manager reads.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from fairaudit.core.focus import Focus, choose, focus, headline_view
from fairaudit.core.guarantee import Guarantee, verdict_sentence
from fairaudit.spec import ast
from fairaudit.spec.words import group_words

#: what a verdict can be about
SCOPES = {
    "rows": "these rows",
    "population": "the population the rows were drawn from",
    "modelled": "a distribution modelled from the rows",
    "program": "the population program",
    "domain": "the network's input domain",
}
#: the failure probability of the population check of a modelled-distribution engine (split over its leaves)
POPULATION_DELTA = 0.05
#: status -> the word every front end shows (badge, CLI ``verdict:`` line, PDF banner)
STATUS_WORDS = {"certified": "certified", "violated": "violated", "undecided": "undecided",
                "exploratory": "exploratory"}
#: the CLI's exit code for each status (a pipeline gate)
EXIT_CODES = {"certified": 0, "violated": 1, "undecided": 3, "exploratory": 3}
CHOSEN_HEADER = "threshold-chosen-from"
ROWS_ASSUMPTION = ("the audited rows are an independent sample of the population (rows the model was not trained "
                   "on), looked at once")


# ------------------------------------------------------------------------------------------------ population check


def rows_intervals(spec, inputs, delta: float = POPULATION_DELTA, rows_spec=None):
    """Every distinct leaf's exact binomial interval on the audited rows of ``inputs`` (decisions by its model), at
    an equal share of ``delta``: ``{leaf key of spec: (lo, hi, n)}``; None when there are no rows or no decisions to
    count (a program or a network given by the user, not fitted to rows). ``rows_spec``: the same tree written over
    the dataset's columns, when ``spec`` reads a generated program's variables (same node ids)."""
    from fairaudit.bounds.fixed_sample import clopper_pearson
    from fairaudit.core.allocation import equal_split
    from fairaudit.core.observations import observe_inputs

    dataset = getattr(inputs, "dataset", None)
    if dataset is None or getattr(inputs, "model", None) is None and getattr(inputs, "decisions", None) is None:
        return None
    if getattr(inputs, "decisions", None) is None:  # a generated population: the model's decisions on the rows
        from fairaudit.core.inputs import Inputs

        inputs = Inputs.build(dataset, model=inputs.model)
    over_rows = rows_spec if rows_spec is not None else spec
    # the one-look intervals of the dataset engine's ``interval: one-look``: Clopper–Pearson at an equal share of delta
    obs = observe_inputs(over_rows, inputs)
    deltas = equal_split(list(obs.values), delta)
    found = {}
    for key, values in obs.values.items():
        mask = obs.masks[key]
        n = int(mask.sum())
        lo, hi = clopper_pearson(int(np.count_nonzero(values & mask)), n, deltas[key])
        found[key] = (float(lo), float(hi), n)
    if rows_spec is None:
        return found
    from fairaudit.core.evaluate import leaf_key

    by_id = {tn.id: leaf_key(tn) for tn in rows_spec.nodes if tn.kind in ("expect", "fair")}
    return {leaf_key(tn): found[by_id[tn.id]] for tn in spec.nodes if tn.kind in ("expect", "fair")
            and by_id.get(tn.id) in found}


def population_check(spec, modelled: Mapping[str, tuple[float, float]], rows: Mapping[str, tuple],
                     delta: float = POPULATION_DELTA) -> dict:
    """The specification evaluated on the leaves' population intervals: each leaf's modelled ``(lo, hi)`` widened to
    cover its rows interval (``rows_intervals``). Returns ``{"delta", "verdict", "nodes": {id: {lo, hi, verdict}},
    "leaves": {key: {"model": [lo, hi], "rows": [lo, hi], "n", "lo", "hi"}}}``: the verdict holds with probability
    ≥ 1 − delta when the rows are an i.i.d. sample of the population (the widened interval contains the rows'
    interval, which contains the population value with that probability)."""
    from fairaudit.bounds.rules import FALSE, TRUE
    from fairaudit.core.evaluate import LeafValue, compile_spec, evaluate

    cs = compile_spec(spec)
    leaves, facts = {}, {}
    for key in cs.leaf_keys:
        m_lo, m_hi = modelled[key]
        r_lo, r_hi, n = rows.get(key, (0.0, 1.0, 0))
        lo, hi = min(m_lo, r_lo), max(m_hi, r_hi)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            lo, hi = 0.0, 1.0
        leaves[key] = LeafValue(np.array([(lo + hi) / 2]), np.array([lo]), np.array([hi]), 0.0, np.array([float(n)]))
        facts[key] = {"model": [float(m_lo), float(m_hi)], "rows": [float(r_lo), float(r_hi)], "n": int(n),
                      "lo": float(lo), "hi": float(hi)}
    values = evaluate(spec, leaves)
    words = {TRUE: "true", FALSE: "false"}
    nodes = {}
    for tn in spec.nodes:
        v = values[tn.id]
        entry = {"lo": float(v.lo[0]), "hi": float(v.hi[0])}
        if v.verdict is not None:
            entry["verdict"] = words.get(int(v.verdict[0]), "unknown")
        nodes[tn.id] = entry
    return {"delta": float(delta), "verdict": nodes[spec.nodes[0].id].get("verdict", "unknown"), "nodes": nodes,
            "leaves": facts}


def modelled_leaves(result) -> dict[str, tuple[float, float]]:
    """Each distinct leaf's last interval in ``result``'s trace, by leaf key (its text)."""
    out = {}
    for info in result.node_info:
        if info.kind in ("expect", "fair") and info.text not in out:
            f = result.final_values(info.id)
            out[info.text] = (float(f["lo"]), float(f["hi"]))
    return out


# ------------------------------------------------------------------------------------------------ chosen thresholds


def chosen_mark(rows_text: str | None, content_hash: str | None, clause: str, old: str, new: str) -> str:
    """The header line ``suggest.apply`` adds: which threshold was chosen, and on which data —
    ``# threshold-chosen-from: data 3b8a…; ratio >= 0.8 → >= 0.75 (rows)``. ``clause`` names the comparison the way
    a reader of the specification knows it (``clause_label``: its name, else its non-constant side as printed),
    never by an internal node id."""
    data = f"data {content_hash[:16]}" if content_hash else "unidentified data"
    return f"# {CHOSEN_HEADER}: {data}; {clause} {old} → {new}" + (f" ({rows_text})" if rows_text else "")


def clause_label(name: str | None, sides: Sequence[str], constant_left: bool = False) -> str:
    """How a chosen-threshold mark names a comparison: its name (``ratio``), else the side that is not the
    threshold, as the printer writes it (``E[pred | sex == "Female"] / E[pred | sex == "Male"]``; for a margin,
    ``left - right``). Both survive re-parsing and re-numbering, unlike a node id."""
    if name:
        return name
    return sides[1] if constant_left and len(sides) > 1 else sides[0]


_DATA = re.compile(r"data ([0-9a-f]{16})")


def chosen_from(source: str | None) -> list[dict]:
    """The ``# threshold-chosen-from:`` marks of a specification's source: ``[{"text", "data"}]`` (``data``: the
    first 16 hex digits of the content hash of the data the threshold was chosen on, or None)."""
    out = []
    for line in (source or "").splitlines():
        stripped = line.strip()
        if not stripped.startswith("#"):
            continue
        body = stripped.lstrip("#").strip()
        if body.lower().startswith(CHOSEN_HEADER + ":"):
            value = body.split(":", 1)[1].strip()
            found = _DATA.search(value)
            out.append({"text": value, "data": found.group(1) if found else None})
    return out


_OPS = r"(?:<=|>=|==|!=|<|>)"
#: ``; <clause> <op> <old> → <op> <new>``: ``<clause>`` a name or a side's text (``clause_label``); marks written
#: before it (``n18 >= 0.8 → >= 0.0434``) named a node id, still read
_CHANGE = re.compile(rf"; (.+?) {_OPS} (\S+) → {_OPS} (\S+)")
_NODE_ID = re.compile(r"n\d+")


def _nodes(result) -> list[dict]:
    try:
        return list(getattr(result, "nodes", None) or [])
    except Exception:  # noqa: BLE001 - a result without a trace: no comparison to resolve a mark to
        return []


def _sides(node_id: str, nodes: Sequence[Mapping]) -> list[str]:
    return [str(n.get("text")) for n in nodes if n.get("parent") == node_id]


def _side_number(node_id: str, nodes: Sequence[Mapping]) -> list[float]:
    out = []
    for n in nodes:
        if n.get("parent") == node_id:
            try:
                out.append(float(n.get("text")))
            except (TypeError, ValueError):
                continue
    return out


def _resolve(clause: str, new: str, nodes: Sequence[Mapping]) -> str | None:
    """The id of the comparison a mark's ``clause`` names in ``nodes`` (a named one first, then one with that side;
    among several, the one whose constant is the chosen threshold), or None."""
    cmps = [n for n in nodes if n.get("kind") == "cmp"]
    found = [n for n in cmps if n.get("name") == clause] or [n for n in cmps if clause in _sides(n["id"], nodes)]
    if not found and _NODE_ID.fullmatch(clause) and any(n["id"] == clause for n in cmps):
        return clause  # a mark written before clauses were named (an id)
    if len(found) > 1:
        try:
            value = float(new)
        except ValueError:
            value = None
        found = [n for n in found if value in _side_number(n["id"], nodes)] or found
    return str(found[0]["id"]) if found else None


def _marks(result) -> list[str]:
    marks = list((getattr(result, "exploratory", None) or {}).get("marks") or [])
    confirmation = (getattr(result, "info", None) or {}).get("confirmation") or {}
    return marks + [m["text"] for m in chosen_from(confirmation.get("spec_text"))]


def chosen_clauses(result) -> list[dict]:
    """The thresholds fairaudit chose from the data in ``result``'s specification (its exploratory marks, or the
    confirmation's new text): ``[{"id", "clause", "old", "new"}]`` — ``id`` the comparison's node (internal: for
    lookups, never shown), ``clause`` how the user knows it (its name, else its non-constant side)."""
    nodes = _nodes(result)
    out, seen = [], set()
    for mark in _marks(result):
        found = _CHANGE.search(mark)
        if not found:
            continue
        clause, old, new = found.groups()
        node_id = _resolve(clause, new, nodes)
        if node_id is None or node_id in seen:
            continue
        seen.add(node_id)
        info = next(n for n in nodes if n["id"] == node_id)
        if _NODE_ID.fullmatch(clause):  # an old mark: say the clause, not the id
            clause = info.get("name") or clause_label(None, _sides(node_id, nodes),
                                                      constant_left=_constant_left(node_id, nodes))
        out.append({"id": node_id, "clause": clause, "old": old, "new": new})
    return out


def _constant_left(node_id: str, nodes: Sequence[Mapping]) -> bool:
    kids = [n for n in nodes if n.get("parent") == node_id]
    return len(kids) == 2 and kids[0].get("kind") in ("const", "neg") and kids[1].get("kind") not in ("const", "neg")


def chosen_thresholds(result) -> dict[str, tuple[str, str]]:
    """``{comparison id: (threshold asked for, threshold chosen)}`` for the thresholds fairaudit chose from the data
    in ``result``'s specification (``chosen_clauses``; the ids are internal)."""
    return {c["id"]: (c["old"], c["new"]) for c in chosen_clauses(result)}


def chosen_line(result) -> str | None:
    """"sex_parity: threshold 0.298 chosen from the data — the specification asked for 0.01" — said with the
    specification wherever it is printed (the clause by its name, else its non-constant side; never a node id);
    None when no threshold was chosen."""
    found = chosen_clauses(result)
    if not found:
        return None
    confirmed = bool(((getattr(result, "info", None) or {}).get("confirmation")))
    how = ("on part of the rows, and audited on the others" if confirmed else
           "after looking at these data (exploratory)")
    return "; ".join(f"{c['clause']}: threshold {c['new']} chosen {how} — the specification asked for {c['old']}"
                     for c in found)


def exploratory_state(source: str | None, provenance: Mapping | None, confirmed: Mapping | None = None,
                      scope: str | None = None) -> dict | None:
    """Whether a run of the specification ``source`` on the data of ``provenance`` is exploratory: its source
    carries a chosen-threshold mark, the data it was chosen on is this data (or unknown), and the run is not a
    confirmation on rows the choice did not see (``confirmed``: the split ``fairaudit.confirm`` records). Returns
    ``{"marks": [...], "why": ...}`` or None (not exploratory). A verdict about a program or an input domain
    (``scope``) reads no rows: a threshold chosen from its certain bounds is not a look at data."""
    marks = chosen_from(source)
    if not marks or confirmed or scope in ("program", "domain"):
        return None
    here = _data_key(provenance)
    same = [m for m in marks if m["data"] is None or here is None or m["data"] == here]
    if not same:
        return None  # chosen on other data: this run is the fresh look (a warning says so, ``other_data_note``)
    return {"marks": [m["text"] for m in marks],
            "why": "the threshold was chosen by fairaudit after looking at these data, so this verdict is a "
                   "hypothesis, not a certificate: confirm it on rows the choice did not see"}


def _data_key(provenance: Mapping | None) -> str | None:
    """The 16 hex digits a chosen-threshold mark names the data by (``chosen_mark``), of ``provenance``'s dataset."""
    dataset = (provenance or {}).get("dataset") or {}
    return str(dataset.get("content_hash") or "")[:16] or None


def other_data_note(source: str | None, provenance: Mapping | None) -> str | None:
    """A warning for a chosen threshold audited on other data than it was chosen on (a certificate, if those rows
    are new), or None."""
    marks = chosen_from(source)
    here = _data_key(provenance)
    if not marks or here is None or any(m["data"] in (None, here) for m in marks):
        return None
    return ("the specification's threshold was chosen on other data (" + "; ".join(m["text"] for m in marks) +
            "): this verdict certifies it only if these rows are new, not a superset of those")


# ------------------------------------------------------------------------------------------------ the claim


@dataclass(frozen=True)
class Claim:
    """The headline of a result: ``verdict`` (``true``/``false``/``unknown``: what it asserts about ``about``),
    ``status`` (certified / violated / undecided / exploratory: the badge and the exit code), ``guarantee`` (what
    the headline's verdict is worth), ``headline`` (the verdict and its guarantee in one line), ``summary`` (plain
    words), ``second`` (the engine's own result on its narrower scope, when the headline is not it), ``why`` (why
    the headline is weaker than the engine's verdict, or exploratory), ``focus`` (the comparison the sentences are
    about and the rule that chose it, ``fairaudit.core.focus``; None without comparisons)."""

    verdict: str
    status: str
    scope: str
    about: str
    guarantee: Guarantee
    headline: str
    summary: str
    second: str | None = None
    why: str | None = None
    focus: Focus | None = None

    @property
    def word(self) -> str:
        return STATUS_WORDS[self.status]

    @property
    def key(self) -> str:
        """The headline as a verdict key: "exploratory", else its verdict (``true``/``false``/``unknown``) — what a
        badge, a sidebar line or the history show (``fairaudit.core.explain.verdict_word``)."""
        return "exploratory" if self.status == "exploratory" else self.verdict

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def to_dict(self) -> dict:
        return {"verdict": self.verdict, "status": self.status, "scope": self.scope, "about": self.about,
                "headline": self.headline, "summary": self.summary, "second": self.second, "why": self.why,
                "guarantee": self.guarantee.to_dict(), "focus": self.focus.to_dict() if self.focus else None}


def _status(verdict: str) -> str:
    return {"true": "certified", "false": "violated"}.get(verdict, "undecided")


def population_guarantee(delta: float) -> Guarantee:
    return Guarantee("probabilistic", float(delta), assumes=ROWS_ASSUMPTION, scope="one look at the audited rows")


def claim(result) -> Claim:
    """The headline ``Claim`` of an ``AuditResult`` (module doc)."""
    scope = getattr(result, "scope", None) or _default_scope(result)
    engine_line = verdict_sentence(result.verdict, result.guarantee, at=result.verdict_step, steps=result.steps,
                                   unit=result.unit, reason=result.undecided_reason() if result.verdict not in
                                   ("true", "false") else "", with_note=False)
    verdict, guarantee, headline, second, why = result.verdict, result.guarantee, engine_line, None, None
    check = getattr(result, "population", None)
    if scope == "modelled":
        about = "the population the rows were drawn from"
        if check:
            verdict = check.get("verdict", "unknown")
            guarantee = population_guarantee(check.get("delta", POPULATION_DELTA))
            second = f"For the modelled distribution alone: {engine_line}."
            if verdict in ("true", "false"):
                word = "certified true" if verdict == "true" else "violated"
                headline = (f"{word} for the population {guarantee.phrase}: the modelled bound, widened to what "
                            f"the audited rows support, decides it")
            else:
                headline = "undecided for the population: " + _not_established(result, check)
                why = headline
        else:  # no rows to compare with: the engine's claim, about the fitted distribution only
            verdict = "unknown"
            headline = ("undecided for the population: " + engine_line + " — about the modelled distribution only; "
                        "no audited rows to check it against")
            second = f"For the modelled distribution alone: {engine_line}."
    else:
        about = _about(result, scope)
    status = _status(verdict)
    exploratory = getattr(result, "exploratory", None)
    if exploratory and verdict in ("true", "false"):
        status = "exploratory"
        why = exploratory.get("why")
        headline = f"exploratory: {headline} — {why}"
    intervals = headline_view(result)[1]
    summary = summary_sentence(result, verdict=verdict, intervals=intervals, guarantee=guarantee, status=status)
    return Claim(verdict, status, scope, about, guarantee, headline, summary, second, why,
                 choose(result.nodes, verdict, intervals))


def _default_scope(result) -> str:
    g = result.guarantee
    if g.kind == "exact":
        return "rows"
    if g.kind == "probabilistic":
        return "population"
    return "program"


def _about(result, scope: str) -> str:
    rows = getattr(result, "rows", None) or {}
    if scope == "rows":
        audited = rows.get("audited")
        return f"these {audited:,} rows" if isinstance(audited, int) else "these rows"
    return SCOPES.get(scope, scope)


def _not_established(result, check: Mapping) -> str:
    """"certain for the modelled distribution (violated), not established for the population: the estimation
    interval of <term> is [a, b], which contains the threshold c"."""
    from fairaudit.core.explain import comparison_parts, interval, number, verdict_word

    modelled = verdict_word(result.verdict)
    head = (f"{modelled} with certainty for the modelled distribution, not established for the population"
            if result.verdict in ("true", "false") else
            "undecided for the modelled distribution too, and not established for the population")
    found = focus(result)
    if found is None:
        return head
    worst = found.id
    parts = comparison_parts(worst, result.nodes)
    nodes = check.get("nodes") or {}
    if found.among > 1:  # say which comparison, and by which rule (``fairaudit.core.focus``)
        head += f": for {found.words} ({worst})"
    if parts is not None:
        term, op, c = parts
        span = nodes.get(str(term["id"]), {})
        return (f"{head}: the estimation interval of {_short(term['text'])} is {interval(span.get('lo'), span.get('hi'))}"
                f" ({_made_of(check)}), which contains the threshold {number(c)}")
    span = nodes.get(str(worst), {})
    return f"{head}: the estimation interval of left − right is {interval(span.get('lo'), span.get('hi'))}"


def _made_of(check: Mapping) -> str:
    """What a population interval is: the rows' own interval when every modelled bound lies inside it (the rows
    decide nothing the model could add), else the modelled bound widened to it."""
    leaves = (check.get("leaves") or {}).values()
    if leaves and all(f["lo"] == f["rows"][0] and f["hi"] == f["rows"][1] for f in leaves):
        return ("what the audited rows support: their exact binomial intervals, which contain the modelled bounds — "
                "the estimation error and the modelling gap together")
    return "the modelled bound widened to what the audited rows support: estimation error and modelling gap"


def _short(text: str, limit: int = 70) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ------------------------------------------------------------------------------------------------ plain words

def spec_tree(result):
    """The parsed specification (``fairaudit.spec.ast.Spec``) whose nodes are ``result``'s — the run's own tree, or
    the result's canonical text parsed (a result read back from JSON) — so that every sentence is built from the
    syntax tree, never from a node's printed text; None when neither has ``result``'s node ids and kinds."""
    shape = [(i.id, i.kind) for i in getattr(result, "node_info", [])]
    tree = getattr(result, "tree", None)
    if tree is not None and [(tn.id, tn.kind) for tn in getattr(tree, "nodes", ())] == shape:
        return tree
    from fairaudit.base.errors import FairauditError
    from fairaudit.spec import parse

    try:
        tree = parse(str(result.spec))
    except (FairauditError, ValueError, RecursionError):
        return None
    return tree if [(tn.id, tn.kind) for tn in tree.nodes] == shape else None


def _expect(node_id: str, tree):
    """The ``E[...]`` node ``node_id`` of the parsed ``tree``; None without a tree, for an unknown id or another kind."""
    if tree is None:
        return None
    try:
        node = tree.node(str(node_id)).node
    except KeyError:
        return None
    return node if node.kind == "expect" else None


def rate_group(node_id: str, tree) -> str | None:
    """The group whose favourable rate the node ``E[pred | condition]`` is, in words (``fairaudit.spec.words``):
    "those with sex = Female and race = Black"; None for any other node, or without a ``tree``."""
    node = _expect(node_id, tree)
    if node is None or node.given is None or not (isinstance(node.event, ast.Name) and node.event.reserved
                                                  and node.event.name == "pred"):
        return None
    return group_words(node.given)


def event_group(node_id: str, tree, ranges=None) -> tuple[str, str] | None:
    """``(event, group)`` in words for a node ``E[event | condition]`` whose event is not the bare favourable
    decision: ``("decision = High", "those with race = Black")`` (a class of a decision among several, a column's
    value); None for any other node (``rate_group``'s, an average: ``mean_group``'s, ``Fair[...]``), or without a
    ``tree``. ``ranges``: the declared ones, as for ``mean_group``."""
    from fairaudit.spec.quantities import is_quantity, ranges_of
    from fairaudit.spec.words import condition_words

    node = _expect(node_id, tree)
    if node is None or node.given is None or (isinstance(node.event, ast.Name) and node.event.reserved) \
            or is_quantity(node.event, {**(ranges or {}), **ranges_of(tree)}):
        return None
    return condition_words(node.event), group_words(node.given)


def mean_group(node_id: str, tree, ranges=None) -> tuple[str, str] | None:
    """``(quantity, group)`` in words for a node ``E[quantity | condition]`` that averages a quantity
    (``fairaudit.spec.quantities``): ``("amount", "those with sex = Female")``; None for any other node, or without
    a ``tree``. ``ranges``: the declared ones, when the tree was parsed again from text without them."""
    from fairaudit.spec.printer import quantity_text
    from fairaudit.spec.quantities import is_quantity, ranges_of

    node = _expect(node_id, tree)
    if node is None or not is_quantity(node.event, {**(ranges or {}), **ranges_of(tree)}):
        return None
    return quantity_text(node.event), group_words(node.given)


def _sure(guarantee: Guarantee, status: str) -> str:
    if status == "exploratory":
        return ("but the threshold was chosen after looking at these data: a hypothesis to confirm on fresh rows, "
                "not a certificate")
    if guarantee.kind == "probabilistic":
        return f"this is wrong with probability at most {_percent(guarantee.delta)}"
    if guarantee.kind == "sound":
        return f"this holds with certainty {guarantee.scope or ''}".rstrip()
    return f"computed exactly {guarantee.scope or ''}".rstrip()


def _percent(p: float) -> str:
    value = 100 * float(p)
    text = f"{value:.3g}"
    return f"{text} %"


def summary_sentence(result, *, verdict: str | None = None, intervals: Mapping[str, Mapping] | None = None,
                     guarantee: Guarantee | None = None, status: str | None = None) -> str:
    """One sentence a manager can read: who is favoured, by how much (the interval), against what was allowed, and
    how sure — e.g. "Those with sex = Female receive a favourable decision less often than those with sex = Male:
    the gap is between 0.09 and 0.3, above the 0.1 you allowed; this is wrong with probability at most 5 %."
    It is about the comparison that matters (``fairaudit.core.focus``); when the specification has several, the
    sentence first says which rule chose it ("The comparison closest to failing: …"). Groups are named from the
    syntax tree (``rate_group``). ``intervals``: node id → {lo, hi, verdict} to read instead of the trace's (the
    population check's)."""
    from fairaudit.core.explain import _WORDS, children, comparison_parts, interval, number, part_name

    verdict = verdict if verdict is not None else result.verdict
    guarantee = guarantee or result.guarantee
    status = status or _status(verdict)
    nodes = result.nodes
    by_id = {str(n["id"]): n for n in nodes}
    found = choose(nodes, verdict, intervals)
    sure = _sure(guarantee, status)
    if found is None:
        word = {"true": "holds", "false": "is violated"}.get(verdict, "is not decided yet")
        return _capital(f"the specification {word}; {sure}.") if verdict in ("true", "false") else \
            _capital(f"the specification {word}.")

    def span(node_id: str) -> tuple[float, float]:
        got = (intervals or {}).get(str(node_id))
        if got is not None:
            return got.get("lo"), got.get("hi")
        f = by_id[str(node_id)].get("final") or {}
        return f.get("lo"), f.get("hi")

    target = found.id
    cmp_node = by_id[target]
    name = _lead(found, cmp_node.get("name"))
    if verdict in ("true", "false"):  # the chosen comparison's own verdict (under a ``not``, the opposite)
        own = ((intervals or {}).get(target) if intervals is not None else None) or cmp_node.get("final") or {}
        verdict = own.get("verdict") or verdict
    parts = comparison_parts(target, nodes)
    if parts is None:
        lo, hi = span(target)
        what = f"{part_name(cmp_node)} (left − right lies in {interval(lo, hi)})"
        word = {"true": "holds", "false": "is violated"}.get(verdict, "is not decided yet")
        tail = f"; {sure}" if verdict in ("true", "false") else ""
        return name + _capital(f"{what} {word}{tail}.")
    term, op, c = parts
    lo, hi = span(term["id"])
    kids = children(term["id"], nodes)
    tree = spec_tree(result)
    subject, measure = None, f"{_short(term['text'], 60)}"
    declared = _declared(result)
    pair = term.get("kind") in ("sub", "div") and len(kids) == 2
    rates = [rate_group(k["id"], tree) for k in kids] if pair else []
    means = [mean_group(k["id"], tree, declared) for k in kids] if pair else []
    events = [event_group(k["id"], tree, declared) for k in kids] if pair else []
    words = None  # (more, less, the ratio's name, the measure's name when no side is established)
    ratio = term.get("kind") == "div"
    if pair and all(rates):
        a, b = rates
        words = (f"{_capital(a)} receive a favourable decision more often than {b}",
                 f"{_capital(a)} receive a favourable decision less often than {b}",
                 "the ratio of their favourable rates",
                 f"the ratio of the favourable rates of {a} and {b}" if ratio else
                 f"the gap in favourable rates between {a} and {b}")
    elif pair and all(means) and means[0][0] == means[1][0]:  # one amount averaged over two groups
        (q, a), (_, b) = means
        words = (f"the average {q} of {a} is higher than that of {b}",
                 f"the average {q} of {a} is lower than that of {b}",
                 f"the ratio of their average {q}",
                 f"the ratio of the average {q} of {a} and of {b}" if ratio else
                 f"the gap in the average {q} between {a} and {b}")
    elif pair and all(events) and events[0][0] == events[1][0]:  # one event's rate, two groups
        (e, a), (_, b) = events
        words = (f"the rate of {e} among {a} is higher than among {b}",
                 f"the rate of {e} among {a} is lower than among {b}",
                 f"the ratio of their rates of {e}",
                 f"the ratio of the rates of {e} among {a} and among {b}" if ratio else
                 f"the gap in the rate of {e} between {a} and {b}")
    if words is not None:
        more, less, ratio_name, neither = words
        measure = ratio_name if ratio else "the gap"
        side = _side(lo, hi, 1.0 if ratio else 0.0)
        if side:
            subject = more if side > 0 else less
        else:  # which group is favoured is not established: name the measure instead
            measure = neither
    elif mean_group(term["id"], tree, declared):
        q, a = mean_group(term["id"], tree, declared)
        measure = f"the average {q} of {a}"
    elif term.get("kind") == "fair" and tree is not None:
        measure = ("the share of individuals whose decision does not change with "
                   f"{tree.node(str(term['id'])).node.column}")
    elif rate_group(term["id"], tree):
        measure = f"the favourable rate of {rate_group(term['id'], tree)}"
    elif event_group(term["id"], tree, declared):
        e, a = event_group(term["id"], tree, declared)
        measure = f"the rate of {e} among {a}"
    where = interval(lo, hi)
    size = (f"{measure} is {where}" if "[" not in where else
            f"{measure} is between {number(lo)} and {number(hi)}")
    chosen = chosen_thresholds(result).get(str(target))
    if chosen is not None:  # fairaudit chose this threshold from the data (``suggest.apply``, ``confirm``)
        allowed = f"the {number(c)} chosen from the data (the specification asked for {chosen[0]})"
    else:
        allowed = f"the {number(c)} you allowed" if op in ("<", "<=") else f"the {number(c)} you required"
    rel = {"<": "above", "<=": "above", ">": "below", ">=": "below"}.get(op)
    try:
        straddles = float(lo) <= float(c) <= float(hi) and float(lo) != float(hi)
    except (TypeError, ValueError):
        straddles = False
    # a comparison decided by the engine's joint test while its interval still contains the threshold
    joint = "the evidence taken together shows it is " if straddles and verdict in ("true", "false") else ""
    if verdict == "false" and rel:
        judged = f"{joint}{rel} {allowed}"
    elif verdict == "true" and rel:
        judged = joint + (f"{'below' if rel == 'above' else 'above'} {allowed}" if op in ("<", ">") else
                          f"within {allowed}")
    elif verdict == "true":
        judged = f"{_WORDS.get(op, op)} {number(c)} as required"
    elif verdict == "false":
        judged = f"not {_WORDS.get(op, op)} {number(c)} as required"
    else:
        judged = f"so it is not yet known whether it is {_WORDS.get(op, op)} {number(c)}"
    text = f"{subject + ': ' if subject else ''}{size}{' and ' if joint else ', '}{judged}"
    if verdict in ("true", "false"):
        text += f"; {sure}"
    return name + _capital(text) + "."


def _declared(result) -> dict:
    """The declared ranges an audit ran with (its options), for a tree parsed again from the result's text."""
    ranges = (getattr(result, "options", None) or {}).get("ranges") or {}
    return {name: tuple(pair) for name, pair in ranges.items()}


def _side(lo, hi, pivot: float) -> int:
    """+1 when the interval ``[lo, hi]`` lies above ``pivot``, −1 below, 0 when it contains it (or is missing)."""
    try:
        low, high = float(lo), float(hi)
    except (TypeError, ValueError):
        return 0
    return 1 if low > pivot else -1 if high < pivot else 0


def _lead(found: Focus, name: str | None) -> str:
    """What a summary starts with: the rule that chose its comparison when there was a choice ("The comparison
    closest to failing (sex_parity): "), else the comparison's name ("sex_parity: "), else nothing."""
    if found.among > 1:
        return _capital(found.words) + (f" ({name})" if name else "") + ": "
    return f"{name}: " if name else ""


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def exit_code(result) -> int:
    """The CLI's exit code for ``result``: its claim's status (and 3 for a verdict its own run found evidence
    against)."""
    from fairaudit.core.explain import not_backed

    c = claim(result)
    if not_backed(result) and c.verdict in ("true", "false"):
        return 3
    return c.exit_code


def how_decided(result) -> list[str]:
    """"How this was decided": the mathematics behind the headline, one line each, for the page's expander, the
    CLI's ``how:`` lines and the PDF's methods — comparisons a joint test decided while their interval still
    contains the threshold, the population check of a modelled distribution, what an interval means."""
    from fairaudit.core.explain import number

    out = []
    for info in result.node_info:
        if info.kind == "cmp":
            text = result.evidence_text(info.id)
            if text:
                name = f"{info.name} " if info.name else ""
                out.append(f"{name}({info.id}) {info.text}: {text} — the joint test's e-value reached 1/β, the "
                           f"inverse of the share β of the failure probability this comparison gets for that "
                           f"direction (certifying and refuting get different shares, so the 1/β line can step "
                           f"when the leading direction changes)")
    check = getattr(result, "population", None)
    if check:
        leaves = check.get("leaves") or {}
        delta = check.get("delta", POPULATION_DELTA)
        for key, f in leaves.items():
            from fairaudit.core.explain import interval

            out.append(f"{key}: modelled {interval(*f['model'])}; on the {f['n']:,} audited rows that count for it, "
                       f"the exact binomial interval at δ = {delta / max(1, len(leaves)):.3g} is "
                       f"{interval(*f['rows'])}; for the population: {interval(f['lo'], f['hi'])}")
        out.append(f"the population verdict is the specification evaluated on those intervals (union bound over "
                   f"{len(leaves)} leaves: wrong with probability at most {delta:g}, if {ROWS_ASSUMPTION})")
    averaged = [i for i in result.node_info if i.kind == "expect" and getattr(i, "range", None)]
    if averaged and result.guarantee.kind == "probabilistic":
        shown = ", ".join(dict.fromkeys(f"{i.text} in [{number(i.range[0])}, {number(i.range[1])}]" for i in averaged))
        out.append(f"averages of amounts ({shown}): each value is mapped to [0, 1] by its range and the mean's "
                   "confidence sequence is the one of a rate, applied to the mapped values (sound for any values in "
                   "the range: the beta-binomial mixture stays a supermartingale, its likelihood ratio being convex in "
                   "the value), then mapped back; the sums are kept in fixed point (2^-22 of the range), and each "
                   "interval is widened by the rounding (at most 2^-23 of the range)")
    resolution = (getattr(result, "info", None) or {}).get("check_resolution")  # a monitor whose checks thinned out
    if resolution:
        out.append(resolution)
    g = result.guarantee
    out.append(f"every interval of the engine's trace: {g.interval_meaning}")
    leaves = {i.text for i in result.node_info if i.kind in ("expect", "fair")}
    if g.kind == "probabilistic" and len(leaves) > 1 and not g.scope:  # a confidence sequence's shared budget
        from fairaudit.core.explain import SHARED_BUDGET_HELP

        out.append(SHARED_BUDGET_HELP)
    return out
