"""Everything an audit checks before it computes anything: one function, used by ``fairaudit check``,
``fairaudit audit``, ``fairaudit.audit(...)`` and the dashboard's Run, so a typo is refused the same way
everywhere (a value typo such as ``sex != "male"`` would otherwise silently change the verdict).

``preflight(dataset, spec, decision=..., where=...)`` validates the specification against the dataset's
schema and rows, the decision expression (``--pred`` / ``# decision:``) and the row filter (``--where`` /
``# where:``), and the facts that need no data (a spec without any ``E[...]`` / ``Fair[...]``; ``Fair[...]``
with a decision expression instead of a model). It raises ``ValidationError`` listing every error (each
positioned: in the spec text or file, at the header's line:column, or in the option's own text) and
returns the warnings as ``SpecError``s (``str`` is one line; ``pretty()`` adds the caret).

A ``Source`` says where a piece of text came from, so that a message points at it: the spec file, a
header inside it, or a command-line option.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from fairaudit.base.errors import FairauditError
from fairaudit.spec import ast
from fairaudit.spec.errors import SpecError
from fairaudit.spec.validate import (Diagnostic, reserved_hint, reserved_in_decision, structure, validate,
                                     validate_event)


@dataclass(frozen=True)
class Source:
    """Where ``text`` lives: in ``file_text`` (the spec file, named ``filename``) at ``line``:``column``,
    or, when ``file_text`` is None, on its own (a command-line option called ``name``)."""

    text: str
    name: str  # what it is, for messages: "--where", "the decision", ...
    file_text: str | None = None
    filename: str | None = None
    line: int = 1
    column: int = 1

    def error(self, d: Diagnostic, prefix: str = "") -> SpecError:
        """``d`` (positioned in ``text``) as a ``SpecError`` positioned where ``text`` lives."""
        message = f"{prefix}{d.message}"
        if d.line is None:
            return SpecError(None, None, message, filename=self.filename)
        if self.file_text is None:
            return SpecError.at(self.text, d.line, d.column, message, length=d.length, filename=self.name)
        line = d.line + self.line - 1
        column = d.column + self.column - 1 if d.line == 1 else d.column
        return SpecError.at(self.file_text, line, column, message, length=d.length, filename=self.filename)


class ValidationError(SpecError):
    """Every error preflight found; ``str`` is the first one, ``pretty()`` shows them all with carets."""

    def __init__(self, errors: list[SpecError]):
        first = errors[0]
        super().__init__(first.line, first.column, first.message, excerpt=first.excerpt, length=first.length,
                         filename=first.filename)
        self.errors = errors

    def pretty(self) -> str:
        return "\n".join(err.pretty() for err in self.errors)


def file_source(spec_file) -> Source:
    """The ``Source`` of a spec file's own text (positions are line:column in the file)."""
    return Source(spec_file.text, "the specification", spec_file.text, spec_file.path)


def known_headers() -> tuple[str, ...]:
    """Every header a spec file may carry: the base ones and every engine option declared ``header=True``."""
    from fairaudit.core.registry import header_names
    from fairaudit.spec.files import BASE_HEADERS

    return BASE_HEADERS + tuple(h for h in header_names() if h not in BASE_HEADERS)


def check_headers(spec_file) -> None:
    """Raise ``ValidationError`` for misspelt, misplaced or repeated headers (``SpecFile.header_errors``), a
    ``# dataset:`` header that names a file outside the spec file's folder (``SpecFile.dataset_ref``), and for a
    header value that its engine option refuses (every engine's header options are checked)."""
    from fairaudit.core import registry

    errors = spec_file.header_errors(known_headers())
    # '# engine:' names an engine; '# dataset:' a built-in dataset or a file in the spec file's folder
    for check in (functools.partial(header_engine, spec_file), spec_file.dataset_ref):
        try:
            check()
        except SpecError as err:
            errors.append(err)
    for name in registry.names():  # the declarations only: the engines themselves are not imported
        for option in registry.header_options(name):
            if option.name in spec_file.headers:
                try:
                    _header_value(spec_file, option)
                except SpecError as err:
                    if all(str(e) != str(err) for e in errors):
                        errors.append(err)
    if errors:
        raise ValidationError(errors)


