"""A condition in plain words, built from its syntax tree (``fairaudit.spec.ast``), never from its printed text.

    condition_words(parse_event('sex == "Female" and race == "Black"'))   # 'sex = Female and race = Black'
    group_words(parse_event('age >= 40'))                                # 'those with age ≥ 40'
    group_words(parse_event('not (x == "a")'))                           # 'those with x ≠ a'
    group_words(parse_event('not (sex == "F" and age < 30)'))            # 'everyone except those with sex = F and age < 30'

Every sentence that names a group (the headline, the CLI's ``summary:`` line, the PDF's first page) takes its words
from here. Comparisons read with the column first (``40 <= age`` is "age ≥ 40"); a negated comparison is the opposite
comparison, which is what the three-valued evaluation of events (``fairaudit.spec.events``) makes it: a row with a
missing value satisfies neither; a column on its own (a 0/1 column) reads "married = true". A value or a name is
written as it is, unless it could be misread — empty, spaces at an end, a line break, the words *and*, *or*, *not*,
a bracket, a comma, a colon or a comparison sign in it, or a quote at an end; text that reads as a number or as true /
false — then it is quoted as the specification quotes it (``fairaudit.spec.printer``: a value in quotes, a name in
back quotes).
"""
from __future__ import annotations

import re

from fairaudit.spec import ast
from fairaudit.spec.printer import format_number, quote_name, quote_string

#: a comparison's sign in words
SIGNS = {"==": "=", "!=": "≠", "<": "<", "<=": "≤", ">": ">", ">=": "≥"}
#: the comparison that holds exactly where ``op`` is false (on a row whose values are known)
NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
#: ``op`` read with its sides swapped (``40 <= age`` is ``age >= 40``)
SWAPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

_MISREAD = re.compile(r"\b(?:and|or|not)\b|[(){},:;=<>≠≤≥\n\r\t]|^\s|\s$|^[\"'`“”‘’]|[\"'`“”‘’]$", re.IGNORECASE)


def literal_words(text: str) -> str:
    """A text value as a sentence writes it: as it is, or quoted when it could be misread (module doc) or read as
    a number or as true / false (``zip == "10001"`` is "zip = "10001"", ``zip == 10001`` is "zip = 10001")."""
    if not _misread(text):
        return text
    if '"' in text and "'" not in text and "\\" not in text and not re.search(r"[\n\r\t]", text):
        return f"'{text}'"
    return quote_string(text)


def _misread(text: str) -> bool:
    """Whether ``text`` written as it is could be misread in a condition's words (module doc)."""
    if not text or _MISREAD.search(text) or text.lower() in ("true", "false"):
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def _name(name: ast.Name) -> str:
    """A column as it is, or back-quoted (as the specification writes it) when it could be misread; ``pred``
    compared with a class reads "decision" (``pred == "approve"`` is "decision = approve")."""
    if name.reserved and name.name == "pred":
        return "decision"
    text = name.name
    return quote_name(text, column=True) if _misread(text) else text


def _operand(operand: ast.Operand) -> str:
    if isinstance(operand, ast.Name):
        return _name(operand)
    if isinstance(operand.value, str):
        return literal_words(operand.value)
    return format_number(operand.value)


def _compare(op: str, left: ast.Operand, right: ast.Operand) -> str:
    if isinstance(left, ast.Value) and isinstance(right, ast.Name):
        op, left, right = SWAPPED[op], right, left
    return f"{_operand(left)} {SIGNS[op]} {_operand(right)}"


def _member(event: ast.In, negated: bool) -> str:
    values = ", ".join(_operand(v) for v in event.values)
    return f"{_name(event.operand)} {'not in' if negated else 'in'} {{{values}}}"


def _words(event: ast.Event, within: type | None = None, negated: bool = False) -> str:
    """``event`` (or its negation) in words; an ``and`` inside an ``or`` (or the other way round) in parentheses, so
    that a reader never has to know which binds tighter (``within``: the class of the enclosing ``and``/``or``)."""
    if isinstance(event, ast.EvNot):
        return _words(event.operand, within, not negated)
    if isinstance(event, ast.Name):
        return f"{event.name if event.reserved else _name(event)} = {'false' if negated else 'true'}"
    if isinstance(event, ast.Compare):
        return _compare(NEGATED[event.op] if negated else event.op, event.left, event.right)
    if isinstance(event, ast.In):
        return _member(event, event.negated != negated)
    if not isinstance(event, (ast.EvAnd, ast.EvOr)):
        raise TypeError(f"not an event: {event!r}")
    if negated:  # not (a and b): said as such, the parts as written
        return f"not ({_words(event)})"
    kind = type(event)
    word = "and" if kind is ast.EvAnd else "or"
    text = f"{_words(event.left, kind)} {word} {_words(event.right, kind)}"
    return f"({text})" if within is not None and within is not kind else text


def condition_words(event: ast.Event) -> str:
    """A condition in words: ``sex == "Female" and race == "Black"`` → "sex = Female and race = Black"; ``or`` inside
    ``and`` (and ``and`` inside ``or``) is parenthesised, ``not`` of a comparison is the opposite comparison (module doc)."""
    return _words(event)


def group_words(event: ast.Event | None) -> str:
    """The group a condition selects, as a sentence names it: "those with sex = Female and race = Black";
    "everyone except those with …" for the negation of a conjunction or disjunction; "everyone" for no condition."""
    if event is None:
        return "everyone"
    inner, negated = event, False
    while isinstance(inner, ast.EvNot):
        inner, negated = inner.operand, not negated
    if negated and isinstance(inner, (ast.EvAnd, ast.EvOr)):
        return f"everyone except those with {condition_words(inner)}"
    return f"those with {condition_words(event)}"


def pairs_event(pairs) -> ast.Event | None:
    """The condition "attribute = value and …" of ``(attribute, value)`` pairs, as a syntax tree (None for no pair):
    a text value is compared as text, a number as a number, true / false as 1 / 0 (as a scan writes its cells)."""
    event = None
    for name, value in pairs:
        if isinstance(value, bool) or type(value).__name__ == "bool_":
            value = int(bool(value))
        elif hasattr(value, "item") and not isinstance(value, str):  # a numpy number
            value = value.item()
        if not isinstance(value, (int, float, str)):
            value = str(value)
        compare = ast.Compare("==", ast.Name(str(name)), ast.Value(value))
        event = compare if event is None else ast.EvAnd(event, compare)
    return event


def pairs_words(pairs) -> str:
    """``(attribute, value)`` pairs in words, as ``condition_words`` writes the same condition:
    ``[("sex", "Female"), ("race", "Black")]`` → "sex = Female and race = Black"; no pair: "everyone"."""
    event = pairs_event(pairs)
    return "everyone" if event is None else condition_words(event)
