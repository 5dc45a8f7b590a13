"""A log's schema: each column's type, fixed once before any row is counted, and the one rule that fixes it.

Four types (``KINDS``):

* ``integer`` — whole numbers, kept exact (int64; never a float round trip);
* ``float`` — other numbers (a missing value is NaN; an infinite one is refused);
* ``boolean`` — true/false (any case), with no missing value;
* ``text`` — anything else; a missing value is the category ``"?"``.

Values stay exact: a whole-number decimal (``decimal128(38, 0)``) is an integer, read as an int64 (a value beyond
it is refused with its row), another decimal a number read as a float only where the float gives it back exactly;
an unsigned integer beyond int64 is refused with its row; a date or time is text, the same text for the same
instant whatever the unit it is stored in (``timestamp[ms]`` and ``timestamp[us]``; a zone-aware one in UTC).

Where the types come from (``LogSchema.typed_by`` says which, in messages):

* a **typed store** (a Parquet file, the first file of a folder of parts, a pandas frame): its column types
  (``from_arrow``);
* **text** (a CSV file, the first part of a folder, a live CSV log): the first ``TYPE_ROWS`` data rows of the first
  file — or a live log's first poll when fewer have arrived — by ``infer_text``: a column is ``integer`` when every
  value is an integer written without a leading zero (``007`` and ``01`` are codes: text) that fits int64,
  ``float`` when every value is a number, ``boolean`` when every value is true/false and none is missing, else
  ``text``; a column with no value in those rows is ``text``;
* **JSON lines** (a live log on standard input): the JSON types of the first records (``infer_values``): numbers
  stay numbers, strings stay text (``"5"`` is text), a column that mixes them is refused;
* a **declared** type for any column (``--column-type NAME=KIND``, ``column_types=`` in Python) overrides the
  inferred one.

Only an empty cell is missing, unless ``na_values`` names more text that means "missing" (``--na-values``): the
strings ``NA``, ``None`` and ``null`` are values (Namibia's country code is ``NA``).

Every later chunk, part, partition or poll is checked against the fixed schema by ``fairaudit.sources.conform``:
a value that does not fit is an error naming its file and row, never coerced.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from fairaudit.base.errors import DataError

MISSING_CATEGORY = "?"  # how a missing text value is stored (``fairaudit.data.MISSING``)

KINDS = ("integer", "float", "boolean", "text")
TYPE_ROWS = 10_000  # data rows of text (CSV) that fix the column types
KIND_WORDS = {"integer": "a whole number", "float": "a number", "boolean": "true or false", "text": "text"}
_INT = r"^[+-]?[0-9]+$"
_LEADING_ZERO = r"^[+-]?0[0-9]"
_BOOLEAN = ("true", "false")


@dataclass(frozen=True)
class LogSchema:
    """The columns of a log in order, each one's type (``KINDS``), what fixed them, and the text read as missing."""

    names: tuple[str, ...]
    kinds: tuple[str, ...]
    typed_by: str = "the log's first rows"
    na_values: frozenset = frozenset()
    declared: frozenset = frozenset()  # columns whose type was declared, not inferred
    raw: tuple[str, ...] = field(default=(), compare=False)  # names as stored (surrounding spaces kept)

    def kind(self, name: str) -> str:
        return self.kinds[self.names.index(name)]

    def __contains__(self, name) -> bool:
        return name in self.names

    @property
    def dataset_kinds(self) -> dict[str, str]:
        """``{column: "numeric" | "categorical"}`` as ``fairaudit.data.Schema`` has them."""
        return {n: "numeric" if k in ("integer", "float") else "categorical" for n, k in zip(self.names, self.kinds)}

    def stored_name(self, name: str) -> str:
        return self.raw[self.names.index(name)] if self.raw else name

    def describe(self) -> dict:
        return {"columns": dict(zip(self.names, self.kinds)), "typed_by": self.typed_by,
                "na_values": sorted(self.na_values)}


