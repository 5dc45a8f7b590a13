"""The Audit page's engine and options block, drawn from the engines' declarations (``fairaudit.ui.options``).

Streamlit forgets a widget's value when its page is left, so every value drawn here is also kept in the session
(``fairaudit.ui.state.STORE``) and given back to the widget when the page is opened again; a spec file's headers set these values
once per change of the headers (``sync_headers``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from fairaudit import engines
from fairaudit.base.errors import FairauditError
from fairaudit.ui import options as uo
from fairaudit.ui.state import STORE, _store, keep, remembered_checkbox, seed, set_value  # noqa: F401 — kept values

SYNCED = "audit_headers_synced"
FROM_HEADERS = "audit_from_headers"
PER_ROW = 4


def sync_headers(spec_text: str) -> tuple[dict, list[str]]:
    """``(values the headers set, header errors)``: apply a specification's headers (``# engine:``, ``# where:``,
    every engine's header options) to the widgets, once per change of the headers, undoing a header's value
    when the header goes (unless the analyst changed it). Nothing is applied while a header has an error."""
    if not spec_text.strip():
        return {}, []
    try:
        wanted = uo.header_values(spec_text)
    except FairauditError:
        return {}, uo.header_problems(spec_text)
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


def engine_switch_note(choices) -> str | None:
    """Before ``engine_picker``: when the engine chosen earlier cannot run with the current inputs (a new model, a
    new dataset), the sentence saying so and which engine ``engine_picker`` will choose instead; else None."""
    usable = [c for c in choices if c.available]
    by_name = {c.name: c for c in choices}
    previous = by_name.get(seed(uo.ENGINE_KEY, engines.DEFAULT))
    if previous is None or previous.available or not usable or not previous.reasons:
        return None
    names = [c.name for c in usable]
    now = by_name[engines.DEFAULT if engines.DEFAULT in names else names[0]]
    return (f"{previous.title} cannot run here any more ({', '.join(previous.reasons)}), so the engine is now "
            f"{now.title}.")


def engine_picker(choices, container=None):
    """The engine selectbox (the engines that can run; all of them, disabled, when none can) with the chosen
    engine's summary and, greyed, every engine that cannot run here and why. Returns the chosen ``EngineChoice``."""
    box = container or st
    left, right = box.columns([2, 3], vertical_alignment="bottom")
    usable = [c for c in choices if c.available]
    listed = usable or list(choices)
    names = [c.name for c in listed]
    by_name = {c.name: c for c in choices}
    if seed(uo.ENGINE_KEY, engines.DEFAULT) not in names:
        set_value(uo.ENGINE_KEY, engines.DEFAULT if engines.DEFAULT in names else names[0])
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


def engine_form(engine, where_problem: str | None = None, inputs_error: str | None = None, rows_widgets: bool = True
                ) -> Form:
    """The chosen engine's own options, then the options of every run, then (in "Advanced") the options it
    declares advanced; the row filter and the rows policy (``rows_widgets``: when the audit reads rows). Each value
    is checked by its declaration."""
    main = [o for o in engine.options if not o.advanced] + [o for o in engine.all_options()
                                                           if o not in engine.options and not o.advanced]
    advanced = [o for o in engine.all_options() if o.advanced]
    _grid(engine, main)
    if advanced:
        with st.expander("Advanced"):
            _grid(engine, advanced)
    if not rows_widgets:
        return _form_of(engine, "", None, [])
    left, right = st.columns([3, 2])
    seed(uo.WHERE_KEY, "")
    where = left.text_input("Only rows where (optional)", key=uo.WHERE_KEY,
                            placeholder=_where_example(), help=uo.WHERE_HELP)
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
    return _form_of(engine, where, rows, errors)


def _form_of(engine, where: str, rows, errors: list[str]) -> Form:
    raw = {uo.option_key(engine.name, o.name): st.session_state.get(uo.option_key(engine.name, o.name))
           for o in engine.all_options()}
    options, problems = uo.engine_options(engine, raw)
    for name, message in problems.items():
        st.error(f"{engine.option(name).title}: {message}")
        errors.append(message)
    choice = {"engine": engine.name, "options": options, "where": where.strip(),
              "rows": None if rows == "default" else rows}
    return Form(choice, errors)


# ------------------------------------------------------------------------------------------------ population programs

