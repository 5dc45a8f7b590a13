"""Every page under Streamlit's AppTest: no exception, key widgets present, the demo flow end to end."""
from __future__ import annotations

import re

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairaudit import engines
from fairaudit.ui.options import option_key

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["pages/0_Overview.py", "pages/1_Data.py", "pages/2_Model.py", "pages/3_Specification.py", "pages/4_Audit.py", "pages/5_Report.py"]
TIMEOUT = 180


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _charts(at: AppTest) -> int:
    return len(at.get("vega_lite_chart")) + len(at.get("arrow_vega_lite_chart"))


@pytest.fixture(scope="module")
def demo() -> AppTest:
    """The start page after "Load demo audit" (Adult + logreg + the parity spec, audited)."""
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.button(key="load_demo").click()
    return _ok(at.run())


def test_entry_page_fresh():
    """app.py is the entry point: st.navigation opens the Overview page by default."""
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    assert at.title[0].value == "fairaudit"
    assert at.button(key="load_demo").label == "Load demo audit"
    assert any("not run" in m.value for m in at.markdown)
    assert not at.success  # the "what next" hint appears only once there is a result


def test_navigation_registers_every_page():
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    for page, title in zip(PAGES, ["fairaudit", "Data", "Model", "Specification", "Audit", "Report"]):
        _ok(at.switch_page(page).run())
        assert at.title[0].value == title, page


@pytest.mark.parametrize("page", PAGES)
def test_pages_without_state(page):
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    _ok(at.switch_page(page).run())
    assert at.title, page


def test_demo_loads_everything(demo):
    s = demo.session_state
    assert s["current_dataset"].name == "adult"
    assert s["model"] is not None and s["model_info"]["kind"] == "logreg"
    assert "sex_parity" in s["spec_text"]
    result = s["result"]
    assert result is not None and result.verdict in ("true", "false", "unknown")
    assert s["result_meta"]["status"] == "finished"
    assert any("Verdict" in m.value for m in demo.markdown)
    # what to do next, with a link to the Audit page
    assert any("Open the Audit page" in m.value or "open the Audit page" in m.value for m in demo.success)
    # the verdict in the result's own words, and what its intervals mean under its guarantee
    assert any(result.summary in m.value for m in demo.markdown)
    assert any(result.headline[1:] in m.value for m in demo.markdown)
    meaning = result.guarantee.interval_meaning
    assert any(meaning[:1].upper() + meaning[1:] in c.value for c in demo.caption)


def test_data_page_after_demo(demo):
    _ok(demo.switch_page("pages/1_Data.py").run())
    assert demo.radio(key="data_source").value == "Built-in dataset"
    assert demo.selectbox(key="data_builtin").value == "adult"
    assert set(demo.multiselect(key="protected_adult").value) == {"sex", "race"}
    assert _charts(demo) >= 1
    # intersectional groups (sex × race)
    demo.checkbox(key="data_intersectional").check()
    _ok(demo.run())
    assert _charts(demo) >= 1
    demo.checkbox(key="data_intersectional").uncheck()
    _ok(demo.run())


def test_small_groups_warning():
    at = _ok(AppTest.from_file(str(ROOT / "pages/1_Data.py"), default_timeout=TIMEOUT).run())
    at.selectbox(key="data_builtin").set_value("ricci")
    _ok(at.run())
    assert any("Small groups" in w.value for w in at.warning)
    assert at.session_state["current_dataset"].name == "ricci"


def test_model_page_after_demo(demo, monkeypatch):
    _ok(demo.switch_page("pages/2_Model.py").run())
    assert demo.selectbox(key="model_kind").value == "logreg"
    assert _charts(demo) >= 1
    demo.radio(key="model_mode").set_value("Load a model file")
    _ok(demo.run())
    assert any("pickle and joblib files are refused" in c.value.lower() for c in demo.caption)
    # no path to type: an upload or the workspace's list (saving asks for a bare name, not a path)
    assert not [w for w in demo.text_input if re.search(r"path|file|folder|director", w.label, re.I)]

    def refuse(data, filename, *, trusted_types=()):
        from fairaudit.base.errors import ModelError
        raise ModelError(f"{filename} is not a model file fairaudit can read safely")

    monkeypatch.setattr("fairaudit.models.load_bytes", refuse, raising=False)
    demo.get("file_uploader")[0].set_value(("junk.skops", b"not a model", "application/octet-stream"))
    _ok(demo.run())
    assert any("junk.skops cannot be loaded" in e.value for e in demo.error), [e.value for e in demo.error]
    assert demo.session_state["model"] is not None  # the failed load kept the trained model
    demo.radio(key="model_mode").set_value("Train a model")
    _ok(demo.run())


