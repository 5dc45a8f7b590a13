"""Every chunk of every route checked against the log's schema by one function, and made a pandas frame by one
function.

``conform(table, schema, origin=..., first_row=...)`` takes a chunk as it was read — text cells (a CSV, a live CSV
log) or typed cells (Parquet, JSON, a frame) — and gives it in the schema's types, missing values as nulls: text
trimmed, only an empty cell (or one of the schema's ``na_values``) missing; integers exact; an infinite number
refused; a value that does not fit its column's type refused with its file and data row (``first_row``: the rows
of the same file before the chunk). Nothing is coerced: a Parquet part that stores a number column as text, or a
CSV row whose ``decision`` is ``yes`` in a column of whole numbers, is an error — never a value counted as
unfavourable or missing.

``to_frame(table, schema)`` is the one conversion to pandas that every engine reads: text as ``str`` with a
missing value the category ``"?"`` (except in the ``keep_missing`` columns, the label: a missing label is refused
by the schema check), integers as int64 (float64 with NaN where some are missing and every value is exact in a
float, pandas' nullable Int64 otherwise), floats as float64, true/false as bool.
"""
from __future__ import annotations

import numpy as np

from fairaudit.base.errors import DataError
from fairaudit.sources.schema import MISSING_CATEGORY, KIND_WORDS, LogSchema, kind_of_arrow, missing_text

EXACT = 1 << 53  # integers beyond this are not all exact in a float64


class UnfitValue(DataError):
    """A value that does not fit its column's type (a ``DataError``; ``row`` its data row in ``origin``, from 1)."""

    def __init__(self, message: str, origin: str = "", row: int | None = None, column: str | None = None):
        super().__init__(message)
        self.origin, self.row, self.column = origin, row, column

    def __reduce__(self):  # raised on a Dask worker, re-raised on the client
        return (type(self), (str(self), self.origin, self.row, self.column))


def _misfit(origin: str, row: int, column: str, value, schema: LogSchema) -> UnfitValue:
    kind = schema.kind(column)
    how = ("its declared type" if column in schema.declared else f"its type, fixed by {schema.typed_by}")
    hint = ("" if column in schema.declared else
            f"; fix the row, or declare the column's type (--column-type {column}=text)")
    shown = repr(value) if not isinstance(value, str) or len(value) <= 40 else repr(value[:40] + "…")
    return UnfitValue(f"{origin}, data row {row:,}: column '{column}' holds {shown}, which is not "
                       f"{KIND_WORDS[kind]} as {how}{hint}", origin, row, column)


def infinite(origin: str, row: int, column: str, value: float) -> UnfitValue:
    return UnfitValue(f"{origin}, data row {row:,}: column '{column}' holds an infinite value ({value:g}); "
                       "fairaudit needs finite numbers: fix or drop that row", origin, row, column)


def check_columns(names, schema, origin: str, reference: str = "the log's first part") -> None:
    """A part or poll must have the log's columns (in any order): a renamed, missing or extra column is refused.
    ``schema``: the log's ``LogSchema``, or the names of every column of its first part (a log that reads only
    some columns still holds every part to all of them)."""
    expected = tuple(schema.names) if isinstance(schema, LogSchema) else tuple(schema)
    got = [str(n).strip() or f"Unnamed: {i}" for i, n in enumerate(names)]
    have, want = set(got), set(expected)
    missing = [n for n in expected if n not in have]
    extra = [n for n in got if n not in want]
    if missing or extra:
        what = []
        if missing:
            what.append(f"lacks column{'s' if len(missing) > 1 else ''} {', '.join(repr(m) for m in missing[:3])}")
        if extra:
            what.append(f"has column{'s' if len(extra) > 1 else ''} {', '.join(repr(e) for e in extra[:3])} that "
                        f"{reference} does not have")
        raise DataError(f"{origin} {' and '.join(what)}: every part of a log has the same columns (a renamed "
                        "column would be audited as missing)")


