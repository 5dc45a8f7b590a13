"""Small pure decisions of the pages (no Streamlit, no I/O; ``tests/app/test_logic.py``): the demo, page openings,
changing the dataset, run errors, upload limits. The tree selection is in ``fairaudit.ui.selection``, the version
history in ``fairaudit.ui.history``, the engine's options in ``fairaudit.ui.options``; explanations of a result are
in the library (``fairaudit.core.explain``).
"""
from __future__ import annotations

import math
import re
import time
from typing import Any, Iterable, Mapping, MutableMapping, Sequence

from fairaudit.base import limits
from fairaudit.core.explain import verdict_word

DEMO_DATASET = "adult"
DEMO_MODEL = "logreg"
DEMO_SPEC = """\
# Demographic parity on Adult: the favourable-decision rate of men and women, and of White and Black
# applicants, may differ by less than the given margin.
sex_parity: E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1
race_parity: E[pred | race == "White"] - E[pred | race == "Black"] < 0.2
"""

# --------------------------------------------------------------------------------------------------
# the specification a dataset starts with (the demo's is Adult's: it must not stay on another dataset)

STARTER_GROUPS = 20  # an attribute with more distinct values than this (an age, an id) gets no starting clause


def starting_spec(dataset_name: str, groups: Mapping[str, Sequence[Any]], classes: Sequence[Any] | None = None) -> str:
    """A starting specification for a dataset's own roles: demographic parity (difference < 0.1) between the two
    largest groups of each of its first two protected attributes (``groups``: attribute → its values, largest
    first) — for decisions among several ``classes``, the same gap in the rate of their first class (a bare
    ``pred`` would be refused); "" when no protected attribute has two groups (the editor then asks for a
    specification)."""
    from fairaudit.spec.templates import TEMPLATES

    tpl = TEMPLATES["class_rate_gap" if classes else "demographic_parity"]
    extra = {"classes": classes[0]} if classes else {}
    clauses, named = [], []
    for attribute, values in groups.items():
        values = list(values)
        if len(values) < 2 or len(values) > STARTER_GROUPS or len(clauses) == 2:
            continue
        safe = re.sub(r"\W+", "_", str(attribute)).strip("_") or "group"
        name = f"{safe}_parity" if safe[0].isalpha() else f"parity_{safe}"
        clauses.append(f"{name}: " + tpl.render(attribute=attribute, groups=(values[0], values[1]), **extra))
        named.append(f"{attribute} ({values[0]} and {values[1]})")
    if not clauses:
        return ""
    what = f"the rate of decision = {classes[0]}" if classes else "demographic parity"
    head = (f"# A starting point for {dataset_name}: {what} of " + " and of ".join(named)
            + ", their two largest groups.\n# Edit it, or pick a template.\n")
    return head + "\n".join(clauses) + "\n"


def replaceable_spec(spec_text: str | None, starter: str | None) -> bool:
    """True when the specification is not the analyst's own: empty, the demo's (Adult's columns), or the starting
    specification made for the previous dataset (``starting_spec``) left as it was; a dataset change then replaces
    it with the new dataset's starting specification."""
    text = (spec_text or "").strip()
    return text in ("", DEMO_SPEC.strip()) or (starter is not None and text == starter.strip())


def example_condition(groups: Mapping[str, Sequence[Any]]) -> str:
    """An example comparison for the editor's help, in the dataset's own columns (never Adult's when the data is
    another): ``E[pred | race == "Black"] - E[pred | race == "White"] < 0.1``."""
    for attribute, values in groups.items():
        values = list(values)
        if 2 <= len(values) <= STARTER_GROUPS:
            a, b = (repr(v) if not isinstance(v, str) else '"' + v.replace('"', '\\"') + '"' for v in values[:2])
            col = attribute if str(attribute).isidentifier() else f"`{attribute}`"
            return f"E[pred | {col} == {a}] - E[pred | {col} == {b}] < 0.1"
    return 'E[pred | group == "A"] - E[pred | group == "B"] < 0.1'


