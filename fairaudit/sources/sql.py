"""An event of the specification language as one SQL boolean expression with the in-memory semantics, or None.

``translate(event, columns, dialect)`` gives the SQL that is true, false or NULL on a row exactly where
``fairaudit.spec.events.evaluate_event3`` finds the event true, false or *unknown* on that row as the pipeline reads it
(``fairaudit.sources.conform``): so a database can count what the scan counts in memory (``fairaudit.subgroups.
database``). Every literal is a bound parameter (never text in the SQL), every column a quoted identifier, and SQL's
own three-valued logic is Kleene logic, so ``and``/``or``/``not`` translate as they are. What each leaf reads:

* **text** — a value as conform gives it: trimmed of the whitespace pyarrow trims (``WHITESPACE``, Python's
  ``str.isspace``), an empty (or NULL, or ``na_values``) value the category ``"?"`` — a value like any other, so a
  text comparison is never unknown; compared byte by byte (binary collation: a column declared ``COLLATE NOCASE``
  still tells ``A`` from ``a``, as memory does), which is code-point order, Python's;
* **numbers** — NULL (and DuckDB's NaN) unknown; true/false as 0/1; compared exactly as memory compares them
  (``fairaudit.spec.events._exact``): a whole-number column with a fractional literal becomes a comparison with its
  floor or ceiling (``x > 2.5`` is ``x >= 3``), a literal no 64-bit integer or no float holds is decided from its
  sign or its neighbouring floats, and a whole-number column compared with a number column is compared as floats with
  a check (below) for values past 2^53;
* a bare 0/1 column — ``x <> 0``, with a check that it holds only 0 and 1 (memory refuses any other value);
* ``label`` (in a row filter) — the 0/1 label the caller gives (``label=``); ``pred`` and ``score`` are not columns.

``Translation.checks`` are SQL conditions that are true on a row where the translation would not be memory's answer
(a bare column holding 2, a whole number past 2^53 compared as a float): a caller counts them and, where any holds,
reads the rows through the pipeline instead, which answers (or refuses) as in memory. ``None`` where some construct
has no faithful translation (a column whose type the pipeline reads otherwise than the database compares it: dates,
decimals with a fraction, a type the user declared; text compared with numbers; an unknown column; ``pred``): the
caller reads the rows.

This module sits below ``fairaudit.spec`` (``.importlinter``): it reads the event tree by its node types' names and
fields (``fairaudit.spec.ast``), never importing it.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass

from fairaudit.sources.schema import MISSING_CATEGORY

# the characters pyarrow's utf8_trim_whitespace (conform's trim) removes: Python's str.isspace
WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
              "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
INT64 = (-(1 << 63), (1 << 63) - 1)
EXACT = 1 << 53  # every whole number up to this magnitude is a float exactly
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
        "!=": operator.ne}
_SQL_OPS = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "=", "!=": "<>"}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_NUMBER_KINDS = ("integer", "float", "boolean")


@dataclass(frozen=True)
class Sql:
    """A fragment of SQL and the values bound to its ``?`` placeholders, in order."""

    text: str
    params: tuple = ()

    def __str__(self) -> str:
        return self.text


def compose(template: str, *parts: "Sql | str") -> Sql:
    """``template`` with each ``{}`` replaced by a part (in order; a ``str`` is SQL text with no parameter), the
    parts' parameters in the same order."""
    parts = [p if isinstance(p, Sql) else Sql(p) for p in parts]
    return Sql(template.format(*(p.text for p in parts)), tuple(v for p in parts for v in p.params))


def joined(parts, separator: str = ", ") -> Sql:
    parts = [p if isinstance(p, Sql) else Sql(p) for p in parts]
    return Sql(separator.join(p.text for p in parts), tuple(v for p in parts for v in p.params))


TRUE, FALSE = Sql("(1 = 1)"), Sql("(1 = 0)")