def test_specification_page_feedback(demo):
    _ok(demo.switch_page("pages/3_Specification.py").run())
    assert any("OK" in s.value for s in demo.success)
    coloured = "Coloured by the verdicts of the last audit"
    assert any(coloured in c.value for c in demo.caption)  # the demo audited this very text
    good = demo.session_state["spec_text"]
    demo.text_area(key="spec_editor").input('E[pred | sex == "Male"] - E[pred | sex == "Female" < 0.1')
    _ok(demo.run())
    assert demo.error and "line 1" in demo.error[0].value
    assert demo.session_state["spec_text"] == good  # a broken edit does not replace the last good spec
    refined = good.replace("< 0.1", "< 0.2")
    demo.text_area(key="spec_editor").input(refined)
    _ok(demo.run())
    assert demo.session_state["spec_text"] == refined
    assert not any(coloured in c.value for c in demo.caption)  # not audited yet: no verdict colours
    assert len(demo.session_state["spec_history"]) >= 2
    assert demo.selectbox(key="spec_cmp_a") is not None


def test_audit_page_run_and_report(demo):
    _ok(demo.switch_page("pages/4_Audit.py").run())
    assert demo.selectbox(key="audit_engine").value == engines.DEFAULT
    assert demo.button(key="audit_run").label == "Run"
    assert demo.button(key="audit_stop_button").label == "Stop"
    before = demo.session_state["result"]
    demo.number_input(key=option_key("monitor", "delta")).set_value(0.1)
    demo.button(key="audit_run").click()
    _ok(demo.run())
    after = demo.session_state["result"]
    assert after is not before and after.options["delta"] == pytest.approx(0.1)
    assert _charts(demo) >= 2  # the tree and the convergence plot of the default node
    # the selected-node panel explains the default node's verdict in words
    assert any(m.value.startswith(("Violated:", "Certified:", "Undecided:")) for m in demo.markdown)
    _ok(demo.switch_page("pages/5_Report.py").run())
    assert demo.get("download_button"), "the JSON download button is missing"


def test_template_and_validation(demo):
    _ok(demo.switch_page("pages/3_Specification.py").run())
    assert demo.selectbox(key="spec_template").value == "demographic_parity"
    demo.button(key="spec_use_template").click()
    _ok(demo.run())
    text = demo.text_area(key="spec_editor").value
    assert "E[pred | sex ==" in text and "Demographic parity" in text
    # a column the dataset does not have: a validation error naming line and column
    demo.text_area(key="spec_editor").input('E[pred | gender == "F"] > 0.1')
    _ok(demo.run())
    assert any("line 1" in e.value and "gender" in e.value for e in demo.error), [e.value for e in demo.error]


def _history(at: AppTest) -> list[tuple[int, str | None, int | None]]:
    return [(h["version"], h["verdict"], h["stop_step"]) for h in at.session_state["spec_history"]]


def test_refinement_loop_on_audit_page():
    """Edit a threshold in the Audit page's spec box, press Run: two versions, each with its verdict."""
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.button(key="load_demo").click()
    _ok(at.run())
    _ok(at.switch_page("pages/4_Audit.py").run())
    text = at.text_area(key="audit_spec_editor").value
    assert "< 0.1" in text
    at.text_area(key="audit_spec_editor").input(text.replace("< 0.1", "< 0.2"))
    at.button(key="audit_run").click()
    _ok(at.run())
    history = _history(at)
    assert [v for v, _, _ in history] == [1, 2]
    assert history[0][1] == "false" and history[0][2] is not None  # v1: violated, decided at a step
    assert history[1][1] in ("true", "false", "unknown")  # v2 audited too
    assert "< 0.2" in at.session_state["spec_text"]
    assert at.session_state["result_meta"]["spec"] == at.session_state["spec_text"]
    table = at.dataframe[-1].value
    assert list(table["version"]) == ["v2", "v1"]
    assert list(table["change"])[0] == "sex_parity 0.1 → 0.2"
    assert all(v != "not run" for v in table["verdict"])
    # the Specification page shows the same text and the same history
    _ok(at.switch_page("pages/3_Specification.py").run())
    assert "< 0.2" in at.text_area(key="spec_editor").value.split("sex_parity")[1].splitlines()[0]
    assert len(at.dataframe[-1].value) == 2


