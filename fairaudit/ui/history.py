"""The version history of the specification: each version with the verdict it got and what it was audited on,
what changed between two versions. Pure functions, no Streamlit (``tests/app/test_logic.py``)."""
from __future__ import annotations

import re
import time
from typing import Any, Mapping, Sequence

from fairaudit.core.explain import NOT_BACKED, verdict_word


def record_version(history: list[dict], text: str, verdict: str | None = None, stop_step: int | None = None,
                   when: float | None = None, audited_on: str | None = None, refines: int | None = None,
                   not_backed: bool = False) -> list[dict]:
    """A new history list with ``text`` as its latest version (same text: updated in place, not duplicated).

    A version is ``{"version": k, "text", "verdict", "stop_step", "time", "audited_on", "not_backed"}``; a
    verdict is recorded when an audit of that text finishes, with the step it was reached at, what it was audited
    on (``"adult · logreg"``) and whether its run found evidence against its guarantee (``not_backed``:
    ``fairaudit.core.explain.not_backed``). The same text audited on other data or decisions is a new row, so an
    earlier audit is never overwritten.
    """
    text = text.strip()
    out = [dict(h) for h in history]
    for h in out:
        if h["text"] == text and (audited_on is None or h.get("audited_on") in (None, audited_on)):
            if verdict is not None:
                h["verdict"], h["stop_step"], h["not_backed"] = verdict, stop_step, bool(not_backed)
                if audited_on is not None:
                    h["audited_on"] = audited_on
            h["time"] = when if when is not None else time.time()
            return out
    out.append({"version": (max((h["version"] for h in out), default=0) + 1), "text": text, "verdict": verdict,
                "stop_step": stop_step, "time": when if when is not None else time.time(), "audited_on": audited_on,
                "not_backed": bool(not_backed and verdict is not None), **({"refines": refines} if refines is not None else {})})
    return out


def record_result(history: list[dict], text: str, result, audited_on: str | None = None) -> list[dict]:
    """``record_version`` for the audit ``result`` of ``text``: its verdict, the step that verdict was reached at
    (``verdict_step``: a live log's verdict may change after its first decision, ``stop_step``) and whether it is
    backed by its guarantee."""
    from fairaudit.core.explain import not_backed

    claim = result.claim  # the headline's verdict, and the step only when that verdict is decided
    step = result.verdict_step if claim.verdict in ("true", "false") else None
    return record_version(history, text, claim.key, step, audited_on=audited_on,
                          not_backed=not_backed(result))


def post_hoc_source(history: Sequence[Mapping[str, Any]], text: str, audited_on: str | None) -> int | None:
    """The version whose audit suggested ``text``'s threshold (a refinement, ``refines``) when ``text`` was then
    audited on the same data and decisions as that version (``audited_on`` without its engine): the threshold was
    chosen from those rows, so a verdict on them does not carry its guarantee for the choice. None otherwise."""
    def rows(on):
        return on.rsplit(" · ", 1)[0] if on and " · " in on else on

    for h in reversed(history):
        if h["text"].strip() != text.strip() or h.get("refines") is None:
            continue
        base = next((o for o in history if o["version"] == h["refines"]), None)
        if audited_on and base is not None and rows(base.get("audited_on")) == rows(audited_on):
            return int(h["refines"])
    return None


def post_hoc_note(version: int) -> str:
    """Said beside a verdict on a threshold suggested by the audit of ``version`` on the same rows."""
    return (f"This threshold was suggested by the audit of v{version} on these same data: it was chosen after "
            "looking at them, so the verdict's guarantee does not cover that choice. Report it as chosen from these "
            "data, and audit it on fresh rows to claim it.")


def version_of(history: Sequence[Mapping[str, Any]], text: str) -> int | None:
    """The latest version whose text is ``text`` (None when it is not in the history)."""
    found = [h["version"] for h in history if h["text"].strip() == text.strip()]
    return max(found) if found else None


def diff_lines(old: str, new: str) -> list[str]:
    """A compact unified diff of two spec versions (for the history's "compare" view)."""
    import difflib

    return [line for line in difflib.unified_diff(old.strip().splitlines(), new.strip().splitlines(),
                                                  "before", "after", lineterm="", n=0)
            if not line.startswith(("---", "+++", "@@"))]



def history_rows(history: Sequence[Mapping[str, Any]]) -> list[dict]:
    """Newest first: version, verdict, the step it was decided at, what changed from the previous version, and
    the specification without its comments."""
    rows = []
    prev = None
    for h in history:
        body = " ".join(line.strip() for line in h["text"].splitlines()
                        if line.strip() and not line.strip().startswith("#"))
        if prev is None:
            change = "first version"
        elif prev.strip() == h["text"].strip():  # the same text audited on other data, decisions or engine
            change = "same text, audited again"
        else:
            change = "; ".join(_changes(prev, h["text"])) or "comments only"
        if h.get("refines") is not None:  # a suggested threshold applied from that version's audit
            base = next((o["text"] for o in history if o["version"] == h["refines"]), None)
            what = "; ".join(_changes(base, h["text"])) if base is not None else ""
            change = f"refinement of v{h['refines']} (suggested threshold)" + (f": {what}" if what else "")
        verdict = verdict_word(h.get("verdict")) + (f" — {NOT_BACKED}" if h.get("not_backed") else "")
        rows.append({"version": f"v{h['version']}", "verdict": verdict,
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


