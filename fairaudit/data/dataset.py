"""The ``Dataset`` and ``Schema`` types shared by every module.

A dataset is a pandas DataFrame plus a schema: which columns are numeric or categorical, which
are protected, which column is the label and which of its values is favourable. The label is
optional (an audit of logged decisions needs none).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from fairaudit.sources import fingerprint
from fairaudit.sources.schema import MISSING_CATEGORY  # how a missing categorical value is stored

ColumnKind = Literal["numeric", "categorical"]


@dataclass(frozen=True)
class Column:
    """One column of a dataset: its kind and, for categorical columns, the values it takes."""

    name: str
    kind: ColumnKind
    values: tuple[Any, ...] = ()  # sorted distinct values (categorical only)


@dataclass(frozen=True)
class Schema:
    """Column kinds and roles.

    ``excluded`` names columns kept for analysis (group conditions, logged decisions such as COMPAS's own
    ``score_text``) that are not given to a model: outcomes recorded after the decision that give the label away,
    or the score the label is defined from. Categorical columns hold no missing values (a missing category is the
    string ``"?"``); numeric columns of a user's CSV may hold NaN.
    """

    columns: tuple[Column, ...]
    label: str | None = None
    favourable: Any = None  # the label value that counts as the favourable outcome (pred/label == 1)
    protected: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()  # not features: see the class docstring

    def column(self, name: str) -> Column:
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(name)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def feature_names(self) -> list[str]:
        """Every column except the label and the excluded columns: what a model sees."""
        return [c.name for c in self.columns if c.name != self.label and c.name not in self.excluded]

    def __contains__(self, name: object) -> bool:
        return any(c.name == name for c in self.columns)




@dataclass
class Dataset:
    name: str
    frame: pd.DataFrame
    schema: Schema
    source: str = ""  # where the rows came from (file path or "built-in")
    description: str = ""
    _hash: str | None = field(default=None, repr=False, compare=False)
    _rows_hash: str | None = field(default=None, repr=False, compare=False)
    hash_of: str = fingerprint.ROWS  # what ``content_hash`` is of (``fairaudit.sources.fingerprint``'s words)

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def features(self) -> pd.DataFrame:
        return self.frame[self.schema.feature_names]

    @property
    def labels(self) -> np.ndarray | None:
        """1 where the label equals the favourable value, else 0; None without a label column."""
        if self.schema.label is None:
            return None
        return (self.frame[self.schema.label] == self.schema.favourable).to_numpy(dtype=np.int8)

    @property
    def content_hash(self) -> str:
        """SHA-256 that identifies the data in a report (``hash_of`` says of what; ``fairaudit.sources.fingerprint``):
        the bytes of the file the rows were read from (``fairaudit.data.csvfile.log_dataset``: the same whatever
        columns a run reads, and the same as out of core), else the canonical form of the rows' columns, computed
        once and kept."""
        if self._hash is None:
            self._hash, self.hash_of = fingerprint.of_frame(self.frame)
        return self._hash

    @property
    def rows_hash(self) -> str:
        """SHA-256 of the rows **in order**, cheap (pandas' 64-bit hash of each row, then SHA-256 over them and the
        columns' names and types): what tells datasets apart in a cache, where the same rows in another order are
        another dataset (a model's held-out rows are positions). ``content_hash`` is what a report records."""
        if self._rows_hash is None:
            digest = hashlib.sha256(repr([(str(name), str(kind)) for name, kind in self.frame.dtypes.items()])
                                    .encode("utf-8"))
            digest.update(pd.util.hash_pandas_object(self.frame, index=False).to_numpy().tobytes())
            self._rows_hash = digest.hexdigest()
        return self._rows_hash

    def missing_protected(self) -> np.ndarray:
        """Rows whose value of some protected attribute is missing (NaN, or the category ``"?"``)."""
        mask = np.zeros(len(self.frame), dtype=bool)
        for name in self.schema.protected:
            mask |= _missing_and_groups(self.frame[name])[0]
        return mask

    def protected_warnings(self, how_to_drop: str = "drop them with --missing drop (dashboard: Data page) or keep "
                                                    "them knowingly") -> list[str]:
        """What makes a group comparison misleading: a protected attribute with a single group (nothing to
        compare), or with missing values (they form a group of their own, ``"?"``, unless dropped; the
        sentence ends with ``how_to_drop``)."""
        out = []
        for name in self.schema.protected:
            missing_rows, groups = _missing_and_groups(self.frame[name])
            missing = int(missing_rows.sum())
            if len(groups) <= 1:
                only = f" ({str(groups[0])[:40]!r})" if len(groups) else ""
                out.append(f"protected attribute '{name}' has a single group{only} in {self.name}: there is no "
                           "other group to compare it with")
            if missing:
                try:
                    numeric = self.schema.column(name).kind != "categorical"
                except Exception:  # noqa: BLE001 — not a declared column: treated as categorical
                    numeric = False
                grouped = ("are grouped with whatever value a model fills in for them (or left out of the "
                           "groups)" if numeric else f"form a group of their own (\"{MISSING_CATEGORY}\")")
                out.append(f"protected attribute '{name}' is missing in {missing:,} of {len(self):,} rows, which "
                           f"{grouped}; {how_to_drop}")
        return out

    def without_missing_protected(self) -> "Dataset":
        """The rows whose protected attributes are all known (``--missing drop``)."""
        return self.subset(~self.missing_protected())

    def subset(self, mask: np.ndarray, name: str | None = None) -> "Dataset":
        """Rows where ``mask`` is true, order kept, same schema."""
        return Dataset(name or self.name, self.frame[np.asarray(mask, dtype=bool)].reset_index(drop=True),
                       self.schema, self.source, self.description)


def _missing_and_groups(series: pd.Series) -> tuple[np.ndarray, list]:
    """Whether each row of ``series`` is missing (NaN, or the category ``"?"``), and its other values in order of
    first appearance — from its distinct values, each looked at once."""
    codes, uniques = pd.factorize(series)  # a NaN: code -1
    placeholder = np.array([str(u) == MISSING_CATEGORY for u in uniques] + [True], dtype=bool)  # [-1]: NaN
    return placeholder[codes], [u for u, missing in zip(uniques, placeholder) if not missing]
