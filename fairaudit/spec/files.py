"""Specification files (``*.spec``): the spec text plus header comments.

A file may start with comment lines of the form ``# key: value``. Recognised keys:

* ``dataset``: the built-in dataset (or CSV path) the spec is written for, e.g. ``# dataset: adult``;
* ``decision``: a decision expression giving ``pred`` when auditing logged data instead of a model,
  e.g. ``# decision: income == ">50K"`` (an event, see ``parse_event``), or ``model`` when the spec is
  meant for a trained model's decisions;
* ``where``: the rows the audit streams (the materialised view), an event such as
  ``# where: workclass == "Federal-gov"`` — what ``--where`` gives on the command line;
* ``engine``: the engine the spec is meant for (``fairaudit.engines.REGISTRY``), e.g. ``# engine: dataset``;
* any engine option declared with ``header=True`` (``fairaudit.core.engine.Option``), e.g. the monitor's
  ``# delta: 0.15`` and ``# order: given``; ``fairaudit.core.preflight.header_options`` reads and checks them.

Command-line options win over headers. Other ``# key: value`` lines are kept in ``headers`` and otherwise ignored (they are comments).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from fairaudit.base import limits
from fairaudit.spec import ast
from fairaudit.spec.errors import SpecError, clip
from fairaudit.spec.parser import parse, parse_event

MODEL_DECISION = "model"
# the headers every spec file may carry; an engine adds its own options' headers (``Option.header``)
BASE_HEADERS = ("dataset", "decision", "where", "engine", "range")
_HEADER = re.compile(r"^\s*#\s*([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*?)\s*$")


@dataclass(frozen=True)
class Header:
    key: str
    value: str
    line: int  # 1-based line of the header
    column: int  # 1-based column where the value starts


@dataclass(frozen=True)
class SpecFile:
    text: str
    spec: ast.Spec
    headers: dict[str, Header] = field(default_factory=dict)
    path: str | None = None

    def header_errors(self, known=BASE_HEADERS) -> list[SpecError]:
        """Misspelt, misplaced or repeated headers among ``known`` (``header_errors``), positioned in the file."""
        return header_errors(self.text, self.path, known)

    @property
    def dataset(self) -> str | None:
        header = self.headers.get("dataset")
        return header.value if header else None

    @property
    def decision(self) -> str | None:
        header = self.headers.get("decision")
        return header.value if header else None

    def dataset_ref(self) -> str | None:
        """The ``# dataset:`` header as something safe to open: a built-in dataset's name, or a ``.csv``/``.csv.gz``
        file **in the spec file's folder or below it** (the current folder for spec text that is not a file: the
        command line's ``--spec TEXT``, the dashboard's editor), given by a relative path without ``..``, that still
        lies there once symbolic links are resolved. Anything else — an absolute path, ``~``, a path that climbs out
        (``../../x.csv``), a link that leads out, another kind of file — is refused at the header's line:column,
        wherever the spec is read (CLI, dashboard, ``fairaudit.audit``): a spec file from someone else must not make
        the tool read arbitrary files."""
        header = self.headers.get("dataset")
        if header is None:
            return None
        from fairaudit.data import names

        value = header.value.strip()
        if value in names():
            return value

        def refuse(why: str) -> SpecError:
            return SpecError.at(self.text, header.line, header.column, f"'# dataset:' {why}",
                                length=max(1, len(header.value)), filename=self.path)

        if not value:
            raise refuse("is empty; name a built-in dataset or a CSV file in the spec file's folder")
        raw = Path(value)
        if raw.is_absolute() or value.startswith("~"):
            raise refuse("must be a built-in dataset or a path relative to the spec file, not an absolute path")
        if ".." in raw.parts:
            raise refuse(f"must name a file in the spec file's folder or below it; {clip(value)} climbs out of it "
                         "('..')")
        if not value.lower().endswith((".csv", ".csv.gz")):
            from fairaudit.data.builtin import suggestion

            raise refuse(f"is neither a built-in dataset nor a .csv/.csv.gz file{suggestion(value, names())} "
                         f"(built-in: {', '.join(names())})")
        base = (Path(self.path).parent if self.path else Path.cwd()).resolve()
        target = (base / raw).resolve()  # symbolic links resolved: a link in the folder may not lead out of it
        if base not in target.parents:
            raise refuse(f"must name a file in the spec file's folder or below it; {clip(value)} leads out of it "
                         "through a symbolic link")
        return str(target)

    @property
    def uses_model(self) -> bool:
        """True when the ``# decision:`` header says ``model`` (decisions come from a trained model)."""
        return (self.decision or "").strip().lower() == MODEL_DECISION

    @property
    def where(self) -> str | None:
        header = self.headers.get("where")
        return header.value if header else None

    def where_event(self) -> ast.Event | None:
        """The ``# where:`` expression as an event (``SpecError`` positioned in the file if it is wrong)."""
        header = self.headers.get("where")
        if header is None:
            return None
        try:
            return parse_event(header.value)
        except SpecError as err:
            raise err.shifted(header.line - 1, header.column - 1).with_source(self.text, self.path) from None

    def header_error(self, key: str, message: str) -> SpecError:
        """A ``SpecError`` at the value of header ``key`` (which must be present)."""
        header = self.headers[key]
        return SpecError.at(self.text, header.line, header.column, message, length=max(1, len(header.value)),
                            filename=self.path)

    def decision_event(self) -> ast.Event | None:
        """The ``# decision:`` expression as an event (``SpecError`` positioned in the file if it is wrong)."""
        header = self.headers.get("decision")
        if header is None or self.uses_model:
            return None
        try:
            return parse_event(header.value)
        except SpecError as err:
            raise err.shifted(header.line - 1, header.column - 1).with_source(self.text, self.path) from None