SOURCE_KEY = "audit_source"
SOURCES = {"rows": "Dataset and model", "population": "Population program (.fr)"}
PROGRAM_EDITOR = "audit_program_editor"
EXAMPLE_KEY = "audit_program_example"
PROPERTY_KEY = "audit_property"
EPSILON_KEY = "audit_epsilon"
PROPERTIES = {"ratio": "The group-fairness ratio of the program, with ε",
              "spec": "The specification (edited below)"}


def source_picker() -> str:
    """What the audit reads: the session's dataset and model, or a population program. Kept across pages."""
    if seed(SOURCE_KEY, "rows") not in SOURCES:
        set_value(SOURCE_KEY, "rows")
    source = st.radio("What to audit", list(SOURCES), key=SOURCE_KEY, format_func=SOURCES.get, horizontal=True,
                      help="A dataset and model: the audit reads the dataset's rows and the model's decisions. A "
                           "population program (a FairSquare .fr file): a probabilistic program that says who applies "
                           "(popModel) and how they are decided (F); the audit reads the program itself, or "
                           "individuals drawn from it.")
    keep(SOURCE_KEY, source)
    return source


def _put_program(text: str, name: str) -> None:
    """Make ``text`` the program in the editor (called by the example, upload and generate callbacks, before the
    editor is drawn)."""
    from fairaudit.ui import state

    st.session_state[PROGRAM_EDITOR] = text
    state.put(state.PROGRAM, {"text": text, "name": name, "loaded": text})
    st.session_state.pop("audit_program_upload_error", None)
    if st.session_state.get(EXAMPLE_KEY) != name:  # the example picker shows an example only when it is loaded
        set_value(EXAMPLE_KEY, None)


def _load_example() -> None:
    from fairaudit.programs.population import examples

    by_name = {e.name: e for e in examples()}
    example = by_name.get(st.session_state.get(EXAMPLE_KEY))
    if example is not None:
        keep(EXAMPLE_KEY, example.name)
        _put_program(example.text, example.name)


UPLOAD_GENERATION = "audit_program_upload_generation"


def _load_upload(key: str) -> None:
    """Put an uploaded file's text in the editor, then drop the file (the upload widget gets a new key: it is
    empty again, the text lives in the editor)."""
    from fairaudit.ui import flows

    upload = st.session_state.get(key)
    if upload is None:
        return
    try:
        _put_program(flows.read_program_upload(upload), upload.name.replace("\\", "/").rsplit("/", 1)[-1])
        st.session_state.pop("audit_program_upload_error", None)
    except ValueError as err:
        st.session_state["audit_program_upload_error"] = str(err)
    flows.forget_upload(upload)
    st.session_state[UPLOAD_GENERATION] = st.session_state.get(UPLOAD_GENERATION, 0) + 1


def _generate() -> None:
    from fairaudit.ui import flows, logic, state

    structure = st.session_state.get("audit_program_structure", "independent")
    try:
        text = flows.generate_program(structure)
    except Exception as err:  # noqa: BLE001 - shown under the button, never as a traceback
        st.session_state["audit_program_upload_error"] = "The program could not be generated: " + \
            logic.error_text(err)[0]
        return
    dataset = state.get(state.DATASET)
    _put_program(text, f"{getattr(dataset, 'name', 'data')}_{structure}.fr")
    st.session_state.pop("audit_program_upload_error", None)


@dataclass
class ProgramForm:
    text: str
    name: str
    population: Any = None  # the parsed ``Population`` (None: it does not parse)
    error: str | None = None


