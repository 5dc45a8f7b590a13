"""Pure decision logic of the dashboard: no Streamlit, no I/O, unit-tested in ``tests/app/test_logic.py``.

The pages only translate widget events into calls of these functions and draw what they return.
"""
from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, MutableMapping, Sequence

from fairaudit.viz.values import const_value

MAX_SELECTED = 2

DEMO_DATASET = "adult"
DEMO_MODEL = "logreg"
DEMO_HELD_OUT = 0.5  # the audit streams only the rows the model did not train on: half of Adult, 16,281 rows
DEMO_SPEC = """\
# Demographic parity on Adult: the favourable-decision rate of men and women, and of White and Black
# applicants, may differ by less than the given margin.
sex_parity: E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1
race_parity: E[pred | race == "White"] - E[pred | race == "Black"] < 0.2
"""

ENGINES: dict[str, str] = {
    "monitor": "AVOIR monitor: anytime-valid bounds from a stream of decisions",
    "fairsquare": "FairSquare: exact bounds by weighted volume computation (z3)",
    "justicia": "Justicia: exact group probabilities by stochastic SAT",
    "fvgm": "FVGM: group rates over a Bayesian network of the features",
    "fairquant": "FairQuant: certified / unfair / undecided fractions of a ReLU network",
}


# --------------------------------------------------------------------------------------------------
# tree selection


def event_ids(event: Any, param: str = "node") -> list[str]:
    """Node ids in a Streamlit chart event (``VegaLiteState`` or plain dict), in click order, without blanks.

    Accepts ``event.selection.node == [{"id": "n3"}, ...]`` as Streamlit returns it; clicks on an edge (no id)
    are dropped.
    """
    if event is None:
        return []
    selection = event.get("selection") if isinstance(event, Mapping) else getattr(event, "selection", None)
    if selection is None:
        return []
    points = selection.get(param) if isinstance(selection, Mapping) else getattr(selection, param, None)
    out: list[str] = []
    for p in points or []:
        value = p.get("id") if isinstance(p, Mapping) else None
        if value is not None and str(value) not in out:
            out.append(str(value))
    return out


def next_selection(current: Sequence[str], last_event: Sequence[str], event: Sequence[str],
                   valid: Iterable[str]) -> tuple[list[str], list[str]]:
    """The selection after a chart event: ``(selected node ids, event to remember)``.

    The chart reports its whole selection on every rerun; only a *changed* event is a click. A changed event
    replaces the selection (shift-click gives two ids), keeping at most the last ``MAX_SELECTED``. Ids that are
    not nodes of the current spec are dropped (the spec may have changed since the click).
    """
    valid = set(valid)
    event = [e for e in event if e in valid]
    current = [c for c in current if c in valid]
    if list(event) == list(last_event):
        return current[-MAX_SELECTED:], list(last_event)
    return list(event)[-MAX_SELECTED:], list(event)


@dataclass(frozen=True)
class Panel:
    """One plot the Audit page shows for the selected nodes."""

    kind: str  # "convergence" | "rates"
    nodes: tuple[str, ...]


def panels_for(selected: Sequence[str], kinds: Mapping[str, str], rates_available: Mapping[str, bool]) -> list[Panel]:
    """Selected nodes -> plots: one convergence plot (two nodes stacked with a shared x), plus a rates plot for
    every selected ``Fair[...]`` node whose trace carries certified / unfair / undecided rates."""
    ids = [s for s in selected if s in kinds][:MAX_SELECTED]
    if not ids:
        return []
    panels = [Panel("convergence", tuple(ids))]
    for i in ids:
        if kinds[i] == "fair" and rates_available.get(i):
            panels.append(Panel("rates", (i,)))
    return panels


def default_selection(nodes: Sequence[Mapping[str, Any]]) -> list[str]:
    """Before any click: the first comparison that is violated, else undecided, else the root."""
    for wanted in ("false", "unknown"):
        for n in nodes:
            if n.get("kind") == "cmp" and (n.get("final") or {}).get("verdict") == wanted:
                return [str(n["id"])]
    return [str(nodes[0]["id"])] if nodes else []


