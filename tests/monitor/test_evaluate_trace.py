"""The shared evaluator and the trace / AuditResult JSON contract."""
import json

import numpy as np
import pytest

from fairaudit.bounds.rules import FALSE, TRUE, UNKNOWN
from fairaudit.core.evaluate import LeafValue, evaluate
from fairaudit.spec import ast as A
from fairaudit.core.trace import AuditResult, Trace, node_infos
from spec_helpers import C, X, make_spec


def _spec():
    # (E[a] - E[b] < 0.2) and not (E[a] / E[c] > 2)
    return make_spec(A.And(A.Cmp("<", A.Sub(X("a"), X("b")), C(0.2)),
                           A.Not(A.Cmp(">", A.Div(X("a"), X("c")), C(2.0)))))


def _leaves():
    return {"E[a]": LeafValue(np.array([0.5, 0.5]), np.array([0.4, 0.45]), np.array([0.6, 0.55]),
                              np.array([0.01, 0.01]), np.array([100, 400])),
            "E[b]": LeafValue(np.array([0.4, 0.4]), np.array([0.3, 0.38]), np.array([0.5, 0.42]), 0.02, 50),
            "E[c]": LeafValue(np.array([0.3, 0.3]), np.array([0.0, 0.29]), np.array([0.6, 0.31]), 0.0)}


def test_evaluate_nodes_and_verdicts():
    spec = _spec()
    out = evaluate(spec, _leaves())
    ids = {tn.text: tn.id for tn in spec.nodes}
    sub = out[ids["E[a] - E[b]"]]
    np.testing.assert_allclose(sub.lo, [-0.1, 0.03], atol=1e-12)
    np.testing.assert_allclose(sub.hi, [0.3, 0.17], atol=1e-12)
    cmp1 = out[ids["E[a] - E[b] < 0.2"]]
    assert list(cmp1.verdict) == [UNKNOWN, TRUE]
    np.testing.assert_allclose(cmp1.hi, [0.1, -0.03], atol=1e-12)  # interval of left - right
    div = out[ids["E[a] / E[c]"]]
    # the divisor's interval [0, 0.6] contains 0: the quotient of non-negative values is at least 0.4 / 0.6 where
    # it is defined, with no upper bound
    assert 0.4 / 0.6 - 1e-12 <= div.lo[0] <= 0.4 / 0.6 and div.hi[0] == np.inf
    assert np.isfinite(div.lo[1])
    root = out[spec.nodes[0].id]
    assert list(root.verdict) == [UNKNOWN, TRUE]
    # δ: union bound over distinct leaves (E[a] appears twice, counted once)
    np.testing.assert_allclose(root.delta, [0.03, 0.03])
    assert out[ids["0.2"]].delta[0] == 0 and out[ids["0.2"]].verdict is None
    assert np.isnan(root.estimate).all()
    np.testing.assert_array_equal(out[ids["E[a]"]].n, [100, 400])


def test_exact_leaves_from_a_verifier():
    spec = make_spec(A.Cmp(">=", X("a"), C(0.5)))
    out = evaluate(spec, {"E[a]": LeafValue(0.5, 0.5, 0.5, 0.0)})
    assert out["n0"].verdict == TRUE and out["n0"].delta == 0
    out = evaluate(spec, {"E[a]": LeafValue(0.4, 0.3, 0.49, 0.0)})
    assert out["n0"].verdict == FALSE


def test_fair_leaf_rates():
    spec = make_spec(A.Cmp(">", A.Fair("sex"), C(0.9)))
    out = evaluate(spec, {"Fair[sex]": LeafValue(0.95, 0.92, 0.97, 0.05, 200)})
    fair = out["n1"]
    assert fair.certified == pytest.approx(0.92) and fair.unfair == pytest.approx(0.03)
    assert fair.undecided == pytest.approx(0.05)


def _result():
    spec = _spec()
    values = evaluate(spec, _leaves())
    trace = Trace.from_values([5, 10], [tn.id for tn in spec.nodes], values)
    return AuditResult(spec.text, "monitor", {"delta": 0.05, "batch": 5}, "true", 10, 10, node_infos(spec),
                       trace, unit="observations", info={"allocation": {"E[a]": 0.01}}, tree=spec)


def test_trace_frame_and_views():
    r = _result()
    frame = r.to_frame()
    assert list(frame.columns) == ["step", "node", "estimate", "lo", "hi", "delta", "verdict", "n",
                                   "certified", "unfair", "undecided", "evalue", "evalue_target"]
    assert len(frame) == 2 * len(r.node_info)
    assert set(frame.loc[frame.node == "n0", "verdict"]) == {"unknown", "true"}
    assert frame.loc[frame.node == "n2", "verdict"].isna().all()
    assert list(r.by_node("n0").step) == [5, 10]
    assert r.final.loc["n0", "verdict"] == "true"
    assert r.sentence == "certified true with probability ≥ 0.95 after 10 observations"
    worst = r.worst_node()
    assert worst["id"] in {"n1", "n7"}


def test_json_round_trip_and_contract():
    r = _result()
    text = r.to_json()
    data = json.loads(text)
    assert set(data) >= {"spec", "engine", "options", "verdict", "stop_step", "steps", "nodes", "trace"}
    assert data["nodes"][0]["id"] == "n0" and data["nodes"][0]["parent"] is None
    assert set(data["nodes"][0]["final"]) >= {"estimate", "lo", "hi", "delta", "verdict"}
    row = data["trace"][0]
    assert set(row) >= {"step", "node", "estimate", "lo", "hi", "delta", "verdict"}
    assert any(r_["hi"] == "inf" for r_ in data["trace"])  # unbounded division
    back = AuditResult.from_json(text)
    assert back.to_json() == text
    assert back.verdict == "true" and back.stop_step == 10
    assert back.worst_node()["id"] == r.worst_node()["id"]
    thin = json.loads(r.to_json(trace_every=5))
    assert {row["step"] for row in thin["trace"]} == {5, 10}
