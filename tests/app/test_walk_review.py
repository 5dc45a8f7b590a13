"""Defects found by walking the dashboard as a newcomer (review-ui; each test fails on the code before its fix):
a value or column typo in the editor gets its caret, on screen however long the line; the Audit page says the
Specification page's text has errors instead of asking for a specification; the Report's summary shows the
specification that was audited, not an edit made since."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from fairaudit.ui import flows
from fairaudit.ui.logic import DEMO_SPEC
from tests.app.test_walkthrough import ROOT, TIMEOUT, _demo, _ok

TYPO = ('race_gap: E[pred | race == "African-American"] - E[pred | race == "Caucasion"] > -0.1\n'
        'women: E[pred | sexx == "Female"] >= 0.3')


def test_a_typo_gets_a_caret_under_it_that_stays_on_screen():
    at = _demo()
    _ok(at.switch_page("pages/3_Specification.py").run())
    at.text_area(key="spec_editor").input(TYPO)
    _ok(at.run())
    errors = [e.value for e in at.error]
    value = next(e for e in errors if "Caucasion" in e)
    column = next(e for e in errors if "sexx" in e)
    assert 'women: E[pred | sexx == "Female"] >= 0.3\n                ^^^^' in column, column
    source, caret = value.split("```\n")[1].split("\n")[:2]  # the line cut around the token, the caret under it
    assert len(source) <= flows.CARET_WIDTH + 2 and source.startswith("…")
    assert source[caret.index("^"):].startswith('"Caucasion"'), (source, caret)
    assert value.count("never takes the value") == 1  # said once, above its source line


def test_the_audit_page_says_the_specification_has_errors_not_that_there_is_none():
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    _ok(at.switch_page("pages/3_Specification.py").run())
    at.text_area(key="spec_editor").input('E[pred | sex = "Female"] >= 0.3')  # '=' for '=='
    _ok(at.run())
    assert at.session_state["spec_text"] == ""
    _ok(at.switch_page("pages/4_Audit.py").run())
    assert any("has errors" in w.value for w in at.warning), [w.value for w in at.warning]
    assert not any("a specification (Specification page)" in i.value for i in at.info), [i.value for i in at.info]
    at = _demo()  # a valid version audited, then an edit with errors: Run audits the version that checked
    _ok(at.switch_page("pages/3_Specification.py").run())
    at.text_area(key="spec_editor").input(DEMO_SPEC.replace("< 0.1", "< 0.1)"))
    _ok(at.run())
    _ok(at.switch_page("pages/4_Audit.py").run())
    assert any("Run audits the last version that checked" in w.value for w in at.warning)


def test_the_reports_summary_shows_the_audited_specification():
    at = _demo()
    edited = DEMO_SPEC.replace("< 0.1", "< 0.15")
    _ok(at.switch_page("pages/3_Specification.py").run())
    at.text_area(key="spec_editor").input(edited)
    _ok(at.run())
    assert at.session_state["spec_text"] == edited  # the edit checked: it is the current specification
    _ok(at.switch_page("pages/5_Report.py").run())
    shown = [c.value for c in at.code]
    assert DEMO_SPEC.strip() in shown and edited.strip() not in shown, shown
    assert any("edited since this audit" in c.value for c in at.caption)


def test_with_every_comparison_certified_the_closest_to_its_threshold_is_plotted():
    """Not the root (whose plot is a bar of verdicts): the caption says "the most critical comparison"."""
    from fairaudit.ui import selection

    nodes = [{"id": "n0", "kind": "and", "final": {"verdict": "true"}},
             {"id": "n1", "kind": "cmp", "final": {"verdict": "true", "estimate": -0.2}},
             {"id": "n2", "kind": "cmp", "final": {"verdict": "true", "estimate": 0.05}},
             {"id": "n3", "kind": "cmp", "final": {"verdict": "true", "estimate": None}}]
    assert selection.default_selection(nodes) == ["n2"]
    assert selection.default_selection(nodes[:1] + nodes[3:]) == ["n0"]


def test_new_decisions_say_the_result_was_set_aside():
    """The demo's result, then decisions from an expression on the Model page: the result no longer applies and
    went without a word (the Report then said "Run an audit first")."""
    at = _demo()
    _ok(at.switch_page("pages/2_Model.py").run())
    at.radio(key="model_mode").set_value("Decisions from a column or expression")
    _ok(at.run())
    at.text_input(key="model_expr").input("hours_per_week < 40")
    _ok(at.run())
    at.button(key="model_use_expr").click()
    _ok(at.run())
    assert at.session_state["result"] is None
    said = [i.value for i in at.info if "set aside" in i.value]
    assert said and "(violated)" in said[0] and "version history" in said[0], [i.value for i in at.info]
    _ok(at.run())
    assert not any("set aside" in i.value for i in at.info)  # said once
