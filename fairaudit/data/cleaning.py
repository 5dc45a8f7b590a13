"""Rows read by another reader than ``fairaudit.data.from_csv`` (pyarrow batches out of core, Dask partitions), cleaned
as it cleans them, and a dataset known by its schema only (``FileDataset``, what ``fairaudit.preflight`` validates
a file or a log against when its rows are not held in memory)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fairaudit.data.dataset import MISSING_CATEGORY as MISSING  # the category that stands for a missing value

VALUES_CAP = 10_000  # a column's values held to validate against; beyond (an id), only the values the audit names
EXAMPLES = 100  # and this many others


def narrowed(values, literals) -> set:
    """The values kept of a column of more than ``VALUES_CAP`` values: those of ``literals`` (the values the audit
    compares columns with) it holds, and ``EXAMPLES`` others — so that a value it never takes is still refused."""
    kept = {v for v in values if v in literals}
    kept.update(sorted((v for v in values if v not in kept), key=str)[:EXAMPLES])
    return kept


def clean_array(arr, text: bool):
    """One column of a batch as ``fairaudit.data.from_csv`` has it: text stripped, missing or empty "?"."""
    import pyarrow as pa
    import pyarrow.compute as pac

    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if text:
        arr = pac.utf8_trim_whitespace(arr.cast(pa.string()))
        arr = pac.if_else(pac.equal(arr, ""), None, arr).fill_null(MISSING)
    return arr


def clean_frame(frame):
    """A pandas DataFrame's text columns cleaned as ``fairaudit.outofcore.frame_of`` cleans a batch's
    (``clean_array``: stripped, missing or empty "?"), its other columns as they are — for rows that reach pandas by
    another reader (a Dask partition), so that they are audited as the rows of the same file read out of core. Each
    distinct value is cleaned once."""
    import pandas as pd
    import pyarrow as pa

    out = {}
    for name in frame.columns:
        series = frame[name]
        if pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
            continue
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        try:
            arr = pa.array(np.asarray(uniques, dtype=object), from_pandas=True)
        except (pa.ArrowException, TypeError, ValueError):
            continue  # values of mixed kinds: left as they are
        text = pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)
        if not text and not (len(arr) == 0 and isinstance(series.dtype, pd.StringDtype)):  # (no value: by dtype)
            continue
        cleaned = np.append(clean_array(arr.cast(pa.string()), True).to_numpy(zero_copy_only=False), MISSING)
        out[name] = pd.Series(pd.array(cleaned[codes], dtype="str"), index=series.index, name=name)
    return frame.assign(**out) if out else frame


@dataclass
class FileDataset:
    """A file's schema and identity without its rows: what ``fairaudit.preflight`` validates against (``frame``
    is None, so the checks that need every row are not made)."""

    name: str
    source: str
    schema: object
    frame: object = None
    warnings: list = field(default_factory=list)
    wide: frozenset = frozenset()  # columns of more than VALUES_CAP values: their schema holds the audit's literals

    def protected_warnings(self) -> list[str]:
        return []


def known_dataset(name: str, source: str, kinds: dict, known: dict, *, label=None, protected=None,
                  favourable=None, wide=frozenset()) -> FileDataset:
    """The ``FileDataset`` of rows not held here: ``kinds`` (column → "numeric" / "categorical") and ``known``
    (column → the set of its values, for the categorical columns read)."""
    import pandas as pd

    from fairaudit.data.roles import build_schema, distinct_values

    # a stand-in frame holding every known value (build_schema reads the label's values from it)
    sample = {c: pd.Series(sorted(known[c], key=str) if c in known else ([0.0] if kinds[c] == "numeric"
                                                                          else [MISSING])) for c in kinds}
    width = max(len(s) for s in sample.values())
    frame = pd.DataFrame({c: pd.Series(np.resize(s.to_numpy(), width)) for c, s in sample.items()})
    schema = build_schema(frame, kinds, label, protected, favourable,
                          known_values={c: tuple(distinct_values(pd.Series(list(v)))) for c, v in known.items()})
    return FileDataset(name, source, schema, wide=frozenset(wide))