def example_where(groups: Mapping[str, Sequence[Any]]) -> str:
    """The "Only rows where" field's placeholder, in the dataset's own columns: ``e.g. race == "White"``."""
    for attribute, values in groups.items():
        values = list(values)
        if 2 <= len(values) <= STARTER_GROUPS:
            col = attribute if str(attribute).isidentifier() else f"`{attribute}`"
            v = values[0]
            return f"e.g. {col} == " + (repr(v) if not isinstance(v, str) else '"' + v.replace('"', '\\"') + '"')
    return "e.g. a condition on the columns"


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


def small_group_warning(stats_rows: Iterable[Mapping[str, Any]], threshold: int) -> str | None:
    """One sentence naming the groups with fewer than ``threshold`` rows, or None."""
    small = [f"{r['attribute']} = {r['group']} ({r['n']} rows)" for r in stats_rows if r["n"] < threshold]
    if not small:
        return None
    head = ", ".join(small[:8]) + (f" and {len(small) - 8} more" if len(small) > 8 else "")
    return (f"Small groups: {head}. Estimates for groups with fewer than {threshold} rows are uncertain; "
            "their confidence intervals are wide.")


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


def unchecked_edit(spec_text: str, draft: Mapping[str, str] | None) -> bool:
    """Whether the Specification page's editor holds an edit that did not check (an error) against the current
    specification ``spec_text``: the Audit page then says what its Run audits instead."""
    return editor_text(spec_text, draft).strip() not in ("", spec_text.strip())


def unchecked_note(spec_text: str) -> str:
    """The Audit page's words for ``unchecked_edit``."""
    if not spec_text.strip():
        return ("The specification on the Specification page has errors (shown there, with a caret under each): "
                "fix them there to audit it.")
    return ("The Specification page's editor holds an edit with errors (shown there): Run audits the last version "
            "that checked, shown in the editor below.")


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
        lost.append(f"the audit result ({verdict_word(verdict)})")
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
            "score is the favourable decision. A 0/1 column name also works; a column of several classes "
            "(`score_text`: Low / Medium / High) makes the decision each row's class, written `pred == \"High\"` "
            "in the specification.")


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
    from fairaudit.base.errors import FairauditError

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

UPLOAD_LIMITS_MB = limits.UPLOAD_MB  # defaults (fairaudit.base.limits); FAIRAUDIT_MAX_DATA_MB / FAIRAUDIT_MAX_MODEL_MB
UPLOAD_ENV = limits.UPLOAD_ENV
MB = limits.MB


def upload_limit_mb(kind: str, env: Mapping[str, str], server_max_mb: int | None = None) -> int:
    """The limit for an upload of ``kind`` ("data" or "model") in MB: the environment's value (a positive
    integer) or the default, never above Streamlit's ``server.maxUploadSize`` (which would refuse it first)."""
    limit = limits.from_env(UPLOAD_ENV[kind], UPLOAD_LIMITS_MB[kind], env)
    return min(limit, server_max_mb) if server_max_mb else limit


def widget_limit_mb(limit_mb: int, server_max_mb: int | None = None) -> int:
    """What the upload widget itself accepts and shows ("Limit 200MB per file"): our limit, within Streamlit's
    server limit, so that the page states one limit (issue 44: "up to 200 MB" beside the widget's "251MB"). Both are
    in MiB (Streamlit's MB is 1024 × 1024 bytes, as ``MB`` here)."""
    return min(int(limit_mb), server_max_mb) if server_max_mb else int(limit_mb)


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


def is_binary(series) -> bool:
    """Whether a column holds only 0 and 1 (an event on its own, not an amount to average)."""
    import pandas as pd

    values = pd.to_numeric(pd.Series(series), errors="coerce").dropna()
    return bool(values.isin([0, 1]).all())


def observed_range(series) -> str:
    """The smallest and largest value seen in a numeric column, as the Data page shows them: "0 to 50000"."""
    import pandas as pd

    from fairaudit.spec.printer import format_number

    values = pd.to_numeric(pd.Series(series), errors="coerce").dropna()
    if not len(values):
        return "(no values)"
    return f"{format_number(float(values.min()))} to {format_number(float(values.max()))}"