def test_refinement_loop_from_specification_page():
    """Edit on the Specification page, press "Run the audit on this version": the Audit page runs it."""
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.button(key="load_demo").click()
    _ok(at.run())
    _ok(at.switch_page("pages/3_Specification.py").run())
    text = at.text_area(key="spec_editor").value
    at.text_area(key="spec_editor").input(text.replace("< 0.1", "< 0.25").replace("< 0.2", "< 0.3"))
    _ok(at.run())
    at.button(key="spec_run").click()
    _ok(at.run())
    assert at.title[0].value == "Audit"
    history = _history(at)
    assert len(history) == 2 and all(verdict is not None for _, verdict, _ in history)
    assert history[1][1] == "true" and history[1][2] is not None  # 0.25 / 0.3 are certified, at some step


def test_audit_page_rejects_a_broken_edit(demo):
    _ok(demo.switch_page("pages/4_Audit.py").run())
    good = demo.session_state["spec_text"]
    before = demo.session_state["result"]
    demo.text_area(key="audit_spec_editor").input("E[pred | sex == ] < 0.1")
    _ok(demo.run())
    assert demo.error and "line 1" in demo.error[0].value
    assert demo.button(key="audit_run").disabled  # Run stays disabled while the spec has errors
    assert demo.session_state["spec_text"] == good and demo.session_state["result"] is before
    demo.text_area(key="audit_spec_editor").input(good)
    _ok(demo.run())


def test_spec_file_headers_set_the_row_filter_and_delta():
    """Loading a case-study file (its '# where:' and '# delta:' headers) fills in the Audit page's row filter
    and Δ; the run streams only the matching rows; a bad filter is an error and disables Run."""
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.button(key="load_demo").click()
    _ok(at.run())
    _ok(at.switch_page("pages/3_Specification.py").run())
    at.selectbox(key="spec_lib_pick").select(("bundled", "avoir_adult_refined"))
    at.button(key="spec_lib_load").click()
    _ok(at.run())
    _ok(at.switch_page("pages/4_Audit.py").run())
    assert at.text_input(key="audit_where").value == 'workclass == "Federal-gov"'
    assert at.number_input(key=option_key("monitor", "delta")).value == pytest.approx(0.15)
    assert any("Taken from the specification's headers" in c.value for c in at.caption)
    at.button(key="audit_run").click()
    _ok(at.run())
    result = at.session_state["result"]
    # the demo's model is audited on the rows it did not train on: the federal-government ones among them
    assert result.rows["policy"] == "held-out" and 0 < result.steps < 960
    assert result.options["where"] == 'workclass == "Federal-gov"'
    assert result.options["delta"] == pytest.approx(0.15)
    at.text_input(key="audit_where").input('workclas == "Federal-gov"')
    _ok(at.run())
    assert any("Row filter" in e.value and "workclass" in e.value for e in at.error)
    assert at.button(key="audit_run").disabled


# ---------------------------------------------------------------------------------------------- issue 11


def _demo() -> AppTest:
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.button(key="load_demo").click()
    return _ok(at.run())