def header_engine(spec_file) -> str | None:
    """The ``# engine:`` header's engine name (a ``SpecError`` at the header when there is no such engine)."""
    from fairaudit.core import registry

    header = spec_file.headers.get("engine")
    if header is None:
        return None
    value = header.value.strip().lower()
    if value not in registry.names():
        raise spec_file.header_error("engine", f"'# engine:' must be one of {', '.join(registry.names())}; "
                                               f"got {header.value[:40]!r}")
    return value


def _header_value(spec_file, option):
    try:
        return option.parse(spec_file.headers[option.name].value)
    except FairauditError as err:
        text = str(err)
        text = text[len(option.name) + 1:] if text.startswith(option.name + " ") else text
        raise spec_file.header_error(option.name, f"'# {option.name}:' {text}") from None


def header_options(spec_file, engine) -> dict:
    """The options ``engine`` takes from the spec file's headers (``# delta: 0.15``), parsed and checked by each
    option's declaration (a ``SpecError`` at the header's value otherwise). Headers of other engines' options
    are not this engine's business and are left out."""
    return {o.name: _header_value(spec_file, o) for o in engine.header_options() if o.name in spec_file.headers}


def check_options(engine: str | None = None, **options):
    """``(engine, every option's value)``: the engine from the registry (``fairaudit.core.registry``; None: the
    default engine) and ``options`` validated by its declarations (``FairauditError``, one line naming the option
    and what it takes, before any work). Every route checks its options here (``fairaudit.api``, the command line,
    the monitor's out-of-core and Dask routes)."""
    from fairaudit.core import registry

    chosen = registry.get(engine or registry.DEFAULT)
    return chosen, chosen.resolve_options({k: v for k, v in options.items()})


def option_source(text: str, name: str, header=None, spec_file=None) -> Source:
    """The ``Source`` of an option's text: the spec file's header when it came from one, else the option."""
    if header is not None and spec_file is not None:
        return Source(text, name, spec_file.text, spec_file.path, header.line, header.column)
    return Source(text, name)


def _parse_event(source: Source, what: str):
    from fairaudit.spec.parser import parse_event

    try:
        return parse_event(source.text)
    except SpecError as err:
        d = Diagnostic("error", err.line, err.column, err.message, err.length)
        raise ValidationError([source.error(d, f"in {what}: ")]) from None


def _classes(schema, decision: Source | None, uses_model: bool):
    """What ``pred`` holds, for ``validate``: the classes of a column of logged classes named as the decision
    (``fairaudit.spec.validate.class_column``), ``LATER`` for a model not loaded yet (its classes are checked once it
    is: ``check_decisions``), None for a yes/no decision."""
    from fairaudit.spec.validate import LATER, class_column

    if decision is not None:
        from fairaudit.spec.parser import parse_event

        try:
            column = class_column(parse_event(decision.text), schema)
        except SpecError:
            return None  # (the decision's own error is reported below)
        return None if column is None else tuple(schema.column(column).values)
    return LATER if uses_model else None


def check_decisions(spec, model, source: Source | None = None, where: str | None = None) -> None:
    """Once a model is loaded: what the spec (and the row filter ``where``) compares ``pred`` with, against the
    model's classes (or its yes/no decisions): ``SpecError`` at the first problem
    (``fairaudit.spec.validate.decision_problems``), before any work; positioned in ``source`` (the spec file) when
    given."""
    from fairaudit.spec.validate import decision_problems

    if model is None or isinstance(model, str):  # (a training kind: a yes/no model, checked once trained)
        return
    classes = getattr(model, "classes", None)
    found = decision_problems(spec, classes)
    if found:
        if source is not None:
            raise source.error(found[0])
        raise found[0].to_error(getattr(spec, "source", "") or getattr(spec, "text", ""))
    if where:
        from fairaudit.spec.parser import parse_event

        found = decision_problems(parse_event(where), classes)
        if found:
            raise Source(where, "where").error(found[0], "in the row filter: ")


