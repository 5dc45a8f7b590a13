"""The Overview after the analyst's own audit (issue 44, walkthrough): it leads with that audit's summary and keeps
the demo as a small secondary button; the Report page's node table labels rows by name and words, not node ids."""
from __future__ import annotations

import re
import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "report"))
from test_page_one_words import intersection_result  # noqa: E402

TIMEOUT = 180


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _with_result(page: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["result"] = intersection_result()
    at.session_state["result_meta"] = {"spec": intersection_result().spec, "engine": "dataset"}
    _ok(at.run())
    return _ok(at.switch_page(page).run()) if page != "pages/0_Overview.py" else at


def test_overview_leads_with_the_users_audit():
    at = _with_result("pages/0_Overview.py")
    assert at.title[0].value == "fairaudit"
    headers = [h.value for h in at.subheader]
    assert headers[0] == "Current audit" and "Start here" not in headers
    demo = at.button(key="load_demo")
    assert demo.label == "Load demo audit" and demo.proto.type != "primary"
    assert at.success  # the next step, for this audit
    # the audit's headline comes before any introduction
    assert any("Those with sex = Female and race = Black" in m.value for m in at.markdown)


def test_overview_fresh_leads_with_the_demo():
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    assert "Start here" in [h.value for h in at.subheader]
    assert at.button(key="load_demo").proto.type == "primary"


def test_report_page_node_table_has_no_node_ids():
    at = _with_result("pages/5_Report.py")
    tables = [d.value for d in at.dataframe]
    nodes = next(t for t in tables if "verdict" in t.columns)
    assert "id" not in nodes.columns and "expression" not in nodes.columns
    parts = [p.strip("\u2003 ") for p in nodes["part"]]
    assert "ratio" in parts and "gap" in parts
    assert "favourable rate of sex = Female and race = Black" in parts
    assert not [p for p in parts if re.search(r"\bn\d+\b", p) or "E[" in p]
