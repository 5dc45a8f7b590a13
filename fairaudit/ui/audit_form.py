"""The Audit page's engine and options block, drawn from the engines' declarations (``fairaudit.ui.options``).

Streamlit forgets a widget's value when its page is left, so every value drawn here is also kept in the session
(``STORE``) and given back to the widget when the page is opened again; a spec file's headers set these values
once per change of the headers (``sync_headers``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from fairaudit import engines
from fairaudit.errors import FairauditError
from fairaudit.ui import options as uo

STORE = "audit_values"  # widget key -> value, kept across pages
SYNCED = "audit_headers_synced"
FROM_HEADERS = "audit_from_headers"
PER_ROW = 4


def _store() -> dict:
    return st.session_state.setdefault(STORE, {})


def seed(key: str, default: Any) -> Any:
    """Give widget ``key`` its kept value (or ``default``) before it is drawn; the value it will show."""
    if key not in st.session_state:
        st.session_state[key] = _store().get(key, default)
    return st.session_state[key]


def keep(key: str, value: Any) -> None:
    _store()[key] = value


def set_value(key: str, value: Any) -> None:
    """Set a widget's value from outside the widget (before it is drawn in this run)."""
    st.session_state[key] = value
    keep(key, value)


def sync_headers(spec_text: str) -> tuple[dict, list[str]]:
    """``(values the headers set, header errors)``: apply a specification's headers (``# engine:``, ``# where:``,
    every engine's header options) to the widgets, once per change of the headers, undoing a header's value
    when the header goes (unless the analyst changed it). Nothing is applied while a header has an error."""
    from fairaudit.ui.flows import header_problems

    if not spec_text.strip():
        return {}, []
    try:
        wanted = uo.header_values(spec_text)
    except FairauditError:
        return {}, header_problems(spec_text)
    marker = tuple(sorted((k, repr(v)) for k, v in wanted.items()))
    if st.session_state.get(SYNCED) != marker:
        previous = st.session_state.get(FROM_HEADERS) or {}
        current = {k: st.session_state.get(k, _store().get(k, v)) for k, v in previous.items()}
        defaults = {k: uo.default_value(k) for k in previous}
        for key, value in uo.header_changes(wanted, previous, current, defaults).items():
            set_value(key, value)
        st.session_state[SYNCED] = marker
        st.session_state[FROM_HEADERS] = dict(wanted)
    return wanted, []


def current_where_rows() -> tuple[str, str | None]:
    """The row filter and rows policy the widgets hold now (before they are drawn in this run)."""
    where = seed(uo.WHERE_KEY, "") or ""
    rows = seed(uo.ROWS_KEY, "default")
    return str(where), (None if rows == "default" else rows)


# ------------------------------------------------------------------------------------------------ widgets


def engine_picker(choices, container=None):
    """The engine selectbox (the engines that can run; all of them, disabled, when none can) with the chosen
    engine's summary and, greyed, every engine that cannot run here and why. Returns the chosen ``EngineChoice``."""
    box = container or st
    left, right = box.columns([2, 3], vertical_alignment="bottom")
    usable = [c for c in choices if c.available]
    listed = usable or list(choices)
    names = [c.name for c in listed]
    if seed(uo.ENGINE_KEY, engines.DEFAULT) not in names:
        set_value(uo.ENGINE_KEY, engines.DEFAULT if engines.DEFAULT in names else names[0])
    by_name = {c.name: c for c in choices}
    name = left.selectbox("Engine", names, key=uo.ENGINE_KEY, format_func=lambda n: by_name[n].title,
                         disabled=not usable,
                         help="\n\n".join(f"**{c.title}**: {c.summary}" for c in choices if c.summary))
    keep(uo.ENGINE_KEY, name)
    chosen = by_name[name]
    if chosen.summary:
        right.caption(chosen.summary[:1].upper() + chosen.summary[1:] + ".")
    greyed = [c for c in choices if not c.available]
    if greyed:
        box.caption("Not available here: " + "; ".join(f"**{c.title}** — {', '.join(c.reasons)}" for c in greyed))
    return chosen


