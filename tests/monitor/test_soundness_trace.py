"""Soundness of what the trace and its JSON form show: bounds written to JSON must still contain the computed
interval (they are written at full precision since issue 28; before, with 6 significant digits rounded outward), δ
must not be understated, infinities and NaN survive the round trip, and the round trip is stable."""
import json
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fairaudit.core.evaluate import LeafValue, evaluate
from fairaudit.spec import ast as A
from fairaudit.core.trace import AuditResult, Trace, node_infos
from spec_helpers import C, X, make_spec


def _result(lo, hi, delta):
    spec = make_spec(A.Cmp("<", A.Div(X("a"), X("b")), C(0.5)))
    leaves = {"E[a]": LeafValue(np.array([0.5]), np.array([lo]), np.array([hi]), np.array([delta]), np.array([7])),
              "E[b]": LeafValue(np.array([0.5]), np.array([-0.1]), np.array([0.9]), np.array([delta]), np.array([7]))}
    trace = Trace.from_values([7], [tn.id for tn in spec.nodes], evaluate(spec, leaves))
    return AuditResult(spec.text, "monitor", {"delta": 2 * delta}, "unknown", None, 7, node_infos(spec), trace, tree=spec)


def test_json_bounds_are_rounded_outward():
    """Before the fix, lo = 0.1234567 was written as 0.123457 (a tighter, unsound bound)."""
    r = _result(0.1234567, 0.7654321, 1 / 30)
    data = json.loads(r.to_json())
    leaf = next(row for row in data["trace"] if row["node"] == "n2")  # E[a]
    assert leaf["lo"] <= 0.1234567 and leaf["hi"] >= 0.7654321
    assert leaf["delta"] >= 1 / 30
    final = data["nodes"][2]["final"]
    assert final["lo"] <= 0.1234567 and final["hi"] >= 0.7654321 and final["delta"] >= 1 / 30
    div = next(row for row in data["trace"] if row["node"] == "n1")
    assert (div["lo"], div["hi"]) == ("-inf", "inf")  # denominator interval contains 0


@settings(max_examples=200, deadline=None)
@given(lo=st.floats(-1e6, 1e6), width=st.floats(0, 1e6), delta=st.floats(1e-12, 0.5))
def test_json_round_trip_is_outward_and_stable(lo, width, delta):
    hi = lo + width
    r = _result(lo, hi, delta)
    text = r.to_json()
    back = AuditResult.from_json(text)
    j = back.trace_table.column("n2")
    assert back.trace_table.lo[0, j] <= lo and back.trace_table.hi[0, j] >= hi
    assert back.trace_table.delta[0, j] >= delta
    assert back.to_json() == text
    jd = back.trace_table.column("n1")
    assert math.isinf(back.trace_table.lo[0, jd]) and math.isinf(back.trace_table.hi[0, jd])
