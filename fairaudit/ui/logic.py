"""Pure decision logic of the dashboard: no Streamlit, no I/O, unit-tested in ``tests/app/test_logic.py``.

The pages only translate widget events into calls of these functions and draw what they return.
"""
from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, MutableMapping, Sequence

MAX_SELECTED = 2

DEMO_DATASET = "adult"
DEMO_MODEL = "logreg"
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
                   when: float | None = None) -> list[dict]:
    """A new history list with ``text`` as its latest version (same text: updated in place, not duplicated).

    A version is ``{"version": k, "text", "verdict", "stop_step", "time"}``; a verdict is recorded when an
    audit of that text finishes.
    """
    text = text.strip()
    out = [dict(h) for h in history]
    for h in out:
        if h["text"] == text:
            if verdict is not None:
                h["verdict"], h["stop_step"] = verdict, stop_step
            h["time"] = when if when is not None else time.time()
            return out
    out.append({"version": (max((h["version"] for h in out), default=0) + 1), "text": text, "verdict": verdict,
                "stop_step": stop_step, "time": when if when is not None else time.time()})
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
                    unit: str = "observations", undecided_part: str | None = None) -> str:
    """The verdict and its guarantee in one plain sentence (thousands separated; no interval jargon)."""
    prob = "with certainty" if delta <= 0 else f"with probability ≥ {1 - delta:g}"
    at = stop_step if stop_step is not None else steps
    if verdict == "true":
        return f"certified {prob}, decided after {at:,} {unit}"
    if verdict == "false":
        return f"violated {prob}, decided after {at:,} {unit}"
    part = f": **{undecided_part}** could not be decided yet (see its panel below)" if undecided_part else ""
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


def _const(node: Mapping[str, Any]) -> float | None:
    if node.get("kind") != "const":
        return None
    for value in (node.get("value"), (node.get("final") or {}).get("estimate"), node.get("text")):
        try:
            return float(value)
        except (TypeError, ValueError):
            continue
    return None


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
        c_right, c_left = _const(right), _const(left)
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


def apply_spec_headers(session: MutableMapping[str, Any], headers: Mapping[str, str],
                       model_expression: str | None = None) -> None:
    """Let a spec's ``# where:`` / ``# delta:`` headers set the Audit page's row filter (``audit_where``) and Δ
    (``audit_delta``) — once per change of the headers, so the analyst's own edits are kept while the headers
    stay the same. A value that came from a header is undone when the header goes away (and was not edited).
    ``audit_header_note`` says what was taken, and whether the file was written for other decisions."""
    session.setdefault("audit_delta", DEFAULT_DELTA)
    session.setdefault("audit_where", "")
    key = tuple(headers.get(k) for k in ("where", "delta", "decision"))
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
    session["audit_from_headers"] = applied
    note = ""
    if taken:
        what = " and ".join(taken)
        note = f"{what[0].upper()}{what[1:]} taken from the specification's header comments."
    decision = " ".join((headers.get("decision") or "").split())
    if decision and decision.lower() != "model" and decision != model_expression:
        note += (f" The file was written for the decisions `{decision}` (its '# decision:' header); the audit uses "
                 "the current model — choose *Decisions from a column or expression* on the Model page to "
                 "reproduce the file's audit.")
    session["audit_header_note"] = note.strip() or None
