"""The Audit page's engine picker and option widgets, derived from the engines' declarations (pure functions, no
Streamlit; ``tests/app/test_logic.py``).

Nothing here knows an engine: the picker lists ``fairaudit.engines``' registry with each engine's reasons not to
run (``Engine.check``), every widget comes from an ``Option`` (its type, bounds, choices, label and help), and a
spec file's headers become widget values through ``fairaudit.core.preflight`` (``# engine:``, ``# where:`` and every
option declared ``header=True``). Widget keys name the engine, so each engine keeps its own values.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from fairaudit import engines
from fairaudit.base.errors import FairauditError

ENGINE_KEY = "audit_engine"
WHERE_KEY = "audit_where"
ROWS_KEY = "audit_rows"
ROWS_CHOICES = ("default", "held-out", "all")
ROWS_LABELS = {"default": "default (held-out when the model was trained here)", "held-out": "held-out",
               "all": "all"}
ROWS_HELP = ("Which rows to audit: held-out (the rows the model was not trained on; the default when fairaudit "
             "trained the model on this dataset, since label-based rates are optimistic on training rows) or all.")
WHERE_HELP = ("Audit only the rows matching this condition; the other rows are left out of the audit. A "
              "specification's '# where:' header fills this in.")
MAX_WIDGET_INT = 2**53 - 1  # the largest whole number a browser's number field holds exactly


def option_key(engine_name: str, option_name: str) -> str:
    """The widget key of an option: it names the engine, so switching engines keeps each one's values."""
    return f"audit_opt_{engine_name}_{option_name}"


def widget_kind(option) -> str:
    """``select`` (choices), ``checkbox`` (bool), ``number`` (int/float) or ``text`` (str)."""
    if option.choices:
        return "select"
    if option.type is bool:
        return "checkbox"
    if option.type in (int, float):
        return "number"
    return "text"


def number_bounds(option) -> tuple[Any, Any]:
    """The bounds a number widget enforces itself: the declared ones when they are inclusive (a strict bound is
    checked by the declaration when the value is used), in the option's type; whole numbers within what a browser
    holds exactly."""
    if option.exclusive:
        lo = hi = None
    else:
        lo, hi = option.min, option.max
    cast = option.type
    lo = None if lo is None else cast(lo)
    hi = None if hi is None else cast(hi)
    if option.type is int:
        lo = None if lo is None else max(lo, -MAX_WIDGET_INT)
        hi = MAX_WIDGET_INT if hi is None else min(hi, MAX_WIDGET_INT)
    return lo, hi


def number_step(option):
    if option.type is int:
        return int(option.step or 1)
    return float(option.step or 0.01)


