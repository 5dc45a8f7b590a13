"""The Audit page with a population program (.fr): examples, live parse errors, the engines that fit, a run."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairaudit import engines
from fairaudit.programs.population import examples
from fairaudit.ui.options import option_key

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _population_page() -> AppTest:
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    _ok(at.switch_page("pages/4_Audit.py").run())
    at.radio(key="audit_source").set_value("population")
    return _ok(at.run())


def _run_button(at: AppTest):
    return at.button(key="audit_run")


def test_the_bundled_examples_parse_and_say_their_exact_answer():
    bundled = examples()
    assert [e.name for e in bundled][0] == "fig1_original.fr"
    for example in bundled:
        assert example.text.startswith("# ") and example.about and "def popModel" in example.text


def test_a_population_program_offers_the_engines_that_accept_it():
    """The picker lists the engines whose declarations accept a population program (none by name here)."""
    at = _population_page()
    fitting = [e for e in engines.all_engines() if "population" in e.requires + e.accepts]
    assert at.selectbox(key="audit_engine").options == [e.title for e in fitting]
    assert at.text_area(key="audit_program_editor").value == examples()[0].text  # Fig. 1, ready to run
    assert not _run_button(at).disabled
    # the engine's redeclared defaults are what its widgets show
    for engine in fitting:
        at.selectbox(key="audit_engine").set_value(engine.name)
        _ok(at.run())
        for name in ("stop", "time_budget"):
            key = option_key(engine.name, name)
            widget = at.checkbox(key=key) if engine.option(name).type is bool else at.number_input(key=key)
            assert widget.value == engine.option(name).default, (engine.name, name)
        assert "audit_where" not in [w.key for w in at.text_input]  # no rows to filter


def test_an_invalid_program_shows_its_line_and_column_and_disables_run():
    at = _population_page()
    broken = examples()[0].text.replace("gaussian(25, 100)", "gaussian(25, 100")
    at.text_area(key="audit_program_editor").input(broken)
    _ok(at.run())
    errors = [e.value for e in at.error]
    assert any("does not parse" in e and "line 4" in e and "column" in e for e in errors), errors
    assert _run_button(at).disabled
    # fixed again: Run is back
    at.text_area(key="audit_program_editor").input(examples()[0].text)
    _ok(at.run())
    assert not any("does not parse" in e.value for e in at.error)
    assert not _run_button(at).disabled


def test_an_unknown_function_is_refused_with_its_position_never_run():
    at = _population_page()
    at.text_area(key="audit_program_editor").input(
        "def popModel():\n    x = __import__('os')\n\ndef F():\n    fairnessTarget(x > 0)\n")
    _ok(at.run())
    assert any("line 2" in e.value for e in at.error)
    assert _run_button(at).disabled


def test_fig1_with_the_sound_engine_is_decided_unfair():
    """FairSquare's Fig. 1 (exact ratio 0.48412) at ε = 0.15: unfair, with sound bounds around the ratio; the tree
    and the ratio node's convergence plot are drawn."""
    at = _population_page()
    at.selectbox(key="audit_engine").set_value("fairsquare")
    _ok(at.run())
    assert at.number_input(key="audit_epsilon").value == pytest.approx(0.15)
    _run_button(at).click()
    _ok(at.run())
    result = at.session_state["result"]
    assert result.complete and result.verdict == "false"
    ratio = next(n for n in result.nodes if n["kind"] == "div")
    assert ratio["final"]["lo"] <= 0.48412 <= ratio["final"]["hi"]
    assert at.session_state["result_meta"]["data"] == "fig1_original.fr"
    assert len(at.get("vega_lite_chart")) + len(at.get("arrow_vega_lite_chart")) >= 2  # tree + plot


