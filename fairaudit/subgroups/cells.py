"""The cells of a scan: every category combination of every set of up to ``depth`` attributes, and its counts.

An *attribute* is a protected column taken as it is (its categories) or a numeric column cut into bins
(``Attribute.binned``: quantile bins or given edges). Each row gets one integer code per attribute (``encode``):
the category's index, or ``-1`` when the value is missing (NaN, or ``"?"``, ``fairaudit.sources.schema``'s missing
category): such a row is *unknown* in every table that uses that attribute and is counted apart (LL144 reports the
number of individuals of unknown category).

A *table* is a set of attributes (``tables(m, depth)``: every set of 1 … ``depth`` of the ``m`` attributes, in the
order sex; race; sex × race); its cells are the category combinations that occur. ``count`` turns the codes into
per-cell counts with one mixed-radix code per row and ``numpy.bincount`` (linear in the rows); ``Counts.add`` adds
two chunks' counts (a growing log), keyed by the cells' category tuples so that categories first seen in a later
chunk just extend the table.
"""
from __future__ import annotations

import itertools
import math
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
            x = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
            edges = np.asarray(self.edges, dtype=float)
            code = np.searchsorted(edges, x, side="right") - 1
            code[x == edges[-1]] = len(edges) - 2  # the last bin is closed
            code[~np.isfinite(x) | (x < edges[0]) | (x > edges[-1])] = MISSING
            return code.astype(np.int64)
        values = series.astype(object)
        missing = series.isna().to_numpy() | (values.astype(str) == MISSING_CATEGORY).to_numpy()
        known = {c: i for i, c in enumerate(self.categories)}
        inverse, uniques = pd.factorize(values.where(~missing, None), use_na_sentinel=True)
        inverse = np.asarray(inverse)
        mapping = np.empty(len(uniques), dtype=np.int64)
        for i, value in enumerate(uniques):
            key = value.item() if isinstance(value, np.generic) else value
            if key not in known:
                known[key] = len(self.categories)
                self.categories.append(key)
            mapping[i] = known[key]
        code = np.full(len(series), MISSING, dtype=np.int64)
        ok = inverse >= 0
        code[ok] = mapping[inverse[ok]]
        code[missing] = MISSING
        return code


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
        """The counts of two chunks together (cells matched by their category codes)."""
        merged: dict = {tuple(k): c.copy() for k, c in zip(self.keys.tolist(), self.counts)}
        for k, c in zip(other.keys.tolist(), other.counts):
            k = tuple(k)
            merged[k] = merged[k] + c if k in merged else c.copy()
        keys = sorted(merged)
        width = self.keys.shape[1]
        return TableCounts(np.asarray(keys, dtype=np.int64).reshape(len(keys), width),
                           np.asarray([merged[k] for k in keys], dtype=np.int64).reshape(len(keys), len(FIELDS)),
                           self.unknown + other.unknown)


def count(codes: np.ndarray, table: tuple[int, ...], decisions: np.ndarray, labels: np.ndarray | None = None
          ) -> TableCounts:
    """The counts of one table over rows with attribute ``codes``: a mixed-radix code per row, then one
    ``bincount`` per field (linear in the rows); the cells are those that occur, in code order."""
    sub = codes[:, list(table)]
    known = (sub >= 0).all(axis=1)
    unknown = int((~known).sum())
    sub, d = sub[known], np.asarray(decisions)[known].astype(np.int64)
    sizes = [int(sub[:, j].max()) + 1 if len(sub) else 1 for j in range(sub.shape[1])]
    if math.prod(sizes) <= max(4 * len(sub), 1 << 20):  # a dense code: one bincount per field
        flat = np.ravel_multi_index(tuple(sub.T), sizes) if len(sub) else np.zeros(0, dtype=np.int64)
        size = math.prod(sizes)
        cells = np.flatnonzero(np.bincount(flat, minlength=size))
        index = np.full(size, -1, dtype=np.int64)
        index[cells] = np.arange(len(cells))
        which = index[flat]
        keys = np.stack(np.unravel_index(cells, sizes), axis=1).astype(np.int64) if len(cells) else \
            np.zeros((0, len(table)), dtype=np.int64)
    else:  # too many combinations for a dense code: sort instead
        keys, which = np.unique(sub, axis=0, return_inverse=True)
        which = which.ravel()
    out = np.zeros((len(keys), len(FIELDS)), dtype=np.int64)
    k = len(keys)
    out[:, 0] = np.bincount(which, minlength=k)
    out[:, 1] = np.bincount(which, weights=d, minlength=k).astype(np.int64)
    if labels is not None:
        y = np.asarray(labels)[known].astype(np.int64)
        out[:, 2] = np.bincount(which, weights=y, minlength=k).astype(np.int64)
        out[:, 3] = np.bincount(which, weights=y * d, minlength=k).astype(np.int64)
        out[:, 4] = out[:, 0] - out[:, 2]
        out[:, 5] = out[:, 1] - out[:, 3]
    return TableCounts(keys.astype(np.int64).reshape(k, len(table)), out, unknown)


def cell_index(codes: np.ndarray, table: tuple[int, ...], keys: np.ndarray) -> np.ndarray:
    """Each row's position among the cells ``keys`` of ``table`` (−1: a row of unknown category, or of a cell not
    among ``keys``) — one mixed-radix code per row and a binary search, linear in the rows but for the search."""
    sub = codes[:, list(table)]
    out = np.full(len(sub), -1, dtype=np.int64)
    known = (sub >= 0).all(axis=1)
    if not len(keys) or not known.any():
        return out
    sizes = np.maximum(keys.max(axis=0), sub[known].max(axis=0)) + 1
    flat = np.ravel_multi_index(tuple(sub[known].T), tuple(int(s) for s in sizes))
    key_flat = np.ravel_multi_index(tuple(keys.T), tuple(int(s) for s in sizes))
    order = np.argsort(key_flat)
    pos = np.searchsorted(key_flat[order], flat)
    pos = np.minimum(pos, len(order) - 1)
    hit = key_flat[order][pos] == flat
    out[np.flatnonzero(known)[hit]] = order[pos[hit]]
    return out