@dataclass(frozen=True)
class Column:
    """A column as the translation reads it: ``value`` (its quoted identifier, or an expression such as the label's
    0/1), ``kind`` (the ``LogSchema``'s), and ``exact``: whether the database holds its values as the pipeline reads
    them (False: not translated — dates and times, decimals with a fraction, a type the user declared). ``key``:
    the column as stored, compared byte by byte (what a ``GROUP BY`` groups on); ``misfit``: true on a row whose
    value the pipeline refuses (``fairaudit.sources.conform``), or None where none can be."""

    value: Sql
    kind: str
    exact: bool = True
    key: Sql | None = None
    misfit: Sql | None = None
    stored: str = ""  # the database's type, for messages


class Dialect:
    """What differs between SQL databases in what the translation writes (SQLite's here; ``DuckDB`` below)."""

    name = "sqlite"

    def quote(self, name: str) -> str:
        """An identifier, double-quoted (a quote inside doubled): never interpolated raw."""
        if "\x00" in name:
            raise ValueError("an identifier with a NUL character")
        return '"' + name.replace('"', '""') + '"'

    def param(self, value) -> Sql:
        """A bound literal (SQLite types a parameter by its Python value)."""
        return Sql("?", (value,))

    def text(self, column: Column) -> Sql:
        """The column's stored text, compared byte by byte (SQLite: an expression other than a column reference
        has no collation, so what ``text_value`` builds on it compares as BINARY)."""
        return column.value

    def number(self, column: Column) -> Sql:
        """The column's value as a number: a missing one NULL, true/false 0/1 (SQLite holds no NaN)."""
        return column.value

    def as_float(self, value: Sql) -> Sql:
        return compose("CAST({} AS REAL)", value)


class DuckDB(Dialect):
    name = "duckdb"

    def param(self, value) -> Sql:
        # typed: DuckDB would type an untyped parameter as the other side (a FLOAT column: 0.1 rounded to 32 bits)
        kind = "VARCHAR" if isinstance(value, str) else "DOUBLE" if isinstance(value, float) else "BIGINT"
        return Sql(f"CAST(? AS {kind})", (value,))

    def text(self, column: Column) -> Sql:
        return compose('(CAST({} AS VARCHAR) COLLATE "binary")', column.value)

    def number(self, column: Column) -> Sql:
        if column.kind == "float":
            return compose("(CASE WHEN isnan({}) THEN NULL ELSE CAST({} AS DOUBLE) END)", column.value, column.value)
        if column.kind == "boolean":
            return compose("CAST({} AS INTEGER)", column.value)
        return column.value

    def as_float(self, value: Sql) -> Sql:
        return compose("CAST({} AS DOUBLE)", value)


DIALECTS = {"sqlite": Dialect(), "duckdb": DuckDB()}


def trimmed(column: Column, dialect: Dialect) -> Sql:
    """The column's text trimmed as conform trims it."""
    return compose("trim({}, {})", dialect.text(column), dialect.param(WHITESPACE))


def text_missing(column: Column, dialect: Dialect, na_values=()) -> Sql:
    """Whether a text value is missing as conform reads it: NULL, empty after trimming, or one of ``na_values``."""
    t = trimmed(column, dialect)
    na = sorted(set(na_values))
    extra = compose(" OR {} IN ({})", t, joined([dialect.param(v) for v in na])) if na else Sql("")
    return compose("({} IS NULL OR {} = ''{})", t, t, extra)


def text_value(column: Column, dialect: Dialect, na_values=()) -> Sql:
    """A text value as the events read it: trimmed, a missing one the category ``"?"`` (never NULL)."""
    return compose("(CASE WHEN {} THEN {} ELSE {} END)", text_missing(column, dialect, na_values),
                   dialect.param(MISSING_CATEGORY), trimmed(column, dialect))


def missing(column: Column, dialect: Dialect, na_values=()) -> Sql:
    """Whether the column's value is missing once conformed (a NULL in the pipeline's Arrow table)."""
    if column.kind == "text":
        return text_missing(column, dialect, na_values)
    return compose("({} IS NULL)", dialect.number(column))