def test_a_spec_edit_survives_a_visit_to_the_audit_page_after_the_demo():
    """#10: type a new spec after "Load demo audit", go to Audit and back: the edit is still there."""
    at = _demo()
    _ok(at.switch_page("pages/3_Specification.py").run())
    mine = 'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.3\n'
    at.text_area(key="spec_editor").input(mine)
    _ok(at.run())
    assert any("OK" in s.value for s in at.success)
    _ok(at.switch_page("pages/4_Audit.py").run())
    assert at.text_area(key="audit_spec_editor").value == mine
    _ok(at.switch_page("pages/3_Specification.py").run())
    assert at.text_area(key="spec_editor").value == mine
    assert at.session_state["spec_text"] == mine
    # a text with an error is kept too (the current spec stays the last good one)
    at.text_area(key="spec_editor").input(mine + "and (")
    _ok(at.run())
    _ok(at.switch_page("pages/0_Overview.py").run())
    _ok(at.switch_page("pages/3_Specification.py").run())
    assert at.text_area(key="spec_editor").value == mine + "and (" and at.session_state["spec_text"] == mine


def test_the_selection_follows_its_node_into_a_new_run():
    """#11: select n1 (sex_parity), change the spec so that n1 is another node, Run: the selection is the
    sex_parity node of the new tree, never the new n1."""
    at = _demo()
    _ok(at.switch_page("pages/4_Audit.py").run())
    nodes = at.session_state["result"].nodes
    assert next(n for n in nodes if n["id"] == "n1").get("name") == "sex_parity"
    at.session_state["selected_nodes"] = ["n1"]
    _ok(at.run())
    text = at.text_area(key="audit_spec_editor").value
    new = 'fair_first: E[pred | sex == "Female"] > 0.01\n' + text
    at.text_area(key="audit_spec_editor").input(new)
    at.button(key="audit_run").click()
    _ok(at.run())
    nodes = at.session_state["result"].nodes
    by_id = {n["id"]: n for n in nodes}
    assert by_id["n1"].get("name") != "sex_parity"  # n1 is another node now
    selected = at.session_state["selected_nodes"]
    assert [by_id[i].get("name") for i in selected] == ["sex_parity"]


def test_switching_the_dataset_asks_first_and_keeps_the_audit_in_the_history():
    """#14: choosing another dataset asks before discarding the model and the result."""
    at = _demo()
    model, result = at.session_state["model"], at.session_state["result"]
    _ok(at.switch_page("pages/1_Data.py").run())
    at.selectbox(key="data_builtin").set_value("compas")
    _ok(at.run())
    assert any("discards" in w.value and "compas" in w.value for w in at.warning)
    assert at.session_state["current_dataset"].name == "adult" and at.session_state["model"] is model
    at.button(key="data_keep").click()
    _ok(at.run())
    _ok(at.run())
    assert at.selectbox(key="data_builtin").value == "adult" and at.session_state["result"] is result
    at.selectbox(key="data_builtin").set_value("compas")
    _ok(at.run())
    at.button(key="data_confirm_switch").click()
    _ok(at.run())
    assert at.session_state["current_dataset"].name == "compas" and at.session_state["model"] is None
    history = at.session_state["spec_history"]
    assert any(h["verdict"] is not None and h.get("audited_on", "").startswith("adult") for h in history)


def test_a_model_for_other_columns_is_refused(monkeypatch):
    """#14: loading a COMPAS model while Adult is the dataset is an error, not a green "Loaded"."""
    from fairaudit import data, models

    compas_model = models.train(data.load("compas"), "logreg", seed=0)
    monkeypatch.setattr("fairaudit.models.load_bytes", lambda data, filename, *, trusted_types=(): compas_model,
                        raising=False)
    at = _demo()
    before = at.session_state["model"]
    _ok(at.switch_page("pages/2_Model.py").run())
    at.radio(key="model_mode").set_value("Load a model file")
    _ok(at.run())
    at.get("file_uploader")[0].set_value(("compas_model.skops", b"bytes", "application/octet-stream"))
    _ok(at.run())
    assert any("does not have" in e.value and "adult" in e.value for e in at.error), [e.value for e in at.error]
    assert not any("Loaded" in s.value for s in at.success)
    assert at.session_state["model"] is before


def test_the_decision_input_says_true_is_favourable():
    at = _demo()
    _ok(at.switch_page("pages/2_Model.py").run())
    at.radio(key="model_mode").set_value("Decisions from a column or expression")
    _ok(at.run())
    label = at.text_input(key="model_expr").label
    assert "true = favourable" in label and 'income == ">50K"' in label  # from Adult's schema
    assert any("decile_score <= 4" in c.value for c in at.caption)
    assert not any("decile_score > 4" in m.value for m in list(at.caption) + list(at.markdown))


