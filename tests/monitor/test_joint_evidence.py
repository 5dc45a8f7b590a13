"""Node-level evidence (``NodeEvidence`` on ``LeafBatch.nodes``) end to end: the REPLACE rule in ``evaluate``, the
levels the directed rule gives each comparison, the joint tests carried over chunks, and the e-value columns through
the trace, the JSON, ``to_frame``, the full-trace Parquet, the sentence and the convergence chart."""
import numpy as np
import pytest

from fairaudit.core.allocation import LeafStats
from fairaudit.engines.monitor.split import comparison_levels
from fairaudit.engines.monitor.eprocess import JointTests
from fairaudit.bounds.rules import FALSE, TRUE, UNKNOWN
from fairaudit.engines.monitor.engine import run_monitor
from fairaudit.core.observations import Observations
from fairaudit.core.evaluate import LeafValue, NodeEvidence, evaluate
from fairaudit.core.guarantee import evidence_note, joint_test_text
from fairaudit.spec import parse
from fairaudit.core.trace import AuditResult

A, B = 'E[y | g == "a"]', 'E[y | g == "b"]'


def _leaves(lo_a, hi_a, lo_b, hi_b):
    return {A: LeafValue(np.array([(lo_a + hi_a) / 2]), np.array([lo_a]), np.array([hi_a]), 0.05),
            B: LeafValue(np.array([(lo_b + hi_b) / 2]), np.array([lo_b]), np.array([hi_b]), 0.05)}


def test_evidence_replaces_the_interval_verdict_and_parents_follow():
    spec = parse(f"({A} - {B} < 0.1) and (not ({A} > 0.9))")
    cmp_id = spec.nodes[1].id
    straddling = _leaves(0.2, 0.5, 0.1, 0.3)  # A − B in [−0.1, 0.4]: the interval does not decide < 0.1
    plain = evaluate(spec, straddling)
    assert plain[cmp_id].verdict[0] == UNKNOWN and plain[spec.nodes[0].id].verdict[0] == UNKNOWN
    ev = {cmp_id: NodeEvidence(np.array([TRUE], np.int8), np.array([41.0]), np.array([20.0]))}
    out = evaluate(spec, straddling, ev)
    assert out[cmp_id].verdict[0] == TRUE and out[spec.nodes[0].id].verdict[0] == TRUE
    assert out[cmp_id].evalue[0] == 41.0 and out[cmp_id].evalue_target[0] == 20.0
    assert out[cmp_id].lo[0] == plain[cmp_id].lo[0]  # the interval is still interval arithmetic's
    # REPLACE, not OR: an interval that decides is overruled by an undecided test
    deciding = _leaves(0.1, 0.2, 0.3, 0.4)
    ev = {cmp_id: NodeEvidence(np.array([UNKNOWN], np.int8), np.array([3.0]), np.array([20.0]))}
    assert evaluate(spec, deciding)[cmp_id].verdict[0] == TRUE
    assert evaluate(spec, deciding, ev)[cmp_id].verdict[0] == UNKNOWN
    with pytest.raises(KeyError, match="comparisons only"):
        evaluate(spec, deciding, {spec.nodes[0].id: ev[cmp_id]})


def test_levels_per_comparison_and_direction():
    spec = parse(f"({A} - {B} < 0.1) and ({B} - {A} < 0.1) and not ({A} / {B} > 2)")
    ids = [tn.id for tn in spec.nodes if tn.kind == "cmp"]
    levels = comparison_levels(spec, 0.3, set(ids))
    for c in ids[:2]:  # a TRUE 'and' gives each conjunct the full Δ; a FALSE one splits it over 3 children
        assert levels[(c, True)] == pytest.approx(0.3) and levels[(c, False)] == pytest.approx(0.1)
    # under 'not' the directions swap: the root TRUE needs the ratio FALSE at the full Δ
    assert levels[(ids[2], False)] == pytest.approx(0.3) and levels[(ids[2], True)] == pytest.approx(0.1)
    # without joint tests the FALSE 'and' of comparisons only pools its leaves: no comparison-level share
    pooled = comparison_levels(parse(f"({A} - {B} < 0.1) and ({B} - {A} < 0.1)"), 0.3)
    assert all(want for _, want in pooled)


