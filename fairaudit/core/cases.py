"""The toy audits of the conformance checks (``fairaudit.testing``): a ``Case`` is a spec, its inputs and each leaf's
exact value; ``toy_dataset`` is the seeded table the shared cases audit. They live here, below the engines, because an
engine declares cases of its own (``conformance_cases()`` in its module) with them; ``fairaudit.testing`` re-exports
both and runs the checks.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Mapping

import numpy as np

DECISION = 'age >= 40 or sex == "M"'  # the toy model: true = favourable


@lru_cache(maxsize=8)
def toy_dataset(rows: int = 2000, seed: int = 0):
    """A seeded synthetic ``Dataset``: ``sex`` (F/M), ``grp`` (a/b/c), ``age`` (18–79) and a yes/no ``outcome``
    (the label, "yes" favourable); built from a pandas frame with ``fairaudit.data.from_csv``."""
    import pandas as pd

    from fairaudit import data

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], rows), "grp": rng.choice(["a", "b", "c"], rows, p=[.5, .3, .2]),
                          "age": rng.integers(18, 80, rows)})
    # an outcome that depends on age, so label-based leaves are not all ½
    frame["outcome"] = np.where(rng.random(rows) < 0.3 + 0.4 * (frame["age"] >= 50), "yes", "no")
    return data.from_csv(frame.to_csv(index=False).encode("utf-8"), label="outcome", protected=["sex", "grp"],
                         favourable="yes", name=f"toy{rows}.csv")


@dataclass(eq=False)
class Case:
    """A toy audit: ``spec`` on ``make_inputs()`` (built once), with ``options`` (options of every run only, so
    that any engine can take them), and the ``oracle``: each leaf's exact value on the audited rows, keyed by the
    leaf's text (None: no audited row satisfies its condition, so it has no value). ``long``: enough steps for
    the cancel and deadline checks to stop a run in the middle."""

    name: str
    spec: str
    make_inputs: Callable[[], Any]
    oracle: Mapping[str, float | None] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    long: bool = False

    def __post_init__(self):
        self._inputs = None
        self._spec = None

    @property
    def parsed(self):
        if self._spec is None:
            from fairaudit.spec import parse

            self._spec = parse(self.spec)
            keys = {tn.text for tn in self._spec.leaves}
            unknown = sorted(set(self.oracle) - keys)
            if unknown:
                raise ValueError(f"case {self.name}: the oracle names {unknown[0]!r}, which is not a leaf of the "
                                 f"spec (leaves: {', '.join(sorted(keys))})")
        return self._spec

    @property
    def inputs(self):
        if self._inputs is None:
            self._inputs = self.make_inputs()
        return self._inputs