# --------------------------------------------------------------------------------------------------
# engines


@dataclass(frozen=True)
class EngineChoice:
    name: str
    available: bool
    reason: str  # why not available ("" when available)
    description: str


def engine_choices(implemented: Iterable[str], has_model: bool, has_pred_column: bool = False) -> list[EngineChoice]:
    """Every engine with whether it can run now and why not. ``implemented``: engines the library provides."""
    implemented = set(implemented)
    out = []
    for name, desc in ENGINES.items():
        if name not in implemented:
            out.append(EngineChoice(name, False, "not available yet", desc))
        elif name == "monitor" and not (has_model or has_pred_column):
            out.append(EngineChoice(name, False, "needs a model or a decision column (Model page)", desc))
        elif name != "monitor" and not has_model:
            out.append(EngineChoice(name, False, "needs a model (Model page)", desc))
        else:
            out.append(EngineChoice(name, True, "", desc))
    return out


# --------------------------------------------------------------------------------------------------
# spec history


def record_version(history: list[dict], text: str, verdict: str | None = None, stop_step: int | None = None,
                   when: float | None = None, audited_on: str | None = None) -> list[dict]:
    """A new history list with ``text`` as its latest version (same text: updated in place, not duplicated).

    A version is ``{"version": k, "text", "verdict", "stop_step", "time", "audited_on"}``; a verdict is
    recorded when an audit of that text finishes, with what it was audited on (``"adult · logreg"``). The same
    text audited on other data or decisions is a new row, so an earlier audit is never overwritten.
    """
    text = text.strip()
    out = [dict(h) for h in history]
    for h in out:
        if h["text"] == text and (audited_on is None or h.get("audited_on") in (None, audited_on)):
            if verdict is not None:
                h["verdict"], h["stop_step"] = verdict, stop_step
                if audited_on is not None:
                    h["audited_on"] = audited_on
            h["time"] = when if when is not None else time.time()
            return out
    out.append({"version": (max((h["version"] for h in out), default=0) + 1), "text": text, "verdict": verdict,
                "stop_step": stop_step, "time": when if when is not None else time.time(), "audited_on": audited_on})
    return out


def diff_lines(old: str, new: str) -> list[str]:
    """A compact unified diff of two spec versions (for the history's "compare" view)."""
    import difflib

    return [line for line in difflib.unified_diff(old.strip().splitlines(), new.strip().splitlines(),
                                                  "before", "after", lineterm="", n=0)
            if not line.startswith(("---", "+++", "@@"))]


# --------------------------------------------------------------------------------------------------
# live updates


class Throttle:
    """True at most once per ``interval`` seconds (and always on ``force``): when to redraw during a run."""

    def __init__(self, interval: float = 0.8, clock=time.monotonic):
        self.interval = interval
        self.clock = clock
        self.last = -math.inf

    def ready(self, force: bool = False) -> bool:
        now = self.clock()
        if force or now - self.last >= self.interval:
            self.last = now
            return True
        return False


def verdict_sentence(verdict: str | None) -> str:
    return {"true": "certified true", "false": "violated", "unknown": "undecided"}.get(verdict or "", "not run")


def verdict_summary(verdict: str | None, delta: float, stop_step: int | None, steps: int,
                    unit: str = "observations", undecided_part: str | None = None, part_shown: bool = True) -> str:
    """The verdict and its guarantee in one plain sentence (thousands separated; no interval jargon).
    ``part_shown``: whether the undecided part's panel is on screen (else the sentence says to click it)."""
    prob = "with certainty" if delta <= 0 else f"with probability ≥ {1 - delta:g}"
    at = stop_step if stop_step is not None else steps
    if verdict == "true":
        return f"certified {prob}, decided after {at:,} {unit}"
    if verdict == "false":
        return f"violated {prob}, decided after {at:,} {unit}"
    where = "see its panel below" if part_shown else "click it in the tree to see why"
    part = f": **{undecided_part}** could not be decided yet ({where})" if undecided_part else ""
    return f"undecided after {steps:,} {unit}{part}; more data or a larger Δ may decide it"


