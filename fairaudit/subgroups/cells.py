"""The cells of a scan: every category combination of every set of up to ``depth`` attributes, and its counts.

An *attribute* is a protected column taken as it is (its categories) or a numeric column cut into bins
(``Attribute.binned``: quantile bins or given edges). Each row gets one integer code per attribute (``encode``):
the category's index, or ``-1`` when the value is missing (NaN, or ``"?"``, ``fairaudit.sources.schema``'s missing
category): such a row is *unknown* in every table that uses that attribute and is counted apart (LL144 reports the
number of individuals of unknown category).

A *table* is a set of attributes (``tables(m, depth)``: every set of 1 … ``depth`` of the ``m`` attributes, in the
order sex; race; sex × race); its cells are the category combinations that occur, in reading order (``ranks``).
The rows are counted once, by the one counting kernel (``fairaudit.core.counting.count_cells``), in the finest
cells — every attribute at once — and each table is a sum over those (``table_counts``), as a database derives
``GROUP BY CUBE``'s grouping sets from one pass. A batch is coded from a pandas frame (``encode``) or from a
conformed Arrow table (``encode_arrow``: a chunk of a file, a Dask partition, a database batch; text stays a
dictionary and only its distinct values are looked at); both give the same codes for the same values.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fairaudit.base.errors import FairauditError
from fairaudit.sources.schema import MISSING_CATEGORY

MISSING = -1  # the code of a missing value
MAX_BINS = 100


@dataclass
class Attribute:
    """One attribute of the scan: a column, its categories (their values, in code order, growing as new ones appear)
    and, for a binned numeric column, the bin edges (``edges[i] ≤ x < edges[i + 1]``, the last bin closed; the
    categories are then the bins' labels, ``bin_labels``)."""

    name: str
    categories: list = field(default_factory=list)
    edges: tuple | None = None
    _index: dict | None = field(default=None, repr=False, compare=False)  # category -> code

    @property
    def binned(self) -> bool:
        return self.edges is not None

    def label(self, code: int) -> str:
        """What a reader sees for a category."""
        return str(self.categories[code])

    def condition(self, code: int) -> str:
        """The category as a condition of the specification language (``sex == "Female"``, ``age >= 17 and
        age < 28``)."""
        from fairaudit.spec.printer import format_number, quote_name, quote_string

        name = quote_name(self.name, column=True)
        if self.binned:
            lo, hi = self.edges[code], self.edges[code + 1]
            upper = "<=" if code == len(self.edges) - 2 else "<"
            return f"{name} >= {format_number(_plain(lo))} and {name} {upper} {format_number(_plain(hi))}"
        value = self.categories[code]
        if isinstance(value, (bool, np.bool_)):
            return f"{name} == {1 if value else 0}"
        if isinstance(value, (int, float, np.integer, np.floating)):
            return f"{name} == {format_number(_plain(value))}"
        return f"{name} == {quote_string(str(value))}"

    def codes(self, series: pd.Series) -> np.ndarray:
        """The codes of ``series``'s values (``MISSING`` for a missing one); new categories are appended."""
        if self.binned:
            return self.bin_codes(pd.to_numeric(series, errors="coerce").to_numpy(dtype=float))
        inverse, uniques = pd.factorize(series, use_na_sentinel=True)
        return _spread(self.value_codes(uniques), np.asarray(inverse))

    def arrow_codes(self, arr) -> np.ndarray:
        """The codes of a conformed Arrow column (a chunk read out of core: text as a dictionary, a missing value
        null): the distinct values coded as ``codes`` codes them (``value_codes``), spread to the rows by their
        indices — the rows' values are never converted one by one."""
        import pyarrow as pa
        import pyarrow.compute as pac

        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if self.binned:
            return self.bin_codes(pac.cast(arr, pa.float64()).to_numpy(zero_copy_only=False))
        if not pa.types.is_dictionary(arr.type):
            arr = pac.dictionary_encode(arr)
        indices = arr.indices
        if pa.types.is_unsigned_integer(indices.type):  # (an unsigned index cannot hold the −1 of a missing value)
            indices = pac.cast(indices, pa.int64())
        indices = indices.fill_null(-1).to_numpy(zero_copy_only=False)
        mapping = self.value_codes(arr.dictionary.to_pylist())
        if np.array_equal(mapping, np.arange(len(mapping))):  # the dictionary is the categories so far, in order
            return indices
        return _spread(mapping, indices)

    def bin_codes(self, x: np.ndarray) -> np.ndarray:
        edges = np.asarray(self.edges, dtype=float)
        code = np.searchsorted(edges, x, side="right") - 1
        code[x == edges[-1]] = len(edges) - 2  # the last bin is closed
        code[~np.isfinite(x) | (x < edges[0]) | (x > edges[-1])] = MISSING
        return code.astype(np.int64)

    def value_codes(self, values) -> np.ndarray:
        """The code of each of a few distinct ``values`` (``MISSING`` for a missing one: None, NaN or ``"?"``);
        a value not seen before becomes a new category. A whole number is the same category whether it was read as
        an integer or as a float (an integer column with a missing value is read as floats)."""
        if self._index is None:
            self._index = {_category(c): i for i, c in enumerate(self.categories)}
        out = np.empty(len(values), dtype=np.int64)
        for i, value in enumerate(values):
            key = _category(value)
            if key is None:
                out[i] = MISSING
                continue
            if key not in self._index:
                self._index[key] = len(self.categories)
                self.categories.append(key)
            out[i] = self._index[key]
        return out

    def ranks(self) -> np.ndarray:
        """Each category's position in reading order — numbers by value before text, text alphabetically, bins in
        their order — so that a table's cells come in the same order whichever route read the rows first."""
        if self.binned:
            return np.arange(len(self.categories), dtype=np.int64)
        order = sorted(range(len(self.categories)), key=lambda i: _reading_key(self.categories[i]))
        ranks = np.empty(len(order), dtype=np.int64)
        ranks[order] = np.arange(len(order))
        return ranks


def _spread(mapping: np.ndarray, inverse: np.ndarray) -> np.ndarray:
    """Each row's code from its distinct value's position ``inverse`` (−1: missing): one ``take`` from the codes
    with ``MISSING`` appended (so that −1 picks it)."""
    return np.take(np.append(np.asarray(mapping, dtype=np.int64), MISSING), inverse)


def _category(value):
    """The category a value stands for (None: missing): plain Python values, a whole number as an int."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, str) and value == MISSING_CATEGORY):
        return None
    if isinstance(value, float):
        if value != value:  # NaN
            return None
        if value.is_integer() and abs(value) < 2 ** 53:
            return int(value)
    return value


def _reading_key(value):
    if isinstance(value, (bool, int, float)):
        return (0, value, "")  # (Python compares an int and a float exactly: 2^60 and 2^60 + 1 stay apart)
    return (1, 0, str(value))


def _plain(x):
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def bin_labels(edges) -> list[str]:
    """``[a, b)`` per bin, the last ``[a, b]``; numbers in their shortest form."""
    def num(x):
        x = float(x)
        return f"{int(x)}" if x.is_integer() else f"{x:g}"
    out = [f"[{num(a)}, {num(b)})" for a, b in zip(edges[:-1], edges[1:])]
    if out:
        out[-1] = out[-1][:-1] + "]"
    return out


def binned(name: str, values: pd.Series, how) -> Attribute:
    """A numeric attribute cut into bins: ``how`` an int q (quantile bins: edges at the q-quantiles of ``values``,
    duplicates merged) or a sequence of edges (increasing; values outside them are unknown)."""
    x = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    if isinstance(how, (int, np.integer)) and not isinstance(how, bool):
        q = int(how)
        if not 2 <= q <= MAX_BINS:
            raise FairauditError(f"bins for {name}: give 2 to {MAX_BINS} quantile bins or the edges, got {q}")
        finite = x[np.isfinite(x)]
        if not len(finite):
            raise FairauditError(f"bins for {name}: the column has no numeric value to bin")
        edges = np.unique(np.quantile(finite, np.linspace(0.0, 1.0, q + 1)))
        if len(edges) < 2:
            raise FairauditError(f"bins for {name}: every value is {edges[0]:g}, nothing to bin")
    else:
        try:
            edges = np.asarray([float(e) for e in how], dtype=float)
        except (TypeError, ValueError):
            raise FairauditError(f"bins for {name}: give a number of quantile bins or numeric edges, got "
                                 f"{how!r}") from None
        if len(edges) < 2 or not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
            raise FairauditError(f"bins for {name}: the edges must be at least two increasing numbers, got "
                                 f"{list(how)!r}")
        if len(edges) > MAX_BINS + 1:
            raise FairauditError(f"bins for {name}: at most {MAX_BINS} bins")
    edges = tuple(float(e) for e in edges)
    return Attribute(name, bin_labels(edges), edges)


def tables(m: int, depth: int) -> list[tuple[int, ...]]:
    """Every set of 1 … ``depth`` of ``m`` attributes (as index tuples), smaller sets first, in attribute order."""
    return [combo for k in range(1, min(depth, m) + 1) for combo in itertools.combinations(range(m), k)]


def encode(frame: pd.DataFrame, attributes: list[Attribute]) -> np.ndarray:
    """The codes of ``frame``'s rows, one column per attribute (``MISSING`` where the value is missing)."""
    if not len(attributes):
        return np.zeros((len(frame), 0), dtype=np.int64)
    return np.stack([a.codes(frame[a.name]) for a in attributes], axis=1)


def encode_arrow(table, attributes: list[Attribute]) -> list[np.ndarray]:
    """``encode`` of a conformed Arrow table (a chunk read out of core, a Dask partition, a database's batch), as
    one code column per attribute (``fairaudit.core.counting.count_cells`` takes the columns as they are)."""
    return [a.arrow_codes(table.column(a.name)) for a in attributes]


# the counts kept per cell: rows, selected; with a label, rows and selected among label 1 and among label 0
FIELDS = ("n", "s", "n1", "s1", "n0", "s0")


@dataclass
class TableCounts:
    """One table's counts: ``keys`` (cells × attributes of the table, category codes), ``counts`` (cells ×
    ``FIELDS``) and the rows of unknown category."""

    keys: np.ndarray
    counts: np.ndarray
    unknown: int = 0

    def add(self, other: "TableCounts") -> "TableCounts":
        """The counts of two pieces together (cells matched by their category codes; the kernel's merge)."""
        from fairaudit.core.counting import group_sum

        keys, counts = group_sum(np.concatenate([self.keys, other.keys]),
                                 np.concatenate([self.counts, other.counts]))
        return TableCounts(keys, counts, self.unknown + other.unknown)


def fields(by_outcome: np.ndarray) -> np.ndarray:
    """``FIELDS`` from counts by outcome (… × 4, outcome ``2 · decision + label``, ``fairaudit.core.counting``)."""
    o = np.asarray(by_outcome, dtype=np.int64)
    return np.stack([o.sum(axis=-1), o[..., 2] + o[..., 3], o[..., 1] + o[..., 3], o[..., 3], o[..., 0] + o[..., 2],
                     o[..., 2]], axis=-1)


def table_counts(joint, table: tuple[int, ...], ranks=None, cumulative: bool = False):
    """The counts of one ``table`` from the finest cells' ``joint`` (``fairaudit.core.counting.CellCounts``):
    ``(TableCounts of every look together, per-look counts cells × looks × FIELDS or None)``. The cells come in
    reading order when ``ranks`` (per attribute of the scan, each category's rank) is given; ``cumulative``: the
    per-look counts are of every row up to that look."""
    projected = joint.project(table)
    known = (projected.keys >= 0).all(axis=1)
    unknown = int(projected.counts[~known].sum())
    keys, by_look = projected.keys[known], projected.counts[known]
    if ranks is not None and len(keys):
        order = np.lexsort(tuple(ranks[a][keys[:, j]] for j, a in reversed(list(enumerate(table)))))
        keys, by_look = keys[order], by_look[order]
    totals = fields(by_look.sum(axis=1))
    looks = None
    if by_look.shape[1] > 1:
        looks = fields(np.cumsum(by_look, axis=1) if cumulative else by_look)
    return TableCounts(keys.reshape(len(keys), len(table)), totals.reshape(len(keys), len(FIELDS)), unknown), looks


def count(codes: np.ndarray, table: tuple[int, ...], decisions: np.ndarray, labels: np.ndarray | None = None
          ) -> TableCounts:
    """The counts of one table over rows with attribute ``codes`` — the one counting kernel's cell counts
    (``fairaudit.core.counting.count_cells``) of the table's attributes."""
    from fairaudit.core.counting import count_cells

    outcome = 2 * np.asarray(decisions, dtype=np.int64)
    if labels is not None:
        outcome = outcome + np.asarray(labels, dtype=np.int64)
    joint = count_cells(np.asarray(codes)[:, list(table)], outcome)
    return table_counts(joint, tuple(range(len(table))))[0]