def preflight(dataset, spec: ast.Spec, *, spec_source: Source | None = None, decision: Source | None = None,
              where: Source | None = None, uses_model: bool = True, count_rows: bool = True) -> list[SpecError]:
    """Validate an audit before it runs (module doc): raise ``ValidationError``, return the warnings.

    ``dataset`` may be None (then only what needs no data is checked). ``decision`` is a decision
    expression used instead of a model; ``uses_model`` says whether a model makes the decisions.
    ``count_rows=False``: no "only N rows satisfy …" warning (the dataset holds a live log's first rows only).
    """
    if spec_source is None:
        text = getattr(spec, "source", "") or spec.text
        spec_source = Source(text, "the specification", text)  # positions are line:column in the spec itself
    found: list[SpecError] = []  # errors and warnings, as positioned SpecErrors
    kinds: list[str] = []

    def add(source: Source, diagnostics, prefix: str = "") -> None:
        for d in diagnostics:
            found.append(source.error(d, prefix))
            kinds.append(d.severity)

    if dataset is None:
        add(spec_source, structure(spec))
    else:
        classes = _classes(dataset.schema, decision, uses_model)
        add(spec_source, validate(spec, dataset.schema, dataset.frame, count_rows=count_rows, classes=classes))
        for message in dataset.protected_warnings():
            found.append(SpecError(None, None, message))
            kinds.append("warning")
    if decision is not None:
        event = _parse_event(decision, "the decision")
        reserved = reserved_in_decision(event, getattr(dataset, "schema", None))
        if reserved:
            add(decision, reserved, "in the decision: ")
        elif dataset is not None:
            add(decision, validate_event(event, dataset.schema, dataset.frame, decision=True), "in the decision: ")
        for tn in spec.leaves:
            if tn.kind == "fair":
                add(spec_source, [_diagnostic(tn.node, f"{tn.text} re-predicts each row with the attribute "
                                                       "flipped, so it needs a model (--model), not a decision "
                                                       "expression")])
            scores = [n for ev in _events(tn) for n in ast.event_names(ev) if n.reserved and n.name == "score"]
            taken = {(e.line, e.column) for e, k in zip(found, kinds) if k == "error"}
            scores = [n for n in scores if not n.span or (n.span.line, n.span.column) not in taken]
            if scores:  # with logged decisions the "score" would just be the 0/1 decision again
                add(spec_source, [_diagnostic(scores[0], "'score' is a model's probability; a decision expression "
                                                         "has none (it would be the 0/1 decision itself): use "
                                                         "'pred', or audit a model (--model)")])
    elif not uses_model:
        for tn in spec.leaves:
            names = [n for ev in _events(tn) for n in ast.event_names(ev) if n.name in ("pred", "score")
                     and n.reserved]
            if tn.kind == "fair" or names:
                hint = reserved_hint(names[0].name, dataset.schema if dataset is not None else None) if names else ""
                add(spec_source, [_diagnostic(tn.node, f"{tn.text} needs decisions: give a model (--model) or "
                                                       f"a decision expression (--pred){hint}")])
                break
    if where is not None:
        event = _parse_event(where, "the row filter")
        if dataset is not None:
            add(where, validate_event(event, dataset.schema, dataset.frame, classes=classes), "in the row filter: ")
    errors = [err for err, kind in zip(found, kinds) if kind == "error"]
    if errors:
        raise ValidationError(errors)
    return [err for err, kind in zip(found, kinds) if kind == "warning"]


def columns_read(spec: ast.Spec, *events) -> set[str] | None:
    """The names ``preflight`` may read as columns of the rows (with the dataset's label and protected columns,
    which a dataset always reads): every name in ``spec`` and in ``events`` (the decision and the row filter,
    as text or parsed), ``Fair[...]``'s columns. None when an event does not parse: then every column (its
    error is preflight's to report, as it does)."""
    from fairaudit.spec.parser import parse_event

    names = set()
    for tn in spec.leaves:
        if tn.kind == "fair":
            names.add(tn.node.column)
        for event in _events(tn):
            names.update(n.name for n in ast.event_names(event))
    for event in events:
        if event is None:
            continue
        try:
            parsed = parse_event(event) if isinstance(event, str) else event
        except SpecError:
            return None
        names.update(n.name for n in ast.event_names(parsed))
    return names


def _events(tn):
    node = tn.node
    return [e for e in (getattr(node, "event", None), getattr(node, "given", None)) if e is not None]


def _diagnostic(node, message: str) -> Diagnostic:
    span = getattr(node, "span", None)
    if span is None:
        return Diagnostic("error", None, None, message)
    return Diagnostic("error", span.line, span.column, message, max(1, span.end - span.start))