def parse_na_values(text) -> tuple[str, ...]:
    """``"NA, null"`` -> ``("NA", "null")``: the text that means a missing value besides an empty cell, as the
    command line (``--na-values``) and the dashboard's Data page write it."""
    return tuple(t.strip() for t in str(text or "").split(",") if t.strip())


def parse_declared_text(text) -> dict[str, str]:
    """``"zip=text, score=float"`` -> ``{"zip": "text", "score": "float"}`` (``parse_declared`` of each item)."""
    return parse_declared([t.strip() for t in str(text or "").replace("\n", ",").split(",") if t.strip()])


def parse_declared(items) -> dict[str, str]:
    """``{column: kind}`` from ``NAME=KIND`` texts (or a mapping); a kind outside ``KINDS`` is a one-line error."""
    if not items:
        return {}
    pairs = items.items() if hasattr(items, "items") else (str(i).rsplit("=", 1) if "=" in str(i) else (i, None)
                                                              for i in items)
    out = {}
    for name, kind in pairs:
        name = str(name).strip()
        if kind is None or not name:
            raise DataError(f"--column-type {name!r}: write NAME=KIND, KIND one of {', '.join(KINDS)}")
        kind = {"int": "integer", "number": "float", "numeric": "float", "bool": "boolean", "str": "text",
                "string": "text", "categorical": "text"}.get(str(kind).strip().lower(), str(kind).strip().lower())
        if kind not in KINDS:
            raise DataError(f"--column-type {name}={kind}: the type must be one of {', '.join(KINDS)}")
        out[name] = kind
    return out


def twice(display: str, col: str, first: int, second: int) -> DataError:
    """A column name that appears twice (0-based positions)."""
    return DataError(f"{display}: column name '{col}' appears twice (columns {first + 1} and {second + 1}); column "
                     "names must be unique")


def _unique_names(raw, where: str) -> tuple[str, ...]:
    names = [str(n).strip() or f"Unnamed: {i}" for i, n in enumerate(raw)]
    seen: dict[str, int] = {}
    for i, n in enumerate(names):
        if n in seen:
            raise twice(where, n, seen[n], i)
        seen[n] = i
    return tuple(names)


def _declared(names, kinds, declared: dict, where: str) -> tuple[tuple[str, ...], frozenset]:
    unknown = [c for c in declared if c not in names]
    if unknown:
        from fairaudit.base.text import suggestion

        raise DataError(f"--column-type names column '{unknown[0]}', which {where} does not have"
                        f"{suggestion(unknown[0], names)}")
    return tuple(declared.get(n, k) for n, k in zip(names, kinds)), frozenset(declared)


