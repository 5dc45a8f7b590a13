"""Datasets: the built-in ones (``load``, ``names``, ``info``) and users' CSV files (``from_csv``).

``resolve(name_or_path, ...)`` is the convention of the command line and the pages: a built-in name or a CSV
path (or an uploaded file object), optionally with another label, protected set or favourable value.

Every problem with the data raises ``fairaudit.errors.DataError`` with a one-line message.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any, Iterable

from fairaudit.data.builtin import DATA_DIR, DatasetInfo, info, load, names, schema
from fairaudit.data.csvfile import MISSING, from_csv
from fairaudit.data.dataset import Column, Dataset, Schema
from fairaudit.data.roles import listing, suggestion, with_roles
from fairaudit.errors import DataError

__all__ = ["Column", "DATA_DIR", "DataError", "Dataset", "DatasetInfo", "MISSING", "Schema", "from_csv", "info", "load",
           "names", "resolve", "schema", "with_roles"]


def resolve(name_or_path: str | os.PathLike | IO, label: str | None = None,
            protected: str | Iterable[str] | None = None, favourable: Any = None) -> Dataset:
    """A built-in dataset by name, or a CSV file by path (or file object).

    For a built-in dataset, ``label`` / ``protected`` / ``favourable`` replace the declared ones when given
    (``protected=[]`` means none); for a CSV file they are passed to ``from_csv``.
    """
    if isinstance(name_or_path, str) and name_or_path in names():
        return with_roles(load(name_or_path), label, protected, favourable)
    if isinstance(name_or_path, (str, os.PathLike)):
        path = Path(name_or_path)
        looks_like_name = isinstance(name_or_path, str) and not path.suffix and len(path.parts) == 1
        if looks_like_name and not path.exists():
            raise DataError(f"no built-in dataset or file named '{name_or_path}'{suggestion(name_or_path, names())}"
                            f" (built-in: {listing(names())})")
    return from_csv(name_or_path, label=label, protected=protected, favourable=favourable)
