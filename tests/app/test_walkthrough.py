"""Defects found by walking the dashboard as a newcomer (each test fails on the code before its fix)."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _demo() -> AppTest:
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.button(key="load_demo").click()
    return _ok(at.run())


def test_the_node_selected_on_the_audit_page_survives_a_visit_to_the_report():
    """A node clicked in the tree (the chart's event says so), then Report and back: the chart is a fresh widget
    with no event, which is not a click that clears the selection (the Report's PDF used it too)."""
    at = _demo()
    _ok(at.switch_page("pages/4_Audit.py").run())
    assert at.session_state["selected_nodes"] == []  # nothing clicked yet: the critical comparison is shown
    _ok(at.switch_page("pages/5_Report.py").run())
    # what a click on race_parity left behind (AppTest cannot click a chart): the selection and the chart's event
    at.session_state["selected_nodes"] = ["n6"]
    at.session_state["tree_last_event"] = ["n6"]
    _ok(at.switch_page("pages/4_Audit.py").run())
    assert at.session_state["selected_nodes"] == ["n6"]
    assert not any("Showing the most critical comparison" in c.value for c in at.caption)


def test_another_protected_attribute_in_a_template_starts_from_its_own_groups():
    """Specification page, demographic parity: sex (Female, Male) then race — the groups used to come up empty,
    with a 'parameter groups is required' message instead of a template."""
    at = _demo()
    _ok(at.switch_page("pages/3_Specification.py").run())
    assert at.selectbox(key="spec_template").value == "demographic_parity"
    at.selectbox(key="tpl_demographic_parity_attribute").select("race")
    _ok(at.run())
    groups = [m for m in at.multiselect if m.label.startswith("Groups")]
    assert len(groups) == 1 and len(groups[0].value) == 2, [g.value for g in groups]
    assert not any("is required" in i.value for i in at.info)
    at.button(key="spec_use_template").click()
    _ok(at.run())
    assert "E[pred | race ==" in at.text_area(key="spec_editor").value


def test_the_model_page_says_why_train_is_greyed_out_without_a_label():
    """An uploaded CSV has no label until one is chosen: the page said "label `None`" and showed a disabled Train
    button with no reason."""
    from fairaudit.data import from_csv
    from fairaudit.data.builtin import load

    frame = load("compas").frame.head(300)
    ds = from_csv(frame.to_csv(index=False).encode("utf-8"), name="small.csv")
    assert ds.schema.label is None
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.session_state["current_dataset"] = ds
    _ok(at.switch_page("pages/2_Model.py").run())
    assert at.button(key="model_train").disabled
    assert any("Training needs a label" in i.value for i in at.info), [i.value for i in at.info]
    assert not any("`None`" in c.value for c in at.caption)


def test_a_row_filter_that_matches_nothing_is_said_in_the_dashboards_words():
    """The message named the CLI's --where flag on the Audit page, whose field is "Only rows where"."""
    import pytest

    import fairaudit
    from fairaudit.base.errors import FairauditError

    with pytest.raises(FairauditError, match=r"^no audited row matches the row filter 'age > 200'$"):
        fairaudit.audit("adult", "E[pred] < 0.5", pred="age > 40", where="age > 200")


def test_a_suggested_threshold_run_on_the_same_rows_carries_the_caveat_in_its_result():
    """Apply the suggestion, Run: the same rows certify the new threshold, and the result itself (so the Report,
    the PDF and the JSON too) says the threshold was chosen from these data."""
    from fairaudit.core import suggest
    from fairaudit.report import content
    from fairaudit.core.trace import AuditResult
    from fairaudit.ui import history

    at = _demo()
    _ok(at.switch_page("pages/4_Audit.py").run())
    text = at.text_area(key="audit_spec_editor").value
    at.text_area(key="audit_spec_editor").input(text.replace("< 0.1", "< 0.17").replace("< 0.2", "< 0.3"))
    at.button(key="audit_run").click()
    _ok(at.run())
    (found,) = suggest.suggestions(at.session_state["result"])
    assert not any(w.startswith("This threshold was suggested") for w in at.session_state["result"].warnings)
    at.button(key=f"suggest_certify_{found.node_id}").click()
    _ok(at.run())
    at.button(key="audit_run").click()
    _ok(at.run())
    result = at.session_state["result"]
    assert result.verdict == "true" and result.claim.status == "exploratory"  # a hypothesis, not a certificate
    assert history.version_of(at.session_state["spec_history"], text.replace("< 0.1", "< 0.17")
                              .replace("< 0.2", "< 0.3")) is not None
    assert content.headline(result)["word"] == "EXPLORATORY"
    again = AuditResult.from_json(result.to_json())
    assert again.claim.status == "exploratory" and again.exploratory == result.exploratory
    # said once, by the headline: no second banner repeats it
    assert not any(w.value.startswith("This threshold was suggested") for w in at.warning)


def test_logged_decisions_of_several_classes_walk_from_the_model_page_to_a_checked_spec():
    """COMPAS's three-class score_text as the decision (issue 46): the Model page crashed on its yes/no metrics and
    the editor refused pred == "High" as if pred were 0/1. Now the Model page shows each class's share per group, the
    starting spec and the template picker speak of a class's rate, and the editor checks pred against the classes."""
    from fairaudit.data.builtin import load

    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.session_state["current_dataset"] = load("compas")
    _ok(at.switch_page("pages/2_Model.py").run())
    source = [r for r in at.radio if "Decisions from a column or expression" in r.options]
    if source:
        source[0].set_value("Decisions from a column or expression")
        _ok(at.run())
    at.text_input(key="model_expr").input("score_text")
    _ok(at.run())
    at.button(key="model_use_expr").click()
    _ok(at.run())
    assert at.session_state["model"].classes == ("High", "Low", "Medium")
    assert any("share of each class" in c.value for c in at.caption), [c.value for c in at.caption]
    _ok(at.switch_page("pages/3_Specification.py").run())
    assert at.selectbox(key="spec_template").value == "class_rate_gap"
    assert 'E[pred == "High"' in at.session_state["spec_text"]
    at.text_area(key="spec_editor").input('E[pred == "Hihg" | sex == "Male"] > 0.3')
    _ok(at.run())
    shown = " ".join(e.value for e in at.error) + " ".join(m.value for m in at.markdown)
    assert 'did you mean "High"' in shown