def header_errors(text: str, path: str | None = None, known=BASE_HEADERS) -> list[SpecError]:
    """Header-like comments that would otherwise be silently ignored: a key very close to a known one
    (``# wher:``, ``# delt:``), or a known key after the leading comment block or repeated (only the first, in
    that block, is read). A misspelt ``# where:`` would audit all the rows instead of the intended view — a typo
    that changes the verdict — so each is an error at its line:column (rename a real comment, e.g. ``# note:``)."""
    import difflib

    headers = read_headers(text)
    out = []
    in_block = True
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            in_block = False
        match = _HEADER.match(line)
        if not match:
            continue
        key = match.group(1).lower()
        column = match.start(1) + 1
        if key in known:
            if not in_block or headers.get(key) is None or headers[key].line != number:
                why = ("comes after the specification starts" if not in_block else "repeats an earlier one")
                out.append(SpecError.at(text, number, column, f"this '# {key}:' header {why}, where it "
                                        "would be ignored; put headers at the top of the file, once each",
                                        length=len(key), filename=path))
            continue
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
        if close:
            out.append(SpecError.at(text, number, column, f"'# {clip(key)}:' is not a header fairaudit knows; "
                                    f"did you mean '# {close[0]}:'? (reword it if it is a plain comment)",
                                    length=len(key), filename=path))
    return out


def read_headers(text: str) -> dict[str, Header]:
    """The ``# key: value`` lines of the leading comment block (blank lines allowed in between)."""
    headers: dict[str, Header] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        match = _HEADER.match(line)
        if match and match.group(1).lower() not in headers:
            key = match.group(1).lower()
            headers[key] = Header(key, match.group(2), number, match.start(2) + 1)
    return headers


def parse_file_text(text: str, path: str | None = None) -> SpecFile:
    """Parse the text of a spec file; errors name ``path``."""
    try:
        spec = parse(text)
    except SpecError as err:
        raise err.with_source(text, path) from None
    headers = read_headers(text)
    if "range" in headers:  # the declared ranges of what the spec averages (``fairaudit.spec.quantities``)
        from fairaudit.base.errors import FairauditError
        from fairaudit.spec.quantities import with_ranges

        header = headers["range"]
        try:
            spec = with_ranges(spec, header.value)
        except FairauditError as err:
            raise SpecError.at(text, header.line, header.column, f"'# range:' {err}", filename=path) from None
    return SpecFile(text=text, spec=spec, headers=headers, path=path)


def load_spec_file(path: str | Path) -> SpecFile:
    """Read and parse a ``.spec`` file (``SpecError`` with ``FILE:LINE:COL`` on problems)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > 4 * limits.SPEC_CHARS:  # at most 4 bytes a character: surely over the limit, so not read
            raise SpecError(None, None, f"the specification file is {size:,} bytes, over the limit of "
                                        f"{limits.SPEC_CHARS:,} characters for a specification; it was not read",
                            filename=str(path))
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise SpecError(None, None, f"cannot read the specification file: {err}", filename=str(path)) from None
    return parse_file_text(text, str(path))


def parsed_with_ranges(spec, ranges=None):
    """``spec`` as a parsed ``Spec`` (text is parsed as a spec file's, so its ``# range:`` header counts) with the
    declared ``ranges`` attached (``fairaudit.spec.quantities``): what every entry point that takes a spec and ranges
    does."""
    if not (hasattr(spec, "nodes") and hasattr(spec, "root")):
        spec = parse_file_text(str(spec)).spec
    if not ranges:
        return spec
    from fairaudit.spec.quantities import with_ranges

    return with_ranges(spec, ranges)
