"""``compare(..., among=positions)``: a comparison on given rows only (the Repair page compares the repaired model
with the original on the rows that certified it, never on those that chose its thresholds)."""
from __future__ import annotations

import numpy as np
import pytest

from fairaudit import data
from fairaudit.base.errors import FairauditError
from fairaudit.comparison import compare

SPEC = 'E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.1'
PREDS = ["decile_score <= 4", "decile_score <= 6"]


def test_among_restricts_the_rows_and_says_which():
    ds = data.load("compas")
    among = np.arange(0, len(ds.frame), 3)
    part = compare(ds, SPEC, preds=PREDS, among=among, among_text="every third row")
    assert part.rows["audited"] == len(among) and part.rows["text"] == "every third row"
    exact = compare(ds, SPEC, preds=PREDS, among=among, engine="dataset")
    mask = np.zeros(len(ds.frame), bool)
    mask[among] = True
    subset = compare(ds.subset(mask), SPEC, preds=PREDS, engine="dataset")
    assert exact.difference("n0").estimate == pytest.approx(subset.difference("n0").estimate)
    assert exact.rows["audited"] == len(among)


def test_among_outside_the_rows_is_one_line():
    ds = data.load("compas")
    with pytest.raises(FairauditError, match="none of the rows"):
        compare(ds, SPEC, preds=PREDS, among=[len(ds.frame) + 5])