def test_chunks_carry_the_running_maximum():
    spec = parse(f"{A} - {B} < 0.1")
    rng = np.random.default_rng(3)
    n = 400
    g = rng.integers(0, 2, n)
    y = rng.random(n) < np.where(g == 0, 0.2, 0.4)
    sa, na = np.cumsum(y & (g == 0)).astype(float), np.cumsum(g == 0).astype(float)
    sb, nb = np.cumsum(y & (g == 1)).astype(float), np.cumsum(g == 1).astype(float)
    whole = JointTests(spec, 0.1)
    all_at_once = whole.chunk({A: LeafStats(sa, na), B: LeafStats(sb, nb)})
    parts = JointTests(spec, 0.1)
    pieces = {key: [] for key in all_at_once}
    for lo in range(0, n, 37):
        hi = min(lo + 37, n)
        cum = parts.chunk({A: LeafStats(sa[lo:hi], na[lo:hi]), B: LeafStats(sb[lo:hi], nb[lo:hi])})
        parts.commit(cum, hi - lo)
        for key in cum:
            pieces[key].append(cum[key])
    for key, v in all_at_once.items():
        assert np.allclose(np.concatenate(pieces[key]), v)
        assert (np.diff(v) >= 0).all()  # a running maximum: a certificate, once given, stands


def _result(stop=True):
    rng = np.random.default_rng(5)
    n = 600
    g = rng.integers(0, 2, n)
    y = (rng.random(n) < np.where(g == 0, 0.2, 0.5)).astype(np.int8)
    spec = parse(f"{A} - {B} < 0.1")
    obs = Observations({A: y, B: y}, {A: g == 0, B: g == 1}, n)
    return run_monitor(spec, obs, delta=0.1, batch=5, stop=stop)


def test_the_evalue_travels_with_the_result(tmp_path):
    r = _result()
    assert r.verdict == "true" and r.has_evalue("n0")
    final = r.final_values("n0")
    assert final["evalue"] >= final["evalue_target"] == pytest.approx(10.0)
    frame = r.to_frame()
    assert {"evalue", "evalue_target"} <= set(frame.columns)
    assert frame.loc[frame.node != "n0", "evalue"].isna().all()
    data = r.to_dict()
    assert "evalue" in data["nodes"][0]["final"] and "evalue" not in data["nodes"][1]["final"]
    assert all("evalue" in row for row in data["trace"] if row["node"] == "n0")
    assert not any("evalue" in row for row in data["trace"] if row["node"] != "n0")
    from fairaudit.report.methods import glossary

    assert any(line.startswith("• e-value, 1/β") for line in glossary(r)[1])
    back = AuditResult.from_json(r.to_json())
    assert back.to_json() == r.to_json()
    assert back.final_values("n0")["evalue"] <= final["evalue"]  # written rounded down: never overstated
    # a run without joint tests writes no e-value at all
    plain = run_monitor(parse("E[a] < 0.5"), Observations({"E[a]": np.zeros(50, np.int8)},
                                                          {"E[a]": np.ones(50, bool)}, 50), delta=0.1)
    assert "evalue" not in plain.to_json()


def test_full_trace_parquet_has_the_evalue(tmp_path):
    from fairaudit.core.fulltrace import FullTraceWriter, read_full_trace
    from fairaudit.core.driver import drive, last
    from fairaudit.engines.monitor.engine import Monitor, monitor_batches
    from fairaudit.core.engine import Context
    from fairaudit.core.guarantee import Guarantee

    rng = np.random.default_rng(5)
    n = 300
    g = rng.integers(0, 2, n)
    y = (rng.random(n) < np.where(g == 0, 0.2, 0.5)).astype(np.int8)
    spec = parse(f"{A} - {B} < 0.1")
    obs = Observations({A: y, B: y}, {A: g == 0, B: g == 1}, n)
    writer = FullTraceWriter(tmp_path / "t.parquet", spec.text)
    r = last(drive(Monitor(), spec, monitor_batches(spec, obs, delta=0.1, batch=5), options={},
                   guarantee=Guarantee("probabilistic", 0.1), ctx=Context(), full_trace=writer))
    writer.close()
    t = read_full_trace(tmp_path / "t.parquet")
    assert {"evalue", "evalue_target"} <= set(t.columns)
    assert np.isfinite(t.loc[t.node == "n0", "evalue"]).all() and t.loc[t.node != "n0", "evalue"].isna().all()
    assert r.has_evalue("n0")