def guarantee_hint(delta: float) -> str:
    """What Δ means, in words (shown under every verdict)."""
    if delta <= 0:
        return "The bounds are exact: the verdict cannot be wrong."
    return (f"Δ = {delta:g} is the failure probability: the chance that this verdict (or any interval shown) is "
            f"wrong is at most {delta * 100:g}%. A smaller Δ gives wider intervals and later decisions.")


def small_group_warning(stats_rows: Iterable[Mapping[str, Any]], threshold: int) -> str | None:
    """One sentence naming the groups with fewer than ``threshold`` rows, or None."""
    small = [f"{r['attribute']} = {r['group']} ({r['n']} rows)" for r in stats_rows if r["n"] < threshold]
    if not small:
        return None
    head = ", ".join(small[:8]) + (f" and {len(small) - 8} more" if len(small) > 8 else "")
    return (f"Small groups: {head}. Estimates for groups with fewer than {threshold} rows are uncertain; "
            "their confidence intervals are wide.")


# --------------------------------------------------------------------------------------------------
# the selected node: facts and a plain explanation of its verdict

_OPS = ("<=", ">=", "==", "!=", "<", ">")
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def _n(x: Any) -> str:
    from fairaudit.viz._format import clean

    try:
        x = float(clean(x))
    except (TypeError, ValueError):
        return "–"
    if math.isnan(x):
        return "–"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x != 0 and abs(x) < 0.01:
        return f"{x:.2g}"
    return f"{x:.3f}".rstrip("0").rstrip(".") if abs(x - round(x, 3)) < 1e-12 else f"{x:.3f}"


def _finite(*xs: Any) -> bool:
    try:
        return all(x is not None and math.isfinite(float(x)) for x in xs)
    except (TypeError, ValueError):
        return False


def _op_of(node: Mapping[str, Any]) -> str | None:
    if node.get("op"):
        return str(node["op"])
    from fairaudit.viz.tree import comparison_operator

    return comparison_operator(str(node.get("text", "")))