@dataclass(frozen=True)
class Translation:
    """An event in SQL: ``expr`` true, false or NULL (unknown) on each row, and ``checks``: conditions true on a row
    where ``expr`` is not the in-memory answer (read the rows through the pipeline where any holds)."""

    expr: Sql
    checks: tuple = ()

    def check(self) -> Sql | None:
        """One condition: true on a row where any check holds (None: there is none)."""
        if not self.checks:
            return None
        return compose("(CASE {} ELSE 0 END = 1)",
                       joined([compose("WHEN {} THEN 1", c) for c in self.checks], " "))


class Untranslatable(Exception):
    """A construct without a faithful translation (``translate`` answers None)."""


def translate(event, columns, dialect: Dialect | str, *, na_values=(), label: Column | None = None
              ) -> Translation | None:
    """``event`` (a parsed event, ``fairaudit.spec.parse_event``) as SQL over ``columns`` ({name: ``Column``}),
    or None where it cannot be translated faithfully (module doc). ``na_values``: the text read as missing;
    ``label``: the 0/1 label (its ``value``, never NULL) that a row filter's ``label`` reads."""
    dialect = DIALECTS[dialect] if isinstance(dialect, str) else dialect
    translator = _Translator(dict(columns), dialect, tuple(na_values or ()), label)
    try:
        expr = translator.event(event)
    except Untranslatable:
        return None
    return Translation(expr, tuple(dict.fromkeys(translator.checks)))