def conform(table, schema: LogSchema, *, origin: str, first_row: int = 0, columns=None, text: bool = False,
            encoded: bool = False):
    """``table`` (an Arrow table or record batch; columns named as stored or stripped) in the schema's types
    (module doc). ``columns``: the schema's columns to give (default: those ``table`` has). ``text``: the cells
    are text to be read in the column's type (a CSV); otherwise they are stored typed (Parquet, JSON, a frame)
    and a column stored with another type than the schema's is refused — its text is never parsed as numbers.
    ``encoded``: a text column stored dictionary-encoded stays so (its dictionary conformed, a missing value a
    null index), for a reader that counts values without the text of every row (``decoded`` gives the text)."""
    import pyarrow as pa

    stripped = {str(n).strip(): i for i, n in enumerate(table.column_names)}
    wanted = list(columns) if columns is not None else [n for n in schema.names if n in stripped]
    arrays = []
    for name in wanted:
        if name not in stripped:
            raise DataError(f"{origin} lacks column '{name}'")
        arr = table.column(stripped[name])
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        arrays.append(conform_array(arr, name, schema, origin, first_row, text, encoded))
    return pa.table(arrays, names=wanted) if wanted else pa.table({"__rows__": pa.nulls(table.num_rows)}).drop(
        ["__rows__"])


def conform_array(arr, name: str, schema: LogSchema, origin: str, first_row: int, text: bool = False,
                  encoded: bool = False):
    """One column (module doc; ``encoded``: ``conform``'s)."""
    import pyarrow as pa

    kind = schema.kind(name)
    if pa.types.is_dictionary(arr.type):
        if kind == "text" and _is_text(arr.type.value_type):
            return _text_dictionary(arr, name, schema, origin, first_row, text, encoded)
        arr = arr.cast(arr.type.value_type)
    if pa.types.is_null(arr.type):
        if kind == "boolean" and len(arr):
            raise _misfit(origin, first_row + 1, name, None, schema)
        return pa.nulls(len(arr), _arrow_type(kind))
    stored = kind_of_arrow(arr.type)
    if (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)) and (text or name in schema.declared):
        # a CSV's cells, or text a typed store holds in a column whose type the user declared: read in that type
        return _from_text(arr.cast(pa.string()), name, kind, schema, origin, first_row)
    if stored == "text" and kind == "text":  # text, or a date or time as its text
        return _from_text(temporal_text(arr, name, origin, first_row), name, kind, schema, origin, first_row)
    if kind == "text" and name in schema.declared and (pa.types.is_integer(arr.type) or pa.types.is_decimal(arr.type)):
        return _from_text(arr.cast(pa.string()), name, kind, schema, origin, first_row)  # exact digits, declared text
    return _from_typed(arr, stored, name, kind, schema, origin, first_row)