def test_a_library_specs_decision_header_is_offered_and_applied_in_one_click():
    """#15: avoir_adult_refined.spec's '# decision:' header is offered visibly; one click makes the audit
    certify it true, as the README says."""
    at = _demo()
    _ok(at.switch_page("pages/3_Specification.py").run())
    at.selectbox(key="spec_lib_pick").select(("bundled", "avoir_adult_refined"))
    at.button(key="spec_lib_load").click()
    _ok(at.run())
    assert any('income == ">50K"' in w.value and "# decision:" in w.value for w in at.warning)
    _ok(at.switch_page("pages/4_Audit.py").run())
    assert any('income == ">50K"' in w.value for w in at.warning)  # visible on the Audit page too
    at.button(key="audit_use_decision").click()
    _ok(at.run())
    assert at.session_state["model"].expression == 'income == ">50K"'
    assert any("now uses the decisions" in s.value for s in at.success)
    at.button(key="audit_run").click()
    _ok(at.run())
    assert at.session_state["result"].verdict == "true"


class _BrokenModel:
    kind = "broken"
    feature_names = ["age"]
    params: dict = {}
    metrics: dict = {}

    def predict(self, frame):
        raise RuntimeError("the model exploded\nTraceback (most recent call last): ...")

    def score(self, frame):
        raise RuntimeError("the model exploded")

    def describe(self):
        return "a broken model"


def test_a_run_never_shows_a_traceback():
    at = _demo()
    _ok(at.switch_page("pages/4_Audit.py").run())
    at.session_state["model"] = _BrokenModel()
    _ok(at.run())  # the decisions are computed before Run (the engines' checks need them): the error shows now
    assert at.button(key="audit_run").disabled
    errors = [e.value for e in at.error]
    assert any("internal error: RuntimeError: the model exploded" in e for e in errors), errors
    assert not any("Traceback" in e for e in errors)


def test_audit_page_shows_rows_assumption_and_warnings_and_defaults_to_shuffle():
    from dataclasses import replace

    at = _demo()
    _ok(at.switch_page("pages/4_Audit.py").run())
    assert at.selectbox(key=option_key("monitor", "order")).value == "shuffle"
    assert not at.number_input(key=option_key("monitor", "seed")).disabled
    result = at.session_state["result"]
    result.rows = {"text": "8,141 held-out rows of adult (not used to train the model)"}
    result.guarantee = replace(result.guarantee, assumes="the rows arrive in random order")
    result.warnings = ["the verdict flipped after it was decided"]
    _ok(at.run())
    assert any("8,141 held-out rows of adult" in m.value for m in at.markdown)
    assert any("random order" in m.value for m in at.markdown)
    assert any("the verdict flipped after it was decided" in w.value for w in at.warning)


# ---------------------------------------------------------------------------------------------- issue 13


def _option_keys(at: AppTest) -> set[str]:
    widgets = list(at.number_input) + list(at.selectbox) + list(at.checkbox) + list(at.text_input)
    return {w.key for w in widgets if w.key and w.key.startswith("audit_opt_")}