def test_one_sentence_says_the_joint_test_decided():
    assert joint_test_text(41.2, 20) == "decided by the joint test: e-value 41.2 ≥ 1/β = 20"
    straddle = {"verdict": "true", "lo": -0.1, "hi": 0.4, "evalue": 41.0, "evalue_target": 20.0}
    assert evidence_note(straddle, "<") == "decided by the joint test: e-value 41 ≥ 1/β = 20"
    assert evidence_note({**straddle, "hi": -0.01}, "<") is None  # the interval decides it too
    assert evidence_note({**straddle, "verdict": "unknown"}, "<") is None
    assert evidence_note({**straddle, "evalue": 3.0}, "<") is None
    r = _result()
    from fairaudit.core.explain import explain_node

    note = r.evidence_text("n0")
    text = explain_node("n0", r.nodes, r.guarantee, r.unit)
    if note is not None:  # plain words in the node's panel; the e-value under "How this was decided"
        from fairaudit.core.claim import how_decided

        assert "evidence taken together" in text and "e-value" not in text and "e-value" not in r.worst_summary()
        assert any(note in line for line in how_decided(r))
    assert r.final_values("n0")["verdict"] == "true"


def test_the_convergence_chart_shows_the_evalue_against_its_line():
    from fairaudit.viz import convergence_chart, convergence_series

    r = _result(stop=False)
    s = convergence_series(r.to_frame(), "n0", r.nodes)
    assert s.evidence is not None and np.allclose(s.evidence["target"], 10.0)
    spec_json = convergence_chart(r.to_frame(), "n0", r.nodes, stop_step=r.stop_step).to_json()
    assert "joint test: e-value" in spec_json and '"type": "log"' in spec_json
    assert convergence_series(r.to_frame(), "n1", r.nodes).evidence is None  # a term: none


def test_when_both_directions_certify_the_later_one_is_shown():
    """Rows out of random order: the first half certifies A − B < 0.1, the second refutes it. Both running maxima
    reach their targets (probability ≤ β under the assumption); the later certificate wins, chunked or not."""
    spec = parse(f"{A} - {B} < 0.1")
    rng = np.random.default_rng(0)
    n = 1200
    g = rng.integers(0, 2, n)
    y = np.where(np.arange(n) < n // 2, 0, rng.random(n) < np.where(g == 0, 0.9, 0.1))
    stats = {A: LeafStats(np.cumsum(y * (g == 0)).astype(float), np.cumsum(g == 0).astype(float)),
             B: LeafStats(np.cumsum(y * (g == 1)).astype(float), np.cumsum(g == 1).astype(float))}
    whole = JointTests(spec, 0.1)
    cum = whole.chunk(stats)
    raw = {key: v >= np.log(1 / whole.levels[key]) for key, v in cum.items()}
    assert raw[("n0", True)][-1] and raw[("n0", False)][-1]  # both reached their targets
    certs = whole.certified(cum)
    assert certs[("n0", True)].any() and not certs[("n0", True)][-1] and certs[("n0", False)][-1]
    assert not (certs[("n0", True)] & certs[("n0", False)]).any()
    parts, got = JointTests(spec, 0.1), []
    for lo in range(0, n, 100):
        piece = {k: LeafStats(s.successes[lo:lo + 100], s.n[lo:lo + 100]) for k, s in stats.items()}
        c = parts.chunk(piece)
        got.append(parts.certified(c)[("n0", False)])
        parts.commit(c, len(piece[A].n))
    assert (np.concatenate(got) == certs[("n0", False)]).all()
