"""Datasets: the built-in ones (``load``, ``names``, ``info``) and users' CSV files (``from_csv``).

``resolve(name_or_path, ...)`` is the convention of the command line and the pages: a built-in name or a CSV
path (or an uploaded file object), optionally with another label, protected set or favourable value.

Every problem with the data raises ``fairaudit.base.errors.DataError`` with a one-line message.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any, Iterable

from fairaudit.data.builtin import DATA_DIR, DatasetInfo, info, load, names, schema
from fairaudit.data.csvfile import MISSING, from_csv, from_log
from fairaudit.data.dataset import Column, Dataset, Schema
from fairaudit.data.roles import listing, suggestion, with_roles
from fairaudit.base.errors import DataError

__all__ = ["Column", "DATA_DIR", "DataError", "Dataset", "DatasetInfo", "MISSING", "Schema", "from_csv", "from_log", "info", "load",
           "names", "resolve", "schema", "with_roles"]


def resolve(name_or_path: str | os.PathLike | IO, label: str | None = None,
            protected: str | Iterable[str] | None = None, favourable: Any = None, *, column_types=None,
            na_values=(), columns=None) -> Dataset:
    """A built-in dataset by name, or a CSV file by path (or file object).

    For a built-in dataset, ``label`` / ``protected`` / ``favourable`` replace the declared ones when given
    (``protected=[]`` means none); for a CSV file they are passed to ``from_csv``, with ``column_types`` and
    ``na_values`` (a built-in dataset's types are its own: declaring them is refused). ``columns``: a caller that
    reads only these columns (``load``'s argument) — honoured for a built-in dataset whose roles are kept, and for
    a file, whose other columns are then neither typed nor read (``fairaudit.sources.FileLog``; its ``label`` and
    ``protected`` columns are read too); None reads every column, at most ``fairaudit.base.limits.COLUMNS``.
    """
    if isinstance(name_or_path, str) and name_or_path in names():
        if column_types or na_values:
            raise DataError(f"--column-type and --na-values apply to a CSV or Parquet file; '{name_or_path}' is a "
                            "built-in dataset with its own types")
        if label is None and protected is None and favourable is None:
            return load(name_or_path, columns)
        return with_roles(load(name_or_path), label, protected, favourable)
    if isinstance(name_or_path, (str, os.PathLike)):
        path = Path(name_or_path)
        looks_like_name = isinstance(name_or_path, str) and not path.suffix and len(path.parts) == 1
        if looks_like_name and not path.exists():
            raise DataError(f"no built-in dataset or file named '{name_or_path}'{suggestion(name_or_path, names())}"
                            f" (built-in: {listing(names())})")
    if isinstance(name_or_path, (str, os.PathLike)):
        from fairaudit.sources.files import file_format

        text = str(name_or_path)
        if Path(text).is_dir() or file_format(text) == "parquet" or any(ch in text for ch in "*?["):
            return from_log(name_or_path, label=label, protected=protected, favourable=favourable,
                            column_types=column_types, na_values=na_values, columns=columns)
    return from_csv(name_or_path, label=label, protected=protected, favourable=favourable,
                    column_types=column_types, na_values=na_values, columns=columns)
