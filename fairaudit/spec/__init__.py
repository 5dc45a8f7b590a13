"""The specification language: parse, print, validate and evaluate fairness specifications.

    spec = parse('E[pred | sex == "Female"] / E[pred | sex == "Male"] >= 0.8')
    spec.nodes            # TreeNode records: id ("n0" = root, pre-order), parent, kind, canonical text
    to_text(spec.root)    # canonical text; parse(to_text(t)) == t
    validate(spec, dataset.schema, dataset.frame)   # [Diagnostic(severity, line, column, message)]
    evaluate_event(parse_event("decile_score <= 4"), frame)   # boolean mask, one per row

Errors are ``SpecError`` (``str`` = ``"LINE:COL: message"``, ``.pretty()`` adds a caret excerpt).
The grammar is ``grammar.lark`` (its LALR tables built ahead of time: ``fairaudit.spec.grammar_tables``); the AST
is ``fairaudit.spec.ast``; metric templates are ``fairaudit.spec.templates``; ``.spec`` files with
``# dataset:``/``# decision:`` headers are read by ``fairaudit.spec.files``.
"""
from fairaudit.spec.ast import Span, Spec, TreeNode
from fairaudit.spec.errors import SpecError
from fairaudit.spec.events import evaluate_event, event_columns, spec_columns
from fairaudit.spec.files import SpecFile, load_spec_file, read_headers
from fairaudit.spec.parser import parse, parse_event
from fairaudit.spec.printer import format_number, to_text
from fairaudit.spec.tree import build_spec
from fairaudit.spec.validate import Diagnostic, check, interval, validate, validate_event

__all__ = ["Diagnostic", "Span", "Spec", "SpecError", "SpecFile", "TreeNode", "build_spec", "check",
           "evaluate_event", "event_columns", "format_number", "interval", "load_spec_file", "parse",
           "parse_event", "read_headers", "spec_columns", "to_text", "validate", "validate_event"]