def kind_of_arrow(t) -> str | None:
    """The kind an Arrow type stores (None: a type fairaudit does not read, such as a list or a struct)."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_decimal(t):  # exact: whole decimals are integers (int64), others numbers that a float holds
        return "integer" if t.scale <= 0 else "float"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t):
        return "text"
    if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_duration(t):
        return "text"  # one instant one text, whatever its unit (``fairaudit.sources.conform.temporal_text``)
    return None


def from_arrow(arrow_schema, where: str, *, declared=None, na_values=()) -> LogSchema:
    """The schema of a typed store (Parquet, Arrow, a pandas frame's Arrow schema)."""
    raw = tuple(f.name for f in arrow_schema)
    names = _unique_names(raw, where)
    kinds = []
    for f, n in zip(arrow_schema, names):
        k = kind_of_arrow(f.type)
        if k is None:
            raise DataError(f"{where}: column '{n}' holds {f.type} values (nested or binary data), which fairaudit "
                            "does not read; store it as text or numbers, or leave it out of the log")
        kinds.append(k)
    kinds, fixed = _declared(names, kinds, parse_declared(declared), where)
    return LogSchema(names, kinds, f"the column types stored in {where}", frozenset(na_values), fixed, raw)


def infer_text(table, where: str, *, declared=None, na_values=(), rows: int | None = None) -> LogSchema:
    """The schema of text rows (an Arrow table whose columns are all strings, as read from a CSV)."""
    import pyarrow as pa

    names = _unique_names(table.column_names, where)
    na = frozenset(na_values)
    kinds = []
    for i in range(table.num_columns):
        arr = table.column(i)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        kinds.append(text_kind(arr, na))
    kinds, fixed = _declared(names, kinds, parse_declared(declared), where)
    n = table.num_rows if rows is None else rows
    typed_by = f"the first {n:,} data row{'s' if n != 1 else ''} of {where}"
    return LogSchema(names, kinds, typed_by, na, fixed, tuple(table.column_names))


def missing_text(arr, na_values):
    """Which cells of a string array are missing: empty after trimming, or one of ``na_values``."""
    import pyarrow as pa
    import pyarrow.compute as pac

    trimmed = pac.utf8_trim_whitespace(arr)
    out = pac.or_kleene(pac.equal(trimmed, ""), pac.is_null(trimmed))
    if na_values:
        out = pac.or_(out, pac.is_in(trimmed, value_set=pa.array(sorted(na_values), pa.string())))
    return trimmed, out.fill_null(True)


def text_kind(arr, na_values=frozenset()) -> str:
    """The kind of a column of text values (the rule in the module doc)."""
    import pyarrow as pa
    import pyarrow.compute as pac

    arr = arr.cast(pa.string()) if not pa.types.is_string(arr.type) else arr
    trimmed, missing = missing_text(arr, na_values)
    present = trimmed.filter(pac.invert(missing))
    if len(present) == 0:
        return "text"
    if pac.all(pac.match_substring_regex(present, _INT)).as_py():
        if pac.any(pac.match_substring_regex(present, _LEADING_ZERO)).as_py():
            return "text"
        try:
            present.cast(pa.int64())
            return "integer"
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return "text"  # beyond int64: an identifier, kept as written
    lowered = pac.utf8_lower(present)
    if pac.all(pac.is_in(lowered, value_set=pa.array(_BOOLEAN))).as_py():
        return "text" if pac.any(missing).as_py() else "boolean"
    try:
        present.cast(pa.float64())
        return "float"
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return "text"


def infer_values(columns: dict, where: str, *, declared=None, na_values=(), rows: int = 0) -> LogSchema:
    """The schema of JSON records (``columns``: name → the list of its Python values in the first records)."""
    names = _unique_names(list(columns), where)
    kinds = []
    for name, values in zip(names, columns.values()):
        kinds.append(value_kind(name, values, where))
    kinds, fixed = _declared(names, kinds, parse_declared(declared), where)
    typed_by = f"the first {rows:,} record{'s' if rows != 1 else ''} of {where}"
    return LogSchema(names, kinds, typed_by, frozenset(na_values), fixed, tuple(columns))


def value_kind(name: str, values, where: str) -> str:
    """The kind of a column of JSON values: every present value a bool → boolean, an int → integer, a number →
    float, a string → text; numbers mixed with strings are refused (which one a condition means is a guess)."""
    seen = set()
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool):
            seen.add("boolean")
        elif isinstance(v, int):
            seen.add("integer")
        elif isinstance(v, float):
            seen.add("float")
        elif isinstance(v, str):
            seen.add("text")
        else:
            seen.add("nested")
    if "nested" in seen:
        raise DataError(f"{where}: column '{name}' holds nested values (objects or lists); a log's values must be "
                        "text, numbers or true/false")
    if not seen:
        return "text"
    if seen <= {"integer"}:
        return "integer"
    if seen <= {"integer", "float"}:
        return "float"
    if seen == {"boolean"}:
        return "boolean"
    if seen == {"text"}:
        return "text"
    raise DataError(f"{where}: column '{name}' mixes {' and '.join(sorted(KIND_WORDS[k] for k in seen if k in KIND_WORDS))} "
                    "in its first records; write every value of a column with one JSON type (numbers unquoted)")
