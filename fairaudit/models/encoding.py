"""How raw dataset columns become the numeric matrix a model (and a verifier) works on.

The *encoding* is the same for every model kind and every structure adapter:

* a numeric column becomes one encoded column holding the value in its raw units
  (missing values are replaced by the training mean);
* a categorical column with values ``v1 .. vk`` becomes ``k`` indicator columns named ``col=v1 .. col=vk``
  (a value not in the schema encodes as all zeros; a column in which no value is known is an error,
  since it means the data is coded differently from the training data).

Standardisation, where a learner needs it, is a separate step inside the model; the adapters fold it
into the weights, so verifiers only ever see this raw encoding.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairaudit.base.errors import ModelError


def _plain(value: Any) -> Any:
    """A numpy scalar as the matching Python scalar (JSON-able)."""
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True)
class EncodedColumn:
    """One raw column of the input: its kind, its categories (categorical) or fill value (numeric)."""

    name: str
    kind: str  # "numeric" | "categorical"
    values: tuple[Any, ...] = ()  # categories, in encoded order (categorical only)
    fill: float = 0.0  # replaces missing numeric values (the training mean)

    @property
    def encoded_names(self) -> list[str]:
        if self.kind == "numeric":
            return [self.name]
        return [f"{self.name}={v}" for v in self.values]


@dataclass(frozen=True)
class Encoding:
    """The map from raw columns to encoded columns (numeric as is, categorical one-hot)."""

    columns: tuple[EncodedColumn, ...]

    @classmethod
    def fit(cls, dataset, frame: pd.DataFrame, feature_names: list[str]) -> "Encoding":
        """Categories from the dataset schema (or the frame if the schema lists none); fill values from ``frame``."""
        cols = []
        for name in feature_names:
            spec = dataset.schema.column(name)
            if spec.kind == "categorical":
                values = spec.values or tuple(sorted(frame[name].dropna().unique(), key=str))
                cols.append(EncodedColumn(name, "categorical", tuple(_plain(v) for v in values)))
            else:
                series = _numeric(frame[name], name)
                mean = float(np.nanmean(series)) if np.isfinite(series).any() else 0.0
                cols.append(EncodedColumn(name, "numeric", fill=mean))
        return cls(tuple(cols))

    @classmethod
    def numeric(cls, names: list[str]) -> "Encoding":
        """An encoding of numeric inputs only (an ``.nnet`` network's inputs)."""
        return cls(tuple(EncodedColumn(n, "numeric") for n in names))

    @property
    def raw_names(self) -> list[str]:
        """The raw columns a frame must have."""
        return [c.name for c in self.columns]

    @property
    def names(self) -> list[str]:
        """The encoded column names, in matrix order (``age``, ``sex=Female``, ``sex=Male``, ...)."""
        return [n for c in self.columns for n in c.encoded_names]

    @property
    def mapping(self) -> dict[str, list[int]]:
        """Raw column -> indices of its encoded columns."""
        out, start = {}, 0
        for c in self.columns:
            width = len(c.encoded_names)
            out[c.name] = list(range(start, start + width))
            start += width
        return out

    @property
    def numeric_mask(self) -> np.ndarray:
        """True for encoded columns that hold a raw numeric value (False for indicators)."""
        return np.array([c.kind == "numeric" for c in self.columns for _ in c.encoded_names], dtype=bool)

    def __len__(self) -> int:
        return len(self.names)

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """The encoded float64 matrix of ``frame`` (extra columns are ignored)."""
        check_columns(frame, self.raw_names)
        out = np.zeros((len(frame), len(self)))
        start = 0
        for c in self.columns:
            if c.kind == "numeric":
                x = _numeric(frame[c.name], c.name)
                out[:, start] = np.where(np.isnan(x), c.fill, x)
                start += 1
            else:
                codes = _category_codes(frame[c.name], c.values)
                if len(codes) and (codes < 0).all() and frame[c.name].notna().any():
                    raise ModelError(f"column '{c.name}' holds none of the values the model was trained on "
                                     f"({', '.join(map(str, c.values[:5]))}{', ...' if len(c.values) > 5 else ''})")
                seen = np.flatnonzero(codes >= 0)
                out[seen, start + codes[seen]] = 1.0
                start += len(c.values)
        return out

    def to_dict(self) -> dict:
        return {"columns": [{"name": c.name, "kind": c.kind, "values": list(c.values), "fill": c.fill}
                            for c in self.columns]}

    @classmethod
    def from_dict(cls, data: dict) -> "Encoding":
        return cls(tuple(EncodedColumn(c["name"], c["kind"], tuple(c["values"]), float(c["fill"]))
                         for c in data["columns"]))


def check_columns(frame: pd.DataFrame, needed: list[str]) -> None:
    """Raise ModelError naming the first column of ``needed`` that ``frame`` lacks (with a suggestion)."""
    if not isinstance(frame, pd.DataFrame):
        raise ModelError(f"expected a pandas DataFrame of rows, got {type(frame).__name__}")
    missing = [name for name in needed if name not in frame.columns]
    if missing:
        close = difflib.get_close_matches(missing[0], [str(c) for c in frame.columns], n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise ModelError(f"the rows lack column '{missing[0]}'{more} that the model reads{hint}")


def _category_codes(series: pd.Series, categories: tuple) -> np.ndarray:
    """Position of each row's value in ``categories``; -1 for missing or unknown values.

    Factorising first means only the few distinct values are looked up (fast on Arrow strings).
    """
    codes, uniques = pd.factorize(series)
    position = pd.Index(list(categories)).get_indexer(uniques)
    return np.where(codes >= 0, position[codes], -1)


def _numeric(series: pd.Series, name: str) -> np.ndarray:
    try:
        return pd.to_numeric(series).to_numpy(dtype=np.float64, na_value=np.nan)
    except (ValueError, TypeError):
        raise ModelError(f"column '{name}' should be numeric but holds non-numeric values") from None
