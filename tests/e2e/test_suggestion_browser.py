"""The refinement suggestion in a real browser (issue 17 item 4), as a newcomer meets it: load the demo audit, make
sex parity undecided on the Audit page (threshold 0.17), run, open that comparison's node, read the suggestion,
click "Use … (exploratory)": the history lists the new version as "refinement of vN (suggested threshold)".
Then to the Report page and back: the result, the selected node, the history and the new text are all still
there; Run audits the refinement on the rows it was chosen from: an EXPLORATORY verdict (its own badge, never the
certified colour), exploratory in the history. Back to the undecided version, "Confirm on fresh rows" chooses the
threshold on half the rows and audits it on the other half: a verdict that is not exploratory, whose rows say so.

Drives Debian's chromium with Python Playwright (see ``test_browser.py``); screenshots go to
``tests/e2e/screenshots/sg_*.png``.
"""
from __future__ import annotations

import re

import pytest

from fairaudit.core import suggest
from tests.e2e.server import SHOTS, browser_page, goto, wait_idle

pytestmark = [pytest.mark.e2e, pytest.mark.serial, pytest.mark.slow]

CHART = "[data-testid='stVegaLiteChart']"
LONG = 180_000
NUMBER = r"(\d+(?:\.\d+)?)"


def _node(page, node_id: str):
    """The operator symbol drawn on a node of the tree (what a user's click lands on)."""
    return page.locator(f"{CHART} .mark-text text[aria-label*='symbol: '][aria-label*='id: {node_id};']").first


def _panel(page):
    return page.locator(".st-key-node_panel")


def _editor(page):
    """The Audit page's specification editor (unfolded first: it is folded once a result is shown)."""
    editor = page.locator(".st-key-audit_spec_editor textarea")
    if not editor.is_visible():
        page.get_by_text("Specification — edit a threshold here").first.click()
    editor.wait_for()
    return editor


def _history(page) -> str:
    """The text of the versions table (Streamlit draws it on a canvas; its cells are also in the DOM, for screen
    readers)."""
    grid = page.locator("[data-testid='stDataFrame']").last
    grid.wait_for()
    return grid.text_content() or ""


def _wait_history(page, pattern: str) -> str:
    page.wait_for_function(
        "p => { const g = [...document.querySelectorAll(\"[data-testid='stDataFrame']\")].pop();"
        " return g && new RegExp(p).test(g.textContent); }", arg=pattern, timeout=60_000)
    return _history(page)