def test_switching_engines_and_sources_keeps_values():
    at = _population_page()
    at.selectbox(key="audit_engine").set_value("fairsquare")
    _ok(at.run())
    at.number_input(key=option_key("fairsquare", "time_budget")).set_value(30.0)
    at.number_input(key="audit_epsilon").set_value(0.2)
    edited = examples()[0].text.replace("colRank + 5", "colRank + 4")
    at.text_area(key="audit_program_editor").input(edited)
    _ok(at.run())
    at.selectbox(key="audit_engine").set_value("monitor")
    _ok(at.run())
    at.selectbox(key="audit_engine").set_value("fairsquare")
    _ok(at.run())
    assert at.number_input(key=option_key("fairsquare", "time_budget")).value == pytest.approx(30.0)
    # another page and back, and the dataset source and back
    _ok(at.switch_page("pages/5_Report.py").run())
    _ok(at.switch_page("pages/4_Audit.py").run())
    at.radio(key="audit_source").set_value("rows")
    _ok(at.run())
    at.radio(key="audit_source").set_value("population")
    _ok(at.run())
    assert at.selectbox(key="audit_engine").value == "fairsquare"
    assert at.number_input(key=option_key("fairsquare", "time_budget")).value == pytest.approx(30.0)
    assert at.number_input(key="audit_epsilon").value == pytest.approx(0.2)
    assert at.text_area(key="audit_program_editor").value == edited
    assert "(edited)" in "".join(c.value for c in at.caption)


def test_picking_another_example_loads_it():
    at = _population_page()
    at.selectbox(key="audit_program_example").set_value("toy_t3.fr")
    _ok(at.run())
    text = at.text_area(key="audit_program_editor").value
    assert "Toy T3" in text


def test_an_own_specification_over_the_programs_variables():
    """The analyst's spec over pred, sensitive and a program variable, audited soundly."""
    at = _population_page()
    at.selectbox(key="audit_engine").set_value("fairsquare")
    at.radio(key="audit_property").set_value("spec")
    _ok(at.run())
    at.text_area(key="audit_spec_editor").input("E[pred | sensitive and yExp > 10] > 0.01\n")
    _ok(at.run())
    assert not _run_button(at).disabled
    _run_button(at).click()
    _ok(at.run())
    _ok(at.run())  # the edited spec becomes the session's, then it is audited
    result = at.session_state["result"]
    assert result.verdict in ("true", "false"), result.verdict


def test_the_sampling_engine_audits_the_same_program():
    """The engine that samples the program (chosen by its declarations: it accepts a population but does not
    require one) runs on Fig. 1 too and agrees: unfair."""
    sampler = next(e for e in engines.all_engines() if "population" in e.accepts)
    at = _population_page()
    at.selectbox(key="audit_engine").set_value(sampler.name)
    _ok(at.run())
    at.checkbox(key=option_key(sampler.name, "stop")).check()
    _ok(at.run())
    _run_button(at).click()
    _ok(at.run())
    result = at.session_state["result"]
    assert result.verdict == "false"
    assert result.guarantee.kind == "probabilistic"


def test_a_program_generated_from_the_loaded_dataset_and_model():
    """With the demo's dataset and model loaded, "Generate" writes their population program into the editor,
    where it parses and can be edited; its name says where it came from."""
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.button(key="load_demo").click()
    _ok(at.run())
    _ok(at.switch_page("pages/4_Audit.py").run())
    at.radio(key="audit_source").set_value("population")
    _ok(at.run())
    at.radio(key="audit_program_structure").set_value("bn")
    at.button(key="audit_program_generate").click()
    _ok(at.run())
    text = at.text_area(key="audit_program_editor").value
    assert "generated from dataset 'adult'" in text and "def F():" in text
    assert not any("does not parse" in e.value for e in at.error)
    assert any("adult_bn.fr" in c.value and "parses" in c.value for c in at.caption)
    assert at.selectbox(key="audit_program_example").value is None  # no example is loaded now


def test_every_page_draws_a_population_result():
    """After a program's run, every page draws (the summary names the program, not an absent dataset)."""
    at = _population_page()
    at.selectbox(key="audit_engine").set_value("fairsquare")
    _ok(at.run())
    _run_button(at).click()
    _ok(at.run())
    for page in ("pages/0_Overview.py", "pages/1_Data.py", "pages/2_Model.py", "pages/3_Specification.py",
                 "pages/5_Report.py", "pages/4_Audit.py"):
        _ok(at.switch_page(page).run())
    _ok(at.switch_page("pages/0_Overview.py").run())
    assert any("fig1_original.fr" in m.value for m in at.markdown)
