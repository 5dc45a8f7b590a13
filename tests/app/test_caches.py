"""The dashboard's caches (issue 30: a page reruns on every click, so charts and spec checks are kept) never show a
stale result: a chart is kept per result, dataset or model object, a spec check per text and dataset."""
from __future__ import annotations

from pathlib import Path

import altair as alt
import pandas as pd
from streamlit.testing.v1 import AppTest

from fairaudit import data
from fairaudit.ui import charts, flows

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _tree_specs(at: AppTest) -> list[tuple[tuple, dict]]:
    return [(owners, spec) for what, (owners, spec) in at.session_state[charts.CACHE].items() if what[0] == "tree"]


def test_a_changed_specification_after_a_cached_run_gets_its_own_verdict_and_tree():
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.button(key="load_demo").click()
    _ok(at.run())
    _ok(at.switch_page("pages/4_Audit.py").run())
    _ok(at.run())  # a rerun (a click elsewhere): the tree comes from the cache
    first = at.session_state["result"]
    assert first.verdict == "false"  # the demo: sex parity violated at 0.1
    [(owners, spec)] = _tree_specs(at)
    assert owners == (first,) and "0.47" not in repr(spec)  # (its data: Arrow bytes, the labels readable)

    editor = at.text_area(key="audit_spec_editor")
    editor.set_value(editor.value.replace("< 0.1", "< 0.47").replace("< 0.2", "< 0.47"))
    at.button(key="audit_run").click()
    _ok(at.run())
    second = at.session_state["result"]
    assert second is not first and second.verdict == "true"  # a gap of ~0.17 is below 0.47: certified
    trees = _tree_specs(at)
    assert [owners for owners, _ in trees] == [(second,)]  # the old result's tree was replaced, not reused
    assert "0.47" in repr(trees[0][1])
    assert any("certified" in m.value.lower() for m in at.markdown if m.value.startswith("**Verdict:**"))


def test_a_chart_is_rebuilt_for_another_object_and_reused_for_the_same():
    built = []
    frame = pd.DataFrame({"x": [1, 2], "y": [3, 4]})

    def build():
        built.append(1)
        return alt.Chart(frame).mark_point().encode(x="x", y="y")

    owner, other = object(), object()
    first = charts.cached_spec(("test_chart", 1), (owner,), build)
    assert charts.cached_spec(("test_chart", 1), (owner,), build) is first and len(built) == 1
    assert charts.cached_spec(("test_chart", 1), (other,), build) is not first and len(built) == 2
    assert charts.cached_spec(("test_chart", 2), (other,), build) is not None and len(built) == 3


def test_a_spec_checked_against_one_dataset_is_checked_again_against_another():
    adult = data.load("adult")
    text = 'E[pred | race == "White"] - E[pred | race == "Black"] < 0.1\n'
    spec, problems = flows.check_spec(text, adult)
    assert spec is not None and not [p for p in problems if p[0] == "error"]
    assert flows.check_spec(text, adult) == (spec, problems)  # the same text and dataset: the same check
    compas = data.load("compas")  # another dataset (no such group in its race column): checked again
    assert flows.check_spec(text, compas) != (spec, problems)
    typo = text.replace("White", "Whte")
    assert flows.check_spec(typo, adult)[0] is None  # another text: its own check