def test_suggested_threshold_applied_in_the_browser(browser_ready, app_url):
    with browser_page(1400, 1800) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        try:
            page.goto(app_url)
            page.get_by_role("button", name="Load demo audit").click()
            page.get_by_text("violated with probability").first.wait_for(timeout=LONG)
            wait_idle(page)

            # 1. an undecided comparison: sex parity at 0.17 (race parity at 0.3 is certified)
            goto(page, "Audit")
            wait_idle(page)
            editor = _editor(page)
            text = editor.input_value()
            assert "< 0.1\n" in text and "< 0.2\n" in text, text
            undecided = text.replace("< 0.1\n", "< 0.17\n").replace("< 0.2\n", "< 0.3\n")
            editor.fill(undecided)
            editor.press("Control+Enter")
            page.get_by_text("Edited: ").first.wait_for()
            wait_idle(page)
            page.get_by_role("button", name="Run", exact=True).click()
            page.get_by_text(re.compile(r"undecided after [\d,]+ observations", re.I)).first.wait_for(timeout=LONG)
            wait_idle(page)

            # 2. open its node: the panel explains why it is undecided and what could be decided now
            _node(page, "n1").click()
            panel = _panel(page)
            panel.get_by_text("Refinement suggestion").first.wait_for(timeout=60_000)
            wait_idle(page)
            assert panel.get_by_text("Showing the most critical comparison").count() == 0  # the click selected it
            said = panel.inner_text()
            assert "sex_parity" in said and "< 0.17" in said, said
            lo, hi = map(float, re.search(rf"interval \[{NUMBER}, {NUMBER}\]", said).groups())
            assert lo < 0.17 < hi
            assert re.search(r"Certifiable now, at the same guarantee: .*< " + NUMBER, said), said
            assert "Projection: about" in said and suggest.POST_HOC.split(":")[0] in said
            button = panel.locator(".st-key-suggest_certify_n1 button").filter(visible=True).first  # key: the node
            certify = float(re.search(rf"Use {NUMBER} \(exploratory\)", button.inner_text()).group(1))
            assert hi <= certify < hi + 0.01  # the tightest threshold the interval's upper bound already certifies
            panel.scroll_into_view_if_needed()
            page.screenshot(path=str(SHOTS / "sg_1_suggestion.png"))

            # 3. one click: a new version, shown in the history as a refinement of the audited one
            button.click()
            page.get_by_text("The specification has changed since this result was computed").first.wait_for()
            wait_idle(page)
            table = _wait_history(page, r"refinement of v\d+ \(suggested threshold\)")
            audited = re.search(r"refinement of v(\d+) \(suggested threshold\): sex_parity 0\.17 → " + NUMBER, table)
            assert audited and float(audited.group(2)) == certify, table
            assert f"v{int(audited.group(1)) + 1}" in table
            page.get_by_role("heading", name="Versions of the specification").scroll_into_view_if_needed()
            page.screenshot(path=str(SHOTS / "sg_2_refinement.png"))

            # 4. to the Report page and back: the undecided result, its selected node, the new text and history stay
            goto(page, "Report")
            page.get_by_role("button", name="Download the report (PDF)").wait_for(timeout=LONG)
            page.get_by_text(re.compile(r"undecided after [\d,]+ observations", re.I)).first.wait_for()
            wait_idle(page)
            goto(page, "Audit")
            wait_idle(page)
            panel.get_by_text("Refinement suggestion").first.wait_for(timeout=60_000)
            assert panel.get_by_text("Showing the most critical comparison").count() == 0  # still the node clicked
            page.get_by_text("The specification has changed since this result was computed").first.wait_for()
            assert f"< {certify:g}\n" in _editor(page).input_value()
            assert audited.group(0) in _wait_history(page, re.escape(audited.group(0)))
            page.screenshot(path=str(SHOTS / "sg_3_back.png"))

            # 5. Run audits the refinement: the same rows certify it
            page.get_by_role("button", name="Run", exact=True).click()
            page.get_by_text(re.compile(r"certified true with probability", re.I)).first.wait_for(timeout=LONG)
            wait_idle(page)
            page.get_by_text("The specification has changed since this result was computed").wait_for(state="detached")
            # ... but the threshold was chosen from these rows: exploratory, not a certificate
            table = _wait_history(page, rf"v{int(audited.group(1)) + 1}\s*exploratory")
            verdict = page.locator("[data-testid='stMarkdownContainer']").filter(has_text="Verdict:").first
            assert "exploratory" in verdict.inner_text() and "certified true" not in verdict.inner_text().split(
                "exploratory")[0]
            page.get_by_text(re.compile(r"exploratory: certified true with probability", re.I)).first.wait_for()
            page.screenshot(path=str(SHOTS / "sg_4_refinement_run.png"))

            # 6. the honest route: back to the undecided version, confirm its suggestion on fresh rows
            editor = _editor(page)
            editor.fill(undecided)
            editor.press("Control+Enter")
            page.get_by_text("Edited: ").first.wait_for()
            page.get_by_role("button", name="Run", exact=True).click()
            page.get_by_text(re.compile(r"undecided after [\d,]+ observations", re.I)).first.wait_for(timeout=LONG)
            wait_idle(page)
            _node(page, "n1").click()
            panel.get_by_text("Refinement suggestion").first.wait_for(timeout=60_000)
            wait_idle(page)
            panel.locator(".st-key-confirm_certify_n1 button").filter(visible=True).first.click()
            page.get_by_text(re.compile(r"not used to choose the threshold", re.I)).first.wait_for(timeout=LONG)
            wait_idle(page)
            verdict = page.locator("[data-testid='stMarkdownContainer']").filter(has_text="Verdict:").first
            assert "exploratory" not in verdict.inner_text().lower()
            assert "# threshold-chosen-from:" in _editor(page).input_value()
            page.screenshot(path=str(SHOTS / "sg_5_confirmed.png"))
            assert not errors, errors
        except Exception:
            page.screenshot(path=str(SHOTS / "sg_failed.png"))
            raise
