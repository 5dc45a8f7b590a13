"""The Audit page after a fairquant run on a network trained in the app (an ``mlp`` on ricci), before any click:
the default selection is the comparison ``Fair[race] >= 0.9``, and the page shows its Fair term's certified /
unfair / undecided breakdown (the panel's numbers and the rates plot) and its counterexample table — never a
midpoint "value" for it."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 240
SPEC = "Fair[race] >= 0.9\n"


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_fairquant_run_on_an_mlp_shows_the_breakdown_and_counterexamples_by_default():
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    _ok(at.switch_page("pages/1_Data.py").run())
    at.selectbox(key="data_builtin").set_value("ricci")
    _ok(at.run())
    _ok(at.switch_page("pages/2_Model.py").run())
    at.selectbox(key="model_kind").set_value("mlp")
    _ok(at.run())
    at.checkbox(key="model_include_protected").check()  # Fair[race] audits a network that reads race
    _ok(at.run())
    at.button(key="model_train").click()
    _ok(at.run())
    assert at.session_state["model"] is not None
    _ok(at.switch_page("pages/3_Specification.py").run())
    at.text_area(key="spec_editor").input(SPEC)
    _ok(at.run())
    _ok(at.switch_page("pages/4_Audit.py").run())
    at.selectbox(key="audit_engine").set_value("fairquant")
    _ok(at.run())
    at.button(key="audit_run").click()
    _ok(at.run())
    assert not [e.value for e in at.error], [e.value for e in at.error]
    result = at.session_state["result"]
    assert result.engine == "fairquant" and result.complete
    assert not at.session_state["selected_nodes"]  # nothing clicked: the default selection, the comparison
    facts = next(m.value for m in at.markdown if "certified (lower bound)" in m.value)
    assert "upper bound (1 − unfair)" in facts and "undecided" in facts and "value" not in facts
    captions = " ".join(c.value for c in at.caption)
    assert "Certified: at least this share of individuals" in captions  # under the rates plot
    assert len(at.get("vega_lite_chart")) + len(at.get("arrow_vega_lite_chart")) >= 3  # tree, bounds, rates
    assert any(m.value.startswith("**Counterexamples to Fair[race]**") for m in at.markdown)
