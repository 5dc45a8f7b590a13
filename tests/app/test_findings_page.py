"""Issue 15 on the Audit page: with a dataset and a model chosen, the engines that need both are offered; a run with
one of them completes; a result with findings gets a "Groups" section (the per-group table with the most and least
favoured marked, the metrics, the group chart, the influence chart and the graph), and a result without none."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairaudit import engines
from tests.viz.findings_sample import sample_findings

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180
SPEC = 'E[pred | race == "White"] - E[pred | race == "Black"] < 0.3\n'
NEEDS_MODEL = [e.name for e in engines.all_engines() if {"dataset", "model"} <= set(e.requires)]


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _charts(at: AppTest) -> int:
    return len(at.get("vega_lite_chart")) + len(at.get("arrow_vega_lite_chart"))


def _groups_table(at: AppTest):
    return next((d.value for d in at.dataframe if "mark" in d.value.columns and "group" in d.value.columns), None)


def _ricci_tree() -> AppTest:
    """A fresh session: the Data page's ricci, a tree trained on the Model page, a group-rate specification."""
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    _ok(at.switch_page("pages/1_Data.py").run())
    at.selectbox(key="data_builtin").set_value("ricci")
    _ok(at.run())
    assert at.session_state["current_dataset"].name == "ricci"
    _ok(at.switch_page("pages/2_Model.py").run())
    at.selectbox(key="model_kind").set_value("tree")
    _ok(at.run())
    at.button(key="model_train").click()
    _ok(at.run())
    assert at.session_state["model"] is not None
    _ok(at.switch_page("pages/3_Specification.py").run())
    at.text_area(key="spec_editor").input(SPEC)
    _ok(at.run())
    assert at.session_state["spec_text"].strip() == SPEC.strip()
    return _ok(at.switch_page("pages/4_Audit.py").run())


@pytest.fixture(scope="module")
def ricci_tree() -> AppTest:
    return _ricci_tree()


def test_engines_needing_a_dataset_and_a_model_are_offered_and_run(ricci_tree):
    at = ricci_tree
    assert NEEDS_MODEL, "the registry has engines that need a dataset and a model"
    offered = at.selectbox(key="audit_engine").options
    greyed = " ".join(c.value for c in at.caption if c.value.startswith("Not available here"))
    for name in NEEDS_MODEL:  # offered, or listed with the engine's own reason (e.g. a kind of model it cannot read)
        assert engines.get(name).title in offered or engines.get(name).title in greyed, name
    usable = [name for name in NEEDS_MODEL if engines.get(name).title in offered]
    assert usable, "no engine that needs a dataset and a model is offered for a tree"
    engine = usable[0]
    at.selectbox(key="audit_engine").set_value(engine)
    _ok(at.run())
    at.button(key="audit_run").click()
    _ok(at.run())
    assert not [e.value for e in at.error], [e.value for e in at.error]
    result = at.session_state["result"]
    assert result.engine == engine and result.complete and result.verdict in ("true", "false")
    assert any(m.value.startswith("**Verdict:**") for m in at.markdown)
    # the Groups section follows the result's findings: there exactly when the engine reported some
    table = _groups_table(at)
    assert (table is not None) == bool(result.findings)
    if result.findings:
        assert len(table) == len(result.findings.groups)


def test_a_run_with_findings_shows_the_groups_section(monkeypatch):
    """Whatever engine reports findings, the page draws them: an engine's run is wrapped to attach hand-made
    findings to its steps (the path every engine takes: step → driver → result → page)."""
    engine = engines.get(NEEDS_MODEL[0])  # (its run is wrapped below; it must be offered for a tree)
    original = type(engine).run

    def run_with_findings(self, *args, **kwargs):
        for step in original(self, *args, **kwargs):
            step.findings = sample_findings()
            yield step

    at = _ricci_tree()
    at.selectbox(key="audit_engine").set_value(engine.name)
    _ok(at.run())
    assert not any(h.value == "Groups" for h in at.subheader)
    before = _charts(at)
    monkeypatch.setattr(type(engine), "run", run_with_findings)
    at.button(key="audit_run").click()
    _ok(at.run())
    assert at.session_state["result"].findings == sample_findings()
    assert any(h.value == "Groups" for h in at.subheader)
    table = _groups_table(at)
    assert table is not None and list(table["group"])[0] == "sex = Male, race = White"
    assert list(table["mark"]) == ["most favoured", "", "", "least favoured"]
    metrics = next(d.value for d in at.dataframe if "metric" in d.value.columns and "about" in d.value.columns)
    assert "disparate impact" in list(metrics["metric"])
    assert _charts(at) >= before + 2  # the group chart and the influence chart
    graphs = at.get("graphviz_chart")
    assert len(graphs) == 1 and '"sex" -> "education"' in graphs[0].proto.spec
    captions = " ".join(c.value for c in at.caption)
    assert "Favourable rate in each compound group" in captions
    assert "Each feature's contribution to statistical parity" in captions
    assert "The Bayesian network learned over the features" in captions


def test_a_result_of_another_engine_says_so_and_a_refused_engine_is_replaced_aloud(ricci_tree):
    """After a run, choosing another engine keeps the result on screen but says it was computed by the first; an
    engine that can no longer run (fvgm-like engines need a linear model; here: one whose check refuses the tree)
    is replaced by the default with a warning naming it, not silently."""
    at = ricci_tree
    offered = at.selectbox(key="audit_engine").options
    usable = [n for n in NEEDS_MODEL if engines.get(n).title in offered]
    at.selectbox(key="audit_engine").set_value(usable[0])
    _ok(at.run())
    at.button(key="audit_run").click()
    _ok(at.run())
    at.selectbox(key="audit_engine").set_value(engines.DEFAULT)
    _ok(at.run())
    assert any(f"computed by {engines.get(usable[0]).title}" in w.value for w in at.warning), \
        [w.value for w in at.warning]
    # an engine chosen with a logistic regression, then the model retrained as a tree that this engine refuses
    refused = [n for n in NEEDS_MODEL if engines.get(n).title not in offered]
    if refused:
        def train(kind):
            _ok(at.switch_page("pages/2_Model.py").run())
            at.selectbox(key="model_kind").set_value(kind)
            _ok(at.run())
            at.button(key="model_train").click()
            _ok(at.run())
            return _ok(at.switch_page("pages/4_Audit.py").run())

        train("logreg")
        at.selectbox(key="audit_engine").set_value(refused[0])
        _ok(at.run())
        train("tree")
        assert any(w.value.startswith(f"{engines.get(refused[0]).title} cannot run here any more")
                   for w in at.warning), [w.value for w in at.warning]
        assert at.selectbox(key="audit_engine").value != refused[0]
