"""Issue 33 item 5, the front ends' side: where a Fair[...] node's undecided individuals are
(``fairaudit.core.undecided_view`` and ``fairaudit.viz.undecided_where_chart``), from a hand-made record and from a
real run: the frame, the chart's spec (and its JSON round trip), and the plain sentences."""
import json

import altair as alt
import pytest

from fairaudit.core import undecided_view as uv
from fairaudit.viz import undecided_where_chart


def _record(total=0.5):
    """Two features: ``age`` (five ranges, its undecided individuals all in the first two) and ``job`` (a one-hot
    group, spread like the domain)."""
    age = {"name": "age", "kind": "int", "unevenness": 0.6, "top_bin": 0, "top_share": 0.6, "top_lift": 3.0,
           "bins": [{"lo": 10 * i, "hi": 10 * i + 9, "domain": 0.2, "undecided": u, "counterexample": u / 5,
                     "limit": u * 4 / 5, "count": 0} for i, u in enumerate([0.3, 0.2, 0, 0, 0])]}
    job = {"name": "job", "kind": "cat", "unevenness": 0.0, "top_bin": 0, "top_share": 0.5, "top_lift": 1.0,
           "bins": [{"lo": i, "hi": i, "value": v, "domain": 0.5, "undecided": 0.25, "counterexample": 0.05,
                     "limit": 0.2, "count": 0} for i, v in enumerate(["clerk", "a-very-long-occupation-name"])]}
    return {"undecided": total, "features": [age, job]}


def test_frame_shares_and_labels():
    f = uv.frame(_record())
    age = f[(f.feature == "age") & (f.who == uv.UNDECIDED)]
    assert list(age["range"]) == ["0–9", "10–19", "20–29", "30–39", "40–49"]
    assert list(age["share"]) == pytest.approx([0.6, 0.4, 0, 0, 0])  # of the undecided individuals
    assert f[f.who == uv.DOMAIN].groupby("feature")["share"].sum().tolist() == pytest.approx([1, 1])
    job = f[(f.feature == "job") & (f.who == uv.UNDECIDED)]
    assert list(job["range"]) == ["clerk", "a-very-long-occup…"]


def test_a_group_with_many_categories_keeps_the_most_undecided():
    values = [f"c{i}" for i in range(30)]
    bins = [{"lo": i, "hi": i, "value": v, "domain": 1 / 30, "undecided": (0.3 if i == 17 else 0.7 / 29),
             "counterexample": 0, "limit": 0, "count": 0} for i, v in enumerate(values)]
    rec = {"undecided": 1.0, "features": [{"name": "country", "kind": "cat", "unevenness": 0.2, "top_bin": 17,
                                          "top_share": 0.3, "top_lift": 9, "bins": bins}]}
    f = uv.frame(rec)
    und = f[f.who == uv.UNDECIDED]
    assert len(und) == uv.MAX_ROWS and "c17" in set(und["range"]) and und["range"].iloc[-1] == uv.OTHER
    assert und["share"].sum() == pytest.approx(1.0)


def test_the_chart_and_its_round_trip():
    chart = undecided_where_chart(_record(), panel_width=200)
    spec = chart.to_dict()
    assert spec["title"] == "Where the undecided individuals are"
    panels = spec["vconcat"][0]["hconcat"]
    assert [p["title"] for p in panels] == ["age", "job"]  # the most uneven first
    assert panels[0]["encoding"]["yOffset"]["field"] == "who"
    text = chart.to_json()
    assert alt.VConcatChart.from_json(text).to_json() == text
    assert "title" not in undecided_where_chart(_record(), title=None).to_dict()


def test_the_sentences():
    text = uv.caption(_record())
    assert text.startswith("50.0% of all individuals are still undecided (10.0% where an individual whose decision "
                           "changes was already found, 40.0% not settled in the time or depth allowed).")
    assert "The biggest gap: age in 0–9 holds 60.0% of them but 20.0% of all individuals." in text
    assert uv.caption(_record(0.0)).startswith("No individual is undecided")
    even = _record()
    even["features"] = even["features"][1:]
    assert "spread like the individuals themselves" in uv.caption(even)
    assert uv.share_text(0.0001) == "<0.1%"


def test_from_a_real_run(tmp_path):
    pytest.importorskip("torch")
    from fairaudit import audit
    from fairaudit.engines.fairquant.engine import _long_net

    path = tmp_path / "random.nnet"
    path.write_text(_long_net())
    r = audit(None, "Fair[x1] >= 0.5", engine="fairquant", model=str(path), max_depth=3, sample_depth=1)
    fair = next(n for n in r.node_info if n.kind == "fair")
    rec = uv.for_node(r, fair.id)
    rates = r.final_values(fair.id)
    assert rec["undecided"] == pytest.approx(rates["undecided"]) and rates["undecided"] > 0
    assert {f["name"] for f in rec["features"]} == {"x0", "x2", "x3"}  # not the protected x1
    assert json.loads(r.to_json())["info"][uv.INFO_KEY]["Fair[x1]"]["undecided"] == pytest.approx(rec["undecided"])
    assert uv.for_node(r, "n0") is None or r.node("n0").kind == "fair"  # a comparison node has no record
    undecided_where_chart(rec).to_dict()
