"""A dataset known by its schema only (``FileDataset``, what ``fairaudit.core.preflight`` validates a file or a log against
when its rows are not held in memory: out of core, on Dask); the bound on the values kept of a wide column is
``fairaudit.sources.values``'s."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fairaudit.data.dataset import MISSING_CATEGORY as MISSING  # the category that stands for a missing value
from fairaudit.sources.values import EXAMPLES, VALUES_CAP, narrowed  # noqa: F401 — the values kept of a wide column


@dataclass
class FileDataset:
    """A file's schema and identity without its rows: what ``fairaudit.core.preflight`` validates against (``frame``
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
