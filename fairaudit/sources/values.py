"""The values a log's text columns take, from one pass over its conformed chunks — what the spec's values are
validated against on every route (in memory the frame is at hand; out of core, on Dask and for a folder they come
from this pass). A column of more than ``VALUES_CAP`` values (an id) keeps only the values the audit names and a
few others (``narrowed``), so that memory stays bounded and a value it never takes is still refused."""
from __future__ import annotations

from fairaudit.sources.schema import MISSING_CATEGORY as MISSING

VALUES_CAP = 10_000  # a column's values held to validate against; beyond (an id), only the values the audit names
EXAMPLES = 100  # and this many others


def narrowed(values, literals) -> set:
    """The values kept of a column of more than ``VALUES_CAP`` values: those of ``literals`` (the values the audit
    compares columns with) it holds, and ``EXAMPLES`` others — so that a value it never takes is still refused."""
    kept = {v for v in values if v in literals}
    kept.update(sorted((v for v in values if v not in kept), key=str)[:EXAMPLES])
    return kept


def chunk_values(table, schema, wanted, label=None, literals=frozenset(), cap: int | None = None) -> tuple[dict, set, int]:
    """``(values, many, unlabelled)`` of one conformed chunk: per wanted column the set of its distinct values as the
    engines see them (a missing text value is ``"?"``), the columns with more than ``cap`` of them (``narrowed`` to
    the ``literals`` they hold and a few others), and the chunk's rows whose label is missing."""
    import pyarrow.compute as pac

    cap = VALUES_CAP if cap is None else cap
    values, many, unlabelled = {}, set(), 0
    for c in wanted:
        arr = table.column(c)
        if c == label:
            unlabelled += arr.null_count
        unique = pac.unique(arr)
        found = set(unique.drop_null().to_pylist())
        if unique.null_count and c != label and schema.kind(c) == "text":
            found.add(MISSING)
        if c != label and len(found) > cap:
            many.add(c)
            found = narrowed(found, literals)
        values[c] = found
    return values, many, unlabelled


def distinct_pass(tables, schema, wanted, label=None, literals=frozenset()) -> tuple[dict, set, int, int]:
    """``(known, wide, rows, unlabelled)`` over every chunk: per wanted column its values (narrowed for a wide
    column), the wide columns, the rows read and the rows without a label."""
    known: dict = {c: set() for c in wanted}
    wide: set = set()
    rows = unlabelled = 0
    for table in tables:
        rows += table.num_rows
        part, many, missing = chunk_values(table, schema, wanted, label, literals)
        unlabelled += missing
        merge(known, wide, part, many, literals, label)
    return known, wide, rows, unlabelled


def merge(known: dict, wide: set, part: dict, many=(), literals=frozenset(), label=None) -> None:
    """Add one chunk's values to ``known`` (in place), narrowing a column past ``VALUES_CAP``."""
    for c, values in part.items():
        known[c] |= values
        if c in wide or c in many or (c != label and len(known[c]) > VALUES_CAP):
            wide.add(c)
            known[c] = narrowed(known[c], literals)