def temporal_text(arr, name: str = "", origin: str = "", first_row: int = 0):
    """A string array as it is; a date or time as one text per instant, whatever the unit it is stored in: a
    timestamp or time without the fraction's trailing zeros (``2020-01-01 12:00:00`` stored in ms, µs or ns), a
    zone-aware timestamp in UTC (ending ``Z``), a duration as whole nanoseconds (``1500000000 ns``; one past
    ±292 years is refused with its row)."""
    import pyarrow as pa
    import pyarrow.compute as pac

    t = arr.type
    if pa.types.is_duration(t):
        try:
            ns = arr.cast(pa.duration("ns")).cast(pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            at = next(i for i, v in enumerate(arr.cast(pa.int64()).to_pylist())
                      if v is not None and abs(v) * (10 ** 9 // _PER_SECOND[t.unit]) >= 1 << 63)
            raise UnfitValue(f"{origin}, data row {first_row + at + 1:,}: column '{name}' holds a duration of "
                             f"{arr[at].as_py()}, too long to count in nanoseconds; store it as text or in a "
                             "coarser unit", origin, first_row + at + 1, name) from None
        return pac.binary_join_element_wise(ns.cast(pa.string()), pa.scalar(" ns"), "")
    if pa.types.is_timestamp(t) and t.tz is not None:
        arr = arr.cast(pa.timestamp(t.unit, "UTC"))
    out = arr.cast(pa.string())
    if pa.types.is_timestamp(t) or pa.types.is_time(t):
        out = pac.replace_substring_regex(out, r"(\.[0-9]*?)0+(Z?)$", r"\1\2")
        out = pac.replace_substring_regex(out, r"\.(Z?)$", r"\1")
    return out


_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def fits_unread(arrow_type, kind: str, nullable: bool = True) -> bool:
    """Whether ``conform_array`` can refuse no value of a column stored typed (Parquet) as ``arrow_type`` and read
    as ``kind`` — proven by the stored type alone, so a reader that does not need the column's values may leave it
    undecoded and tell the user what it would have told them (``FileLog.read_part``). True only for text stored as
    text (trimmed, a missing value a null: never refused), integers stored as integers of at most 63 bits (a
    ``uint64`` may not fit), numbers stored as integers of at most 32 bits (exact in a float), true/false stored as
    such in a column that cannot hold a missing value (``nullable`` false: Parquet's ``required``), and a column of
    nulls read as anything but true/false. Anything else (floats: an infinite value is refused; a type that differs
    from the schema's; text where a number is declared) needs its values, and is read."""
    import pyarrow as pa

    t = arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type
    if pa.types.is_null(t):
        return kind != "boolean"
    if kind == "text":
        return _is_text(t)
    if kind == "integer":
        return pa.types.is_integer(t) and not pa.types.is_uint64(t)
    if kind == "float":
        return pa.types.is_integer(t) and t.bit_width <= 32
    if kind == "boolean":
        return pa.types.is_boolean(t) and not nullable
    return False


def _is_text(arrow_type) -> bool:
    import pyarrow as pa

    return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)


def _text_dictionary(arr, name: str, schema: LogSchema, origin: str, first_row: int, text: bool, encoded: bool):
    """A dictionary-encoded text column (Parquet's categorical columns) read as text: the dictionary's few values
    conformed, then spread to the rows (``take``; with ``encoded``, kept as a dictionary whose missing values are
    null indices). Conforming text is a function of each cell alone and never refuses one, so this is the
    cell-by-cell answer, computed once per distinct value instead of once per row."""
    import pyarrow as pa
    import pyarrow.compute as pac

    values = conform_array(arr.dictionary.cast(pa.string()), name, schema, origin, first_row, text)
    if not encoded:
        return values.take(arr.indices)
    indices = arr.indices
    if values.null_count:  # a value that conforms to missing: its rows' indices become null
        present = values.is_valid().take(indices).fill_null(False)
        indices = pac.if_else(present, indices, pa.scalar(None, indices.type))
    return pa.DictionaryArray.from_arrays(indices, values.fill_null(""))


def decoded(table):
    """``table`` with its dictionary-encoded columns (``conform(..., encoded=True)``) as plain text."""
    import pyarrow as pa

    if not any(pa.types.is_dictionary(f.type) for f in table.schema):
        return table
    return pa.table([c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c for c in table.columns],
                    names=table.column_names)


def _arrow_type(kind: str):
    """The Arrow type a conformed column of ``kind`` has."""
    import pyarrow as pa

    return {"integer": pa.int64(), "float": pa.float64(), "boolean": pa.bool_(), "text": pa.string()}[kind]


def _first(mask) -> int:
    """The position of the first true of a boolean Arrow array (there is one)."""
    return int(np.flatnonzero(np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool))[0])


def _from_text(arr, name, kind, schema, origin, first_row):
    import pyarrow as pa
    import pyarrow.compute as pac

    trimmed, missing = missing_text(arr, schema.na_values)
    if kind == "text":
        return pac.if_else(missing, pa.scalar(None, pa.string()), trimmed)
    present = pac.invert(missing)
    if kind == "boolean":
        lowered = pac.utf8_lower(trimmed)
        ok = pac.and_(present, pac.is_in(lowered, value_set=pa.array(["true", "false"])))
        if not pac.all(ok).as_py():
            at = _first(pac.invert(ok))
            raise _misfit(origin, first_row + at + 1, name, None if missing[at].as_py() else arr[at].as_py(), schema)
        return pac.equal(lowered, "true")
    values = pac.if_else(missing, pa.scalar(None, pa.string()), trimmed)
    if kind == "integer":
        try:
            return values.cast(pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        # not every value an int64: whole numbers written as floats (1.0, 1e3) pass, read as pyarrow reads numbers
        numbers = _numbers(values, arr, name, schema, origin, first_row)
        whole = pac.and_(pac.equal(pac.floor(numbers), numbers),
                         pac.less_equal(pac.abs(numbers), float(EXACT))).fill_null(True)
        if not pac.all(whole).as_py():
            at = _first(pac.invert(whole))
            raise _misfit(origin, first_row + at + 1, name, arr[at].as_py(), schema)
        return numbers.cast(pa.int64())
    return _finite(_numbers(values, arr, name, schema, origin, first_row), name, origin, first_row)


def _numbers(values, arr, name, schema, origin, first_row):
    """``values`` (text, missing as null) as float64, read as pyarrow reads a number (the rule ``text_kind`` typed
    the column by); the first value it cannot read is refused with its row (``arr``: the cells as written)."""
    import pyarrow as pa

    try:
        return values.cast(pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    for i, v in enumerate(values.to_pylist()):  # (only when some value is not a number: find the first)
        if v is None:
            continue
        try:
            pa.array([v], pa.string()).cast(pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise _misfit(origin, first_row + i + 1, name, arr[i].as_py(), schema) from None
    raise AssertionError("pyarrow refused a column whose every value it reads")  # pragma: no cover


def _finite(numbers, name, origin, first_row):
    """Float values with NaN as missing; an infinite one refused."""
    import pyarrow as pa
    import pyarrow.compute as pac

    bad = pac.is_inf(numbers).fill_null(False)
    if pac.any(bad).as_py():
        at = _first(bad)
        raise infinite(origin, first_row + at + 1, name, float(numbers[at].as_py()))
    nan = pac.is_nan(numbers).fill_null(False)
    if pac.any(nan).as_py():
        numbers = pac.if_else(nan, pa.scalar(None, pa.float64()), numbers)
    return numbers


def _from_typed(arr, stored, name, kind, schema, origin, first_row):
    import pyarrow as pa
    import pyarrow.compute as pac

    if stored is None or (stored != kind and not (kind == "float" and stored == "integer")
                          and not (kind == "integer" and stored == "float")):
        valid = pac.is_valid(arr)
        if not pac.any(valid).as_py():  # only missing values: they fit any type but true/false
            if kind == "boolean":
                raise _misfit(origin, first_row + 1, name, None, schema)
            return pa.nulls(len(arr), _arrow_type(kind))
        at = _first(valid)
        how = "its declared type" if name in schema.declared else f"its type, fixed by {schema.typed_by}"
        raise UnfitValue(f"{origin}: column '{name}' is stored as {arr.type} ({arr[at].as_py()!r} in data row "
                         f"{first_row + at + 1:,}), not as {KIND_WORDS[kind]} as {how}; a column keeps one type in "
                         "every part of a log: rewrite that part with the column's type", origin,
                         first_row + at + 1, name)
    if kind == "boolean":
        if arr.null_count:
            at = _first(pac.is_null(arr))
            raise _misfit(origin, first_row + at + 1, name, None, schema)
        return arr
    if kind == "text":  # (stored as text: trimmed, missing)
        return _from_text(arr.cast(pa.string()), name, kind, schema, origin, first_row)
    if kind == "integer":
        if stored == "integer":  # (an integer of any width, or a whole-number decimal: exact in an int64, or refused)
            try:
                return arr.cast(pa.int64())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                at = next(i for i, v in enumerate(arr.to_pylist())
                          if v is not None and not (-(1 << 63) <= v < (1 << 63) and v == int(v)))
                raise _misfit(origin, first_row + at + 1, name, _shown(arr[at].as_py()), schema) from None
        numbers = _finite(arr.cast(pa.float64()), name, origin, first_row)  # whole numbers stored as floats
        whole = pac.and_(pac.equal(pac.floor(numbers), numbers),
                         pac.less_equal(pac.abs(numbers), float(EXACT))).fill_null(True)
        if not pac.all(whole).as_py():
            at = _first(pac.invert(whole))
            raise _misfit(origin, first_row + at + 1, name, arr[at].as_py(), schema)
        return numbers.cast(pa.int64())
    # float
    if stored == "integer":
        wide = _beyond_exact(arr)
        if wide is not None and pac.any(wide).as_py():  # not exact in a float: the column would round it
            at = _first(wide)
            how = "its declared type" if name in schema.declared else f"its type, fixed by {schema.typed_by}"
            raise UnfitValue(f"{origin}, data row {first_row + at + 1:,}: column '{name}' holds "
                             f"{_shown(arr[at].as_py())}, a whole number beyond 2^53 that a number column (as "
                             f"{how}) cannot hold exactly; store the column as whole numbers in every part, or "
                             "declare it text", origin, first_row + at + 1, name)
        return arr.cast(pa.float64())
    numbers = arr.cast(pa.float64())
    if pa.types.is_decimal(arr.type) and arr.type.precision > 15:  # (15 digits always come back from a float)
        back = pac.equal(numbers.cast(arr.type, safe=False), arr).fill_null(True)
        if not pac.all(back).as_py():
            at = _first(pac.invert(back))
            raise UnfitValue(f"{origin}, data row {first_row + at + 1:,}: column '{name}' holds "
                             f"{_shown(arr[at].as_py())}, a decimal that a float cannot hold exactly (it would become "
                             f"{numbers[at].as_py()!r}); store it with at most 15 digits, or declare it text "
                             f"(--column-type {name}=text)", origin, first_row + at + 1, name)
    return _finite(numbers, name, origin, first_row)


def _beyond_exact(arr):
    """Where an integer or whole-decimal array holds a value beyond ±2^53 (not exact in a float64), compared in the
    array's own type (a ``uint64`` past 2^63 is no int64); None when none can be."""
    import pyarrow as pa
    import pyarrow.compute as pac

    t = arr.type
    if pa.types.is_decimal(t):
        if t.precision - t.scale <= 15:
            return None
        from decimal import Decimal

        hi, lo = pa.scalar(Decimal(EXACT), t), pa.scalar(Decimal(-EXACT), t)
    elif t.bit_width <= 32:
        return None
    elif pa.types.is_unsigned_integer(t):
        return pac.greater(arr, pa.scalar(EXACT, t)).fill_null(False)
    else:
        hi, lo = pa.scalar(EXACT, t), pa.scalar(-EXACT, t)
    return pac.or_(pac.greater(arr, hi), pac.less(arr, lo)).fill_null(False)


def _shown(value):
    """A value for a message: a whole decimal as its integer (``9007199254740993``, not ``Decimal('…')``)."""
    from decimal import Decimal

    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else str(value)
    return value


def to_frame(table, schema: LogSchema, keep_missing=()):
    """A conformed table as the pandas frame every engine reads (module doc)."""
    import pandas as pd
    import pyarrow as pa

    if not _STR:
        _STR[pa.string()] = pd.StringDtype("pyarrow", na_value=np.nan)
    import pyarrow as pa
    import pyarrow.compute as pac

    keep = {keep_missing} if isinstance(keep_missing, str) else set(keep_missing or ())
    out = {}
    for name in table.column_names:
        arr = table.column(name)
        kind = schema.kind(name)
        if kind == "text":
            out[name] = _text_series(arr, None if name in keep else MISSING_CATEGORY)
        elif kind == "integer":
            if arr.null_count == 0:
                out[name] = pd.Series(arr.to_numpy(), dtype=np.int64)
            else:
                ints = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
                biggest = pac.max(pac.abs(ints)).as_py() or 0
                if biggest <= EXACT:
                    out[name] = pd.Series(ints.cast(pa.float64()).to_numpy(zero_copy_only=False))
                else:
                    out[name] = pd.Series(pd.array(ints.to_pylist(), dtype="Int64"))
        elif kind == "float":
            out[name] = pd.Series(arr.to_numpy(zero_copy_only=False), dtype=np.float64)
        else:
            out[name] = pd.Series(arr.to_numpy(zero_copy_only=False), dtype=bool)
    if not out:
        return pd.DataFrame(index=pd.RangeIndex(table.num_rows))
    frame = pd.DataFrame(out)
    frame.index = pd.RangeIndex(len(frame))
    return frame


def _text_series(arr, fill):
    """A string column as a pandas ``str`` series (Arrow-backed, no Python object per cell), missing ``fill``
    (None: left missing)."""
    import pandas as pd
    import pyarrow.compute as pac

    if fill is not None and arr.null_count:
        arr = pac.fill_null(arr, fill)
    return pd.Series(arr.to_pandas(types_mapper=_STR.get), dtype="str")


_STR = {}