def program_form(dataset=None, model=None) -> ProgramForm:
    """Pick a bundled example, upload a ``.fr`` file or generate one from the session's dataset and model, and edit
    it; the text is parsed on every change (a parse error shows its line:column and nothing runs). The text lives in
    this session only (``state.PROGRAM``)."""
    from fairaudit.programs.population import examples
    from fairaudit.ui import flows, state

    bundled = examples()
    kept = state.get(state.PROGRAM)
    if kept is None:  # a first visit: the first example, ready to run
        kept = {"text": bundled[0].text, "name": bundled[0].name, "loaded": bundled[0].text}
        state.put(state.PROGRAM, kept)
    if PROGRAM_EDITOR not in st.session_state:  # a widget's value is forgotten when its page is left
        st.session_state[PROGRAM_EDITOR] = kept["text"]
    about = {e.name: e.about for e in bundled}
    left, middle = st.columns([3, 2])
    if seed(EXAMPLE_KEY, kept.get("name")) not in about:
        set_value(EXAMPLE_KEY, None)
    picked = left.selectbox("Example program", list(about), key=EXAMPLE_KEY, on_change=_load_example,
                            placeholder="Choose an example to load it",
                            help="Small programs shipped with fairaudit, each with its exact answer in its first "
                                 "line: FairSquare's Fig. 1 (hiring) as published and fixed, and toys.")
    keep(EXAMPLE_KEY, picked)
    if picked is not None:
        left.caption(about[picked])
    upload_key = f"audit_program_upload_{st.session_state.get(UPLOAD_GENERATION, 0)}"
    middle.file_uploader(f"Or upload a .fr file (text, up to {flows.PROGRAM_MAX_KB} KB)", type=["fr", "txt"],
                         key=upload_key, on_change=_load_upload, args=(upload_key,), max_upload_size=1,
                         help=f"A FairSquare program (text, at most {flows.PROGRAM_MAX_KB} KB). It is parsed, never "
                              "run as code, and kept in this session only.")
    if dataset is not None and model is not None:
        g1, g2 = st.columns([3, 2], vertical_alignment="bottom")
        g1.radio("Or generate one from the loaded dataset and model", ["independent", "bn"], horizontal=True,
                 key="audit_program_structure",
                 format_func={"independent": "columns independent", "bn": "protected attribute as the root (BN)"}.get,
                 help="A population model of the dataset's columns with the model's decision as F(); edit it below.")
        g2.button("Generate", key="audit_program_generate", on_click=_generate, icon=":material/auto_awesome:")
    upload_error = st.session_state.get("audit_program_upload_error")
    if upload_error:
        st.error(upload_error)
    text = st.text_area("Population program", key=PROGRAM_EDITOR, height=400,
                        max_chars=flows.PROGRAM_MAX_KB * 1024,
                        help="popModel() draws an individual (gaussian(mean, variance), step([(lo, hi, p), ...]), "
                             "if/elif/else, arithmetic) and marks sensitiveAttribute(...) and optionally "
                             "qualified(...); F() decides and marks fairnessTarget(...). Checked as you type.")
    name = kept.get("name") or "program"
    if text != kept.get("text"):
        kept = {**kept, "text": text}
        state.put(state.PROGRAM, kept)
    if text != kept.get("loaded"):
        name = name.removesuffix(".fr") + " (edited).fr"
    population, error = flows.check_program(text, name)
    if error:
        st.error(f"The program does not parse — {error}\n\nNothing runs until it does.",
                 icon=":material/error:")
    else:
        program = population.program
        st.caption(f"**{name}** parses: {len(program.variables)} variables "
                   f"({', '.join(list(program.variables)[:8])}{', …' if len(program.variables) > 8 else ''}).")
    return ProgramForm(text, name, population, error)


def property_form() -> tuple[str, float | None]:
    """``(kind, epsilon)``: audit the program's group-fairness ratio with ε (``ratio``) or the session's
    specification (``spec``). Kept across pages."""
    from fairaudit.programs.population import DEFAULT_EPSILON, ratio_spec

    if seed(PROPERTY_KEY, "ratio") not in PROPERTIES:
        set_value(PROPERTY_KEY, "ratio")
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    kind = left.radio("Property", list(PROPERTIES), key=PROPERTY_KEY, format_func=PROPERTIES.get,
                      help="The ratio: P[target | sensitive and qualified] / P[target | not sensitive and "
                           "qualified] > 1 − ε. Or your own specification over pred (the target, 0/1), sensitive, "
                           "qualified and the program's variables, e.g. E[pred | sensitive and age > 30] > 0.4.")
    keep(PROPERTY_KEY, kind)
    epsilon = None
    if kind == "ratio":
        value = seed(EPSILON_KEY, DEFAULT_EPSILON)
        if not isinstance(value, float) or not 0 < value < 1:
            set_value(EPSILON_KEY, DEFAULT_EPSILON)
        epsilon = right.number_input("ε", min_value=0.001, max_value=0.999, step=0.01, format="%g", key=EPSILON_KEY,
                                     help="The ratio must exceed 1 − ε to be fair (FairSquare's default: 0.15).")
        keep(EPSILON_KEY, epsilon)
        st.caption(f"Audits `{ratio_spec(epsilon)}` over the program's individuals: `pred` is its fairnessTarget, "
                   "`sensitive` its sensitiveAttribute, `qualified` its qualified(...) (everyone when it has none).")
    return kind, epsilon


def _where_example() -> str:
    """The placeholder in the current dataset's own columns (issue 44: not Adult's on another dataset)."""
    from fairaudit.ui import logic, state

    dataset = state.get(state.DATASET)
    return logic.example_where(state.role_groups(dataset) if dataset is not None else {})