def _children(node_id: str, nodes: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [n for n in nodes if n.get("parent") == node_id]


def _part_name(node: Mapping[str, Any]) -> str:
    if node.get("name"):
        return str(node["name"])
    text = str(node.get("text", node.get("id")))
    return text if len(text) <= 60 else text[:57] + "…"


def _guarantee(delta: Any) -> str:
    if not _finite(delta):
        return ""
    d = float(delta)
    if d == 0:
        return " These bounds are exact."
    return f" The bounds hold with probability at least 1 − δ = {1 - d:.4g}."


def _compare_sentence(op: str, lo: float, hi: float, c: float, verdict: str, what: str) -> str:
    """``what`` (a term with bounds [lo, hi]) ``op`` ``c``: why the verdict is what it is."""
    below = op in ("<", "<=")
    if op in ("<", "<=", ">", ">="):
        if verdict == "true":
            return (f"the upper bound {_n(hi)} of {what} is below the threshold {_n(c)}." if below else
                    f"the lower bound {_n(lo)} of {what} is above the threshold {_n(c)}.")
        if verdict == "false":
            return (f"the lower bound {_n(lo)} of {what} is already above the threshold {_n(c)}." if below
                    else f"the upper bound {_n(hi)} of {what} is already below the threshold {_n(c)}.")
        if below:
            return (f"the upper bound {_n(hi)} of {what} is above the threshold {_n(c)}: cannot be certified yet; "
                    f"the lower bound {_n(lo)} is below {_n(c)}: cannot be ruled violated either.")
        return (f"the lower bound {_n(lo)} of {what} is below the threshold {_n(c)}: cannot be certified yet; "
                f"the upper bound {_n(hi)} is above {_n(c)}: cannot be ruled violated either.")
    if op == "==":
        if verdict == "false":
            return f"the interval [{_n(lo)}, {_n(hi)}] of {what} excludes {_n(c)}."
        if verdict == "true":
            return f"the interval [{_n(lo)}, {_n(hi)}] of {what} is the single value {_n(c)}."
        return f"the interval [{_n(lo)}, {_n(hi)}] of {what} contains {_n(c)}: equality cannot be decided yet."
    # !=
    if verdict == "true":
        return f"the interval [{_n(lo)}, {_n(hi)}] of {what} excludes {_n(c)}."
    return f"the interval [{_n(lo)}, {_n(hi)}] of {what} contains {_n(c)}: cannot be certified yet."


def explain_node(node_id: str, nodes: Sequence[Mapping[str, Any]]) -> str:
    """One plain sentence saying why a node is certified, violated or undecided (or what a term's bounds mean).

    ``nodes`` is the ``nodes`` list of the audit-result contract (``id``, ``parent``, ``kind``, ``text``,
    ``final``). Example for ``X < 0.5`` with ``X`` in [0.38, 0.52]: "Undecided: the upper bound 0.52 of X is above
    the threshold 0.5: cannot be certified yet; the lower bound 0.38 is below 0.5: cannot be ruled violated
    either."
    """
    by_id = {str(n["id"]): n for n in nodes}
    node = by_id[node_id]
    kind = node.get("kind")
    final = node.get("final") or {}
    verdict = final.get("verdict")
    head = {"true": "Certified", "false": "Violated", "unknown": "Undecided"}.get(verdict or "", "")
    kids = _children(node_id, nodes)
    if kind == "cmp" and len(kids) == 2:
        op = _op_of(node) or "<"
        left, right = kids
        c_right, c_left = const_value(right), const_value(left)
        if c_right is not None or c_left is not None:
            term, c = (left, c_right) if c_right is not None else (right, c_left)
            op = op if c_right is not None else _FLIP[op]
            tf = term.get("final") or {}
            lo, hi = tf.get("lo"), tf.get("hi")
            what = _short(term, nodes)
        else:
            lo, hi, c = final.get("lo"), final.get("hi"), 0.0
            what = "left − right"
        if not _finite(lo, hi):
            return f"{head or 'Not decided'}: no observation has reached this comparison yet."
        return f"{head}: " + _compare_sentence(op, float(lo), float(hi), float(c), verdict or "unknown", what) \
            + _guarantee(final.get("delta"))
    if kind in ("and", "or", "not"):
        by_verdict: dict[str, list[str]] = {}
        for k in kids:
            by_verdict.setdefault((k.get("final") or {}).get("verdict") or "unknown", []).append(_part_name(k))
        false, true, unknown = by_verdict.get("false", []), by_verdict.get("true", []), by_verdict.get("unknown", [])
        if kind == "not":
            inner = _part_name(kids[0]) if kids else "its part"
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
    if not _finite(lo, hi):
        return "A term, not a claim: no observations yet."
    n = final.get("n")
    seen = f" from {int(n):,} observations" if _finite(n) else ""
    return (f"A term, not a claim: estimate {_n(est)}{seen}; its true value lies in [{_n(lo)}, {_n(hi)}]."
            + _guarantee(final.get("delta")))


def _short(node: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]) -> str:
    from fairaudit.viz.tree import short_labels

    return short_labels(nodes).get(str(node["id"])) or _part_name(node)


def _cmp_parts(node_id: str, nodes: Sequence[Mapping[str, Any]]):
    """``(term, op, threshold)`` of a comparison with a constant side (op read with the term on the left)."""
    from fairaudit.viz.values import comparison_parts

    return comparison_parts(node_id, nodes)


def _join(items: Sequence[str]) -> str:
    items = list(items) or ["a part"]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _is(items: Sequence[str]) -> str:
    return "is" if len(items) <= 1 else "are"