def help_text(option) -> str:
    """The option's help as a sentence (a tooltip)."""
    text = option.help.strip()
    return (text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")) if text else ""


# ------------------------------------------------------------------------------------------------ engines


@dataclass(frozen=True)
class EngineChoice:
    name: str
    title: str
    summary: str
    reasons: tuple[str, ...] = field(default_factory=tuple)  # why it cannot run here (empty: it can)

    @property
    def available(self) -> bool:
        return not self.reasons


def loaded_engines() -> list:
    """Every engine of the registry that can be loaded here (its declarations, without its solver)."""
    out = []
    for name in engines.names():
        try:
            out.append(engines.get(name))
        except ImportError:
            continue
    return out


def engine_choices(spec=None, inputs=None) -> list[EngineChoice]:
    """Every engine of the registry with the reasons it cannot audit ``spec`` on ``inputs`` (either may be None:
    then only what can be checked without it): a missing package (``engines.available``), then ``Engine.check``."""
    out = []
    for availability in engines.available():
        if not availability.available:
            out.append(EngineChoice(availability.name, availability.name, "", (availability.reason or "",)))
            continue
        engine = engines.get(availability.name)
        try:
            reasons = tuple(engine.check(spec, inputs))
        except FairauditError as err:
            reasons = (str(err),)
        out.append(EngineChoice(engine.name, engine.title or engine.name, engine.summary, reasons))
    return out


def engine_options(engine, raw: Mapping[str, Any]) -> tuple[dict, dict[str, str]]:
    """``(options, errors)``: every option of ``engine`` (its own and ``COMMON_OPTIONS``) from the widget values
    ``raw`` (keyed by ``option_key``; absent: the default), validated by its declaration; ``errors`` maps an
    option's name to the message its declaration gives (the option is then left out)."""
    options, errors = {}, {}
    for option in engine.all_options():
        key = option_key(engine.name, option.name)
        value = raw.get(key, option.default)
        if option.type is str and not option.choices and isinstance(value, str) and not value.strip():
            value = None if option.default is None else value
        try:
            options[option.name] = option.validate(value)
        except FairauditError as err:
            errors[option.name] = str(err)
    return options, errors


def options_line(engine, options: Mapping[str, Any] | None = None) -> str:
    """The engine and its main options in one line, e.g. for the demo's log: "<title> — <option>: <value> · ..."
    (words and values from the declarations: ``Option.title`` / ``Option.show``)."""
    options = options or {}
    shown = [f"{o.title}: {o.show(options.get(o.name, o.default))}" for o in engine.options if not o.advanced]
    return (engine.title or engine.name) + (" — " + " · ".join(shown) if shown else "")


def companions(chosen, choices, inputs=None) -> list:
    """Engines worth running beside ``chosen`` on the same rows: every other engine that can run here and gives
    an exact value (``Guarantee.kind == "exact"``), when ``chosen`` does not."""
    def kind(engine) -> str | None:
        try:
            return engine.guarantee(engine.resolve_options({}), inputs).kind
        except Exception:  # noqa: BLE001 - an engine that cannot say without its inputs is not offered
            return None

    if kind(chosen) == "exact":
        return []
    out = []
    for choice in choices:
        if choice.name == chosen.name or not choice.available:
            continue
        engine = engines.get(choice.name)
        if kind(engine) == "exact":
            out.append(engine)
    return out


# ------------------------------------------------------------------------------------------------ headers


def spec_file(text: str):
    """A ``SpecFile`` of an editor's text for reading its headers (its ``spec`` is None when it does not parse)."""
    from fairaudit.spec.files import SpecFile, parse_file_text, read_headers

    try:
        return parse_file_text(text)
    except FairauditError:
        return SpecFile(text=text, spec=None, headers=read_headers(text))


def header_values(text: str) -> dict[str, Any]:
    """The widget values a specification's headers ask for: ``# engine:`` (the picker), ``# where:`` (the row
    filter) and, for every engine, each of its options declared ``header=True`` (``preflight.header_options``).
    ``ValidationError`` listing every header error (a misspelt header, a value its option refuses)."""
    from fairaudit.core.preflight import check_headers, header_engine, header_options

    file = spec_file(text)
    check_headers(file)
    out: dict[str, Any] = {}
    name = header_engine(file)
    if name is not None:
        out[ENGINE_KEY] = name
    if file.where is not None:
        out[WHERE_KEY] = file.where
    for engine in loaded_engines():
        for option, value in header_options(file, engine).items():
            out[option_key(engine.name, option)] = value
    return out


def header_changes(wanted: Mapping[str, Any], previous: Mapping[str, Any], current: Mapping[str, Any],
                   defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The widget values to set when the headers become ``wanted`` (they were ``previous``): every wanted value,
    and each value a header set before that is gone now back to its default — unless the analyst has changed it
    since (``current``), which is then kept."""
    out = dict(wanted)
    for key, value in previous.items():
        if key not in wanted and current.get(key, value) == value:
            out[key] = defaults.get(key)
    return out


def default_value(key: str) -> Any:
    """The value a widget starts with (the declaration's default for an option's key)."""
    if key == ENGINE_KEY:
        return engines.DEFAULT
    if key == WHERE_KEY:
        return ""
    if key == ROWS_KEY:
        return "default"
    for engine in loaded_engines():
        for option in engine.all_options():
            if option_key(engine.name, option.name) == key:
                return option.default
    return None


def header_note(wanted: Mapping[str, Any], engine) -> str | None:
    """What the headers set, for a caption under the widgets: "Taken from the specification's headers: ..."."""
    names = []
    if ENGINE_KEY in wanted:
        names.append("engine")
    if WHERE_KEY in wanted:
        names.append("row filter")
    for option in engine.all_options():
        if option_key(engine.name, option.name) in wanted:
            names.append(option.title)
    if not names:
        return None
    return "Taken from the specification's headers: " + ", ".join(names) + "."


# ---------------------------------------------------------------- header errors, as the dashboard shows them
def header_problems(text: str) -> list[str]:
    """Every error in a specification's headers (misspelt, misplaced, a value its option refuses), each with
    its line and column; empty when they are fine."""
    try:
        header_values(text)
    except FairauditError as err:
        return [_located(e) for e in getattr(err, "errors", [err])]
    return []


def _located(err, pretty: bool = False) -> str:
    line, column = getattr(err, "line", None), getattr(err, "column", None)
    where = f"line {line}, column {column}: " if line else ""
    text = f"{where}{getattr(err, 'message', str(err))}"
    if pretty:  # the source line and the caret under it (the message is said above)
        caret = caret_lines(getattr(err, "excerpt", ""), column, getattr(err, "length", 1))
        text += f"\n\n```\n{caret}\n```" if caret else ""
    return text


CARET_WIDTH = 60  # characters of the source line shown around the token (a message box does not scroll far)


def caret_lines(line: str, column: int | None, length: int = 1, width: int = CARET_WIDTH) -> str:
    """``fairaudit.spec.errors.caret_lines`` at the dashboard's width."""
    from fairaudit.spec.errors import caret_lines as lines

    return lines(line, column, length, width)
