"""``audit(..., iterate=True)`` raises a problem with the inputs at the call, as ``audit()`` does — not at the
first partial result (a caller wraps the call, not every ``next``, in its error handling)."""
import pytest

import fairaudit
from fairaudit import models
from fairaudit.base.errors import FairauditError
from fairaudit.testing import DECISION, toy_dataset


@pytest.mark.parametrize("engine", ["monitor", "dataset"])
def test_a_bad_fair_column_raises_at_the_call(engine):
    ds = toy_dataset(300)
    model = models.from_expression(DECISION, ds)
    with pytest.raises(FairauditError, match="at most 20 values"):
        fairaudit.audit(ds, "Fair[age] > 0.5", engine=engine, model=model, iterate=True)