def node_facts(node_id: str, nodes: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Formatted final values of a node for the "selected node" panel."""
    node = next(n for n in nodes if str(n["id"]) == node_id)
    final = node.get("final") or {}
    verdict = final.get("verdict")
    facts = {"estimate": _n(final.get("estimate")),
             "interval": f"[{_n(final.get('lo'))}, {_n(final.get('hi'))}]" if _finite(final.get("lo"),
                                                                                      final.get("hi")) else "–",
             "δ": _n(final.get("delta")) if _finite(final.get("delta")) else "–",
             "verdict": verdict_sentence(verdict) if verdict else "— (a term)"}
    parts = _cmp_parts(node_id, nodes)
    if parts is not None:  # report the compared term and the threshold rather than the internal difference
        term, op, c = parts
        tf = term.get("final") or {}
        pretty = {"<=": "≤", ">=": "≥", "==": "=", "!=": "≠"}.get(op, op)
        facts = {"value": _n(tf.get("estimate")),
                 "interval": f"[{_n(tf.get('lo'))}, {_n(tf.get('hi'))}]" if _finite(tf.get("lo"), tf.get("hi")) else "–",
                 "threshold": f"{pretty} {_n(c)}", "δ": facts["δ"], "verdict": facts["verdict"]}
    elif node.get("kind") == "cmp":
        facts["interval"] += " (left − right)"
    elif node.get("kind") in ("and", "or", "not"):  # a claim built from claims: it has a verdict, not a value
        facts = {"δ": facts["δ"], "verdict": facts["verdict"]}
    if _finite(final.get("n")):
        facts["observations"] = f"{int(final['n']):,}"
    return facts


# --------------------------------------------------------------------------------------------------
# the version history as a table


def history_rows(history: Sequence[Mapping[str, Any]]) -> list[dict]:
    """Newest first: version, verdict, the step it was decided at, what changed from the previous version, and
    the specification without its comments."""
    rows = []
    prev = None
    for h in history:
        body = " ".join(line.strip() for line in h["text"].splitlines()
                        if line.strip() and not line.strip().startswith("#"))
        change = "first version" if prev is None else "; ".join(_changes(prev, h["text"])) or "comments only"
        rows.append({"version": f"v{h['version']}", "verdict": verdict_sentence(h.get("verdict")),
                     "decided at step": "–" if h.get("stop_step") is None else f"{int(h['stop_step']):,}",
                     "audited on": h.get("audited_on") or "–",
                     "change": change, "specification": body})
        prev = h["text"]
    return list(reversed(rows))


_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE]-?\d+)?(?![\w.])")


def _changes(old: str, new: str) -> list[str]:
    """What changed between two versions, briefly: ``0.1 → 0.15`` when only numbers changed on a line."""
    import difflib

    a = [line for line in old.strip().splitlines() if line.strip() and not line.strip().startswith("#")]
    b = [line for line in new.strip().splitlines() if line.strip() and not line.strip().startswith("#")]
    out = []
    sm = difflib.SequenceMatcher(a=a, b=b)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            for la, lb in zip(a[i1:i2], b[j1:j2]):
                na, nb = _NUMBER.findall(la), _NUMBER.findall(lb)
                if _NUMBER.sub("#", la) == _NUMBER.sub("#", lb) and len(na) == len(nb):
                    name = la.split(":", 1)[0].strip() + " " if re.match(r"^\s*[A-Za-z_]\w*\s*:", la) else ""
                    out.extend(f"{name}{x} → {y}" for x, y in zip(na, nb) if x != y)
                else:
                    out.append(_edited(la, lb))
        elif tag == "insert":
            out.append(f"+{j2 - j1} line{'s' if j2 - j1 > 1 else ''}")
        elif tag == "delete":
            out.append(f"−{i2 - i1} line{'s' if i2 - i1 > 1 else ''}")
        else:
            out.append(f"{i2 - i1} line{'s' if i2 - i1 > 1 else ''} → {j2 - j1}")
    return list(dict.fromkeys(out))  # each change once


_PART_NAME = re.compile(r"^\s*([A-Za-z_]\w*)\s*:(?!=)")


def _edited(old_line: str, new_line: str) -> str:
    """A rewritten line, by the name of its part: ``fair_sex edited``, ``sex_parity → fair_sex``."""
    a, b = _PART_NAME.match(old_line), _PART_NAME.match(new_line)
    if a and b:
        return f"{b.group(1)} edited" if a.group(1) == b.group(1) else f"{a.group(1)} → {b.group(1)}"
    return "edited"


DEFAULT_DELTA = 0.05
DEFAULT_ORDER = "shuffle"  # the monitor's guarantee assumes random order: a file at rest is shuffled (seeded)
ORDERS = ("shuffle", "given")


def apply_spec_headers(session: MutableMapping[str, Any], headers: Mapping[str, str],
                       model_expression: str | None = None) -> None:
    """Let a spec's ``# where:`` / ``# delta:`` / ``# order:`` headers set the Audit page's row filter
    (``audit_where``), Δ (``audit_delta``) and row order (``audit_order``, default shuffle) — once per change of the headers, so the analyst's own edits are kept while the headers
    stay the same. A value that came from a header is undone when the header goes away (and was not edited).
    ``audit_header_note`` says what was taken (a ``# decision:`` header is offered by ``header_decision``)."""
    session.setdefault("audit_delta", DEFAULT_DELTA)
    session.setdefault("audit_where", "")
    session.setdefault("audit_order", DEFAULT_ORDER)
    key = tuple(headers.get(k) for k in ("where", "delta", "order"))
    if session.get("audit_headers_synced") == key:
        return
    session["audit_headers_synced"] = key
    previous = session.get("audit_from_headers") or {}
    taken, applied = [], {}
    if "where" in headers:
        session["audit_where"] = applied["audit_where"] = headers["where"]
        taken.append("row filter")
    elif "audit_where" in previous and session.get("audit_where") == previous["audit_where"]:
        session["audit_where"] = ""
    try:
        delta = float(headers["delta"]) if "delta" in headers else None
    except ValueError:
        delta = None
    if delta is not None and 0 < delta <= 0.5:
        session["audit_delta"] = applied["audit_delta"] = delta
        taken.append("Δ")
    elif "audit_delta" in previous and session.get("audit_delta") == previous["audit_delta"]:
        session["audit_delta"] = DEFAULT_DELTA
    order = (headers.get("order") or "").strip().lower()
    if order in ORDERS:
        session["audit_order"] = applied["audit_order"] = order
        taken.append("row order")
    elif "audit_order" in previous and session.get("audit_order") == previous["audit_order"]:
        session["audit_order"] = DEFAULT_ORDER
    session["audit_from_headers"] = applied
    note = ""
    if taken:
        what = ", ".join(taken[:-1]) + (" and " if len(taken) > 1 else "") + taken[-1]
        note = f"{what[0].upper()}{what[1:]} taken from the specification's header comments."
    # a '# decision:' header is offered visibly, with a button (header_decision), not in this note
    session["audit_header_note"] = note.strip() or None


# --------------------------------------------------------------------------------------------------
# pages: which one is showing, and what an editor shows when its page is opened


def entered_page(session: MutableMapping[str, Any], page: str) -> bool:
    """Record that ``page`` is running; True when the previous run showed another page (or none): the page has
    just been opened. Streamlit forgets a widget's state when its page is left, and may resurrect a value that
    was set from another page, so an editor is seeded from the session's own record on every opening."""
    entered = session.get("current_page") != page
    session["current_page"] = page
    return entered


def editor_text(spec_text: str, draft: Mapping[str, str] | None) -> str:
    """What the specification editor shows when its page is opened: the analyst's last text (even one with an
    error) while the current specification is still the one it was typed against, else the current
    specification (it was replaced elsewhere: the demo, the Audit page's editor, a version from the history)."""
    if draft and draft.get("base") == spec_text and draft.get("text") is not None:
        return str(draft["text"])
    return spec_text


# --------------------------------------------------------------------------------------------------
# the tree selection across runs: a node is the same node when its name (or text) is


def tree_signature(nodes: Sequence[Mapping[str, Any]]) -> tuple:
    """The identity of a tree: every node's id, parent, kind, name and text."""
    return tuple((str(n["id"]), n.get("parent"), n.get("kind"), n.get("name"), str(n.get("text", "")))
                 for n in nodes)


def _node_key(name: Any, text: Any) -> str:
    return f"name:{name}" if name else f"text:{text}"


def rebase_selection(selected: Sequence[str], old_signature: Sequence | None,
                     nodes: Sequence[Mapping[str, Any]]) -> list[str]:
    """The selection after the tree may have changed (a new run of an edited spec): ids of the same tree are
    kept; otherwise each selected node is looked up by its name (or, unnamed, its text) in the new tree and
    kept only where that key is unique in both trees — never by its id, which now names another node."""
    new_sig = tree_signature(nodes)
    ids = {row[0] for row in new_sig}
    if old_signature is not None and tuple(map(tuple, old_signature)) == new_sig:
        return [s for s in selected if s in ids]
    if not old_signature:
        return []
    old_key = {row[0]: _node_key(row[3], row[4]) for row in old_signature}
    old_count: dict[str, int] = {}
    for k in old_key.values():
        old_count[k] = old_count.get(k, 0) + 1
    new_by_key: dict[str, list[str]] = {}
    for row in new_sig:
        new_by_key.setdefault(_node_key(row[3], row[4]), []).append(row[0])
    out = []
    for s in selected:
        key = old_key.get(s)
        if key is not None and old_count[key] == 1 and len(new_by_key.get(key, [])) == 1:
            out.append(new_by_key[key][0])
    return out


def tree_key(signature: Sequence) -> str:
    """A short stable key for the tree chart widget: a new tree gets a new widget (no stale click state)."""
    import hashlib

    return hashlib.sha256(repr(tuple(signature)).encode("utf-8")).hexdigest()[:12]


# --------------------------------------------------------------------------------------------------
# changing the dataset, loading a model


def dataset_change(current_key: Any, new_key: Any, has_model: bool, has_result: bool) -> str:
    """``"same"`` (nothing changes), ``"apply"`` (nothing would be lost) or ``"confirm"`` (the model and/or the
    result made for the current dataset would be discarded: ask first)."""
    if current_key == new_key:
        return "same"
    if current_key is not None and (has_model or has_result):
        return "confirm"
    return "apply"


def discard_message(new_name: str, current_name: str, model_text: str | None, verdict: str | None) -> str:
    """The question asked before a dataset change discards the model and the result."""
    lost = []
    if model_text:
        lost.append(f"the model ({model_text})")
    if verdict is not None:
        lost.append(f"the audit result ({verdict_sentence(verdict)})")
    what = " and ".join(lost) or "nothing"
    kept = " Its verdict stays in the version history." if verdict is not None else ""
    return (f"Switching to **{new_name}** discards {what}, which were made for **{current_name}**.{kept}")


def missing_columns(needed: Iterable[str], columns: Iterable[str]) -> list[str]:
    """The columns a model reads that the dataset does not have, in the model's order."""
    have = set(columns)
    return [c for c in needed if c not in have]


def model_mismatch_message(missing: Sequence[str], dataset_name: str) -> str:
    head = ", ".join(f"`{c}`" for c in list(missing)[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6
                                                              else "")
    return (f"This model reads columns that **{dataset_name}** does not have ({head}): it was made for another "
            "dataset. Choose that dataset on the Data page first.")


def decision_hint(label: str | None, favourable: Any) -> tuple[str, str]:
    """The label and the help of the decision-expression input: which way round it is (true = favourable),
    worded from the dataset's own label and favourable value; COMPAS is the example."""
    fav = f"{favourable}" if not isinstance(favourable, str) else f'"{favourable}"'
    if label is not None:
        title = f"Decision (true = favourable outcome, the one `{label} == {fav}` records)"
    else:
        title = "Decision (true = favourable outcome)"
    return (title,
            "Write the condition that is **true where the decision is favourable** (pred = 1). Example on COMPAS, "
            "whose favourable label is `two_year_recid == 0` (no re-arrest): `decile_score <= 4` — a low risk "
            "score is the favourable decision. A 0/1 column name also works.")


def header_decision(headers: Mapping[str, str], model_expression: str | None) -> str | None:
    """The decision expression a spec file's ``# decision:`` header asks for, when the audit uses other
    decisions (None when there is no header, it says ``model``, or the same expression is in use)."""
    decision = " ".join((headers.get("decision") or "").split())
    if not decision or decision.lower() == "model":
        return None
    if model_expression is not None and " ".join(model_expression.split()) == decision:
        return None
    return decision


# --------------------------------------------------------------------------------------------------
# errors of a run, as the user reads them


def error_text(err: BaseException) -> tuple[str, str | None]:
    """``(message, caret block or None)`` for an exception raised by a run. A ``FairauditError`` (a spec error
    has ``line``, ``column``, ``message`` and ``pretty()``) is the user's to fix and is shown as such; anything
    else is one line "internal error: ..." (never a traceback)."""
    from fairaudit.errors import FairauditError

    if isinstance(err, FairauditError):
        message = str(getattr(err, "message", None) or err).strip().splitlines()[0] if str(
            getattr(err, "message", None) or err).strip() else type(err).__name__
        line, column = getattr(err, "line", None), getattr(err, "column", None)
        where = f"line {line}, column {column}: " if line is not None and column is not None else (
            f"line {line}: " if line is not None else "")
        pretty = None
        if hasattr(err, "pretty"):
            try:
                pretty = err.pretty() or None
            except Exception:  # noqa: BLE001 - a caret block is a nicety
                pretty = None
        return where + message, pretty
    first = (str(err).strip().splitlines() or [""])[0][:300]
    return f"internal error: {type(err).__name__}" + (f": {first}" if first else ""), None


# --------------------------------------------------------------------------------------------------
# uploads: size limits (Streamlit's own limit only shows a red icon, so the dashboard checks first)

UPLOAD_LIMITS_MB = {"data": 200, "model": 50}  # defaults; FAIRAUDIT_MAX_DATA_MB / FAIRAUDIT_MAX_MODEL_MB
UPLOAD_ENV = {"data": "FAIRAUDIT_MAX_DATA_MB", "model": "FAIRAUDIT_MAX_MODEL_MB"}
MB = 1024 * 1024


def upload_limit_mb(kind: str, env: Mapping[str, str], server_max_mb: int | None = None) -> int:
    """The limit for an upload of ``kind`` ("data" or "model") in MB: the environment's value (a positive
    integer) or the default, never above Streamlit's ``server.maxUploadSize`` (which would refuse it first)."""
    raw = (env.get(UPLOAD_ENV[kind]) or "").strip()
    limit = int(raw) if raw.isdigit() and int(raw) > 0 else UPLOAD_LIMITS_MB[kind]
    return min(limit, server_max_mb) if server_max_mb else limit


def widget_limit_mb(limit_mb: int, server_max_mb: int | None = None) -> int:
    """What the upload widget itself accepts: a quarter above our limit (so that a file a bit over it reaches
    the check below and gets a sentence, not a bare red icon), within Streamlit's server limit."""
    wider = int(math.ceil(limit_mb * 1.25)) + 1
    return min(wider, server_max_mb) if server_max_mb else wider


def _mb(n_bytes: int) -> str:
    mb = n_bytes / MB
    return f"{mb:,.1f} MB" if mb < 100 else f"{mb:,.0f} MB"


def too_large_message(name: str, size: int, limit_bytes: int, kind: str) -> str:
    what = {"data": "a data file", "model": "a model file"}.get(kind, "a file")
    env = UPLOAD_ENV.get(kind)
    hint = f" (whoever runs the dashboard can raise it with {env})" if env else ""
    return (f"{name} is {_mb(size)}, over the limit of {_mb(limit_bytes)} for {what}{hint}. "
            "It was not read.")


def upload_problem(name: str, size: int, limit_mb: int, kind: str) -> str | None:
    """The message for an upload over its limit, or None."""
    limit = int(limit_mb) * MB
    return too_large_message(name, size, limit, kind) if size > limit else None


# --------------------------------------------------------------------------------------------------
# rows with a missing protected attribute

MISSING_CHOICES = ("keep", "drop")


def missing_choice_label(choice: str) -> str:
    return {"keep": 'keep them as a group of their own ("?")', "drop": "drop those rows"}[choice]


def apply_missing_choice(dataset, choice: str):
    """The dataset with rows missing a protected attribute kept (as the group ``"?"``) or dropped."""
    if choice == "drop" and dataset.missing_protected().any():
        return dataset.without_missing_protected()
    return dataset
