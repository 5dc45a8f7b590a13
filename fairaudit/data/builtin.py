"""The built-in datasets: ``data/<name>.csv.gz`` plus their schemas in ``data/datasets.json``.

Both are produced by ``tools/build_datasets.py`` from the raw public files (``data/PROVENANCE.md``) and
committed; this module only reads them. The schema (column kinds, categorical values, label, favourable value,
protected and excluded columns, description) is declared at build time, never guessed here. Loading checks the
file's SHA-256 against ``datasets.json`` and reads every column with its declared dtype.
"""
from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from fairaudit.base.paths import bundled
from fairaudit.data.dataset import Column, Dataset, Schema
from fairaudit.data.roles import listing, suggestion
from fairaudit.base.errors import DataError

DATA_DIR = bundled("data")
CATALOGUE = DATA_DIR / "datasets.json"


@dataclass(frozen=True)
class DatasetInfo:
    """One line of the catalogue (read from datasets.json without loading the rows)."""

    name: str
    rows: int
    label: str
    favourable: Any
    protected: tuple[str, ...]
    description: str
    licence: str


@functools.cache
def _catalogue() -> dict[str, dict]:
    try:
        return json.loads(CATALOGUE.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"the bundled datasets are missing ({CATALOGUE} not found)") from None


def names() -> list[str]:
    """Names of the built-in datasets, in catalogue order."""
    return list(_catalogue())


def _entry(name: str) -> dict:
    catalogue = _catalogue()
    if name not in catalogue:
        raise DataError(f"unknown dataset '{name}'{suggestion(name, catalogue)} "
                        f"(built-in: {listing(catalogue)})")
    return catalogue[name]


def info() -> list[DatasetInfo]:
    """Name, rows, label, favourable value, protected attributes, description and licence of each dataset."""
    return [DatasetInfo(name, e["rows"], e["label"], e["favourable"], tuple(e["protected"]), e["description"],
                        e["licence"]) for name, e in _catalogue().items()]


@functools.cache
def schema(name: str) -> Schema:
    """The declared schema of a built-in dataset (no rows are read)."""
    e = _entry(name)
    columns = tuple(Column(c["name"], c["kind"], tuple(c.get("values", ()))) for c in e["columns"])
    return Schema(columns, e["label"], e["favourable"], tuple(e["protected"]), tuple(e["excluded"]))


@functools.cache
def _frame(name: str, columns: tuple[str, ...] | None = None) -> pd.DataFrame:
    """The rows (only ``columns``, in file order, when given), read once per process; callers get copies."""
    e = _entry(name)
    path = DATA_DIR / e["file"]
    try:
        data = path.read_bytes()
    except OSError as err:
        raise DataError(f"cannot read the bundled file {path}: {err.strerror or err}") from None
    if hashlib.sha256(data).hexdigest() != e["sha256"]:
        raise DataError(f"the bundled file {path} does not match datasets.json; rebuild it with "
                        "tools/build_datasets.py")
    dtypes = {c["name"]: c["dtype"] for c in e["columns"] if columns is None or c["name"] in columns}
    frame = pd.read_csv(path, compression="gzip", dtype=dtypes, na_filter=False,
                        usecols=None if columns is None else list(dtypes))
    if list(frame.columns) != list(dtypes) or len(frame) != e["rows"]:
        raise DataError(f"the bundled file {path} does not match its schema in datasets.json")
    return frame


def load(name: str, columns=None) -> Dataset:
    """A built-in dataset. Rows are read once per process; each call returns its own copy of the frame.

    ``columns``: read only these of its columns, and always its label and protected ones (names it does not have
    are left out) — for a caller that reads no other column (``fairaudit check`` validating a spec): the schema is
    still the whole dataset's, but ``frame`` has only those columns, in file order."""
    e = _entry(name)
    declared = schema(name)
    if columns is not None:
        wanted = set(columns) | {declared.label} | set(declared.protected)
        columns = tuple(c.name for c in declared.columns if c.name in wanted)
    return Dataset(name, _frame(name, columns).copy(), declared, source="built-in", description=e["description"])