def test_the_audit_page_draws_the_chosen_engines_widgets_only():
    """Each engine of the registry, chosen in the picker, gets exactly the widgets of its declarations (its own
    options and those of every run; an engine without options of its own gets only the latter), labelled by
    them; switching engines keeps each engine's values, and so does leaving the page."""
    at = _demo()
    _ok(at.switch_page("pages/4_Audit.py").run())
    row_engines = [e for e in engines.all_engines() if "dataset" in e.requires]  # with a dataset loaded
    assert at.selectbox(key="audit_engine").options == [e.title for e in row_engines]
    for engine in row_engines:
        at.selectbox(key="audit_engine").set_value(engine.name)
        _ok(at.run())
        assert _option_keys(at) == {option_key(engine.name, o.name) for o in engine.all_options()}, engine.name
        labels = {w.label for w in list(at.number_input) + list(at.selectbox) + list(at.checkbox)}
        assert {o.title for o in engine.all_options()} <= labels
        assert any(engine.summary[1:40] in c.value for c in at.caption)
    at.selectbox(key="audit_engine").set_value("dataset")  # the loop may end on another engine
    _ok(at.run())
    dataset_engine = engines.get("dataset")
    assert {o.name for o in dataset_engine.options} == {"interval", "delta"}  # the one-look intervals
    assert _option_keys(at) == {option_key("dataset", o.name) for o in dataset_engine.all_options()}
    # the monitor's Δ survives a visit to the other engine and to another page
    at.selectbox(key="audit_engine").set_value("monitor")
    _ok(at.run())
    at.number_input(key=option_key("monitor", "delta")).set_value(0.12)
    _ok(at.run())
    at.selectbox(key="audit_engine").set_value("dataset")
    _ok(at.run())
    at.selectbox(key="audit_engine").set_value("monitor")
    _ok(at.run())
    assert at.number_input(key=option_key("monitor", "delta")).value == pytest.approx(0.12)
    _ok(at.switch_page("pages/5_Report.py").run())
    _ok(at.switch_page("pages/4_Audit.py").run())
    assert at.selectbox(key="audit_engine").value == "monitor"
    assert at.number_input(key=option_key("monitor", "delta")).value == pytest.approx(0.12)


def test_a_run_with_the_exact_engine_says_so_and_shows_both():
    """The dataset engine's run is worded by its guarantee (exact, on these rows; no probability); and the
    monitor's run can show the exact values beside its intervals, part by part."""
    at = _demo()
    _ok(at.switch_page("pages/4_Audit.py").run())
    at.selectbox(key="audit_engine").set_value("dataset")
    _ok(at.run())
    at.button(key="audit_run").click()
    _ok(at.run())
    result = at.session_state["result"]
    assert result.engine == "dataset" and result.guarantee.kind == "exact"
    verdict = next(m.value for m in at.markdown if m.value.startswith("**Verdict:**"))
    assert result.summary in verdict and "exactly on these 8,141 rows" in verdict
    assert "probability" not in verdict
    assert any("Each value is computed exactly" in c.value for c in at.caption)
    assert any("The value is computed exactly" in m.value for m in at.markdown)  # the node panel
    history = at.session_state["spec_history"]
    assert history[-1]["audited_on"].endswith(engines.get("dataset").title)
    # back to the default engine, with the exact values beside its intervals
    at.selectbox(key="audit_engine").set_value("monitor")
    _ok(at.run())
    at.checkbox(key="audit_also_dataset").check()
    at.button(key="audit_run").click()
    _ok(at.run())
    assert at.session_state["result"].engine == "monitor"
    table = next(d.value for d in at.dataframe if "part" in d.value.columns)
    columns = list(table.columns)
    assert columns[1].startswith(engines.get("monitor").title)
    assert columns[2].startswith(engines.get("dataset").title)
    assert "sex_parity" in list(table["part"])
    assert any("exactly on these 8,141 rows" in m.value for m in at.markdown)


def test_header_errors_are_shown_and_stop_the_run():
    """A misspelt header or a value its option refuses is an error on the Specification and Audit pages (it
    would otherwise be silently ignored), not a run with other options."""
    at = _demo()
    _ok(at.switch_page("pages/3_Specification.py").run())
    good = at.session_state["spec_text"]
    at.text_area(key="spec_editor").input("# delt: 0.2\n" + good)
    _ok(at.run())
    assert any("delt" in e.value and "did you mean" in e.value for e in at.error), [e.value for e in at.error]
    assert at.session_state["spec_text"] == good  # not accepted as the current specification
    # a header written straight into the Audit page's current spec (e.g. a version from the history)
    at.session_state["spec_text"] = "# engine: nosuch\n" + good
    _ok(at.switch_page("pages/4_Audit.py").run())
    assert any("headers" in e.value and "nosuch" in e.value for e in at.error), [e.value for e in at.error]
    assert at.button(key="audit_run").disabled
    # an engine header picks the engine
    at.session_state["spec_text"] = "# engine: dataset\n" + good
    _ok(at.run())
    assert at.selectbox(key="audit_engine").value == "dataset"
    assert not at.button(key="audit_run").disabled