def option_widget(engine, option, container=None) -> Any:
    """The widget of one ``Option`` (key ``options.option_key``): a selectbox for choices, a checkbox for a bool,
    a number field with the declared bounds and step, a text field; label and help from the declaration."""
    box = container or st
    key = uo.option_key(engine.name, option.name)
    kind = uo.widget_kind(option)
    label, help_text = option.title, uo.help_text(option)
    value = seed(key, option.default)
    if kind == "select":
        choices = list(option.choices)
        if value not in choices:
            set_value(key, option.default if option.default in choices else choices[0])
        out = box.selectbox(label, choices, key=key, help=help_text)
    elif kind == "checkbox":
        if not isinstance(value, bool):
            set_value(key, bool(option.default))
        out = box.checkbox(label, key=key, help=help_text)
    elif kind == "number":
        lo, hi = uo.number_bounds(option)
        if value is not None and ((lo is not None and value < lo) or (hi is not None and value > hi)
                                  or not isinstance(value, (int, float))):
            set_value(key, option.default)
        elif value is not None and option.type is float:
            set_value(key, float(value))
        kwargs: dict = {"min_value": lo, "max_value": hi, "step": uo.number_step(option), "key": key,
                        "help": help_text}
        if option.type is float:
            kwargs["format"] = "%g"
        if option.default is None:
            kwargs.update(value=None, placeholder="none")
        out = box.number_input(label, **kwargs)
    else:
        if value is None:
            set_value(key, "")
        out = box.text_input(label, key=key, help=help_text)
    keep(key, out)
    return out


def remembered_checkbox(label: str, key: str, **kwargs) -> bool:
    """A checkbox whose value is kept across pages (like the option widgets)."""
    seed(key, False)
    value = st.checkbox(label, key=key, **kwargs)
    keep(key, value)
    return value


def _grid(engine, options, container=None) -> None:
    box = container or st
    for start in range(0, len(options), PER_ROW):
        row = options[start:start + PER_ROW]
        columns = box.columns(PER_ROW)
        for column, option in zip(columns, row):
            option_widget(engine, option, column)


@dataclass
class Form:
    """What the block returns: the run's ``choice`` (engine, options, where, rows) and what stops a Run."""

    choice: dict
    errors: list[str] = field(default_factory=list)


def engine_form(engine, where_problem: str | None = None, inputs_error: str | None = None) -> Form:
    """The chosen engine's own options, then the options of every run, then (in "Advanced") the options it
    declares advanced; the row filter and the rows policy. Each value is checked by its declaration."""
    main = [o for o in engine.options if not o.advanced] + [o for o in engine.all_options()
                                                           if o not in engine.options and not o.advanced]
    advanced = [o for o in engine.all_options() if o.advanced]
    _grid(engine, main)
    if advanced:
        with st.expander("Advanced"):
            _grid(engine, advanced)
    left, right = st.columns([3, 2])
    seed(uo.WHERE_KEY, "")
    where = left.text_input("Only rows where (optional)", key=uo.WHERE_KEY,
                            placeholder='e.g. workclass == "Federal-gov"', help=uo.WHERE_HELP)
    keep(uo.WHERE_KEY, where)
    if seed(uo.ROWS_KEY, "default") not in uo.ROWS_CHOICES:
        set_value(uo.ROWS_KEY, "default")
    rows = right.radio("Rows", list(uo.ROWS_CHOICES), horizontal=True, key=uo.ROWS_KEY,
                       format_func=uo.ROWS_LABELS.get, help=uo.ROWS_HELP)
    keep(uo.ROWS_KEY, rows)
    errors = []
    if where_problem:
        st.error(f"Row filter: {where_problem}")
        errors.append(where_problem)
    if inputs_error and not where_problem:
        st.error(f"The audit cannot start: {inputs_error}")
        errors.append(inputs_error)
    raw = {uo.option_key(engine.name, o.name): st.session_state.get(uo.option_key(engine.name, o.name))
           for o in engine.all_options()}
    options, problems = uo.engine_options(engine, raw)
    for name, message in problems.items():
        st.error(f"{engine.option(name).title}: {message}")
        errors.append(message)
    choice = {"engine": engine.name, "options": options, "where": where.strip(),
              "rows": None if rows == "default" else rows}
    return Form(choice, errors)
