"""Issue 44, item 8: the 80 % rule template on the Specification page selects every group of the attribute and
compares each with the most-selected one (named from the session model's decisions), not two groups pairwise."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_eighty_percent_template_selects_every_race_and_the_most_selected():
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.button(key="load_demo").click()
    _ok(at.run())
    _ok(at.switch_page("pages/3_Specification.py").run())
    at.selectbox(key="spec_template").select("disparate_impact")
    _ok(at.run())
    at.selectbox(key="tpl_disparate_impact_attribute").select("race")
    _ok(at.run())
    groups = at.multiselect(key="tpl_disparate_impact_groups_race")
    from fairaudit.ui import state

    dataset, model = at.session_state[state.DATASET], at.session_state[state.MODEL]
    values = sorted(dataset.frame["race"].dropna().unique().tolist(), key=str)
    assert list(groups.value) == values and len(values) >= 4  # every group, not the first two
    rates = dataset.frame.assign(d=model.predict(dataset.frame)).groupby("race")["d"].mean()
    reference = [s for s in at.selectbox if s.label == "Most-selected group (the reference)"]
    assert reference and reference[0].value == rates.idxmax()  # the model's most-selected race
    best = rates.idxmax()
    code = [c.value for c in at.code if "/ E[pred" in c.value][0]
    assert code.count(f' / E[pred | race == "{best}"] >= 0.8') == len(values) - 1
    assert code.count(" / E[pred") == len(values) - 1  # each against the most-selected, not every pair