class _Translator:
    """One rule per node type of the event tree (``fairaudit.spec.ast``), by name."""

    def __init__(self, columns: dict, dialect: Dialect, na_values: tuple, label: Column | None):
        self.columns, self.dialect, self.na_values, self.label = columns, dialect, na_values, label
        self.checks: list[Sql] = []

    def event(self, node) -> Sql:
        rule = getattr(self, "rule_" + type(node).__name__, None)
        if rule is None:
            raise Untranslatable(type(node).__name__)
        return rule(node)

    # ---- operands ----------------------------------------------------------------------------------------------

    def column(self, name) -> Column:
        """The ``Column`` a name reads (``label``: the 0/1 label)."""
        if name.name in ("pred", "label", "score") and not name.column:  # reserved (``fairaudit.spec.ast.RESERVED``)
            if name.name == "label" and self.label is not None:
                return self.label
            raise Untranslatable(name.name)
        column = self.columns.get(name.name)
        if column is None or not column.exact or column.kind not in ("text",) + _NUMBER_KINDS:
            raise Untranslatable(name.name)
        return column

    def operand(self, side):
        """``("literal", value)`` or ``("column", Column)``."""
        if type(side).__name__ == "Value":
            value = side.value
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise Untranslatable(repr(value))
            if isinstance(value, float) and math.isnan(value):
                raise Untranslatable("NaN")
            return "literal", value
        return "column", self.column(side)

    def known(self, value: Sql, answer: bool) -> Sql:
        """``answer`` on a row where ``value`` is known, NULL where it is missing."""
        return compose("(CASE WHEN {} IS NULL THEN NULL ELSE {} END)", value, TRUE if answer else FALSE)

    # ---- leaves -------------------------------------------------------------------------------------------------

    def rule_Name(self, node) -> Sql:
        column = self.column(node)
        if column.kind == "text":
            raise Untranslatable("a bare text column")  # (memory refuses it: write a condition)
        value = self.dialect.number(column)
        if column.kind != "boolean" and column is not self.label:  # memory refuses a bare column of other numbers
            self.checks.append(compose("({} NOT IN (0, 1))", value))
        return compose("({} <> 0)", value)

    def rule_Compare(self, node) -> Sql:
        (lk, left), (rk, right), op = self.operand(node.left), self.operand(node.right), node.op
        if lk == rk == "literal":
            try:
                answer = bool(_OPS[op](left, right))
            except TypeError:
                answer = False
            return TRUE if answer else FALSE
        if lk == "literal":
            (lk, left), (rk, right), op = (rk, right), (lk, left), _FLIPPED[op]
        if rk == "literal":
            if left.kind == "text":
                if not isinstance(right, str):
                    raise Untranslatable("text compared with a number")
                return compose(f"({{}} {_SQL_OPS[op]} {{}})", self.text(left), self.dialect.param(right))
            if isinstance(right, str):
                raise Untranslatable("a number compared with text")
            return self.number_literal(op, left, right)
        if left.kind == "text" and right.kind == "text":
            return compose(f"({{}} {_SQL_OPS[op]} {{}})", self.text(left), self.text(right))
        if left.kind == "text" or right.kind == "text":
            raise Untranslatable("text compared with a number")
        a, b = self.dialect.number(left), self.dialect.number(right)
        floats = [c.kind == "float" for c in (left, right)]
        if any(floats) and not all(floats):  # whole numbers against floats: as floats, exact up to 2^53
            whole = b if floats[0] else a
            self.checks.append(compose(f"({{}} > {EXACT} OR {{}} < -{EXACT})", whole, whole))
            a, b = (a, self.dialect.as_float(b)) if floats[0] else (self.dialect.as_float(a), b)
        return compose(f"({{}} {_SQL_OPS[op]} {{}})", a, b)

    def rule_In(self, node) -> Sql:
        column = self.column(node.operand)
        written = [v.value for v in node.values]
        if column.kind == "text":
            value = self.text(column)
            members = [v for v in written if isinstance(v, str)]  # (a text is never a number)
        else:
            value = self.dialect.number(column)
            members = [m for m in (self.member(column, v) for v in written if not isinstance(v, str)) if m is not None]
        members = list(dict.fromkeys(members))
        if members:
            found = compose("({} IN ({}))", value, joined([self.dialect.param(m) for m in members]))
        else:
            found = self.known(value, False)
        return compose("(NOT {})", found) if node.negated else found

    # ---- logic --------------------------------------------------------------------------------------------------

    def rule_EvAnd(self, node) -> Sql:
        return compose("({} AND {})", self.event(node.left), self.event(node.right))

    def rule_EvOr(self, node) -> Sql:
        return compose("({} OR {})", self.event(node.left), self.event(node.right))

    def rule_EvNot(self, node) -> Sql:
        return compose("(NOT {})", self.event(node.operand))

    # ---- exact numbers ------------------------------------------------------------------------------------------

    def text(self, column: Column) -> Sql:
        return text_value(column, self.dialect, self.na_values)

    def number_literal(self, op: str, column: Column, v) -> Sql:
        """``column op v`` for a number ``v``, exactly (module doc)."""
        value = self.dialect.number(column)
        if isinstance(v, float) and math.isinf(v):  # (every value read is finite: an infinite one is refused)
            return self.known(value, _OPS[op](0.0, v))
        if column.kind == "float":
            if isinstance(v, int):
                try:
                    f = float(v)
                except OverflowError:
                    return self.known(value, _OPS[op](0.0, v))
                if f != v:  # between two floats: decided by them
                    lo, hi = (f, math.nextafter(f, math.inf)) if f < v else (math.nextafter(f, -math.inf), f)
                    if op in ("==", "!="):
                        return self.known(value, op == "!=")
                    op, v = ("<=", lo) if op in ("<", "<=") else (">=", hi)
                else:
                    v = f
            return compose(f"({{}} {_SQL_OPS[op]} {{}})", value, self.dialect.param(float(v)))
        if isinstance(v, float):  # a whole-number column against a float
            if v.is_integer():
                v = int(v)
            elif op in ("==", "!="):
                return self.known(value, op == "!=")
            else:
                op, v = ("<=", math.floor(v)) if op in ("<", "<=") else (">=", math.ceil(v))
        if not INT64[0] <= v <= INT64[1]:  # every value read is an int64: its relation to v is 0's
            return self.known(value, _OPS[op](0, v))
        return compose(f"({{}} {_SQL_OPS[op]} {{}})", value, self.dialect.param(int(v)))

    def member(self, column: Column, v):
        """The literal ``v`` of an ``in`` list as the column's type holds it, or None where no value equals it."""
        if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
            return None
        if column.kind == "float":
            if isinstance(v, int):
                try:
                    f = float(v)
                except OverflowError:
                    return None
                return f if f == v else None
            return float(v)
        if isinstance(v, float):
            if not v.is_integer():
                return None
            v = int(v)
        return v if INT64[0] <= v <= INT64[1] else None
