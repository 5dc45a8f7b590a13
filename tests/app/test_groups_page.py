"""The "Groups" page (issue 31): a scan of the session's dataset and decisions, cached by all its inputs; the
guarantee in a sentence; a selected cell's one-click specification appended to the one the Audit page audits."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from fairaudit import data, models
from fairaudit.subgroups.scan import scan
from fairaudit.ui import groups

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180
PRED = 'income == ">50K"'


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_spec_line_and_append():
    result = scan("adult", ["sex", "race"], pred=PRED, depth=2, mode="exact")
    cell = result.cell("sex=Female|race=Black")
    line = groups.spec_line(result, cell)
    assert line == ('scan_female_black: E[pred | sex == "Female" and race == "Black"] / '
                    'E[pred | sex == "Male" and race == "Asian-Pac-Islander"] >= 0.8')
    assert groups.spec_line(result, result.cell(cell.reference)) is None  # the reference has no ratio spec
    text = groups.append_spec("a: E[pred] < 1\n", line)
    assert text == f"a: E[pred] < 1\n{line}\n"
    assert groups.append_spec(text, line) is None  # already there
    assert groups.append_spec("", line) == f"{line}\n"


def test_first_cell_and_its_title():
    """Item 6: the lowest impact ratio certified below first; nothing certified below → the lowest ratio of any cell
    (never a reference), named as sentences name it."""
    import copy

    result = scan("adult", ["sex", "race"], pred=PRED, depth=2, mode="exact")
    def ratio(c):
        return c.impact_ratio.estimate

    assert groups.first_cell(result) == min(result.certified_below(), key=ratio).id  # the lowest ratio below
    none_below = copy.deepcopy(result)
    for c in none_below.cells:
        if c.flag == "certified_below":
            c.flag = "undecided"
    first = none_below.cell(groups.first_cell(none_below))
    assert ratio(first) == min(ratio(c) for c in none_below.cells if not c.is_reference and c.impact_ratio is not None)
    assert not first.is_reference and first.id != none_below.tables[0].cells[0].id
    assert groups.cell_title(result, "sex=Female|race=Black") == "sex = Female and race = Black"
    assert groups.cell_title(result, "sex=Female") == "sex = Female"


def test_scan_key_changes_with_every_input():
    base = dict(dataset_key=("adult", 1), decisions=("m", 1), protected=["sex"], bins={}, depth=2, delta=0.05,
                mode="anytime", rate="selection")
    key = groups.scan_key(**base)
    for name, value in (("dataset_key", ("adult", 2)), ("decisions", ("m", 2)), ("protected", ["race"]),
                        ("bins", {"age": 4}), ("depth", 1), ("delta", 0.1), ("mode", "exact")):
        assert groups.scan_key(**{**base, name: value}) != key, name
    assert groups.scan_key(**base) == key


def test_groups_page_scans_and_adds_a_spec():
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    _ok(at.switch_page("pages/6_Groups.py").run())
    assert any("choose a dataset" in i.value for i in at.info)
    ds = data.load("adult")
    at.session_state["current_dataset"] = ds
    at.session_state["dataset_key"] = ("adult", len(ds.frame), ds.rows_hash)
    at.session_state["model"] = models.from_expression(PRED, ds)
    at.session_state["model_info"] = {"source": "expression", "kind": "expression", "expression": PRED,
                                      "describe": PRED, "dataset_key": at.session_state["dataset_key"]}
    at.session_state["spec_text"] = 'sex_parity: E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1\n'
    _ok(at.run())
    assert at.multiselect(key="groups_protected").value == ["sex", "race"]
    at.button(key="groups_run").click()
    _ok(at.run())
    assert any("Guarantee" in i.value for i in at.info)
    assert len(at.session_state["groups_scans"]) == 1
    assert at.selectbox(key="groups_cell_box").value == "sex=Female|race=Black"  # the worst cell first
    finding = " ".join(m.value for m in at.markdown)
    assert "sex = Female and race = Black" in finding and "estimated below 4/5" in finding  # items 1, 4
    captions = " ".join(c.value for c in at.caption)
    assert "hold for all" in captions and "may decide what the scan leaves undecided" in captions  # item 7
    at.button(key="groups_add_spec").click()
    _ok(at.run())
    spec = at.session_state["spec_text"]
    assert spec.startswith("sex_parity:") and 'scan_female_black: E[pred | sex == "Female" and race == "Black"]' in spec
    _ok(at.switch_page("pages/4_Audit.py").run())
    assert "scan_female_black" in at.text_area(key="audit_spec_editor").value
    _ok(at.switch_page("pages/6_Groups.py").run())  # back: the cached scan is shown without a new run
    assert len(at.session_state["groups_scans"]) == 1
    assert any("Guarantee" in i.value for i in at.info)
